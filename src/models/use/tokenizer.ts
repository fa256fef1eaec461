/**
 * SentencePiece-style unigram tokenizer for Universal Sentence Encoder lite.
 *
 * Ported from the tokenizer of `@energetic-ai/embeddings` (Apache-2.0, Copyright Jonathan Wilde),
 * which itself derives from the tokenizer in tensorflow/tfjs-models `universal-sentence-encoder`
 * (Apache-2.0, Copyright 2019 Google LLC). Licensed under the Apache License, Version 2.0:
 * http://www.apache.org/licenses/LICENSE-2.0
 *
 * Changes from the original: TypeScript strictness, lengths counted in Unicode code points
 * throughout (the original walked back by UTF-16 length, which differs for astral characters),
 * an optional token cap.
 */

/** `[piece, log-probability score]`, index = token id (the model's vocab.json format). */
export type Vocabulary = Array<[string, number]>;

const SEPARATOR = '\u2581'; // '▁', SentencePiece's word-boundary marker
/** The first ids are reserved: <unk>=0, <s>, </s>, and three extra ids; they never match text. */
export const RESERVED_SYMBOLS_COUNT = 6;
export const UNK_ID = 0;

/** NFKC-normalise, mark the start and every space as a word boundary. */
export function processInput(text: string): string {
  const normalized = text.normalize('NFKC');
  return normalized.length > 0 ? SEPARATOR + normalized.replace(/ /g, SEPARATOR) : normalized;
}

/** Split into Unicode code points (surrogate pairs stay together). */
export function stringToChars(input: string): string[] {
  return Array.from(input);
}

interface TrieMatch {
  /** Length of the matched piece in code points. */
  length: number;
  score: number;
  id: number;
}

class TrieNode {
  children = new Map<string, TrieNode>();
  end = false;
  score = 0;
  id = 0;
  length = 0;
}

class Trie {
  readonly root = new TrieNode();

  insert(piece: string, score: number, id: number): void {
    const symbols = stringToChars(piece);
    let node = this.root;
    for (const s of symbols) {
      let child = node.children.get(s);
      if (!child) {
        child = new TrieNode();
        child.length = node.length + 1;
        node.children.set(s, child);
      }
      node = child;
    }
    node.end = true;
    node.score = score;
    node.id = id;
  }

  /** Every vocabulary piece that is a prefix of `symbols[start..]`; an unknown 1-symbol piece if none. */
  commonPrefixSearch(symbols: string[], start: number): TrieMatch[] {
    const out: TrieMatch[] = [];
    let node = this.root.children.get(symbols[start]);
    for (let i = start; i < symbols.length && node; i++) {
      if (node.end) out.push({ length: node.length, score: node.score, id: node.id });
      node = i + 1 < symbols.length ? node.children.get(symbols[i + 1]) : undefined;
    }
    if (out.length === 0) out.push({ length: 1, score: 0, id: UNK_ID });
    return out;
  }
}

export class Tokenizer {
  private readonly trie = new Trie();

  constructor(
    readonly vocabulary: Vocabulary,
    reservedSymbolsCount = RESERVED_SYMBOLS_COUNT,
  ) {
    for (let i = reservedSymbolsCount; i < vocabulary.length; i++) {
      this.trie.insert(vocabulary[i][0], vocabulary[i][1], i);
    }
  }

  /** Token ids of `text` (best-scoring segmentation, Viterbi), consecutive unknowns merged into one. */
  encode(text: string): number[] {
    const symbols = stringToChars(processInput(text));
    const n = symbols.length;
    // best[e]: best total score of a segmentation of symbols[0..e); words[e]/lens[e]: its last piece.
    const best = new Float64Array(n + 1);
    const words = new Int32Array(n + 1);
    const lens = new Int32Array(n + 1);
    // Lattice: for each end position, the pieces that end there, by start position.
    const ending: Array<Array<{ start: number; m: TrieMatch }>> = Array.from({ length: n + 1 }, () => []);
    for (let i = 0; i < n; i++) {
      for (const m of this.trie.commonPrefixSearch(symbols, i)) ending[i + m.length].push({ start: i, m });
    }
    for (let end = 1; end <= n; end++) {
      // The original visits start positions in ascending order and keeps ties (>=): same here.
      const arr = ending[end].sort((a, b) => a.start - b.start);
      for (const { m } of arr) {
        const score = m.score + best[end - m.length];
        if (best[end] === 0 || score >= best[end]) {
          best[end] = score;
          words[end] = m.id;
          lens[end] = m.length;
        }
      }
    }
    const reversed: number[] = [];
    for (let i = n; i > 0; i -= Math.max(1, lens[i])) reversed.push(words[i]);
    const merged: number[] = [];
    let previousUnk = false;
    for (const id of reversed) {
      if (!(previousUnk && id === UNK_ID)) merged.push(id);
      previousUnk = id === UNK_ID;
    }
    return merged.reverse();
  }

  /** The pieces of `ids` (for tests and debugging). */
  pieces(ids: number[]): string[] {
    return ids.map((id) => this.vocabulary[id]?.[0] ?? '<?>');
  }
}

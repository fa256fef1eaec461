// A fake text embedder for SearchThreads tests, registered inside each search thread (the pool's
// `preload`) and used in the test's own process through `fakeSearchEmbedder`. Plain JavaScript on
// the compiled registry: a worker thread runs dist/. No model, no weights.
import { registerEmbedder } from '../../dist/src/embedders/registry.js';

export const FAKE_SEARCH_ID = 'fake-search';
export const FAKE_DIM = 4;

/** A unit vector that depends only on the text: its letters' codes folded into 4 numbers. */
export function fakeVector(text) {
  const v = [1, 1, 1, 1];
  let i = 0;
  for (const ch of text) v[i++ % 4] += (ch.codePointAt(0) % 17) - 8;
  const n = Math.hypot(...v) || 1;
  return new Float32Array(v.map((x) => x / n));
}

/**
 * The embedder: a text holding `exit-thread` ends the thread it runs in (process.exit in a worker
 * ends only the worker); `slow` answers after 300 ms.
 */
export function fakeSearchEmbedder() {
  return {
    id: FAKE_SEARCH_ID,
    dim: FAKE_DIM,
    frameMaxSide: 64,
    async load() {},
    async embedText(text) {
      if (text.includes('exit-thread')) process.exit(3);
      if (text.includes('slow')) await new Promise((r) => setTimeout(r, 300));
      return { vector: fakeVector(text), truncated: false };
    },
    async embedSegment() {
      throw new Error('not for segments');
    },
    async dispose() {},
  };
}

registerEmbedder({ id: FAKE_SEARCH_ID, dim: FAKE_DIM, description: 'test fake for search threads' }, fakeSearchEmbedder);

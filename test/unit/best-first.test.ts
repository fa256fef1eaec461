import { describe, expect, it } from 'vitest';
import { bestFirst } from '../../src/search/hybrid.js';

function rng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

describe('bestFirst: the first n of a total order without sorting the rest', () => {
  type Item = [string, { relevance: number; segmentId: number }];
  const cmp = (a: Item, b: Item) => b[1].relevance - a[1].relevance || a[1].segmentId - b[1].segmentId;

  it('equals sorting everything and keeping n, ties broken by the order (many equal relevances)', () => {
    const r = rng(7);
    for (let trial = 0; trial < 200; trial++) {
      const len = Math.floor(r() * 300);
      // Few distinct relevances, so ties are common and only the segment id orders them.
      const items: Item[] = Array.from({ length: len }, (_, i) => [`v${i}`, { relevance: Math.floor(r() * 8) / 8, segmentId: Math.floor(r() * 1e6) * 1000 + i }]);
      const n = Math.floor(r() * (len + 20));
      const want = [...items].sort(cmp).slice(0, n);
      expect(bestFirst([...items], n, cmp)).toEqual(want);
    }
  });

  it('gives nothing for n = 0 and everything in order when n reaches the length', () => {
    const items: Item[] = [['a', { relevance: 0.1, segmentId: 2 }], ['b', { relevance: 0.9, segmentId: 1 }], ['c', { relevance: 0.1, segmentId: 1 }]];
    expect(bestFirst([...items], 0, cmp)).toEqual([]);
    expect(bestFirst([...items], 3, cmp).map(([v]) => v)).toEqual(['b', 'c', 'a']);
    expect(bestFirst([...items], 2, cmp).map(([v]) => v)).toEqual(['b', 'c']);
  });
});

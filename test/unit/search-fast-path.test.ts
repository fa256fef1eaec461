import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hybridSearch, type HybridSearchInput } from '../../src/search/hybrid.js';
import { Store } from '../../src/store/index.js';
import { SqliteCatalog } from '../../src/store/catalog/sqlite.js';

/** Hybrid search on a store (through the async catalog, as the engine calls it). */
function search(s: Store, inp: HybridSearchInput) {
  const c = new SqliteCatalog(s);
  return hybridSearch(c.segments, c.videos, inp);
}

function rng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}
function unit(v: Float32Array): Float32Array {
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

const DIM = 128;
const WORDS = Array.from({ length: 40 }, (_, i) => `word${i}`);

/**
 * The server's search path (in-memory int8 index: the exact top k, keyword hits' similarities
 * approximate and re-scored exactly only where they can reach the page; answers cached until a segment changes) must give the page the
 * exact path gives (sqlite-vec and float vectors, nothing cached), on the same library file.
 */
describe('search: the in-memory fast path answers what the exact path answers', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vidembed-fastpath-'));
  let exact: Store;
  let fast: Store;
  let collection = '';
  const r = rng(20261122);
  // Clustered vectors: 30 centres, each segment near one, so many candidates sit close together.
  const centres = Array.from({ length: 30 }, () => unit(new Float32Array(DIM).map(() => r() - 0.5)));
  const near = (c: Float32Array, spread: number) => unit(c.map((x) => x + spread * (r() - 0.5)));

  beforeAll(() => {
    exact = Store.open(path.join(dir, 'lib.db'));
    fast = Store.open(path.join(dir, 'lib.db'), { memoryIndex: true });
    collection = exact.collections.insert({ name: 'fast', description: '', model: 'fake', dim: DIM }).id;
    for (let v = 0; v < 250; v++) {
      const id = `vid_${v}`;
      exact.videos.insert({ id, collection_id: collection, filename: `${id}.mp4`, path: '/dev/null', size_bytes: 1 });
      exact.segments.replaceForVideo(
        id,
        collection,
        DIM,
        Array.from({ length: 12 }, (_, i) => {
          const words = [WORDS[Math.floor(r() * WORDS.length)], WORDS[Math.floor(r() * WORDS.length)]];
          return { idx: i, start: i * 2, end: i * 2 + 2, description: words.join(' '), keywords: words.join('\n'), vector: near(centres[(v + i) % centres.length], 0.6) };
        }),
      );
    }
  });
  afterAll(() => {
    fast.close();
    exact.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const input = (q: Float32Array, text: string, extra: Partial<HybridSearchInput> = {}): HybridSearchInput => ({
    collectionId: collection,
    dim: DIM,
    queryVector: q,
    text,
    topK: 10,
    filter: {},
    explain: true,
    ...extra,
  });

  it('same videos, moments, similarities and relevance for 60 queries (text, vector, both, paged deeper, excluding videos)', async () => {
    for (let i = 0; i < 60; i++) {
      const q = near(centres[i % centres.length], 0.8);
      const text = i % 3 === 0 ? '' : `${WORDS[i % WORDS.length]} and ${WORDS[(i * 7) % WORDS.length]}`;
      const extra: Partial<HybridSearchInput> = i % 5 === 0 ? { topK: 40 } : i % 7 === 0 ? { excludeVideoIds: new Set(['vid_3', 'vid_4']) } : {};
      const a = await search(exact, input(q, text, extra));
      const b = await search(fast, input(q, text, extra));
      expect(b.map((x) => [x.video_id, x.start, x.matched_words])).toEqual(a.map((x) => [x.video_id, x.start, x.matched_words]));
      b.forEach((x, j) => {
        expect(x.similarity).toBeCloseTo(a[j].similarity, 5);
        expect(x.relevance!).toBeCloseTo(a[j].relevance!, 5);
        // The result's own evidence: the same on both paths.
        expect(x.confidence!).toBeCloseTo(a[j].confidence!, 4);
      });
      expect(a.length).toBe(extra.topK ?? 10);
    }
    const stats = fast.segments.memoryIndex!.stats;
    expect(stats.fullLoads).toBe(1); // the fast path did run...
    // ...with the top k re-ranked exactly (the rule of `candidates`) and the keyword hits approximate.
    expect(stats.reranked).toBeGreaterThan(0);
  });

  it('with min_confidence every candidate is re-scored: same page as the exact path', async () => {
    const q = near(centres[3], 0.5);
    const a = await search(exact, input(q, 'word3', { minConfidence: 0.3 }));
    const b = await search(fast, input(q, 'word3', { minConfidence: 0.3 }));
    expect(a.length).toBeGreaterThan(0);
    expect(b.map((x) => x.video_id)).toEqual(a.map((x) => x.video_id));
    // Similarities as in the test above (float32 sums: the sixth decimal may round either way); the
    // confidence is the result's own (its similarity and words), whatever the candidate pool.
    b.forEach((x, j) => {
      expect(x.similarity).toBeCloseTo(a[j].similarity, 5);
      expect(x.confidence!).toBeCloseTo(a[j].confidence!, 4);
    });
  });

  it('cached keyword matches and counts follow writes made through another connection', async () => {
    // Answers are checked against the library once per synchronous run: a write from elsewhere is
    // seen from the next turn of the event loop on.
    const tick = () => new Promise((r) => setImmediate(r));
    const q = near(centres[0], 0.8);
    const before = await search(fast, input(q, 'zebra'));
    expect(before.some((x) => x.matched_words?.includes('zebra'))).toBe(false);
    const countBefore = fast.segments.countForCollection(collection);
    // The same connection's own writes are seen at once.
    fast.videos.insert({ id: 'vid_own', collection_id: collection, filename: 'own.mp4', path: '/dev/null', size_bytes: 1 });
    fast.segments.replaceForVideo('vid_own', collection, DIM, [{ idx: 0, start: 0, end: 2, description: 'okapi', keywords: 'okapi', vector: near(centres[0], 0.8) }]);
    expect((await search(fast, input(q, 'okapi'))).find((x) => x.video_id === 'vid_own')?.matched_words).toEqual(['okapi']);
    fast.segments.deleteForVideo('vid_own', DIM);
    fast.videos.delete('vid_own');
    expect((await search(fast, input(q, 'okapi'))).some((x) => x.video_id === 'vid_own')).toBe(false);

    exact.videos.insert({ id: 'vid_zebra', collection_id: collection, filename: 'zebra.mp4', path: '/dev/null', size_bytes: 1 });
    exact.segments.replaceForVideo('vid_zebra', collection, DIM, [{ idx: 0, start: 0, end: 2, description: 'zebra', keywords: 'zebra', vector: near(centres[0], 0.8) }]);
    await tick();
    const after = await search(fast, input(q, 'zebra'));
    expect(after.find((x) => x.video_id === 'vid_zebra')?.matched_words).toEqual(['zebra']);
    expect(fast.segments.countForCollection(collection)).toBe(countBefore + 1);

    exact.segments.deleteForVideo('vid_zebra', DIM);
    exact.videos.delete('vid_zebra');
    await tick();
    const gone = await search(fast, input(q, 'zebra'));
    expect(gone.some((x) => x.video_id === 'vid_zebra')).toBe(false);
    expect(fast.segments.countForCollection(collection)).toBe(countBefore);
  });
});

describe('prepared statements are reused per connection', () => {
  it('a reused statement comes back in its default mode, and a busy one is not handed out', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vidembed-stmt-'));
    const store = Store.open(path.join(dir, 'db.sqlite'));
    try {
      const db = store.db;
      db.exec("CREATE TABLE t (a INTEGER, b TEXT); INSERT INTO t VALUES (1, 'x'), (2, 'y')");
      const sql = 'SELECT a, b FROM t ORDER BY a';
      expect(db.prepare(sql).pluck().all()).toEqual([1, 2]);
      expect(db.prepare(sql)).toBe(db.prepare(sql)); // the same statement...
      expect(db.prepare(sql).all()).toEqual([{ a: 1, b: 'x' }, { a: 2, b: 'y' }]); // ...not plucked any more
      expect(db.prepare(sql).raw().all()).toEqual([[1, 'x'], [2, 'y']]);
      expect(db.prepare(sql).get()).toEqual({ a: 1, b: 'x' });
      // While it iterates, the same SQL gets a statement of its own (one statement cannot run twice).
      const seen: unknown[] = [];
      for (const row of db.prepare(sql).iterate()) seen.push([row, db.prepare(sql).all().length]);
      expect(seen).toEqual([
        [{ a: 1, b: 'x' }, 2],
        [{ a: 2, b: 'y' }, 2],
      ]);
    } finally {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

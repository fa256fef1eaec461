import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/index.js';
import { topK } from '../../src/store/vector-index.js';
import { MemoryVectorIndex } from '../../src/store/memory-index.js';

function rng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}
function unit(dim: number, r: () => number): Float32Array {
  const v = new Float32Array(dim).map(() => r() - 0.5);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

describe('in-memory SIMD vector index', () => {
  let dir: string;
  let mem: Store;
  let disk: Store;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vidembed-memidx-'));
    disk = Store.open(path.join(dir, 'db.sqlite'));
    mem = Store.open(path.join(dir, 'db.sqlite'), { memoryIndex: true });
  });
  afterEach(() => {
    mem.close();
    disk.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function fill(store: Store, collection: string, videos: number, r: () => number) {
    for (let v = 0; v < videos; v++) {
      const id = `${collection}_v${v}`;
      store.videos.insert({ id, collection_id: collection, filename: `${id}.mp4`, path: '/x', size_bytes: 1 });
      store.segments.replaceForVideo(id, collection, 512, Array.from({ length: 10 }, (_, i) => ({ idx: i, start: i, end: i + 1, description: 'x', vector: unit(512, r) })));
    }
  }

  it('returns exactly what sqlite-vec returns, per collection', () => {
    const a = disk.collections.insert({ name: 'a', description: '', model: 'm', dim: 512 });
    const b = disk.collections.insert({ name: 'b', description: '', model: 'm', dim: 512 });
    const r = rng(7);
    fill(disk, a.id, 30, r);
    fill(disk, b.id, 5, r);
    for (let q = 0; q < 5; q++) {
      const query = unit(512, r);
      const want = disk.segments.nearest(a.id, 512, query, 25);
      const got = mem.segments.nearest(a.id, 512, query, 25);
      expect(got.map((h) => h.segmentId)).toEqual(want.map((h) => h.segmentId));
      got.forEach((h, i) => expect(h.similarity).toBeCloseTo(want[i].similarity, 5));
    }
    expect(mem.segments.nearest(b.id, 512, unit(512, r), 1000)).toHaveLength(50);
  });

  it('re-ranks from its float32 copy of a small collection exactly as from the database, and from the database past the bound', () => {
    const a = disk.collections.insert({ name: 'a', description: '', model: 'm', dim: 512 });
    const r = rng(11);
    fill(disk, a.id, 40, r);
    const fromMemory = new MemoryVectorIndex(mem.db);
    const fromDb = new MemoryVectorIndex(mem.db, { floatCopyMaxBytes: 0 });
    // 400 rows of 512 floats (800 KiB): past a 100 KiB bound the copy is dropped at load.
    const bounded = new MemoryVectorIndex(mem.db, { floatCopyMaxBytes: 100 * 1024 });
    for (let q = 0; q < 4; q++) {
      const query = unit(512, r);
      const want = [...fromDb.candidates(a.id, 512, query, 30)!];
      expect(want.length).toBeGreaterThanOrEqual(30);
      expect([...fromMemory.candidates(a.id, 512, query, 30)!]).toEqual(want);
      expect([...bounded.candidates(a.id, 512, query, 30)!]).toEqual(want);
      expect(fromMemory.nearest(a.id, 512, query, 30)).toEqual(fromDb.nearest(a.id, 512, query, 30));
    }
    // Writes after the load land in the copy too.
    for (let v = 0; v < 3; v++) {
      disk.videos.insert({ id: `late_${v}`, collection_id: a.id, filename: `late_${v}.mp4`, path: '/x', size_bytes: 1 });
      disk.segments.replaceForVideo(`late_${v}`, a.id, 512, Array.from({ length: 10 }, (_, i) => ({ idx: i, start: i, end: i + 1, description: 'x', vector: unit(512, r) })));
    }
    const query = unit(512, r);
    expect(fromMemory.nearest(a.id, 512, query, 50)).toEqual(fromDb.nearest(a.id, 512, query, 50));
    expect(fromDb.stats.reranked).toBeGreaterThan(0);
  });

  it('sees every write at once (revision check), including writes by another connection', () => {
    const c = disk.collections.insert({ name: 'c', description: '', model: 'm', dim: 512 });
    const r = rng(3);
    fill(disk, c.id, 2, r);
    const query = unit(512, r);
    expect(mem.segments.nearest(c.id, 512, query, 100)).toHaveLength(20);
    disk.videos.insert({ id: 'new', collection_id: c.id, filename: 'n.mp4', path: '/x', size_bytes: 1 });
    disk.segments.replaceForVideo('new', c.id, 512, [{ idx: 0, start: 0, end: 1, description: 'x', vector: query }]);
    const hits = mem.segments.nearest(c.id, 512, query, 100);
    expect(hits).toHaveLength(21);
    expect(hits[0].similarity).toBeCloseTo(1, 5);
    disk.segments.deleteForVideo('new', 512);
    expect(mem.segments.nearest(c.id, 512, query, 100)).toHaveLength(20);
  });

  it('topK picks the k largest, best first, ties included up to k', () => {
    const scores = Float32Array.from([0.1, 0.9, 0.5, 0.9, -1, 0.3, 0.7]);
    expect(topK(scores, 3)).toEqual([1, 3, 6]);
    expect(topK(scores, 10)).toEqual([1, 3, 6, 2, 5, 0, 4]);
    const big = Float32Array.from({ length: 10000 }, (_, i) => Math.sin(i));
    const want = Array.from(big.keys()).sort((x, y) => big[y] - big[x]).slice(0, 50);
    expect(topK(big, 50)).toEqual(want);
  });
});

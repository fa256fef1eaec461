import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/index.js';
import { MemoryVectorIndex } from '../../src/store/memory-index.js';

function rng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}
function gauss(r: () => number): number {
  return Math.sqrt(-2 * Math.log(r() || 1e-12)) * Math.cos(2 * Math.PI * r());
}
function normalise(v: Float32Array): Float32Array {
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}
function unit(dim: number, r: () => number): Float32Array {
  return normalise(Float32Array.from({ length: dim }, () => gauss(r)));
}
/** `noise` is the norm of the added noise (a unit vector's cosine to its centre ~ 1/sqrt(1+noise^2)). */
function near(c: Float32Array, noise: number, r: () => number): Float32Array {
  const s = noise / Math.sqrt(c.length);
  return normalise(c.map((x) => x + s * gauss(r)));
}

/** Writes videos of `perVideo` segments, each video around one of `centres`; returns the video ids. */
function fill(store: Store, collection: string, dim: number, vectors: Float32Array[], perVideo = 20, prefix = 'v'): string[] {
  const ids: string[] = [];
  store.db.transaction(() => {
    for (let v = 0; v * perVideo < vectors.length; v++) {
      const id = `${prefix}${v}`;
      ids.push(id);
      store.videos.insert({ id, collection_id: collection, filename: `${id}.mp4`, path: '/x', size_bytes: 1 });
      store.segments.replaceForVideo(
        id,
        collection,
        dim,
        vectors.slice(v * perVideo, (v + 1) * perVideo).map((vector, i) => ({ idx: i, start: i, end: i + 1, description: 'x', vector })),
      );
    }
  })();
  return ids;
}

/** The collection's stored float vectors (what the exact answers are computed from). */
function stored(store: Store, collection: string): [number, Float32Array][] {
  const rows = store.db
    .prepare('SELECT s.id, v.embedding FROM segments s JOIN segment_vectors v ON v.segment_id = s.id WHERE s.collection_id = ?')
    .raw()
    .all(collection) as [number, Buffer][];
  return rows.map(([id, blob]) => [id, new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength))]);
}

/** Exact top k by float dot product (a store: what it holds now; or rows from `stored`). */
function exact(from: Store | [number, Float32Array][], collection: string, dim: number, q: Float32Array, k: number): number[] {
  const rows = Array.isArray(from) ? from : stored(from, collection);
  return rows
    .map(([id, v]) => {
      let d = 0;
      for (let j = 0; j < dim; j++) d += v[j] * q[j];
      return { id, d };
    })
    .sort((a, b) => b.d - a.d || a.id - b.id)
    .slice(0, k)
    .map((x) => x.id);
}

function clustered(n: number, dim: number, centres: number, noise: number, r: () => number): { data: Float32Array[]; centres: Float32Array[] } {
  const cs = Array.from({ length: centres }, () => unit(dim, r));
  return { centres: cs, data: Array.from({ length: n }, (_, i) => near(cs[Math.floor(i / 20) % centres], noise, r)) };
}

describe('int8 in-memory index: exact re-rank, incremental updates', () => {
  let dir: string;
  let file: string;
  let mem: Store;
  let disk: Store;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vidembed-int8idx-'));
    file = path.join(dir, 'db.sqlite');
    disk = Store.open(file);
    mem = Store.open(file, { memoryIndex: true });
  });
  afterEach(() => {
    mem.close();
    disk.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('top 10 equals an exact float scan on clustered data (recall >= 0.99), with and without SIMD', () => {
    const dim = 128;
    const c = disk.collections.insert({ name: 'c', description: '', model: 'm', dim });
    const r = rng(11);
    const { data, centres } = clustered(3000, dim, 30, 0.6, r);
    fill(disk, c.id, dim, data);
    const plain = new MemoryVectorIndex(mem.db, { simd: false });
    const rows = stored(disk, c.id);
    let found = 0;
    let total = 0;
    for (let q = 0; q < 60; q++) {
      // Stored vectors with noise, cluster centres (many near-ties) and fresh random vectors.
      const query = q < 20 ? near(data[Math.floor(r() * data.length)], 0.3, r) : q < 40 ? centres[q % centres.length] : unit(dim, r);
      const want = exact(rows, c.id, dim, query, 10);
      const got = mem.segments.nearest(c.id, dim, query, 10).map((h) => h.segmentId);
      const gotPlain = plain.nearest(c.id, dim, query, 10)!.map((h) => h.segmentId);
      expect(gotPlain).toEqual(got);
      found += got.filter((id) => want.includes(id)).length;
      total += 10;
    }
    expect(found / total).toBeGreaterThanOrEqual(0.99);
    const stats = mem.segments.memoryIndex!.stats;
    expect(stats.fullLoads).toBe(1);
    // The re-rank looked at far fewer rows than the collection holds.
    expect(stats.reranked / 60).toBeLessThan(300);
  });

  it('returns exactly the exact top k, in order, on well-separated data; similarities are the exact dot products', () => {
    const dim = 64;
    const c = disk.collections.insert({ name: 'c', description: '', model: 'm', dim });
    const r = rng(5);
    const data = Array.from({ length: 2000 }, () => unit(dim, r));
    fill(disk, c.id, dim, data);
    const rows = stored(disk, c.id);
    for (let q = 0; q < 40; q++) {
      const query = q % 2 ? near(data[Math.floor(r() * data.length)], 0.2, r) : unit(dim, r);
      for (const k of [1, 10, 50]) {
        const got = mem.segments.nearest(c.id, dim, query, k);
        expect(got.map((h) => h.segmentId)).toEqual(exact(rows, c.id, dim, query, k));
      }
      // Same answer as sqlite-vec (cosine of unit vectors).
      const vec = disk.segments.nearest(c.id, dim, query, 10);
      const got = mem.segments.nearest(c.id, dim, query, 10);
      expect(got.map((h) => h.segmentId)).toEqual(vec.map((h) => h.segmentId));
      got.forEach((h, i) => expect(h.similarity).toBeCloseTo(vec[i].similarity, 5));
    }
  });

  it('works for a dimension that is not a multiple of 16', () => {
    for (const dim of [100, 7]) {
      const c = disk.collections.insert({ name: `d${dim}`, description: '', model: 'm', dim });
      const r = rng(dim);
      const data = Array.from({ length: 600 }, () => unit(dim, r));
      fill(disk, c.id, dim, data, 20, `d${dim}_`);
      const plain = new MemoryVectorIndex(mem.db, { simd: false });
      for (let q = 0; q < 20; q++) {
        const query = unit(dim, r);
        const want = exact(disk, c.id, dim, query, 10);
        expect(mem.segments.nearest(c.id, dim, query, 10).map((h) => h.segmentId)).toEqual(want);
        expect(plain.nearest(c.id, dim, query, 10)!.map((h) => h.segmentId)).toEqual(want);
      }
    }
  });

  it('appends and deletes after the load change the results without a reload; deleted segments never come back', () => {
    const dim = 64;
    const c = disk.collections.insert({ name: 'c', description: '', model: 'm', dim });
    const r = rng(9);
    const data = Array.from({ length: 400 }, () => unit(dim, r));
    const videos = fill(mem, c.id, dim, data);
    const index = mem.segments.memoryIndex!;
    const probe = data[45]; // video v2, segment 5
    const [first] = mem.segments.nearest(c.id, dim, probe, 1);
    expect(first.similarity).toBeCloseTo(1, 5);
    const deletedIds = new Set(mem.segments.listForVideo(videos[2]).map((s) => s.id));
    expect(deletedIds.has(first.segmentId)).toBe(true);

    // This process deletes a video and appends one holding the probe twice.
    mem.segments.deleteForVideo(videos[2], dim);
    mem.videos.insert({ id: 'added', collection_id: c.id, filename: 'a.mp4', path: '/x', size_bytes: 1 });
    mem.segments.replaceForVideo('added', c.id, dim, [
      { idx: 0, start: 0, end: 1, description: 'x', vector: probe },
      { idx: 1, start: 1, end: 2, description: 'x', vector: near(probe, 0.1, r) },
    ]);
    const addedIds = mem.segments.listForVideo('added').map((s) => s.id);
    const hits = mem.segments.nearest(c.id, dim, probe, 400);
    expect(hits.map((h) => h.segmentId).slice(0, 2)).toEqual(addedIds);
    expect(hits.some((h) => deletedIds.has(h.segmentId))).toBe(false);
    expect(hits).toHaveLength(400 - 20 + 2);
    expect(index.stats.fullLoads).toBe(1);
    expect(index.stats.appended).toBe(2);
    expect(index.stats.deleted).toBe(20);

    // A re-processed video (replaceForVideo again) swaps its rows.
    mem.segments.replaceForVideo('added', c.id, dim, [{ idx: 0, start: 0, end: 1, description: 'x', vector: unit(dim, r) }]);
    const after = mem.segments.nearest(c.id, dim, probe, 1000).map((h) => h.segmentId);
    expect(after.some((id) => addedIds.includes(id))).toBe(false);
    expect(after).toHaveLength(400 - 20 + 1);
    expect(after.slice(0, 10)).toEqual(exact(mem, c.id, dim, probe, 10));
    expect(index.stats.fullLoads).toBe(1);
  });

  it("picks up another connection's writes (another process) without a full reload, including cascaded deletes", () => {
    const dim = 64;
    const c = disk.collections.insert({ name: 'c', description: '', model: 'm', dim });
    const r = rng(13);
    const data = Array.from({ length: 200 }, () => unit(dim, r));
    const videos = fill(disk, c.id, dim, data);
    const index = mem.segments.memoryIndex!;
    const query = unit(dim, r);
    expect(mem.segments.nearest(c.id, dim, query, 1000)).toHaveLength(200);
    expect(index.stats.fullLoads).toBe(1);

    const other = Store.open(file); // the worker: another connection, no memory index
    try {
      other.videos.insert({ id: 'w', collection_id: c.id, filename: 'w.mp4', path: '/x', size_bytes: 1 });
      other.segments.replaceForVideo('w', c.id, dim, [{ idx: 0, start: 0, end: 1, description: 'x', vector: query }]);
      const gone = other.segments.listForVideo(videos[0]).map((s) => s.id);
      other.segments.deleteForVideo(videos[0], dim);
      // A video row deleted on its own: its segments go by cascade, and the log still sees them.
      const cascaded = other.segments.listForVideo(videos[1]).map((s) => s.id);
      other.videos.delete(videos[1]);

      const hits = mem.segments.nearest(c.id, dim, query, 1000);
      expect(hits[0].segmentId).toBe(other.segments.listForVideo('w')[0].id);
      expect(hits[0].similarity).toBeCloseTo(1, 5);
      expect(hits).toHaveLength(200 - 40 + 1);
      const returned = new Set(hits.map((h) => h.segmentId));
      expect([...gone, ...cascaded].some((id) => returned.has(id))).toBe(false);
      expect(index.stats.fullLoads).toBe(1);
      expect(index.stats.catchUps).toBeGreaterThanOrEqual(1);
      expect(hits.slice(0, 10).map((h) => h.segmentId)).toEqual(exact(other, c.id, dim, query, 10));
    } finally {
      other.close();
    }
  });

  it('compacts after many deletions and reloads when the deletion log was pruned past it', () => {
    const dim = 32;
    const c = disk.collections.insert({ name: 'c', description: '', model: 'm', dim });
    const r = rng(17);
    const data = Array.from({ length: 3000 }, () => unit(dim, r));
    const videos = fill(disk, c.id, dim, data, 25);
    const index = mem.segments.memoryIndex!;
    const query = unit(dim, r);
    mem.segments.nearest(c.id, dim, query, 10);
    // 1,250 segments deleted by another connection: past the compaction threshold (1,024).
    disk.db.transaction(() => {
      for (const v of videos.slice(0, 50)) disk.segments.deleteForVideo(v, dim);
    })();
    expect(mem.segments.nearest(c.id, dim, query, 10).map((h) => h.segmentId)).toEqual(exact(disk, c.id, dim, query, 10));
    expect(index.stats.compactions).toBe(1);
    expect(mem.segments.nearest(c.id, dim, query, 5000)).toHaveLength(3000 - 1250);
    expect(index.stats.fullLoads).toBe(1);

    // Entries the index has not read yet are pruned away: it cannot know what went, so it reloads.
    disk.segments.deleteForVideo(videos[60], dim);
    disk.segments.deleteForVideo(videos[61], dim);
    disk.db.prepare('DELETE FROM segment_deletions WHERE seq < (SELECT MAX(seq) FROM segment_deletions)').run();
    const hits = mem.segments.nearest(c.id, dim, query, 5000);
    expect(hits).toHaveLength(3000 - 1300);
    expect(index.stats.fullLoads).toBe(2);
    expect(hits.slice(0, 10).map((h) => h.segmentId)).toEqual(exact(disk, c.id, dim, query, 10));
  });

  it('copies the vectors of segments written before segment_vectors existed from sqlite-vec, once', () => {
    const dim = 64;
    const c = disk.collections.insert({ name: 'c', description: '', model: 'm', dim });
    const r = rng(21);
    const data = Array.from({ length: 300 }, () => unit(dim, r));
    fill(disk, c.id, dim, data);
    disk.db.prepare('DELETE FROM segment_vectors').run(); // as a database from before migration 9
    const query = data[123];
    const want = disk.segments.nearest(c.id, dim, query, 10).map((h) => h.segmentId); // sqlite-vec
    // The point lookups fall back to sqlite-vec meanwhile.
    expect(disk.segments.similarities(dim, [want[0]], query).get(want[0])).toBeCloseTo(1, 5);
    expect(mem.segments.nearest(c.id, dim, query, 10).map((h) => h.segmentId)).toEqual(want);
    expect(disk.db.prepare('SELECT COUNT(*) FROM segment_vectors').pluck().get()).toBe(300);
    expect(mem.segments.memoryIndex!.stats.fullLoads).toBe(1);
  });

  it('forgets a deleted collection', () => {
    const dim = 16;
    const c = disk.collections.insert({ name: 'c', description: '', model: 'm', dim });
    const r = rng(23);
    const videos = fill(disk, c.id, dim, Array.from({ length: 40 }, () => unit(dim, r)));
    expect(mem.segments.nearest(c.id, dim, unit(dim, r), 5)).toHaveLength(5);
    for (const v of videos) disk.segments.deleteForVideo(v, dim);
    disk.collections.delete(c.id);
    expect(mem.segments.nearest(c.id, dim, unit(dim, r), 5)).toHaveLength(0);
  });
});

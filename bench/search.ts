import { rmSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { hybridSearch } from '../src/search/hybrid.js';
import { Store } from '../src/store/index.js';
import { SqliteCatalog } from '../src/store/catalog/sqlite.js';
import { benchDir, percentile, round } from './util.js';

const WORDS = 'dog cat person car street beach sea sky grass tree city night day face crowd boat mountain snow red blue green bright dark indoor outdoor close wide'.split(' ');

function randomUnit(dim: number, rnd: () => number): Float32Array {
  const v = new Float32Array(dim);
  let n = 0;
  for (let i = 0; i < dim; i++) {
    v[i] = rnd() - 0.5;
    n += v[i] * v[i];
  }
  n = Math.sqrt(n);
  for (let i = 0; i < dim; i++) v[i] /= n;
  return v;
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/**
 * Query latency of hybrid search, on both vector paths: sqlite-vec (one-shot CLI calls, filtered
 * queries) and the in-memory SIMD index (the server). Query latency of hybrid search (sqlite-vec KNN + FTS5 + fusion + grouping) over one collection
 * of N segments with synthetic vectors and descriptions; the text encoder is timed separately.
 */
export async function benchSearch(sizes = [1000, 10000, 100000], queries = 40): Promise<Record<string, unknown>> {
  const dim = 512;
  const out: Record<string, unknown> = {};
  for (const n of sizes) {
    const dir = benchDir();
    const store = Store.open(path.join(dir, 'bench.db'));
    try {
      const c = store.collections.insert({ name: 'bench', description: '', model: 'synthetic', dim });
      const rnd = rng(n);
      const perVideo = 25;
      const t0 = performance.now();
      for (let v = 0; v < n / perVideo; v++) {
        const id = `vid_${v}`;
        store.videos.insert({ id, collection_id: c.id, filename: `${id}.mp4`, path: '/dev/null', size_bytes: 1 });
        store.segments.replaceForVideo(
          id,
          c.id,
          dim,
          Array.from({ length: perVideo }, (_, i) => ({
            idx: i,
            start: i * 4,
            end: i * 4 + 4,
            description: Array.from({ length: 8 }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' '),
            vector: randomUnit(dim, rnd),
          })),
        );
      }
      const insertMs = performance.now() - t0;
      const measure = async (store: Store) => {
        const s = new SqliteCatalog(store);
        const times: number[] = [];
        for (let q = 0; q < queries; q++) {
          const text = `${WORDS[q % WORDS.length]} ${WORDS[(q * 7) % WORDS.length]}`;
          const t = performance.now();
          await hybridSearch(s.segments, s.videos, { collectionId: c.id, dim, queryVector: randomUnit(dim, rnd), text, topK: 10, filter: {}, explain: false });
          times.push(performance.now() - t);
        }
        times.sort((a, b) => a - b);
        return { p50_ms: round(percentile(times, 50)), p95_ms: round(percentile(times, 95)) };
      };
      const sqliteVec = await measure(store);
      const memStore = Store.open(path.join(dir, 'bench.db'), { memoryIndex: true });
      const tLoad = performance.now();
      memStore.segments.nearest(c.id, dim, randomUnit(dim, rnd), 1);
      const loadMs = performance.now() - tLoad;
      const memory = await measure(memStore);
      memStore.close();
      out[`segments_${n}`] = {
        sqlite_vec: sqliteVec,
        memory_index: { ...memory, load_ms: round(loadMs) },
        insert_s: round(insertMs / 1000),
      };
    } finally {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return out;
}

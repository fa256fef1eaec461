import type { Db } from './db.js';
import { createSimdScan, type SimdScan } from './simd-scan.js';

/** Above this many bytes of vectors a collection stays on sqlite-vec (wasm32 memory is 4 GiB). */
const MAX_BYTES = 1024 ** 3;

interface Loaded {
  revision: number;
  ids: Float64Array;
  n: number;
  dim: number;
  simd: SimdScan | null;
  /** Fallback storage when SIMD is unavailable. */
  matrix?: Float32Array;
  qOff: number;
  mOff: number;
  outOff: number;
}

/**
 * An exact in-memory copy of a collection's vectors, scanned with WebAssembly SIMD — about 4x
 * faster than sqlite-vec's scan at 100k segments. Meant for long-running processes (the server):
 * a one-shot CLI call would pay the load for a single query. Reloaded whenever the collection's
 * revision (bumped by every segment write) changes, so results never go stale.
 */
export class MemoryVectorIndex {
  private readonly loaded = new Map<string, Loaded>();

  constructor(private readonly db: Db) {}

  private revision(collectionId: string): number {
    return (this.db.prepare('SELECT revision FROM collections WHERE id = ?').pluck().get(collectionId) as number | undefined) ?? -1;
  }

  private load(collectionId: string, dim: number, table: string): Loaded | undefined {
    const revision = this.revision(collectionId);
    const have = this.loaded.get(collectionId);
    if (have && have.revision === revision && have.dim === dim) return have;
    const count = this.db.prepare('SELECT COUNT(*) FROM segments WHERE collection_id = ?').pluck().get(collectionId) as number;
    if (count * dim * 4 > MAX_BYTES) return undefined;
    const simd = dim % 16 === 0 ? createSimdScan() : null;
    const qOff = 0;
    const mOff = dim * 4;
    const outOff = mOff + count * dim * 4;
    let matrix: Float32Array | undefined;
    if (simd) {
      const need = outOff + count * 4;
      const pages = Math.ceil((need - simd.memory.buffer.byteLength) / 65536);
      if (pages > 0) simd.memory.grow(pages);
      matrix = new Float32Array(simd.memory.buffer, mOff, count * dim);
    } else matrix = new Float32Array(count * dim);
    const ids = new Float64Array(count);
    let n = 0;
    const rows = this.db.prepare(`SELECT segment_id, embedding FROM ${table} WHERE collection_id = ?`).raw().iterate(collectionId) as Iterable<[number, Buffer]>;
    for (const [id, blob] of rows) {
      if (n >= count) break; // written meanwhile: the next revision check reloads
      matrix.set(new Float32Array(blob.buffer, blob.byteOffset, dim), n * dim);
      ids[n++] = Number(id);
    }
    const entry: Loaded = { revision, ids, n, dim, simd, matrix: simd ? undefined : matrix, qOff, mOff, outOff };
    this.loaded.set(collectionId, entry);
    return entry;
  }

  /** Best `k` segments by dot product (= cosine for unit vectors), or undefined to fall back. */
  nearest(collectionId: string, dim: number, table: string, query: Float32Array, k: number): { segmentId: number; similarity: number }[] | undefined {
    const idx = this.load(collectionId, dim, table);
    if (!idx) return undefined;
    let scores: Float32Array;
    if (idx.simd) {
      new Float32Array(idx.simd.memory.buffer, idx.qOff, dim).set(query);
      idx.simd.scan(idx.qOff, idx.mOff, idx.n, dim, idx.outOff);
      scores = new Float32Array(idx.simd.memory.buffer, idx.outOff, idx.n);
    } else {
      scores = new Float32Array(idx.n);
      const m = idx.matrix!;
      for (let i = 0; i < idx.n; i++) {
        let acc = 0;
        const o = i * dim;
        for (let j = 0; j < dim; j++) acc += m[o + j] * query[j];
        scores[i] = acc;
      }
    }
    return topK(scores, k).map((i) => ({ segmentId: idx.ids[i], similarity: scores[i] }));
  }
}

/** Indices of the k largest scores, best first: a threshold from quickselect, then a small sort. */
export function topK(scores: Float32Array, k: number): number[] {
  const n = scores.length;
  if (k <= 0 || n === 0) return [];
  if (k >= n) return Array.from({ length: n }, (_, i) => i).sort((a, b) => scores[b] - scores[a]);
  const copy = Float32Array.from(scores);
  const kth = quickselect(copy, n - k); // value with n-k smaller ones: the k-th largest
  const out: number[] = [];
  for (let i = 0; i < n; i++) if (scores[i] > kth) out.push(i);
  for (let i = 0; i < n && out.length < k; i++) if (scores[i] === kth) out.push(i);
  return out.sort((a, b) => scores[b] - scores[a]).slice(0, k);
}

function quickselect(a: Float32Array, target: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else return a[target];
  }
  return a[target];
}

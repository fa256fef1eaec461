import type { Db } from './db.js';
import { createSimdScan, type SimdScan } from './simd-scan.js';

/** Above this many bytes of int8 rows a collection stays on sqlite-vec (wasm32 memory is 4 GiB). */
const MAX_MATRIX_BYTES = 2 * 1024 ** 3;
/** The deletion log keeps this many entries; a reader further behind than that reloads. */
export const DELETION_LOG_KEEP = 100_000;
/**
 * How far an approximate score may be from the exact one, in standard deviations of the rounding
 * error: candidates are re-ranked until the next one's approximate score plus this margin falls
 * below the k-th exact score. Six sigma: a row beaten by its rounding error that badly is a
 * one-in-a-billion event.
 */
export const ERROR_SIGMAS = 6;

/** Counts of what the index did, for tests and benchmarks. */
export interface MemoryIndexStats {
  /** Whole-collection loads (first use, a deletion log pruned past us, a legacy backfill). */
  fullLoads: number;
  /** Catch-ups: appends and deletions applied without a reload. */
  catchUps: number;
  appended: number;
  deleted: number;
  /** In-place rewrites of the matrix that drop deleted rows. */
  compactions: number;
  /** Candidates re-ranked with their exact vectors (point lookups), over all queries. */
  reranked: number;
}

interface Loaded {
  dim: number;
  /** Row length in bytes: dim rounded up to 16 (zero padding, so the SIMD kernel takes any dim). */
  stride: number;
  table: string;
  /** Freshness token: the collection's revision and the deletion log's last seq when last synced. */
  revision: number;
  delSeq: number;
  /** Largest segment id of the collection seen so far: anything above it is an append. */
  watermark: number;
  /** Rows in use (live and deleted), their capacity. */
  n: number;
  cap: number;
  /** Segment id per row, ascending (appends only ever bring larger ids). */
  ids: Float64Array;
  /** The row's video, as an index into `videoIds` (search groups by video without a query). */
  videos: Int32Array;
  videoIds: string[];
  videoIndex: Map<string, number>;
  /** Rows whose segment was deleted: skipped by every query until the next compaction drops them. */
  dead: Set<number>;
  memory: WebAssembly.Memory;
  /** The kernels, or null: plain JavaScript on the same memory layout. */
  simd: SimdScan | null;
  /**
   * Byte offsets: query (int16 x stride), a row being quantised (f32 x stride) and its max and
   * norm (2 x f32), scales and scores (f32 x cap), matrix (int8 x cap x stride).
   */
  qOff: number;
  xOff: number;
  infoOff: number;
  sOff: number;
  oOff: number;
  mOff: number;
  /** Largest row scale and row norm seen: they bound the rounding error of a score. */
  maxScale: number;
  maxNorm: number;
  /** Views of the whole memory, remade when it grows (growing detaches the old buffer). */
  u8: Uint8Array;
  f32: Float32Array;
}

function views(e: Loaded): { u8: Uint8Array; f32: Float32Array } {
  if (e.u8.buffer !== e.memory.buffer) {
    e.u8 = new Uint8Array(e.memory.buffer);
    e.f32 = new Float32Array(e.memory.buffer);
  }
  return e;
}

function align16(n: number): number {
  return (n + 15) & ~15;
}

/**
 * An int8-quantised in-memory copy of a collection's vectors, for long-running processes (the
 * server). A query scans every row with WebAssembly SIMD (int8 x int16 dot products, one byte per
 * dimension: 512 MB at 1M x 512), keeps the best candidates and re-ranks them with their exact
 * float32 vectors (point lookups in `segment_vectors`), so the top k equal an exact scan's.
 *
 * Each row is quantised symmetrically with its own scale (max |x| / 127); the query likewise. The
 * rounding error of a score is then about sqrt((s_row^2 |q|^2 + s_q^2 |x|^2) / 12); candidates are
 * re-ranked in approximate order until the next one cannot reach the k-th exact score even with
 * six times that error.
 *
 * Writes are followed without reloading, whichever process made them: when the collection's
 * revision or the deletion log moved, the index reads the segments past its largest id (appends)
 * and the log's new entries for the collection (deletions, which mark rows dead until a compaction
 * drops them), in one read transaction. Deleted rows are never returned: they are skipped in the
 * scan, and a candidate whose exact vector is gone is dropped.
 */
export class MemoryVectorIndex {
  private readonly loaded = new Map<string, Loaded>();
  /** Collections too large for memory, by the revision at which they were: not tried again until it moves. */
  private readonly tooLarge = new Map<string, number>();
  readonly stats: MemoryIndexStats = { fullLoads: 0, catchUps: 0, appended: 0, deleted: 0, compactions: 0, reranked: 0 };
  private readonly useSimd: boolean;

  /** `simd: false` scans with plain JavaScript (what happens where WebAssembly SIMD is missing). */
  constructor(
    private readonly db: Db,
    opts: { simd?: boolean } = {},
  ) {
    this.useSimd = opts.simd ?? true;
  }

  private token(collectionId: string): { revision: number | undefined; delSeq: number } {
    const row = this.db
      .prepare('SELECT (SELECT revision FROM collections WHERE id = ?) AS revision, (SELECT MAX(seq) FROM segment_deletions) AS delSeq')
      .get(collectionId) as { revision: number | null; delSeq: number | null };
    return { revision: row.revision ?? undefined, delSeq: row.delSeq ?? 0 };
  }

  /** The collection's index, brought up to date; undefined when it does not fit (use sqlite-vec). */
  private sync(collectionId: string, dim: number, table: string): Loaded | undefined {
    const have = this.loaded.get(collectionId);
    const now = this.token(collectionId);
    if (now.revision === undefined) {
      this.loaded.delete(collectionId);
      return undefined;
    }
    if (have && have.dim === dim && have.table === table) {
      if (have.revision === now.revision && have.delSeq === now.delSeq) return have;
      if (this.catchUp(collectionId, have)) return have;
    }
    this.loaded.delete(collectionId);
    if (this.tooLarge.get(collectionId) === now.revision) return undefined;
    const entry = this.load(collectionId, dim, table);
    if (entry) this.loaded.set(collectionId, entry);
    else this.tooLarge.set(collectionId, now.revision);
    return entry;
  }

  private rowsAfter(collectionId: string, after: number): Iterable<[number, Buffer, string]> {
    return this.db
      .prepare(
        `SELECT s.id, v.embedding, s.video_id FROM segments s JOIN segment_vectors v ON v.segment_id = s.id
         WHERE s.collection_id = ? AND s.id > ? ORDER BY s.id`,
      )
      .raw()
      .iterate(collectionId, after) as Iterable<[number, Buffer, string]>;
  }

  private load(collectionId: string, dim: number, table: string, backfilled = false): Loaded | undefined {
    const stride = align16(dim);
    const result = this.db.transaction((): Loaded | 'backfill' | undefined => {
      const { revision, delSeq } = this.token(collectionId);
      const count = this.db.prepare('SELECT COUNT(*) FROM segments WHERE collection_id = ?').pluck().get(collectionId) as number;
      if (revision === undefined || count * stride > MAX_MATRIX_BYTES) return undefined;
      const watermark = (this.db.prepare('SELECT MAX(id) FROM segments WHERE collection_id = ?').pluck().get(collectionId) as number | null) ?? 0;
      const entry = this.allocate(dim, stride, table, count + Math.max(1024, count >> 3));
      if (!entry) return undefined;
      Object.assign(entry, { revision, delSeq, watermark });
      let rows = 0;
      for (const [id, blob, videoId] of this.rowsAfter(collectionId, 0)) {
        rows++;
        if (!this.append(entry, id, blob, videoId)) return undefined; // more rows than counted: cannot happen in one snapshot
      }
      // Segments without a row in segment_vectors were written before it existed.
      return rows < count && !backfilled ? 'backfill' : entry;
    })();
    if (result === 'backfill') {
      this.backfill(collectionId, table);
      return this.load(collectionId, dim, table, true);
    }
    if (result) {
      this.stats.fullLoads++;
      this.warmUp(result);
    }
    return result;
  }

  /** Segments written before `segment_vectors` existed: their vectors are copied from sqlite-vec, once. */
  private backfill(collectionId: string, table: string): void {
    this.db
      .prepare(
        `INSERT OR IGNORE INTO segment_vectors (segment_id, embedding)
         SELECT v.segment_id, v.embedding FROM ${table} v JOIN segments s ON s.id = v.segment_id WHERE v.collection_id = ?`,
      )
      .run(collectionId);
  }

  private allocate(dim: number, stride: number, table: string, cap: number): Loaded | undefined {
    const simd = this.useSimd ? createSimdScan() : null;
    const memory = simd ? simd.memory : new WebAssembly.Memory({ initial: 1 });
    const entry: Loaded = {
      dim,
      stride,
      table,
      revision: 0,
      delSeq: 0,
      watermark: 0,
      n: 0,
      cap: 0,
      ids: new Float64Array(0),
      videos: new Int32Array(0),
      videoIds: [],
      videoIndex: new Map(),
      dead: new Set(),
      memory,
      simd,
      qOff: 0,
      xOff: 0,
      infoOff: 0,
      sOff: 0,
      oOff: 0,
      mOff: 0,
      maxScale: 0,
      maxNorm: 0,
      u8: new Uint8Array(0),
      f32: new Float32Array(0),
    };
    return this.reserve(entry, cap) ? entry : undefined;
  }

  /**
   * Room for `cap` rows: grows the memory and moves the matrix up behind the longer scale and
   * score arrays (only the matrix and scales hold data; scores are scratch).
   */
  private reserve(e: Loaded, cap: number): boolean {
    if (cap <= e.cap) return true;
    if (cap * e.stride > MAX_MATRIX_BYTES) return false;
    const xOff = align16(e.stride * 2);
    const infoOff = xOff + e.stride * 4;
    const sOff = infoOff + 16;
    const oOff = sOff + cap * 4;
    const mOff = align16(oOff + cap * 4);
    const need = mOff + cap * e.stride;
    const pages = Math.ceil((need - e.memory.buffer.byteLength) / 65536);
    try {
      if (pages > 0) e.memory.grow(pages);
    } catch {
      return false; // no address space left: stay on sqlite-vec
    }
    if (e.n) new Uint8Array(e.memory.buffer).copyWithin(mOff, e.mOff, e.mOff + e.n * e.stride);
    const ids = new Float64Array(cap);
    ids.set(e.ids.subarray(0, e.n));
    const videos = new Int32Array(cap);
    videos.set(e.videos.subarray(0, e.n));
    Object.assign(e, { cap, ids, videos, qOff: 0, xOff, infoOff, sOff, oOff, mOff });
    return true;
  }

  /** Quantises one float32 vector into row `e.n`; false when there is no room left. */
  private append(e: Loaded, id: number, blob: Buffer, videoId: string): boolean {
    if (blob.byteLength !== e.dim * 4) return true; // not this collection's dimension: never searchable here
    if (e.n === e.cap && !this.reserve(e, e.cap + Math.max(1024, e.cap >> 2))) return false;
    const { u8, f32 } = views(e);
    const rowOff = e.mOff + e.n * e.stride;
    let max = 0;
    let norm = 0;
    if (e.simd) {
      // The row is copied in (its zero padding stays from allocation) and quantised by the kernel.
      u8.set(blob, e.xOff);
      e.simd.quantiseI8(e.xOff, e.stride, rowOff, e.infoOff);
      max = f32[e.infoOff >> 2];
      norm = f32[(e.infoOff >> 2) + 1];
    } else {
      const x = new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
      for (let j = 0; j < e.dim; j++) {
        const a = Math.abs(x[j]);
        if (a > max) max = a;
        norm += x[j] * x[j];
      }
      const inv = max > 0 ? 127 / max : 0;
      const row = new Int8Array(e.memory.buffer, rowOff, e.stride);
      for (let j = 0; j < e.dim; j++) row[j] = Math.round(x[j] * inv);
      row.fill(0, e.dim);
    }
    const scale = max / 127;
    f32[(e.sOff >> 2) + e.n] = scale;
    let video = e.videoIndex.get(videoId);
    if (video === undefined) {
      video = e.videoIds.push(videoId) - 1;
      e.videoIndex.set(videoId, video);
    }
    e.videos[e.n] = video;
    e.ids[e.n++] = id;
    if (id > e.watermark) e.watermark = id;
    // A row with NaN or infinite components scores NaN and is never a candidate; it bounds nothing.
    if (scale > e.maxScale && scale < Infinity) e.maxScale = scale;
    if (norm > e.maxNorm * e.maxNorm && norm < Infinity) e.maxNorm = Math.sqrt(norm);
    return true;
  }

  /** Row of a segment id (binary search over the ascending ids), or -1. */
  private rowOf(e: Loaded, id: number): number {
    let lo = 0;
    let hi = e.n - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = e.ids[mid];
      if (v === id) return mid;
      if (v < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /**
   * Applies what changed since the last sync; false when the deletion log no longer reaches back
   * that far (pruned) or the appends do not fit: the caller reloads (or falls back).
   */
  private catchUp(collectionId: string, e: Loaded): boolean {
    const ok = this.db.transaction((): boolean => {
      const { revision, delSeq } = this.token(collectionId);
      if (revision === undefined) return false;
      if (delSeq !== e.delSeq) {
        const oldest = this.db.prepare('SELECT MIN(seq) FROM segment_deletions').pluck().get() as number | null;
        if (oldest !== null && oldest > e.delSeq + 1) return false;
        const gone = this.db
          .prepare('SELECT segment_id FROM segment_deletions WHERE seq > ? AND collection_id = ?')
          .pluck()
          .all(e.delSeq, collectionId) as number[];
        for (const id of gone) {
          const row = this.rowOf(e, id);
          if (row >= 0 && !e.dead.has(row)) {
            e.dead.add(row);
            this.stats.deleted++;
          }
        }
      }
      const before = e.n;
      for (const [id, blob, videoId] of this.rowsAfter(collectionId, e.watermark)) if (!this.append(e, id, blob, videoId)) return false;
      this.stats.appended += e.n - before;
      const last = this.db.prepare('SELECT MAX(id) FROM segments WHERE collection_id = ?').pluck().get(collectionId) as number | null;
      if (last !== null && last > e.watermark) e.watermark = last;
      e.revision = revision;
      e.delSeq = delSeq;
      return true;
    })();
    if (!ok) return false;
    this.stats.catchUps++;
    if (e.dead.size > Math.max(1024, e.n >> 4)) this.compact(e);
    return true;
  }

  /** Drops dead rows by moving the live ones down, in order (ids stay ascending). */
  private compact(e: Loaded): void {
    const bytes = new Uint8Array(e.memory.buffer);
    const scales = new Float32Array(e.memory.buffer, e.sOff, e.cap);
    let w = 0;
    for (let r = 0; r < e.n; r++) {
      if (e.dead.has(r)) continue;
      if (w !== r) {
        bytes.copyWithin(e.mOff + w * e.stride, e.mOff + r * e.stride, e.mOff + (r + 1) * e.stride);
        scales[w] = scales[r];
        e.ids[w] = e.ids[r];
        e.videos[w] = e.videos[r];
      }
      w++;
    }
    e.n = w;
    e.dead.clear();
    this.stats.compactions++;
  }

  /** Runs the kernel a few times on a few rows so the optimising compiler has it before real queries. */
  private warmUp(e: Loaded): void {
    if (!e.simd) return;
    const n = Math.min(e.n, 4096);
    for (let i = 0; i < 8; i++) e.simd.scanI8(e.qOff, e.mOff, n, e.stride, e.sOff, e.oOff);
  }

  /** Approximate scores of every row (dead rows: -Infinity) and the query's scale. */
  private scan(e: Loaded, query: Float32Array): { scores: Float32Array; qScale: number; qNorm: number } {
    let max = 0;
    let qNorm = 0;
    for (let j = 0; j < e.dim; j++) {
      const a = Math.abs(query[j]);
      if (a > max) max = a;
      qNorm += query[j] * query[j];
    }
    const inv = max > 0 ? 127 / max : 0;
    const q16 = new Int16Array(e.memory.buffer, e.qOff, e.stride);
    for (let j = 0; j < e.dim; j++) q16[j] = Math.round(query[j] * inv);
    q16.fill(0, e.dim);
    if (e.simd) e.simd.scanI8(e.qOff, e.mOff, e.n, e.stride, e.sOff, e.oOff);
    else {
      const m = new Int8Array(e.memory.buffer, e.mOff, e.n * e.stride);
      const scales = new Float32Array(e.memory.buffer, e.sOff, e.n);
      const out = new Float32Array(e.memory.buffer, e.oOff, e.n);
      for (let i = 0; i < e.n; i++) {
        let acc = 0;
        const o = i * e.stride;
        for (let j = 0; j < e.dim; j++) acc += m[o + j] * q16[j];
        out[i] = scales[i] * acc;
      }
    }
    const scores = new Float32Array(e.memory.buffer, e.oOff, e.n);
    for (const r of e.dead) scores[r] = -Infinity;
    return { scores, qScale: max / 127, qNorm: Math.sqrt(qNorm) };
  }

  /**
   * Loads or catches up a collection now (its first query would otherwise): the rows it holds
   * (live ones), or undefined when the collection stays on sqlite-vec.
   */
  refresh(collectionId: string, dim: number, table: string): number | undefined {
    const e = this.sync(collectionId, dim, table);
    return e ? e.n - e.dead.size : undefined;
  }

  /**
   * The video of each given segment that the index holds (as of its last sync: call after
   * `nearest` or `refresh` in the same synchronous step); segments it does not hold are left out.
   */
  videosOf(collectionId: string, ids: Iterable<number>): Map<number, string> {
    const out = new Map<number, string>();
    const e = this.loaded.get(collectionId);
    if (!e) return out;
    for (const id of ids) {
      const row = this.rowOf(e, id);
      if (row >= 0 && !e.dead.has(row)) out.set(id, e.videoIds[e.videos[row]]);
    }
    return out;
  }

  /**
   * Approximate similarities, without the exact vectors: the best `k` rows by the int8 scan and the
   * given `also` segments, each with the margin its rounding error stays within (six sigma, as for
   * the re-rank). The caller re-scores
   * exactly only what can still matter. Undefined: the collection is not in memory.
   */
  approximate(
    collectionId: string,
    dim: number,
    table: string,
    query: Float32Array,
    k: number,
    also: Iterable<number> = [],
  ): Map<number, { similarity: number; margin: number }> | undefined {
    const e = this.sync(collectionId, dim, table);
    if (!e) return undefined;
    const out = new Map<number, { similarity: number; margin: number }>();
    const live = e.n - e.dead.size;
    if (live === 0) return out;
    const { scores, qScale, qNorm } = this.scan(e, query);
    const sigma = Math.sqrt((e.maxScale * e.maxScale * qNorm * qNorm + qScale * qScale * e.maxNorm * e.maxNorm) / 12);
    if (k > 0) for (const r of topK(scores, Math.min(live, k))) out.set(e.ids[r], { similarity: qScale * scores[r], margin: ERROR_SIGMAS * sigma });
    // The scan scored every row: the `also` segments are read off it.
    for (const id of also) {
      if (out.has(id)) continue;
      const r = this.rowOf(e, id);
      if (r >= 0 && !e.dead.has(r)) out.set(id, { similarity: qScale * scores[r], margin: ERROR_SIGMAS * sigma });
    }
    return out;
  }

  /** Best `k` segments by dot product (= cosine for unit vectors), or undefined to fall back. */
  nearest(collectionId: string, dim: number, table: string, query: Float32Array, k: number): { segmentId: number; similarity: number }[] | undefined {
    const e = this.sync(collectionId, dim, table);
    if (!e) return undefined;
    const live = e.n - e.dead.size;
    if (k <= 0 || live === 0) return [];
    const { scores, qScale, qNorm } = this.scan(e, query);
    // Rounding error of one approximate score (see the class comment), and the margin it gives.
    const sigma = Math.sqrt((e.maxScale * e.maxScale * qNorm * qNorm + qScale * qScale * e.maxNorm * e.maxNorm) / 12);
    const margin = ERROR_SIGMAS * sigma;
    const lookup = this.db.prepare('SELECT embedding FROM segment_vectors WHERE segment_id = ?').pluck();
    const exact: { segmentId: number; similarity: number }[] = []; // best first, at most k
    let taken = 0;
    let want = Math.min(live, 2 * k + 64);
    for (;;) {
      const rows = topK(scores, want);
      let stopped = false;
      for (; taken < rows.length; taken++) {
        const r = rows[taken];
        const approx = qScale * scores[r];
        if (exact.length >= k && approx + margin < exact[k - 1].similarity) {
          stopped = true;
          break;
        }
        const blob = lookup.get(e.ids[r]) as Buffer | undefined;
        this.stats.reranked++;
        if (!blob || blob.byteLength !== dim * 4) continue; // deleted since the last sync
        const v = new Float32Array(blob.buffer, blob.byteOffset, dim);
        let dot = 0;
        for (let j = 0; j < dim; j++) dot += v[j] * query[j];
        insertBest(exact, { segmentId: e.ids[r], similarity: dot }, k);
      }
      if (stopped || rows.length >= live || want >= live) break;
      want = Math.min(live, want * 4);
    }
    return exact;
  }
}

/** Inserts into a best-first list kept at most `k` long (ties: the earlier segment first). */
export function insertBest(list: { segmentId: number; similarity: number }[], hit: { segmentId: number; similarity: number }, k: number): void {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const m = list[mid];
    if (m.similarity > hit.similarity || (m.similarity === hit.similarity && m.segmentId < hit.segmentId)) lo = mid + 1;
    else hi = mid;
  }
  if (lo >= k) return;
  list.splice(lo, 0, hit);
  if (list.length > k) list.pop();
}

/**
 * Indices of the k largest scores, best first, ties to the lower index; -Infinity and NaN are never
 * taken. One pass with a heap of k (its root the worst kept), so a million scores cost a few ms.
 */
export function topK(scores: Float32Array, k: number): number[] {
  const n = scores.length;
  if (k <= 0 || n === 0) return [];
  const hs = new Float32Array(k);
  const hi = new Int32Array(k);
  let size = 0;
  // a is worse than b: lower score, or the same score at a later index.
  const worse = (sa: number, ia: number, sb: number, ib: number) => sa < sb || (sa === sb && ia > ib);
  for (let i = 0; i < n; i++) {
    const v = scores[i];
    if (!(v > -Infinity)) continue;
    if (size < k) {
      let c = size++;
      while (c > 0) {
        const p = (c - 1) >> 1;
        if (!worse(v, i, hs[p], hi[p])) break;
        hs[c] = hs[p];
        hi[c] = hi[p];
        c = p;
      }
      hs[c] = v;
      hi[c] = i;
    } else if (v > hs[0]) {
      let c = 0;
      for (;;) {
        let l = 2 * c + 1;
        if (l >= k) break;
        if (l + 1 < k && worse(hs[l + 1], hi[l + 1], hs[l], hi[l])) l++;
        if (!worse(hs[l], hi[l], v, i)) break;
        hs[c] = hs[l];
        hi[c] = hi[l];
        c = l;
      }
      hs[c] = v;
      hi[c] = i;
    }
  }
  const out = Array.from(hi.subarray(0, size));
  return out.sort((a, b) => scores[b] - scores[a] || a - b);
}

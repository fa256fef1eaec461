import { filterEntries, type LabelFilter, type Labels, matches } from './labels.js';
import { createSimdScan, type SimdScan } from './simd-scan.js';

export type { LabelFilter, Labels };

/*
 * The in-memory vector index: one module for both backends. A `VectorIndex` holds one collection's
 * vectors (one dimension) as int8 copies of their unit vectors in WebAssembly memory, scanned by the
 * SIMD kernel (src/store/simd-scan.ts), with each row's segment id, video and tag labels. It is fed
 * by a `ChangeFeed`: the backend's "changes since" query (SQLite: src/store/memory-index.ts;
 * PostgreSQL: src/store/catalog/pg-segments.ts), which hands over the rows written and the ids
 * deleted since a cursor. Exact scores come from the float32 vectors: kept beside the int8 rows
 * (`keepFloats`, PostgreSQL: no cheap point lookup) or looked up by the caller (SQLite's
 * `segment_vectors`).
 */

/** One row of a feed: a segment with its video, labels and float32 vector (little-endian bytes). */
export interface FeedRow {
  id: number;
  videoId: string;
  labels: Labels;
  vector: Uint8Array;
}

/** What changed in a collection after a cursor, and the cursor to continue from. */
export interface Changes<Cursor> {
  rows: Iterable<FeedRow>;
  deleted: Iterable<number>;
  cursor: Cursor;
  /** How many rows a full read will bring (a hint to size the index once). */
  expected?: number;
}

/** How a catch-up went: applied, nothing changed, cannot catch up from that cursor (reload), the
 * consumer refused the changes (they do not fit), the collection is gone. */
export type FeedAnswer = 'applied' | 'unchanged' | 'reload' | 'refused' | 'gone';

/**
 * A backend's "changes since" query. `since` undefined: everything. The changes are handed to
 * `consume` while the read's snapshot holds (rows may stream); `consume` answers false to refuse
 * them. A full read may hand over the whole collection a second time (SQLite's one-time backfill
 * of old rows): the last call is the one that holds. SQLite answers at once, PostgreSQL with a promise (one round trip).
 */
export interface ChangeFeed<Cursor, Answer extends FeedAnswer | Promise<FeedAnswer> = FeedAnswer | Promise<FeedAnswer>> {
  changes(collectionId: string, dim: number, since: Cursor | undefined, consume: (changes: Changes<Cursor>) => boolean): Answer;
}

/** Above this many bytes of int8 rows an index is not built (wasm32 memory is 4 GiB). */
export const MAX_MATRIX_BYTES = 2 * 1024 ** 3;
/**
 * How far an approximate score may be from the exact one, in standard deviations of the rounding
 * error: candidates are re-ranked until the next one's approximate score plus this margin falls
 * below the k-th exact score. Six sigma: a row beaten by its rounding error that badly is a
 * one-in-a-billion event.
 */
export const ERROR_SIGMAS = 6;

export interface Hit {
  segmentId: number;
  similarity: number;
}

/** A similarity and the margin within which it is exact (0: exact). */
export interface Scored {
  similarity: number;
  margin: number;
}

function align16(n: number): number {
  return (n + 15) & ~15;
}

/** Inserts into a best-first list kept at most `k` long (ties: the earlier segment first). */
export function insertBest(list: Hit[], hit: Hit, k: number): void {
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

/** Cosine of a float32 vector (little-endian bytes or floats) to a query of norm `qNorm`. */
export function cosineTo(v: Float32Array, off: number, dim: number, query: Float32Array, qNorm: number): number {
  let dot = 0;
  let vv = 0;
  for (let j = 0; j < dim; j++) {
    const x = v[off + j];
    dot += x * query[j];
    vv += x * x;
  }
  const norms = Math.sqrt(vv) * qNorm;
  return norms > 0 ? dot / norms : 0;
}

export function normOf(q: Float32Array): number {
  let s = 0;
  for (let j = 0; j < q.length; j++) s += q[j] * q[j];
  return Math.sqrt(s);
}

/** Counts of what an index did, for tests and benchmarks. */
export interface IndexStats {
  /** Whole-collection loads (first use, a feed that can no longer catch up, a legacy backfill). */
  fullLoads: number;
  /** Catch-ups: appends and deletions applied without a reload. */
  catchUps: number;
  appended: number;
  deleted: number;
  /** In-place rewrites of the matrix that drop deleted rows. */
  compactions: number;
  /** Candidates re-ranked with their exact vectors, over all queries. */
  reranked: number;
}

export function newStats(): IndexStats {
  return { fullLoads: 0, catchUps: 0, appended: 0, deleted: 0, compactions: 0, reranked: 0 };
}

/** Versions of every index come from one counter, so a reloaded index never repeats an old one. */
let versions = 0;

/**
 * One collection's vectors in memory. A query scans every row with WebAssembly SIMD (int8 x int16
 * dot products, one byte per dimension: 512 MB at 1M x 512), keeps the best candidates and re-ranks
 * them with their exact float32 vectors, so the top k equal an exact scan's.
 *
 * Each row is its unit vector quantised symmetrically with its own scale (max |x| / 127); the query
 * likewise. The rounding error of a score is then about sqrt((s_row^2 + s_q^2) / 12); candidates are
 * re-ranked in approximate order until the next one cannot reach the k-th exact score even with six
 * times that error (`ERROR_SIGMAS`). Deleted rows are skipped until a compaction drops them.
 */
export class VectorIndex {
  readonly stride: number;
  /** Rows in use (live and deleted), their capacity. */
  n = 0;
  private cap = 0;
  /** Segment id per row; ascending while `rowMap` is undefined (then found by binary search). */
  private ids = new Float64Array(0);
  private rowMap: Map<number, number> | undefined;
  private videos = new Int32Array(0);
  private readonly videoIds: string[] = [];
  private readonly videoIndex = new Map<string, number>();
  /** Each row's label set, as an index into `labelSets` (few distinct sets: filters test each once). */
  private labelOf = new Int32Array(0);
  private readonly labelSets: Labels[] = [];
  private readonly labelIndex = new Map<string, number>();
  /** Rows whose segment was deleted. */
  readonly dead = new Set<number>();
  /** The exact vectors (`keepFloats`): row-major, dim apart. */
  private floats: Float32Array | undefined;
  /** Each kept row's norm, as cosineTo computes it (so an exact score is the same number, for half the work). */
  private floatNorms = new Float64Array(0);
  /** `floatsUpTo`: the floats are dropped when holding them for `cap` rows would take more bytes. */
  private readonly floatsUpTo: number;
  private readonly memory: WebAssembly.Memory;
  private readonly simd: SimdScan | null;
  /** Byte offsets: query (int16 x stride), a row being quantised (f32 x stride) and its max and
   * norm, scales and scores (f32 x cap), matrix (int8 x cap x stride). */
  private xOff = 0;
  private infoOff = 0;
  private sOff = 0;
  private oOff = 0;
  private mOff = 0;
  /** Largest row scale seen: it bounds the rounding error of a score. */
  private maxScale = 0;
  private u8 = new Uint8Array(0);
  private f32 = new Float32Array(0);
  /** Moves whenever a row comes or goes: answers cached for an older version are stale. */
  version = ++versions;

  /** undefined when `cap` rows would not fit (the caller stays on the database). */
  /**
   * `keepFloats`: hold every row's float32 vector too (re-ranking reads them, not the database);
   * `floatsUpTo` (bytes): only while they take no more (a small collection re-ranks from memory, a
   * large one from its database; once dropped they stay dropped).
   */
  static create(dim: number, cap: number, opts: { simd?: boolean; keepFloats?: boolean; floatsUpTo?: number } = {}): VectorIndex | undefined {
    const index = new VectorIndex(dim, opts);
    return index.reserve(Math.max(cap, 64)) ? index : undefined;
  }

  private constructor(
    readonly dim: number,
    opts: { simd?: boolean; keepFloats?: boolean; floatsUpTo?: number },
  ) {
    this.floatsUpTo = opts.floatsUpTo ?? Infinity;
    this.stride = align16(dim);
    this.simd = (opts.simd ?? true) ? createSimdScan() : null;
    this.memory = this.simd ? this.simd.memory : new WebAssembly.Memory({ initial: 1 });
    if (opts.keepFloats) this.floats = new Float32Array(0);
  }

  /** Whether it holds the rows' float32 vectors (`keepFloats`, within `floatsUpTo`). */
  get hasFloats(): boolean {
    return this.floats !== undefined;
  }

  get live(): number {
    return this.n - this.dead.size;
  }

  private views(): { u8: Uint8Array; f32: Float32Array } {
    if (this.u8.buffer !== this.memory.buffer) {
      this.u8 = new Uint8Array(this.memory.buffer);
      this.f32 = new Float32Array(this.memory.buffer);
    }
    return { u8: this.u8, f32: this.f32 };
  }

  /** Room for `cap` rows: grows the memory and moves the matrix up behind the longer arrays. */
  private reserve(cap: number): boolean {
    if (cap <= this.cap) return true;
    if (cap * this.stride > MAX_MATRIX_BYTES) return false;
    const xOff = align16(this.stride * 2);
    const infoOff = xOff + this.stride * 4;
    const sOff = infoOff + 16;
    const oOff = sOff + cap * 4;
    const mOff = align16(oOff + cap * 4);
    const need = mOff + cap * this.stride;
    const pages = Math.ceil((need - this.memory.buffer.byteLength) / 65536);
    try {
      if (pages > 0) this.memory.grow(pages);
    } catch {
      return false; // no address space left
    }
    const u8 = new Uint8Array(this.memory.buffer);
    if (this.n) {
      u8.copyWithin(mOff, this.mOff, this.mOff + this.n * this.stride);
      u8.copyWithin(sOff, this.sOff, this.sOff + this.n * 4);
    }
    const grown = <T extends Float64Array | Int32Array | Float32Array>(old: T, make: (n: number) => T, width = 1): T => {
      const a = make(cap * width);
      a.set(old.subarray(0, this.n * width));
      return a;
    };
    this.ids = grown(this.ids, (k) => new Float64Array(k));
    this.videos = grown(this.videos, (k) => new Int32Array(k));
    this.labelOf = grown(this.labelOf, (k) => new Int32Array(k));
    if (this.floats) this.floats = cap * this.dim * 4 <= this.floatsUpTo ? grown(this.floats, (k) => new Float32Array(k), this.dim) : undefined;
    this.floatNorms = this.floats ? grown(this.floatNorms, (k) => new Float64Array(k)) : new Float64Array(0);
    Object.assign(this, { cap, xOff, infoOff, sOff, oOff, mOff });
    return true;
  }

  /** The row of a segment id, or -1. */
  rowOf(id: number): number {
    if (this.rowMap) return this.rowMap.get(id) ?? -1;
    let lo = 0;
    let hi = this.n - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = this.ids[mid];
      if (v === id) return mid;
      if (v < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** A live row of the segment, or -1. */
  private liveRow(id: number): number {
    const r = this.rowOf(id);
    return r >= 0 && !this.dead.has(r) ? r : -1;
  }

  has(id: number): boolean {
    return this.liveRow(id) >= 0;
  }

  videoOf(id: number): string | undefined {
    const r = this.liveRow(id);
    return r < 0 ? undefined : this.videoIds[this.videos[r]];
  }

  /**
   * Applies a feed's changes: appends (a row seen before is skipped), then deletions; compacts when
   * dead rows pile up. False when an append does not fit (the caller drops the index).
   */
  apply(changes: Changes<unknown>, stats: IndexStats): boolean {
    const before = this.n;
    for (const row of changes.rows) if (!this.append(row)) return false;
    let deleted = 0;
    for (const id of changes.deleted) {
      const r = this.rowOf(id);
      if (r >= 0 && !this.dead.has(r)) {
        this.dead.add(r);
        deleted++;
      }
    }
    stats.appended += this.n - before;
    stats.deleted += deleted;
    if (this.n !== before || deleted) this.version = ++versions;
    if (this.dead.size > Math.max(1024, this.n >> 4)) {
      this.compact();
      stats.compactions++;
    }
    return true;
  }

  /** Quantises one vector into row `n`; false when there is no room left. */
  private append(row: FeedRow): boolean {
    const { id, vector } = row;
    if (vector.byteLength !== this.dim * 4) return true; // not this dimension: never searchable here
    if (this.n > 0 && !(id > this.ids[this.n - 1])) {
      if (this.rowOf(id) >= 0) return true; // seen before
      if (!this.rowMap) {
        // An id below the largest (PostgreSQL: a transaction that committed late): ids by map from now on.
        this.rowMap = new Map();
        for (let r = 0; r < this.n; r++) this.rowMap.set(this.ids[r], r);
      }
    }
    if (this.n === this.cap && !this.reserve(this.cap + Math.max(1024, this.cap >> 2))) return false;
    const { u8, f32 } = this.views();
    const i = this.n;
    const rowOff = this.mOff + i * this.stride;
    let max = 0;
    let norm2 = 0;
    if (this.simd) {
      // The row is copied in (its zero padding stays from allocation) and quantised by the kernel.
      u8.set(vector, this.xOff);
      this.simd.quantiseI8(this.xOff, this.stride, rowOff, this.infoOff);
      max = f32[this.infoOff >> 2];
      norm2 = f32[(this.infoOff >> 2) + 1];
    } else {
      const x = new Float32Array(vector.buffer.slice(vector.byteOffset, vector.byteOffset + vector.byteLength));
      for (let j = 0; j < this.dim; j++) {
        const a = Math.abs(x[j]);
        if (a > max) max = a;
        norm2 += x[j] * x[j];
      }
      const inv = max > 0 ? 127 / max : 0;
      const out = new Int8Array(this.memory.buffer, rowOff, this.stride);
      for (let j = 0; j < this.dim; j++) out[j] = Math.round(x[j] * inv);
      out.fill(0, this.dim);
    }
    if (this.floats) {
      const x = new Float32Array(vector.buffer.slice(vector.byteOffset, vector.byteOffset + vector.byteLength));
      this.floats.set(x, i * this.dim);
      let vv = 0;
      for (let j = 0; j < this.dim; j++) vv += x[j] * x[j];
      this.floatNorms[i] = Math.sqrt(vv);
    }
    // The scale of the unit vector: a score is then a cosine.
    const norm = Math.sqrt(norm2);
    const scale = norm > 0 && norm < Infinity ? max / 127 / norm : 0;
    f32[(this.sOff >> 2) + i] = scale;
    // A row with NaN or infinite components scores NaN and is never a candidate; it bounds nothing.
    if (scale > this.maxScale && scale < Infinity) this.maxScale = scale;
    let video = this.videoIndex.get(row.videoId);
    if (video === undefined) {
      video = this.videoIds.push(row.videoId) - 1;
      this.videoIndex.set(row.videoId, video);
    }
    this.videos[i] = video;
    this.labelOf[i] = this.labelSet(row.labels);
    this.ids[i] = id;
    this.rowMap?.set(id, i);
    this.n++;
    return true;
  }

  private labelSet(labels: Labels): number {
    const key = JSON.stringify(Object.keys(labels).sort().map((k) => [k, labels[k]]));
    let at = this.labelIndex.get(key);
    if (at === undefined) {
      at = this.labelSets.push(labels) - 1;
      this.labelIndex.set(key, at);
    }
    return at;
  }

  /** Drops dead rows by moving the live ones down, in order. */
  private compact(): void {
    const bytes = new Uint8Array(this.memory.buffer);
    const scales = new Float32Array(this.memory.buffer, this.sOff, this.cap);
    let w = 0;
    for (let r = 0; r < this.n; r++) {
      if (this.dead.has(r)) continue;
      if (w !== r) {
        bytes.copyWithin(this.mOff + w * this.stride, this.mOff + r * this.stride, this.mOff + (r + 1) * this.stride);
        scales[w] = scales[r];
        this.ids[w] = this.ids[r];
        this.videos[w] = this.videos[r];
        this.labelOf[w] = this.labelOf[r];
        if (this.floats) {
          this.floats.copyWithin(w * this.dim, r * this.dim, (r + 1) * this.dim);
          this.floatNorms[w] = this.floatNorms[r];
        }
      }
      w++;
    }
    if (this.rowMap) {
      this.rowMap.clear();
      for (let r = 0; r < w; r++) this.rowMap.set(this.ids[r], r);
    }
    this.n = w;
    this.dead.clear();
  }

  /** Runs the kernel a few times on a few rows so the optimising compiler has it before real queries. */
  warmUp(): void {
    if (!this.simd) return;
    const n = Math.min(this.n, 4096);
    for (let i = 0; i < 8; i++) this.simd.scanI8(0, this.mOff, n, this.stride, this.sOff, this.oOff);
  }

  /**
   * Approximate cosines of every row (dead rows and rows outside the filter: -Infinity), the
   * query's unit scale, and the margin of a score (six sigma of its rounding error).
   */
  private scan(query: Float32Array): { scores: Float32Array; qScale: number; margin: number } {
    let max = 0;
    let qq = 0;
    for (let j = 0; j < this.dim; j++) {
      const a = Math.abs(query[j]);
      if (a > max) max = a;
      qq += query[j] * query[j];
    }
    const inv = max > 0 ? 127 / max : 0;
    const q16 = new Int16Array(this.memory.buffer, 0, this.stride);
    for (let j = 0; j < this.dim; j++) q16[j] = Math.round(query[j] * inv);
    q16.fill(0, this.dim);
    if (this.simd) this.simd.scanI8(0, this.mOff, this.n, this.stride, this.sOff, this.oOff);
    else {
      const m = new Int8Array(this.memory.buffer, this.mOff, this.n * this.stride);
      const scales = new Float32Array(this.memory.buffer, this.sOff, this.n);
      const out = new Float32Array(this.memory.buffer, this.oOff, this.n);
      for (let i = 0; i < this.n; i++) {
        let acc = 0;
        const o = i * this.stride;
        for (let j = 0; j < this.dim; j++) acc += m[o + j] * q16[j];
        out[i] = scales[i] * acc;
      }
    }
    const scores = new Float32Array(this.memory.buffer, this.oOff, this.n);
    for (const r of this.dead) scores[r] = -Infinity;
    const qNorm = Math.sqrt(qq);
    const qScale = qNorm > 0 ? max / 127 / qNorm : 0;
    const margin = ERROR_SIGMAS * Math.sqrt((this.maxScale * this.maxScale + qScale * qScale) / 12);
    return { scores, qScale, margin };
  }

  /** Masks the rows outside the filter (-Infinity); how many rows are left. */
  private mask(scores: Float32Array, want: Array<[string, string]>): number {
    if (want.length === 0) return this.live;
    const ok = this.labelSets.map((l) => matches(l, want));
    if (!ok.includes(true)) {
      scores.fill(-Infinity);
      return 0;
    }
    let left = 0;
    for (let r = 0; r < this.n; r++) {
      if (!ok[this.labelOf[r]]) scores[r] = -Infinity;
      else if (scores[r] > -Infinity) left++;
    }
    return left;
  }

  /** Exact cosine of a live segment from the kept floats (`keepFloats`), else undefined. */
  exact(id: number, query: Float32Array, qNorm = normOf(query)): number | undefined {
    const r = this.liveRow(id);
    const floats = this.floats;
    if (r < 0 || !floats) return undefined;
    // cosineTo with the row's norm kept from append: the same number.
    const off = r * this.dim;
    let dot = 0;
    for (let j = 0; j < this.dim; j++) dot += floats[off + j] * query[j];
    const norms = this.floatNorms[r] * qNorm;
    return norms > 0 ? dot / norms : 0;
  }

  /**
   * Search candidates: the best `k` rows matching `filter` and the `also` segments held here (read
   * off the same scan, whatever their labels), each with its similarity and margin. With
   * `exactTop` and a way to score exactly (`exactOf`, else the kept floats) the top k are the
   * exact top k with exact similarities (margin 0: re-ranked until no other row can beat the k-th);
   * otherwise the top k by the int8 scan, approximate within their margin. `exclude`: rows never
   * returned (not counted in k; an `also` id among them is left out too).
   */
  candidates(
    query: Float32Array,
    k: number,
    filter: LabelFilter | undefined,
    also: Iterable<number>,
    opts: { exactTop?: boolean; exactOf?: (id: number) => number | undefined; stats?: IndexStats; exclude?: Iterable<number> } = {},
  ): Map<number, Scored> {
    const out = new Map<number, Scored>();
    if (this.live === 0) return out;
    const want = filterEntries(filter);
    const { scores, qScale, margin } = this.scan(query);
    const excluded = new Set(opts.exclude ?? []);
    // The `also` rows' approximate scores, read before the filter masks them (in their order).
    const alsoIds: number[] = [];
    const alsoScores: number[] = [];
    for (const id of also) {
      const r = this.liveRow(id);
      if (r >= 0 && !excluded.has(id)) {
        alsoIds.push(id);
        alsoScores.push(qScale * scores[r]);
      }
    }
    let left = this.mask(scores, want);
    for (const id of excluded) {
      const r = this.liveRow(id);
      if (r >= 0 && scores[r] > -Infinity) {
        scores[r] = -Infinity;
        left--;
      }
    }
    if (k >= 1 && left > 0) {
      if (opts.exactTop) {
        const qNorm = normOf(query);
        const exactOf = opts.exactOf ?? ((id: number) => this.exact(id, query, qNorm));
        for (const h of this.rerank(scores, qScale, margin, Math.min(k, left), left, exactOf, opts.stats)) out.set(h.segmentId, { similarity: h.similarity, margin: 0 });
      } else {
        for (const r of topK(scores, Math.min(k, left))) out.set(this.ids[r], { similarity: qScale * scores[r], margin });
      }
    }
    for (let i = 0; i < alsoIds.length; i++) if (!out.has(alsoIds[i])) out.set(alsoIds[i], { similarity: alsoScores[i], margin });
    return out;
  }

  /** The exact top `k` (best first), from the scan's candidates re-ranked in approximate order. */
  nearest(query: Float32Array, k: number, filter: LabelFilter | undefined, exactOf: (id: number) => number | undefined, stats?: IndexStats): Hit[] {
    if (!(k > 0) || this.live === 0) return [];
    const want = filterEntries(filter);
    const { scores, qScale, margin } = this.scan(query);
    const left = this.mask(scores, want);
    return left > 0 ? this.rerank(scores, qScale, margin, Math.min(k, left), left, exactOf, stats) : [];
  }

  private rerank(scores: Float32Array, qScale: number, margin: number, k: number, live: number, exactOf: (id: number) => number | undefined, stats?: IndexStats): Hit[] {
    const exact: Hit[] = []; // best first, at most k
    let taken = 0;
    for (let want = Math.min(live, 2 * k + 64); ; want = Math.min(live, want * 4)) {
      const rows = topK(scores, want);
      for (; taken < rows.length; taken++) {
        const r = rows[taken];
        if (exact.length >= k && qScale * scores[r] + margin < exact[k - 1].similarity) return exact;
        const id = this.ids[r];
        const similarity = exactOf(id);
        if (stats) stats.reranked++;
        if (similarity === undefined) continue; // deleted since the last catch-up
        insertBest(exact, { segmentId: id, similarity }, k);
      }
      if (rows.length >= live || want >= live) return exact;
    }
  }
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

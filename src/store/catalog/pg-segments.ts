import os from 'node:os';
import type pg from 'pg';
import { inTransaction, isClient, type Queryable } from '../pg/migrate.js';
import { ERROR_SIGMAS, insertBest, topK } from '../memory-index.js';
import { createSimdScan, type SimdScan } from '../simd-scan.js';
import type { NewSegment, SegmentKeyRow, SegmentRow, SegmentsCatalog, SignatureRow, SignaturesCatalog, TagFilter } from './types.js';

/*
 * Segments and signatures on PostgreSQL (tables of PG_MIGRATIONS version 3, src/store/pg/migrate.ts).
 *
 * Vectors are stored as float32 little-endian bytea. Without pgvector, nearest-neighbour search runs
 * in this process: PgSegmentsIndex keeps an exact float32 copy of each collection it was asked
 * about and, before every search, catches up with what any process or machine wrote since its last
 * look, in one statement (the segments of transactions it may not have seen, and the deletion log's
 * entries of the same transactions). Scores are exact (margin 0).
 *
 * Keywords are a tsvector of the 'english' configuration (Snowball stemmer with stop words), and a
 * term is matched as a phrase (phraseto_tsquery), ranked by ts_rank (normalised by length) then id.
 * SQLite's FTS5 uses the Porter stemmer without stop words: the two stem a few words differently,
 * and on PostgreSQL a stop word ("the", "with") matches nothing.
 */

const TAG_COLUMNS = ['shot_size', 'camera_movement', 'shooting_angle'] as const;

const SEGMENT_COLS = `id::float8 AS id, video_id, collection_id, idx, start, "end", description, details_json, facts_json, tags_json,
  shot_size, camera_movement, shooting_angle, phash`;

/** The deletion log keeps entries this long (by the database's clock)... */
const DELETION_LOG_KEEP_MS = 24 * 3600_000;
/** ...and an index that has not looked for this long reloads the collection instead of catching up. */
const RELOAD_AFTER_MS = 3600_000;

const LITTLE_ENDIAN = os.endianness() === 'LE';

function checkDim(dim: number): void {
  if (!Number.isInteger(dim) || dim <= 0 || dim > 8192) throw new Error(`bad vector dimension ${dim}`);
}

/** A vector as stored: float32, little endian. */
function toBytes(v: Float32Array): Buffer {
  if (LITTLE_ENDIAN) return Buffer.from(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength));
  const out = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) out.writeFloatLE(v[i], i * 4);
  return out;
}

function fromBytes(b: Buffer): Float32Array {
  if (LITTLE_ENDIAN) return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  const out = new Float32Array(b.byteLength / 4);
  for (let i = 0; i < out.length; i++) out[i] = b.readFloatLE(i * 4);
  return out;
}

function norm(v: Float32Array, off: number, dim: number): number {
  let s = 0;
  for (let j = 0; j < dim; j++) s += v[off + j] * v[off + j];
  return Math.sqrt(s);
}

/**
 * Cosine similarity of row `off` of `m` (norm `vNorm`) to the query (norm `qNorm`): the one
 * computation every path uses, so the index and `similarities` agree to the last bit.
 */
function cosine(m: Float32Array, off: number, vNorm: number, q: Float32Array, qNorm: number, dim: number): number {
  let dot = 0;
  for (let j = 0; j < dim; j++) dot += m[off + j] * q[j];
  const norms = vNorm * qNorm;
  return norms > 0 ? dot / norms : 0;
}

const filterValue = (filter: TagFilter, col: (typeof TAG_COLUMNS)[number]): string | null => filter[col] || null;

/**
 * One collection's vectors (of one dimension) in memory. Rows are appended; deleted rows are
 * marked (id -1) until compacted. Scores are exact float32 cosines. Where WebAssembly SIMD is there
 * and the dimension is a multiple of 16, each row also has an int8 copy of its unit vector in the
 * kernel's memory (src/store/simd-scan.ts, as the SQLite in-memory index): a search scans those
 * (a quarter of the bytes), then scores exactly the best ones until no other can still beat the
 * k-th (six sigma of rounding error), so the answer is the exact one.
 */
class Entry {
  n = 0;
  cap = 0;
  ids = new Float64Array(0);
  norms = new Float64Array(0);
  mat = new Float32Array(0);
  videos: string[] = [];
  tags: Array<[string | null, string | null, string | null]> = [];
  readonly rowOf = new Map<number, number>();
  dead = 0;
  /** pg_snapshot_xmin of the last read (xid8 as text), and the database's clock then (ms). */
  xmin = '0';
  syncedAt = 0;
  /** Moves whenever a row comes or goes: answers cached for an older version are stale. */
  version = 0;
  /** The int8 rows (kernel memory from byte 0, `dim` bytes each) and their scales (a JS copy). */
  private readonly simd: SimdScan | null;
  private scales = new Float32Array(0);
  private maxScale = 0;

  constructor(readonly dim: number) {
    this.simd = dim % 16 === 0 ? createSimdScan() : null;
  }

  get live(): number {
    return this.n - this.dead;
  }

  append(id: number, video: string, tags: [string | null, string | null, string | null], v: Float32Array): void {
    if (this.rowOf.has(id) || v.length !== this.dim) return;
    if (this.n === this.cap) this.grow(Math.max(64, this.cap * 2));
    const i = this.n++;
    this.ids[i] = id;
    this.mat.set(v, i * this.dim);
    this.norms[i] = norm(this.mat, i * this.dim, this.dim);
    this.videos[i] = video;
    this.tags[i] = tags;
    this.rowOf.set(id, i);
    if (this.simd) this.quantise(i);
  }

  /** Row i's int8 copy: its unit vector rounded to steps of max|x| / 127. */
  private quantise(i: number): void {
    const dim = this.dim;
    const vn = this.norms[i];
    let max = 0;
    for (let j = 0; j < dim; j++) max = Math.max(max, Math.abs(this.mat[i * dim + j]));
    const unitMax = vn > 0 ? max / vn : 0;
    const inv = unitMax > 0 ? 127 / max : 0;
    const row = new Int8Array(this.simd!.memory.buffer, i * dim, dim);
    for (let j = 0; j < dim; j++) row[j] = Math.round(this.mat[i * dim + j] * inv);
    this.scales[i] = unitMax / 127;
    if (this.scales[i] > this.maxScale) this.maxScale = this.scales[i];
  }

  remove(id: number): void {
    const i = this.rowOf.get(id);
    if (i === undefined) return;
    this.rowOf.delete(id);
    this.ids[i] = -1;
    this.dead++;
  }

  /** Drops the deleted rows once they are more than half. */
  compact(): void {
    if (this.dead < 64 || this.dead * 2 < this.n) return;
    const dim = this.dim;
    const i8 = this.simd ? new Int8Array(this.simd.memory.buffer, 0, this.cap * dim) : undefined;
    let w = 0;
    for (let r = 0; r < this.n; r++) {
      if (this.ids[r] < 0) continue;
      if (w !== r) {
        this.ids[w] = this.ids[r];
        this.norms[w] = this.norms[r];
        this.mat.copyWithin(w * dim, r * dim, (r + 1) * dim);
        i8?.copyWithin(w * dim, r * dim, (r + 1) * dim);
        this.scales[w] = this.scales[r];
        this.videos[w] = this.videos[r];
        this.tags[w] = this.tags[r];
        this.rowOf.set(this.ids[w], w);
      }
      w++;
    }
    this.n = w;
    this.videos.length = w;
    this.tags.length = w;
    this.dead = 0;
  }

  private grow(cap: number): void {
    const ids = new Float64Array(cap);
    ids.set(this.ids.subarray(0, this.n));
    const norms = new Float64Array(cap);
    norms.set(this.norms.subarray(0, this.n));
    const mat = new Float32Array(cap * this.dim);
    mat.set(this.mat.subarray(0, this.n * this.dim));
    const scales = new Float32Array(cap);
    scales.set(this.scales.subarray(0, this.n));
    this.ids = ids;
    this.norms = norms;
    this.mat = mat;
    this.scales = scales;
    this.cap = cap;
    // The kernel's memory: int8 rows from byte 0 (they stay where they are), then the scales, the
    // query (int16) and the scores, placed after the rows for this capacity.
    if (this.simd) this.reserve();
  }

  private layout(): { sOff: number; qOff: number; oOff: number; end: number } {
    const sOff = this.cap * this.dim;
    const qOff = sOff + this.cap * 4;
    const oOff = qOff + this.dim * 2;
    return { sOff, qOff, oOff, end: oOff + this.cap * 4 };
  }

  private reserve(): void {
    const mem = this.simd!.memory;
    const { end } = this.layout();
    if (mem.buffer.byteLength < end) mem.grow(Math.ceil((end - mem.buffer.byteLength) / 65536));
  }

  /** Exact cosine of row r to the query. */
  exact(r: number, query: Float32Array, qNorm: number): number {
    return cosine(this.mat, r * this.dim, this.norms[r], query, qNorm, this.dim);
  }

  /**
   * The `k` live rows nearest the query (matching `filter`), exact, and the `also` segments that
   * are here: from the int8 scan, approximate within their margin (the caller re-scores what can
   * still matter), else exact. Ids not here are left out.
   */
  search(query: Float32Array, k: number, filter: TagFilter, also: number[]): Map<number, { similarity: number; margin: number }> {
    const out = new Map<number, { similarity: number; margin: number }>();
    const approx = new Map<number, number>();
    const { hits, margin } = this.nearest(query, k, filter, also, approx);
    for (const h of hits) out.set(h.segmentId, { similarity: h.similarity, margin: 0 });
    const qNorm = norm(query, 0, this.dim);
    for (const id of also) {
      const r = this.rowOf.get(id);
      if (out.has(id) || r === undefined) continue;
      const a = approx.get(r);
      out.set(id, a === undefined ? { similarity: this.exact(r, query, qNorm), margin: 0 } : { similarity: a, margin });
    }
    return out;
  }

  private nearest(
    query: Float32Array,
    k: number,
    filter: TagFilter,
    also: number[],
    approx: Map<number, number>,
  ): { hits: Array<{ segmentId: number; similarity: number }>; margin: number } {
    if (k <= 0 || this.live === 0) return { hits: [], margin: 0 };
    const qNorm = norm(query, 0, this.dim);
    const want = TAG_COLUMNS.map((c) => filterValue(filter, c));
    const filtered = want.some((w) => w !== null);
    const keep = (r: number) => {
      if (this.ids[r] < 0) return false;
      if (!filtered) return true;
      const t = this.tags[r];
      return (want[0] === null || t[0] === want[0]) && (want[1] === null || t[1] === want[1]) && (want[2] === null || t[2] === want[2]);
    };
    const best: Array<{ segmentId: number; similarity: number }> = [];
    const consider = (r: number) => insertBest(best, { segmentId: this.ids[r], similarity: this.exact(r, query, qNorm) }, k);
    if (!this.simd || qNorm === 0) {
      for (let r = 0; r < this.n; r++) if (keep(r)) consider(r);
      return { hits: best, margin: 0 };
    }
    // Approximate scores of every row from the int8 copies, then exact ones, best approximate
    // first, until none left can beat the k-th exact score by more than the rounding error.
    const { sOff, qOff, oOff } = this.layout();
    const mem = this.simd.memory.buffer;
    new Float32Array(mem, sOff, this.n).set(this.scales.subarray(0, this.n));
    let qMax = 0;
    for (let j = 0; j < this.dim; j++) qMax = Math.max(qMax, Math.abs(query[j]));
    const q16 = new Int16Array(mem, qOff, this.dim);
    for (let j = 0; j < this.dim; j++) q16[j] = Math.round((query[j] * 127) / qMax);
    this.simd.scanI8(qOff, 0, this.n, this.dim, sOff, oOff);
    const qScale = qMax / 127 / qNorm; // the query as a unit vector
    const scores = new Float32Array(mem, oOff, this.n);
    // The `also` rows read off the scan before the filter masks rows out.
    for (const id of also) {
      const r = this.rowOf.get(id);
      if (r !== undefined) approx.set(r, qScale * scores[r]);
    }
    let live = 0;
    for (let r = 0; r < this.n; r++) {
      if (keep(r)) live++;
      else scores[r] = -Infinity;
    }
    const sigma = Math.sqrt((this.maxScale * this.maxScale + qScale * qScale) / 12);
    const margin = ERROR_SIGMAS * sigma;
    let taken = 0;
    for (let ask = Math.min(live, 2 * k + 64); ; ask = Math.min(live, ask * 4)) {
      const rows = topK(scores, ask);
      for (; taken < rows.length; taken++) {
        const r = rows[taken];
        if (best.length >= k && qScale * scores[r] + margin < best[k - 1].similarity) return { hits: best, margin };
        consider(r);
      }
      if (rows.length >= live) return { hits: best, margin };
    }
  }

  /** Row of a segment id, when it is here. */
  row(id: number): number | undefined {
    return this.rowOf.get(id);
  }

  videoOf(id: number): string | undefined {
    const r = this.rowOf.get(id);
    return r === undefined ? undefined : this.videos[r];
  }
}

interface SyncRow {
  kind: 0 | 1 | 2;
  id: number | null;
  video_id: string | null;
  shot_size: string | null;
  camera_movement: string | null;
  shooting_angle: string | null;
  embedding: Buffer | null;
  xmin: string | null;
  now_ms: number | null;
}

/**
 * One statement, so one snapshot: the collection's segments written by transactions numbered at or
 * above $3 (every transaction not yet visible at the previous read is: it was running then, or
 * started later), the deletion log's entries of those transactions (when $4), and the snapshot's
 * xmin to start from next time with the database's clock.
 */
const SYNC = `
  SELECT 0 AS kind, id::float8 AS id, video_id, shot_size, camera_movement, shooting_angle, embedding, NULL::text AS xmin, NULL::float8 AS now_ms
    FROM segments WHERE collection_id = $1 AND dim = $2 AND txid >= $3::xid8
  UNION ALL
  SELECT 1, segment_id::float8, NULL, NULL, NULL, NULL, NULL, NULL, NULL
    FROM segment_deletions WHERE $4 AND collection_id = $1 AND txid >= $3::xid8
  UNION ALL
  SELECT 2, NULL, NULL, NULL, NULL, NULL, NULL, pg_snapshot_xmin(pg_current_snapshot())::text, (extract(epoch FROM clock_timestamp()) * 1000)::float8`;

/** Versions of every entry come from one counter, so a reloaded entry never repeats an old one. */
let versions = 0;

/** Answers kept (keyword matches, term counts) per catalog; past this the cache starts over. */
const ANSWER_CACHE_SIZE = 4096;

/** Reads what changed since `e` last looked (everything, for a new entry) and applies it. */
async function syncEntry(q: Queryable, collectionId: string, e: Entry, full: boolean): Promise<void> {
  const { rows } = await q.query<SyncRow>(SYNC, [collectionId, e.dim, full ? '0' : e.xmin, !full]);
  const deleted: number[] = [];
  for (const r of rows) {
    if (r.kind === 0) e.append(r.id!, r.video_id!, [r.shot_size, r.camera_movement, r.shooting_angle], fromBytes(r.embedding!));
    else if (r.kind === 1) deleted.push(r.id!);
    else {
      e.xmin = r.xmin!;
      e.syncedAt = r.now_ms!;
    }
  }
  for (const id of deleted) e.remove(id);
  if (rows.length > 1 || full) e.version = ++versions;
  e.compact();
}

/**
 * The in-memory vector index of one process (one per PgSegmentsCatalog on a pool): per collection
 * and dimension, an exact copy caught up before each search. Searches of one collection take turns
 * (a catch-up applies on top of the previous one).
 */
export class PgSegmentsIndex {
  private readonly entries = new Map<string, { entry?: Entry; turn: Promise<unknown> }>();
  /** Whole-collection loads and catch-ups so far (tests, benches). */
  readonly stats = { fullLoads: 0, catchUps: 0 };

  constructor(private readonly pool: pg.Pool) {}

  /** Exact similarities of the segments the copies of this dimension hold, each copy caught up first. */
  async exact(dim: number, ids: number[], query: Float32Array): Promise<Map<number, number>> {
    const out = new Map<number, number>();
    const qNorm = norm(query, 0, dim);
    for (const key of [...this.entries.keys()]) {
      const [collectionId, d] = key.split('\u0000');
      if (Number(d) !== dim || out.size === ids.length) continue;
      const e = await this.fresh(collectionId, dim);
      for (const id of ids) {
        const r = e.row(id);
        if (r !== undefined && !out.has(id)) out.set(id, e.exact(r, query, qNorm));
      }
    }
    return out;
  }

  /** The collection's index caught up, when this process keeps one for it (it searched it before). */
  async freshIfKept(collectionId: string): Promise<Entry | undefined> {
    for (const key of this.entries.keys()) {
      const [id, dim] = key.split('\u0000');
      if (id === collectionId) return this.fresh(collectionId, Number(dim));
    }
    return undefined;
  }

  /** The collection's index, caught up with every write committed before this call. */
  async fresh(collectionId: string, dim: number): Promise<Entry> {
    const key = `${collectionId}\u0000${dim}`;
    let slot = this.entries.get(key);
    if (!slot) {
      slot = { turn: Promise.resolve() };
      this.entries.set(key, slot);
    }
    const s = slot;
    const run = s.turn.then(async () => {
      let e = s.entry;
      if (e) {
        const before = e.syncedAt;
        await syncEntry(this.pool, collectionId, e, false);
        this.stats.catchUps++;
        // Longer than that since the last look (by the database's clock): the deletion log may have
        // been pruned of entries this copy never saw.
        if (e.syncedAt - before > RELOAD_AFTER_MS) e = undefined;
      }
      if (!e) {
        e = new Entry(dim);
        await syncEntry(this.pool, collectionId, e, true);
        this.stats.fullLoads++;
      }
      s.entry = e;
      return e;
    });
    s.turn = run.catch(() => {});
    return run;
  }
}

export class PgSegmentsCatalog implements SegmentsCatalog {
  /**
   * `q`: a pool (with its own in-memory index, unless one is given) or a client inside a
   * transaction (searches then scan the collection as the transaction sees it, without an index).
   */
  constructor(
    private readonly q: Queryable,
    readonly index: PgSegmentsIndex | undefined = isClient(q) ? undefined : new PgSegmentsIndex(q),
  ) {}

  async replaceForVideo(videoId: string, collectionId: string, dim: number, segments: NewSegment[]): Promise<void> {
    checkDim(dim);
    for (const s of segments) {
      if (s.vector.length !== dim) throw new Error(`segment vector has ${s.vector.length} dims, expected ${dim}`);
    }
    const json = (v: Record<string, unknown> | undefined) => (v ? JSON.stringify(v) : null);
    await inTransaction(this.q, async (c) => {
      await this.deleteOn(c, videoId);
      if (segments.length === 0) return;
      await c.query(
        `INSERT INTO segments (video_id, collection_id, idx, start, "end", description, keywords, details_json, facts_json, tags_json,
           shot_size, camera_movement, shooting_angle, phash, dim, embedding)
         SELECT $1, $2, u.idx, u.start, u.stop, u.description, to_tsvector('english', u.keywords), u.details, u.facts, u.tags,
           u.shot_size, u.camera_movement, u.shooting_angle, u.phash, $3, u.embedding
         FROM unnest($4::int[], $5::float8[], $6::float8[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[],
           $12::text[], $13::text[], $14::text[], $15::text[], $16::bytea[])
           WITH ORDINALITY AS u(idx, start, stop, description, keywords, details, facts, tags, shot_size, camera_movement, shooting_angle, phash, embedding, ord)
         ORDER BY u.ord`,
        [
          videoId,
          collectionId,
          dim,
          segments.map((s) => s.idx),
          segments.map((s) => s.start),
          segments.map((s) => s.end),
          segments.map((s) => s.description),
          segments.map((s) => s.keywords ?? s.description),
          segments.map((s) => json(s.details)),
          segments.map((s) => json(s.facts)),
          segments.map((s) => json(s.tags)),
          segments.map((s) => s.shot_size ?? null),
          segments.map((s) => s.camera_movement ?? null),
          segments.map((s) => s.shooting_angle ?? null),
          segments.map((s) => s.phash ?? null),
          segments.map((s) => toBytes(s.vector)),
        ],
      );
    });
  }

  async deleteForVideo(videoId: string, dim: number): Promise<void> {
    checkDim(dim);
    await this.deleteOn(this.q, videoId);
  }

  /** Deletes the video's segments (the trigger logs them) and prunes the log of old entries. */
  private async deleteOn(q: Queryable, videoId: string): Promise<void> {
    const r = await q.query('DELETE FROM segments WHERE video_id = $1', [videoId]);
    if (r.rowCount) {
      await q.query(`DELETE FROM segment_deletions WHERE at < clock_timestamp() - make_interval(secs => $1::float8 / 1000)`, [DELETION_LOG_KEEP_MS]);
    }
  }

  async byIds(ids: number[]): Promise<Map<number, SegmentRow>> {
    const out = new Map<number, SegmentRow>();
    if (ids.length === 0) return out;
    const { rows } = await this.q.query<SegmentRow>(`SELECT ${SEGMENT_COLS} FROM segments WHERE id = ANY ($1::bigint[])`, [ids]);
    for (const r of rows) out.set(r.id, r);
    return out;
  }

  async listForVideo(videoId: string): Promise<SegmentRow[]> {
    return (await this.q.query<SegmentRow>(`SELECT ${SEGMENT_COLS} FROM segments WHERE video_id = $1 ORDER BY idx, id`, [videoId])).rows;
  }

  async countForCollection(collectionId: string): Promise<number> {
    const kept = await this.index?.freshIfKept(collectionId);
    if (kept) return kept.live; // a collection's segments all have its dimension
    const { rows } = await this.q.query<{ n: number }>('SELECT count(*)::int AS n FROM segments WHERE collection_id = $1', [collectionId]);
    return rows[0].n;
  }

  async vectors(dim: number, ids: number[]): Promise<Map<number, Float32Array>> {
    checkDim(dim);
    const out = new Map<number, Float32Array>();
    if (ids.length === 0) return out;
    const { rows } = await this.q.query<{ id: number; embedding: Buffer }>(
      'SELECT id::float8 AS id, embedding FROM segments WHERE id = ANY ($1::bigint[]) AND dim = $2',
      [ids, dim],
    );
    for (const r of rows) out.set(r.id, fromBytes(r.embedding));
    return out;
  }

  /**
   * Exact: the in-memory index (caught up first) on a pool; inside a transaction, a scan of the
   * collection as the transaction sees it. `also` segments outside the index (another collection)
   * are scored from their stored vectors.
   */
  async candidates(
    collectionId: string,
    dim: number,
    query: Float32Array,
    k: number,
    filter: TagFilter,
    also: number[],
  ): Promise<Map<number, { similarity: number; margin: number }>> {
    checkDim(dim);
    let e: Entry;
    if (this.index) e = await this.index.fresh(collectionId, dim);
    else {
      e = new Entry(dim);
      await syncEntry(this.q, collectionId, e, true);
    }
    const out = e.search(query, k, filter, also);
    const rest = also.filter((id) => !out.has(id));
    if (rest.length) for (const [id, similarity] of await this.similarities(dim, rest, query)) out.set(id, { similarity, margin: 0 });
    return out;
  }

  /** Exact; from this process's copies where they hold the segment (searched collections), else from the table. */
  async similarities(dim: number, ids: number[], query: Float32Array): Promise<Map<number, number>> {
    const out = (await this.index?.exact(dim, ids, query)) ?? new Map<number, number>();
    const rest = ids.filter((id) => !out.has(id));
    if (rest.length === 0) return out;
    const qNorm = norm(query, 0, dim);
    for (const [id, v] of await this.vectors(dim, rest)) out.set(id, cosine(v, 0, norm(v, 0, dim), query, qNorm, dim));
    return out;
  }

  async videosOf(collectionId: string, ids: number[]): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    if (ids.length === 0) return out;
    // From this process's copy of the collection, caught up; only the others from the table.
    const kept = await this.index?.freshIfKept(collectionId);
    const rest: number[] = [];
    for (const id of ids) {
      const video = kept?.videoOf(id);
      if (video === undefined) rest.push(id);
      else out.set(id, video);
    }
    if (rest.length === 0) return out;
    const { rows } = await this.q.query<{ id: number; video_id: string }>('SELECT id::float8 AS id, video_id FROM segments WHERE id = ANY ($1::bigint[])', [rest]);
    for (const r of rows) out.set(r.id, r.video_id);
    return out;
  }

  /**
   * Counts are kept while the library's largest segment id and last deletion stay the same (one
   * cheap query per call; on a pool only). A segment committed after one with a larger id is
   * counted from the next write on: this only decides which query words are too common to count.
   */
  async selectiveTerms(terms: string[], maxShare = 0.1, floor = 500): Promise<string[]> {
    let total: number;
    let token = '';
    if (this.index) {
      const { rows } = await this.q.query<{ token: string }>(
        `SELECT coalesce((SELECT max(id) FROM segments), 0)::text || '/' || coalesce((SELECT max(seq) FROM segment_deletions), 0)::text AS token`,
      );
      token = `library|${rows[0].token}`;
    }
    const cachedTotal = this.answers.get(`${token}|total`) as number | undefined;
    if (token && cachedTotal !== undefined) total = cachedTotal;
    else {
      const { rows } = await this.q.query<{ n: number }>('SELECT count(*)::float8 AS n FROM segments');
      total = rows[0].n;
      if (token) this.remember(`${token}|total`, total);
    }
    const limit = Math.max(floor, total * maxShare);
    if (total <= limit || terms.length === 0) return terms;
    const cap = Math.ceil(limit) + 1;
    const key = (t: string) => `${token}|df|${cap}|${t}`;
    const missing = token ? terms.filter((t) => !this.answers.has(key(t))) : terms;
    const df = new Map<string, number>();
    if (missing.length) {
      const counts = await this.q.query<{ ord: string; n: number }>(
        `SELECT t.ord::text AS ord, (SELECT count(*)::int FROM (
           SELECT 1 FROM segments s WHERE s.keywords @@ phraseto_tsquery('english', t.term) LIMIT $2) x) AS n
         FROM unnest($1::text[]) WITH ORDINALITY AS t(term, ord)`,
        [missing, cap],
      );
      for (const r of counts.rows) df.set(missing[Number(r.ord) - 1], r.n);
      if (token) for (const [t, n] of df) this.remember(key(t), n);
    }
    return terms.filter((t) => (df.get(t) ?? (this.answers.get(key(t)) as number | undefined) ?? 0) <= limit);
  }

  /** Answers that hold until the data under them changes (the key says which version). */
  private readonly answers = new Map<string, unknown>();

  private remember(key: string, value: unknown): void {
    if (this.answers.size >= ANSWER_CACHE_SIZE) this.answers.clear();
    this.answers.set(key, value);
  }

  /**
   * Kept per term while this process's copy of the collection has seen no change (its version, after
   * catching up): when the collection was searched here before, a repeated word costs no query.
   */
  async termMatches(collectionId: string, terms: string[], limit: number, filter: TagFilter = {}): Promise<Map<string, number[]>> {
    const out = new Map<string, number[]>();
    for (const t of terms) out.set(t, []);
    if (terms.length === 0 || limit <= 0) return out;
    const kept = await this.index?.freshIfKept(collectionId);
    const key = (t: string) => `${collectionId}|v${kept!.version}|${TAG_COLUMNS.map((c) => filter[c] ?? '').join('|')}|${limit}|${t}`;
    const missing = kept ? terms.filter((t) => !this.answers.has(key(t))) : terms;
    if (kept) for (const t of terms) if (!missing.includes(t)) out.set(t, this.answers.get(key(t)) as number[]);
    if (missing.length === 0) return out;
    const found = await this.matchTerms(collectionId, missing, limit, filter);
    for (const [t, ids] of found) {
      out.set(t, ids);
      if (kept) this.remember(key(t), ids);
    }
    return out;
  }

  private async matchTerms(collectionId: string, terms: string[], limit: number, filter: TagFilter): Promise<Map<string, number[]>> {
    const out = new Map<string, number[]>();
    const { rows } = await this.q.query<{ ord: string; id: number }>(
      `SELECT t.ord::text AS ord, m.id
       FROM unnest($2::text[]) WITH ORDINALITY AS t(term, ord)
       CROSS JOIN LATERAL (
         SELECT s.id::float8 AS id, ts_rank(s.keywords, q, 1) AS rank
         FROM phraseto_tsquery('english', t.term) AS q, segments s
         WHERE numnode(q) > 0 AND s.keywords @@ q AND s.collection_id = $1
           AND ($4::text IS NULL OR s.shot_size = $4) AND ($5::text IS NULL OR s.camera_movement = $5)
           AND ($6::text IS NULL OR s.shooting_angle = $6)
         ORDER BY rank DESC, s.id
         LIMIT $3) m
       ORDER BY t.ord, m.rank DESC, m.id`,
      [collectionId, terms, limit, filterValue(filter, 'shot_size'), filterValue(filter, 'camera_movement'), filterValue(filter, 'shooting_angle')],
    );
    const byOrd = new Map<number, number[]>();
    for (const r of rows) {
      const o = Number(r.ord);
      let list = byOrd.get(o);
      if (!list) byOrd.set(o, (list = []));
      list.push(r.id);
    }
    terms.forEach((t, i) => out.set(t, byOrd.get(i + 1) ?? []));
    return out;
  }
}

/** Visual signatures of videos; deleted with their video (foreign key, cascade). */
export class PgSignaturesCatalog implements SignaturesCatalog {
  constructor(private readonly q: Queryable) {}

  async put(videoId: string, version: number, frames: number, data: Buffer): Promise<void> {
    await this.q.query(
      `INSERT INTO video_signatures (video_id, version, frames, data, updated_at) VALUES ($1, $2, $3, $4, clock_timestamp())
       ON CONFLICT (video_id) DO UPDATE SET version = excluded.version, frames = excluded.frames, data = excluded.data, updated_at = excluded.updated_at`,
      [videoId, version, frames, data],
    );
  }

  async delete(videoId: string): Promise<void> {
    await this.q.query('DELETE FROM video_signatures WHERE video_id = $1', [videoId]);
  }

  async forCollection(collectionId: string): Promise<SignatureRow[]> {
    const { rows } = await this.q.query<SignatureRow>(
      `SELECT s.video_id, s.version, s.frames, s.data FROM video_signatures s JOIN videos v ON v.id = s.video_id
       WHERE v.collection_id = $1 ORDER BY v.created_at, v.seq`,
      [collectionId],
    );
    return rows;
  }

  /** By video id in byte order (as SQLite's BINARY collation), then idx. */
  async segmentKeys(collectionId: string): Promise<SegmentKeyRow[]> {
    const { rows } = await this.q.query<SegmentKeyRow>(
      `SELECT video_id, idx, start, "end", phash FROM segments WHERE collection_id = $1 ORDER BY video_id COLLATE "C", idx`,
      [collectionId],
    );
    return rows;
  }
}

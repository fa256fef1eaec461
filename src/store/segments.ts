import type { Db } from './db.js';
import { DELETION_LOG_KEEP, MemoryVectorIndex } from './memory-index.js';

export interface NewSegment {
  idx: number;
  start: number;
  end: number;
  description: string;
  /** What the keyword index holds for it (analysis words); default: the description. */
  keywords?: string;
  /** What each analyzer found, by analyzer name. */
  facts?: Record<string, unknown>;
  details?: Record<string, unknown>;
  tags?: Record<string, unknown>;
  shot_size?: string;
  camera_movement?: string;
  shooting_angle?: string;
  /** pHash of the keyframe, 16 hex digits (src/media/phash.ts); none for a flat picture. */
  phash?: string;
  vector: Float32Array;
}

export interface SegmentRow {
  id: number;
  video_id: string;
  collection_id: string;
  idx: number;
  start: number;
  end: number;
  description: string;
  details_json: string | null;
  facts_json: string | null;
  tags_json: string | null;
  shot_size: string | null;
  camera_movement: string | null;
  shooting_angle: string | null;
  phash: string | null;
}

export interface TagFilter {
  shot_size?: string;
  camera_movement?: string;
  shooting_angle?: string;
}

export interface VectorHit {
  segmentId: number;
  similarity: number;
}

export interface KeywordHit {
  segmentId: number;
  rank: number;
}

const TAG_COLUMNS = ['shot_size', 'camera_movement', 'shooting_angle'] as const;
/** Cached counts and keyword matches (SegmentsRepo.cached) kept at most; past this it starts over. */
const ANSWER_CACHE_SIZE = 4096;
/** sqlite-vec's KNN `k` ceiling. */
export const MAX_KNN = 4096;

/**
 * Best first; exact ties (identical vectors, e.g. two segments of a still shot) go to the earlier
 * segment, so every index path and every face answers the same moment.
 */
function bySimilarityThenId(a: VectorHit, b: VectorHit): number {
  return b.similarity - a.similarity || a.segmentId - b.segmentId;
}

export function vecTable(dim: number): string {
  if (!Number.isInteger(dim) || dim <= 0 || dim > 8192) throw new Error(`bad vector dimension ${dim}`);
  return `vec_segments_${dim}`;
}

/**
 * Segments with their vectors (sqlite-vec vec0, one table per dimension, partitioned by
 * collection so a KNN scans only that collection) and their descriptions (FTS5, rowid = segment id).
 */
export class SegmentsRepo {
  private readonly ensured = new Set<number>();
  private readonly memory: MemoryVectorIndex | undefined;
  private cacheToken = '';
  private tokenChecked = false;
  private readonly answers = new Map<string, unknown>();

  /**
   * `memoryIndex`: serve unfiltered KNN from an int8 in-memory copy re-ranked with the exact
   * vectors (long-running processes; src/store/memory-index.ts).
   */
  constructor(
    private readonly db: Db,
    opts: { memoryIndex?: boolean } = {},
  ) {
    this.memory = opts.memoryIndex ? new MemoryVectorIndex(db) : undefined;
    const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'vec_segments_[0-9]*' AND name NOT GLOB '*_*_*_*'`).pluck().all() as string[];
    for (const t of tables) {
      const dim = Number(t.slice('vec_segments_'.length));
      if (Number.isInteger(dim) && dim > 0) this.ensureVectorTable(dim);
    }
  }

  /** The in-memory index, when this repository has one (its `stats` count loads and catch-ups). */
  get memoryIndex(): MemoryVectorIndex | undefined {
    return this.memory;
  }

  /** After a rollback: a vector table made inside the transaction is gone again, so check anew. */
  forgetTables(): void {
    this.ensured.clear();
  }

  ensureVectorTable(dim: number): void {
    if (this.ensured.has(dim)) return;
    this.db.exec(
      `CREATE VIRTUAL TABLE IF NOT EXISTS ${vecTable(dim)} USING vec0(
         segment_id INTEGER PRIMARY KEY,
         collection_id TEXT PARTITION KEY,
         shot_size TEXT,
         camera_movement TEXT,
         shooting_angle TEXT,
         embedding FLOAT[${dim}] distance_metric=cosine
       );
       -- a segment deleted any way (by cascade from its video or collection) takes its vector along
       CREATE TRIGGER IF NOT EXISTS ${vecTable(dim)}_gc AFTER DELETE ON segments BEGIN
         DELETE FROM ${vecTable(dim)} WHERE segment_id = OLD.id;
       END`,
    );
    this.ensured.add(dim);
  }

  /** Replaces every segment of a video in one transaction, so a redone job never duplicates rows. */
  replaceForVideo(videoId: string, collectionId: string, dim: number, segments: NewSegment[]): void {
    this.ensureVectorTable(dim);
    this.tokenChecked = false;
    const table = vecTable(dim);
    const insertSeg = this.db.prepare(
      `INSERT INTO segments (video_id, collection_id, idx, start, end, description, details_json, tags_json,
         shot_size, camera_movement, shooting_angle, facts_json, phash)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const insertVec = this.db.prepare(
      `INSERT INTO ${table} (segment_id, collection_id, shot_size, camera_movement, shooting_angle, embedding)
       VALUES (?, ?, ?, ?, ?, ?)`,
    );
    const insertFts = this.db.prepare('INSERT INTO segments_fts (rowid, description) VALUES (?, ?)');
    const insertFloat = this.db.prepare('INSERT INTO segment_vectors (segment_id, embedding) VALUES (?, ?)');
    this.db.transaction(() => {
      this.deleteForVideo(videoId, dim);
      this.db.prepare('UPDATE collections SET revision = revision + 1 WHERE id = ?').run(collectionId);
      for (const s of segments) {
        if (s.vector.length !== dim) throw new Error(`segment vector has ${s.vector.length} dims, expected ${dim}`);
        const info = insertSeg.run(
          videoId,
          collectionId,
          s.idx,
          s.start,
          s.end,
          s.description,
          s.details ? JSON.stringify(s.details) : null,
          s.tags ? JSON.stringify(s.tags) : null,
          s.shot_size ?? null,
          s.camera_movement ?? null,
          s.shooting_angle ?? null,
          s.facts ? JSON.stringify(s.facts) : null,
          s.phash ?? null,
        );
        const id = BigInt(info.lastInsertRowid);
        const embedding = Buffer.from(s.vector.buffer, s.vector.byteOffset, s.vector.byteLength);
        // vec0 metadata columns take no NULL: '' stands for "not tagged".
        insertVec.run(id, collectionId, s.shot_size ?? '', s.camera_movement ?? '', s.shooting_angle ?? '', embedding);
        insertFloat.run(id, embedding);
        insertFts.run(id, s.keywords ?? s.description);
      }
    })();
  }

  deleteForVideo(videoId: string, dim: number): void {
    this.ensureVectorTable(dim);
    this.tokenChecked = false;
    const ids = this.db.prepare('SELECT id FROM segments WHERE video_id = ?').pluck().all(videoId) as number[];
    const delVec = this.db.prepare(`DELETE FROM ${vecTable(dim)} WHERE segment_id = ?`);
    const delFts = this.db.prepare('DELETE FROM segments_fts WHERE rowid = ?');
    for (const id of ids) {
      delVec.run(BigInt(id));
      delFts.run(id);
    }
    if (ids.length) {
      this.db.prepare('UPDATE collections SET revision = revision + 1 WHERE id = (SELECT collection_id FROM videos WHERE id = ?)').run(videoId);
    }
    this.db.prepare('DELETE FROM segments WHERE video_id = ?').run(videoId);
    // segment_vectors rows go by cascade; the trigger logged each deletion for in-memory indexes.
    if (ids.length) {
      this.db.prepare('DELETE FROM segment_deletions WHERE seq <= (SELECT MAX(seq) FROM segment_deletions) - ?').run(DELETION_LOG_KEEP);
    }
  }

  byIds(ids: number[]): Map<number, SegmentRow> {
    const out = new Map<number, SegmentRow>();
    if (ids.length === 0) return out;
    const stmt = this.db.prepare(`SELECT * FROM segments WHERE id IN (SELECT value FROM json_each(?))`);
    for (const row of stmt.all(JSON.stringify(ids)) as SegmentRow[]) out.set(row.id, row);
    return out;
  }

  listForVideo(videoId: string): SegmentRow[] {
    return this.db.prepare('SELECT * FROM segments WHERE video_id = ? ORDER BY idx').all(videoId) as SegmentRow[];
  }

  countForCollection(collectionId: string): number {
    return this.cached(`count|${collectionId}`, () => this.db.prepare('SELECT COUNT(*) FROM segments WHERE collection_id = ?').pluck().get(collectionId) as number);
  }

  /**
   * Answers that depend only on which segments exist (counts, keyword matches), kept until a segment
   * is added or deleted anywhere: segment ids only grow (AUTOINCREMENT) and every deletion is logged,
   * so the largest id and the log's last entry change with every write, whichever process made it.
   */
  private cached<T>(key: string, compute: () => T): T {
    // The token is read once per synchronous run (one search asks for several answers in a row).
    if (!this.tokenChecked) {
      const token = this.db
        .prepare("SELECT COALESCE((SELECT MAX(id) FROM segments), 0) || '/' || COALESCE((SELECT MAX(seq) FROM segment_deletions), 0)")
        .pluck()
        .get() as string;
      if (token !== this.cacheToken) {
        this.answers.clear();
        this.cacheToken = token;
      }
      this.tokenChecked = true;
      queueMicrotask(() => (this.tokenChecked = false));
    }
    if (this.answers.has(key)) return this.answers.get(key) as T;
    const value = compute();
    if (this.answers.size >= ANSWER_CACHE_SIZE) this.answers.clear();
    this.answers.set(key, value);
    return value;
  }

  /** Nearest segments of one collection by cosine similarity, best first. */
  nearest(collectionId: string, dim: number, query: Float32Array, k: number, filter: TagFilter = {}): VectorHit[] {
    this.ensureVectorTable(dim);
    if (this.memory && !TAG_COLUMNS.some((c) => filter[c])) {
      const hits = this.memory.nearest(collectionId, dim, vecTable(dim), query, Math.min(k, MAX_KNN));
      if (hits) return hits.sort(bySimilarityThenId);
    }
    const clauses: string[] = [];
    const params: unknown[] = [Buffer.from(query.buffer, query.byteOffset, query.byteLength), Math.min(k, MAX_KNN), collectionId];
    for (const col of TAG_COLUMNS) {
      if (filter[col]) {
        clauses.push(`AND ${col} = ?`);
        params.push(filter[col]);
      }
    }
    const knn = this.db.prepare(
      `SELECT segment_id, distance FROM ${vecTable(dim)}
       WHERE embedding MATCH ? AND k = ? AND collection_id = ? ${clauses.join(' ')}
       ORDER BY distance`,
    );
    // sqlite-vec cuts at k before ties are broken: ask for more until the k-th score is not tied
    // with the last one returned, so exact ties go to the smaller id as everywhere else.
    const want = Math.min(k, MAX_KNN);
    if (want <= 0) return [];
    for (let ask = Math.min(MAX_KNN, want + 8); ; ask = Math.min(MAX_KNN, ask * 2)) {
      params[1] = ask;
      const rows = knn.all(...params) as { segment_id: number; distance: number }[];
      const hits = rows.map((r) => ({ segmentId: Number(r.segment_id), similarity: 1 - r.distance })).sort(bySimilarityThenId);
      if (hits.length < ask || ask === MAX_KNN || hits[ask - 1].similarity < hits[want - 1].similarity) return hits.slice(0, want);
    }
  }

  /**
   * The stored vectors of given segments (search by example: a moment as the query). Point lookups
   * in `segment_vectors` (microseconds; sqlite-vec's cost ~0.3 ms), sqlite-vec for rows older than it.
   */
  vectors(dim: number, ids: number[]): Map<number, Float32Array> {
    this.ensureVectorTable(dim);
    const fast = this.db.prepare('SELECT embedding FROM segment_vectors WHERE segment_id = ?').pluck();
    const slow = this.db.prepare(`SELECT embedding FROM ${vecTable(dim)} WHERE segment_id = ?`).pluck();
    const out = new Map<number, Float32Array>();
    for (const id of ids) {
      const blob = (fast.get(id) ?? slow.get(BigInt(id))) as Buffer | undefined;
      if (blob) out.set(id, new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength)));
    }
    return out;
  }

  /**
   * Search candidates: the `k` segments nearest to the query and the `also` segments (keyword
   * hits), each with its similarity and the margin within which that similarity is exact. From the
   * in-memory index (unfiltered queries in long-running processes) the similarities are int8
   * approximations (margin > 0: re-score what matters with `similarities`); otherwise exact
   * (margin 0).
   */
  candidates(
    collectionId: string,
    dim: number,
    query: Float32Array,
    k: number,
    filter: TagFilter,
    also: number[],
  ): Map<number, { similarity: number; margin: number }> {
    this.ensureVectorTable(dim);
    if (this.memory && !TAG_COLUMNS.some((c) => filter[c])) {
      const approx = this.memory.approximate(collectionId, dim, vecTable(dim), query, Math.min(k, MAX_KNN), also);
      if (approx) return approx;
    }
    const out = new Map<number, { similarity: number; margin: number }>();
    for (const h of this.nearest(collectionId, dim, query, k, filter)) out.set(h.segmentId, { similarity: h.similarity, margin: 0 });
    const rest = also.filter((id) => !out.has(id));
    for (const [id, similarity] of this.similarities(dim, rest, query)) out.set(id, { similarity, margin: 0 });
    return out;
  }

  /**
   * Cosine similarity of given segments to a query (for keyword-only hits): their float32 vectors
   * from `segment_vectors` in one statement, the dot products here; sqlite-vec for rows older than it.
   */
  similarities(dim: number, ids: number[], query: Float32Array): Map<number, number> {
    this.ensureVectorTable(dim);
    const out = new Map<number, number>();
    if (ids.length === 0) return out;
    let qq = 0;
    for (let j = 0; j < dim; j++) qq += query[j] * query[j];
    const qNorm = Math.sqrt(qq);
    const rows = this.db
      .prepare('SELECT segment_id, embedding FROM segment_vectors WHERE segment_id IN (SELECT value FROM json_each(?))')
      .raw()
      .all(JSON.stringify(ids)) as [number, Buffer][];
    for (const [id, blob] of rows) {
      if (blob.byteLength !== dim * 4) continue;
      const v = new Float32Array(blob.buffer, blob.byteOffset, dim);
      let dot = 0;
      let vv = 0;
      for (let j = 0; j < dim; j++) {
        dot += v[j] * query[j];
        vv += v[j] * v[j];
      }
      const norms = Math.sqrt(vv) * qNorm;
      out.set(id, norms > 0 ? dot / norms : 0);
    }
    if (out.size < ids.length) {
      const slow = this.db.prepare(`SELECT vec_distance_cosine(embedding, ?) FROM ${vecTable(dim)} WHERE segment_id = ?`).pluck();
      const q = Buffer.from(query.buffer, query.byteOffset, query.byteLength);
      for (const id of ids) {
        if (out.has(id)) continue;
        const distance = slow.get(q, BigInt(id)) as number | undefined;
        if (distance !== undefined) out.set(id, 1 - distance);
      }
    }
    return out;
  }

  /**
   * The video of each given segment: from the in-memory index when it holds the collection (no
   * query), else one lookup of just the ids' videos. Segments that no longer exist are left out.
   */
  videosOf(collectionId: string, ids: number[]): Map<number, string> {
    const out = this.memory?.videosOf(collectionId, ids) ?? new Map<number, string>();
    if (out.size === ids.length) return out;
    const rest = out.size === 0 ? ids : ids.filter((id) => !out.has(id));
    const rows = this.db
      .prepare('SELECT id, video_id FROM segments WHERE id IN (SELECT value FROM json_each(?))')
      .raw()
      .all(JSON.stringify(rest)) as [number, string][];
    for (const [id, videoId] of rows) out.set(id, videoId);
    return out;
  }

  /**
   * Keeps the terms that occur in at most `maxShare` of all segments. A term in most segments
   * says almost nothing about relevance (its IDF is near zero) yet makes bm25 rank all of them,
   * so this acts as a stopword list learned from the collection's own descriptions.
   */
  selectiveTerms(terms: string[], maxShare = 0.1, floor = 500): string[] {
    const total = this.cached('count', () => this.db.prepare('SELECT COUNT(*) FROM segments').pluck().get() as number);
    const limit = Math.max(floor, total * maxShare);
    if (total <= limit) return terms;
    const count = this.db.prepare('SELECT COUNT(*) FROM (SELECT rowid FROM segments_fts WHERE segments_fts MATCH ? LIMIT ?)').pluck();
    const cap = Math.ceil(limit) + 1;
    return terms.filter((t) => this.cached(`df|${cap}|${t}`, () => count.get(`"${t.replace(/"/g, '""')}"`, cap) as number) <= limit);
  }

  /**
   * For each term, the collection's segments whose keywords hold it (FTS5, stemmed like the index),
   * at most `limit` per term: what the keyword side of search scores with.
   */
  termMatches(collectionId: string, terms: string[], limit: number, filter: TagFilter = {}): Map<string, number[]> {
    const out = new Map<string, number[]>();
    const filterKey = TAG_COLUMNS.map((c) => filter[c] ?? '').join('|');
    for (const t of terms) {
      const ids = this.cached(`terms|${collectionId}|${filterKey}|${limit}|${t}`, () =>
        this.keyword(collectionId, `"${t.replace(/"/g, '""')}"`, limit, filter).map((h) => h.segmentId),
      );
      out.set(t, ids);
    }
    return out;
  }

  /** Keyword matches (FTS5 bm25) inside one collection, best first; `matchQuery` is an FTS5 expression. */
  keyword(collectionId: string, matchQuery: string, limit: number, filter: TagFilter = {}): KeywordHit[] {
    const clauses: string[] = [];
    const params: unknown[] = [matchQuery, collectionId];
    for (const col of TAG_COLUMNS) {
      if (filter[col]) {
        clauses.push(`AND s.${col} = ?`);
        params.push(filter[col]);
      }
    }
    params.push(limit);
    const rows = this.db
      .prepare(
        `SELECT s.id AS id FROM segments_fts f JOIN segments s ON s.id = f.rowid
         WHERE segments_fts MATCH ? AND s.collection_id = ? ${clauses.join(' ')}
         ORDER BY bm25(segments_fts) LIMIT ?`,
      )
      .all(...params) as { id: number }[];
    return rows.map((r, i) => ({ segmentId: r.id, rank: i + 1 }));
  }
}

import type { Db } from './db.js';
import { LabelCache } from './labels.js';
import { DELETION_LOG_KEEP, MemoryVectorIndex } from './memory-index.js';
import { filterEntries, filterKey, labelsOf } from './labels.js';
import { cosineTo, normOf } from './vector-index.js';

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
  /**
   * What the taggers found, by tag kind (stored as `tags_json`). Every kind whose value is a label
   * (a string, or an object with a string `label`, as a TagValue) is filterable: search filters
   * match it (`labels` of the row).
   */
  tags?: Record<string, unknown>;
  /** pHash of the keyframe, 16 hex digits (src/media/phash.ts); none for a flat picture. */
  phash?: string;
  vector: Float32Array;
}

/** A segment's analysis, rewritten (SegmentsCatalog.reviseForVideo): keywords always, the rest where given. */
export interface SegmentRevision {
  idx: number;
  keywords: string;
  description?: string;
  facts?: Record<string, unknown>;
  details?: Record<string, unknown>;
  tags?: Record<string, unknown>;
  vector?: Float32Array;
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
  /** The filterable tag labels, by kind (from `tags` when written; {} when none). */
  labels: Record<string, string>;
  phash: string | null;
}

/**
 * A search filter: tag kind → label, every entry must match (a segment without that kind never
 * does); an entry whose value is undefined or '' filters nothing.
 */
export type TagFilter = Readonly<Record<string, string | undefined>>;

/** A word's matches in a collection, listed in full (SegmentsCatalog.termLists). */
export interface TermList {
  /** How many of the collection's segments hold the word, whatever the filter (≤ the limit asked). */
  total: number;
  /** Those matching the filter, best first. */
  ids: number[];
}

export interface VectorHit {
  segmentId: number;
  similarity: number;
}

export interface KeywordHit {
  segmentId: number;
  rank: number;
}

/** The tag columns vector tables made before migration 14 carry (written as '', read by nothing). */
const LEGACY_TAG_COLUMNS = ['shot_size', 'camera_movement', 'shooting_angle'] as const;
/** Cached counts and keyword matches (SegmentsRepo.cached) kept at most; past this it starts over. */
const ANSWER_CACHE_SIZE = 4096;
/** sqlite-vec's KNN `k` ceiling. */
export const MAX_KNN = 4096;

/**
 * Best first; exact ties (identical vectors, e.g. two segments of a still shot) go to the earlier
 * segment, so every index path and every face answers the same moment.
 */
/** The columns of a SegmentRow as stored (labels as JSON text). */
const SEGMENT_COLS = 'id, video_id, collection_id, idx, start, end, description, details_json, facts_json, tags_json, labels_json, phash';
type StoredRow = Omit<SegmentRow, 'labels'> & { labels_json: string | null };

/** The labels of a segment's tags as stored in `labels_json` (null when it has none). */
function labelsJson(tags: Record<string, unknown> | undefined): string | null {
  const labels = labelsOf(tags);
  return Object.keys(labels).length ? JSON.stringify(labels) : null;
}

/** SQL conditions that a row's labels (JSON text in `column`) hold every entry of a filter. */
function labelClauses(entries: Array<[string, string]>, column: string): { where: string; params: string[] } {
  // Kinds are lower-case words (checkKind), so they are safe inside a JSON path.
  return { where: entries.map(([kind]) => `AND json_extract(${column}, '$.${kind}') = ?`).join(' '), params: entries.map(([, label]) => label) };
}

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
  /** Dimensions whose vector table still has the tag columns of before migration 14. */
  private readonly legacyTables = new Set<number>();
  private readonly labelCache = new LabelCache();

  /**
   * `memoryIndex`: serve KNN from an int8 in-memory copy re-ranked with the exact vectors
   * (long-running processes; src/store/memory-index.ts).
   */
  constructor(
    private readonly db: Db,
    opts: { memoryIndex?: boolean } = {},
  ) {
    this.memory = opts.memoryIndex ? new MemoryVectorIndex(db, { vecTable }) : undefined;
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
         embedding FLOAT[${dim}] distance_metric=cosine
       );
       -- a segment deleted any way (by cascade from its video or collection) takes its vector along
       CREATE TRIGGER IF NOT EXISTS ${vecTable(dim)}_gc AFTER DELETE ON segments BEGIN
         DELETE FROM ${vecTable(dim)} WHERE segment_id = OLD.id;
       END`,
    );
    const cols = this.db.prepare(`SELECT name FROM pragma_table_info('${vecTable(dim)}')`).pluck().all() as string[];
    if (LEGACY_TAG_COLUMNS.every((c) => cols.includes(c))) this.legacyTables.add(dim);
    else this.legacyTables.delete(dim);
    this.ensured.add(dim);
  }

  /** Replaces every segment of a video in one transaction, so a redone job never duplicates rows. */
  replaceForVideo(videoId: string, collectionId: string, dim: number, segments: NewSegment[]): void {
    this.ensureVectorTable(dim);
    this.tokenChecked = false;
    const table = vecTable(dim);
    const insertSeg = this.db.prepare(
      `INSERT INTO segments (video_id, collection_id, idx, start, end, description, details_json, tags_json, labels_json, facts_json, phash)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    // vec0 metadata columns take no NULL: a table from before migration 14 gets '' in its tag columns.
    const insertVec = this.legacyTables.has(dim)
      ? this.db.prepare(`INSERT INTO ${table} (segment_id, collection_id, shot_size, camera_movement, shooting_angle, embedding) VALUES (?, ?, '', '', '', ?)`)
      : this.db.prepare(`INSERT INTO ${table} (segment_id, collection_id, embedding) VALUES (?, ?, ?)`);
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
          labelsJson(s.tags),
          s.facts ? JSON.stringify(s.facts) : null,
          s.phash ?? null,
        );
        const id = BigInt(info.lastInsertRowid);
        const embedding = Buffer.from(s.vector.buffer, s.vector.byteOffset, s.vector.byteLength);
        insertVec.run(id, collectionId, embedding);
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
    const stmt = this.db.prepare(`SELECT ${SEGMENT_COLS} FROM segments WHERE id IN (SELECT value FROM json_each(?))`);
    for (const row of stmt.all(JSON.stringify(ids)) as StoredRow[]) out.set(row.id, this.row(row));
    return out;
  }

  listForVideo(videoId: string): SegmentRow[] {
    return (this.db.prepare(`SELECT ${SEGMENT_COLS} FROM segments WHERE video_id = ? ORDER BY idx`).all(videoId) as StoredRow[]).map((r) => this.row(r));
  }

  private row(r: StoredRow): SegmentRow {
    const { labels_json, ...rest } = r;
    return { ...rest, labels: { ...this.labelCache.of(labels_json) } };
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
    if (this.memory) {
      const hits = this.memory.nearest(collectionId, dim, query, Math.min(k, MAX_KNN), filter);
      if (hits) return hits.sort(bySimilarityThenId);
    }
    const want = Math.min(k, MAX_KNN);
    if (want <= 0) return [];
    const tagged = filterEntries(filter);
    if (tagged.length) {
      // Filtered without the in-memory index: the exact scores of the matching segments.
      const { where, params } = labelClauses(tagged, 's.labels_json');
      const ids = this.db.prepare(`SELECT s.id FROM segments s WHERE s.collection_id = ? ${where}`).pluck().all(collectionId, ...params) as number[];
      return [...this.similarities(dim, ids, query)].map(([segmentId, similarity]) => ({ segmentId, similarity })).sort(bySimilarityThenId).slice(0, want);
    }
    const params: unknown[] = [Buffer.from(query.buffer, query.byteOffset, query.byteLength), want, collectionId];
    const knn = this.db.prepare(
      `SELECT segment_id, distance FROM ${vecTable(dim)}
       WHERE embedding MATCH ? AND k = ? AND collection_id = ?
       ORDER BY distance`,
    );
    // sqlite-vec cuts at k before ties are broken: ask for more until the k-th score is not tied
    // with the last one returned, so exact ties go to the smaller id as everywhere else.
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
   * Search candidates: the exact `k` segments nearest to the query (matching `filter`) and the
   * `also` segments (keyword hits), each with its similarity and the margin within which that
   * similarity is exact. From the in-memory index (long-running processes) the `also` segments it
   * holds are int8 approximations (margin > 0: re-score what matters with `similarities`);
   * everything else is exact (margin 0).
   */
  candidates(
    collectionId: string,
    dim: number,
    query: Float32Array,
    k: number,
    filter: TagFilter,
    also: number[],
    exclude: number[] = [],
  ): Map<number, { similarity: number; margin: number }> {
    this.ensureVectorTable(dim);
    const left = new Set(exclude);
    const kept = left.size ? also.filter((id) => !left.has(id)) : also;
    if (this.memory) {
      const held = this.memory.candidates(collectionId, dim, query, Math.min(k, MAX_KNN), kept, filter, exclude);
      if (held) return this.withAlso(held, dim, query, kept);
    }
    // Without the in-memory index: the k + |exclude| nearest hold the k nearest of the others.
    const out = new Map<number, { similarity: number; margin: number }>();
    let taken = 0;
    for (const h of this.nearest(collectionId, dim, query, k + left.size, filter)) {
      if (left.has(h.segmentId) || taken >= k) continue;
      out.set(h.segmentId, { similarity: h.similarity, margin: 0 });
      taken++;
    }
    return this.withAlso(out, dim, query, kept);
  }

  /** Adds the `also` segments not in `out` yet (another collection's too), exactly. */
  private withAlso(out: Map<number, { similarity: number; margin: number }>, dim: number, query: Float32Array, also: number[]): Map<number, { similarity: number; margin: number }> {
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
    const qNorm = normOf(query);
    const rows = this.db
      .prepare('SELECT segment_id, embedding FROM segment_vectors WHERE segment_id IN (SELECT value FROM json_each(?))')
      .raw()
      .all(JSON.stringify(ids)) as [number, Buffer][];
    for (const [id, blob] of rows) {
      if (blob.byteLength !== dim * 4) continue;
      out.set(id, cosineTo(new Float32Array(blob.buffer, blob.byteOffset, dim), 0, dim, query, qNorm));
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
    return terms.filter((t) => this.cached(`df|${cap}|${t}`, () => count.get(ftsPhrase(t), cap) as number) <= limit);
  }

  /**
   * For each term, the collection's segments whose keywords hold it (FTS5, stemmed like the index),
   * at most `limit` per term: what the keyword side of search scores with.
   */
  termMatches(collectionId: string, terms: string[], limit: number, filter: TagFilter = {}): Map<string, number[]> {
    const out = new Map<string, number[]>();
    const fk = filterKey(filter);
    for (const t of terms) {
      const ids = this.cached(`terms|${collectionId}|${fk}|${limit}|${t}`, () =>
        this.keyword(collectionId, ftsPhrase(t), limit, filter).map((h) => h.segmentId),
      );
      out.set(t, ids);
    }
    return out;
  }

  /**
   * Per term: null when more than `limit` of the collection's segments hold it (counted up to
   * `limit` + 1, whatever the filter), else how many hold it and those matching `filter`, best first.
   */
  termLists(collectionId: string, terms: string[], limit: number, filter: TagFilter = {}): Map<string, TermList | null> {
    const out = new Map<string, TermList | null>();
    const count = this.db
      .prepare('SELECT COUNT(*) FROM (SELECT f.rowid FROM segments_fts f JOIN segments s ON s.id = f.rowid WHERE segments_fts MATCH ? AND s.collection_id = ? LIMIT ?)')
      .pluck();
    for (const t of terms) {
      const total = this.cached(`held|${collectionId}|${limit}|${t}`, () => count.get(ftsPhrase(t), collectionId, limit + 1) as number);
      out.set(t, total > limit ? null : { total, ids: this.termMatches(collectionId, [t], limit, filter).get(t)! });
    }
    return out;
  }

  /** Per term, those of `ids` (in the collection, matching `filter`) whose keywords hold it. */
  termsAmong(collectionId: string, terms: string[], ids: number[], filter: TagFilter = {}): Map<string, number[]> {
    const { where, params } = labelClauses(filterEntries(filter), 's.labels_json');
    const among = this.db
      .prepare(
        `SELECT s.id AS id FROM segments_fts f JOIN segments s ON s.id = f.rowid
         WHERE segments_fts MATCH ? AND f.rowid IN (SELECT value FROM json_each(?)) AND s.collection_id = ? ${where} ORDER BY s.id`,
      )
      .pluck();
    const list = JSON.stringify([...new Set(ids)]);
    return new Map(terms.map((t) => [t, among.all(ftsPhrase(t), list, collectionId, ...params) as number[]]));
  }

  /** Keyword matches (FTS5 bm25) inside one collection, best first; `matchQuery` is an FTS5 expression. */
  keyword(collectionId: string, matchQuery: string, limit: number, filter: TagFilter = {}): KeywordHit[] {
    const { where, params } = labelClauses(filterEntries(filter), 's.labels_json');
    const rows = this.db
      .prepare(
        `SELECT s.id AS id FROM segments_fts f JOIN segments s ON s.id = f.rowid
         WHERE segments_fts MATCH ? AND s.collection_id = ? ${where}
         ORDER BY bm25(segments_fts) LIMIT ?`,
      )
      .all(matchQuery, collectionId, ...params, limit) as { id: number }[];
    return rows.map((r, i) => ({ segmentId: r.id, rank: i + 1 }));
  }
}

/** A term as one FTS5 phrase (its words in order, quotes doubled). */
function ftsPhrase(term: string): string {
  return `"${term.replace(/"/g, '""')}"`;
}

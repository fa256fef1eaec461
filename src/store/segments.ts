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

  /**
   * `memoryIndex`: serve unfiltered KNN from an int8 in-memory copy re-ranked with the exact
   * vectors (long-running processes; src/store/memory-index.ts).
   */
  constructor(
    private readonly db: Db,
    opts: { memoryIndex?: boolean } = {},
  ) {
    this.memory = opts.memoryIndex ? new MemoryVectorIndex(db) : undefined;
  }

  /** The in-memory index, when this repository has one (its `stats` count loads and catch-ups). */
  get memoryIndex(): MemoryVectorIndex | undefined {
    return this.memory;
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
       )`,
    );
    this.ensured.add(dim);
  }

  /** Replaces every segment of a video in one transaction, so a redone job never duplicates rows. */
  replaceForVideo(videoId: string, collectionId: string, dim: number, segments: NewSegment[]): void {
    this.ensureVectorTable(dim);
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
    return this.db.prepare('SELECT COUNT(*) FROM segments WHERE collection_id = ?').pluck().get(collectionId) as number;
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
    const rows = this.db
      .prepare(
        `SELECT segment_id, distance FROM ${vecTable(dim)}
         WHERE embedding MATCH ? AND k = ? AND collection_id = ? ${clauses.join(' ')}
         ORDER BY distance`,
      )
      .all(...params) as { segment_id: number; distance: number }[];
    return rows.map((r) => ({ segmentId: Number(r.segment_id), similarity: 1 - r.distance })).sort(bySimilarityThenId);
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

  /** Cosine similarity of given segments to a query, by point lookups (for keyword-only hits). */
  similarities(dim: number, ids: number[], query: Float32Array): Map<number, number> {
    this.ensureVectorTable(dim);
    const fast = this.db.prepare('SELECT vec_distance_cosine(embedding, ?) FROM segment_vectors WHERE segment_id = ?').pluck();
    const slow = this.db.prepare(`SELECT vec_distance_cosine(embedding, ?) FROM ${vecTable(dim)} WHERE segment_id = ?`).pluck();
    const q = Buffer.from(query.buffer, query.byteOffset, query.byteLength);
    const out = new Map<number, number>();
    for (const id of ids) {
      const distance = (fast.get(q, id) ?? slow.get(q, BigInt(id))) as number | undefined;
      if (distance !== undefined) out.set(id, 1 - distance);
    }
    return out;
  }

  /**
   * Keeps the terms that occur in at most `maxShare` of all segments. A term in most segments
   * says almost nothing about relevance (its IDF is near zero) yet makes bm25 rank all of them,
   * so this acts as a stopword list learned from the collection's own descriptions.
   */
  selectiveTerms(terms: string[], maxShare = 0.1, floor = 500): string[] {
    const total = this.db.prepare('SELECT COUNT(*) FROM segments').pluck().get() as number;
    const limit = Math.max(floor, total * maxShare);
    if (total <= limit) return terms;
    const count = this.db.prepare('SELECT COUNT(*) FROM (SELECT rowid FROM segments_fts WHERE segments_fts MATCH ? LIMIT ?)').pluck();
    return terms.filter((t) => (count.get(`"${t.replace(/"/g, '""')}"`, Math.ceil(limit) + 1) as number) <= limit);
  }

  /**
   * For each term, the collection's segments whose keywords hold it (FTS5, stemmed like the index),
   * at most `limit` per term: what the keyword side of search scores with.
   */
  termMatches(collectionId: string, terms: string[], limit: number, filter: TagFilter = {}): Map<string, number[]> {
    const out = new Map<string, number[]>();
    for (const t of terms) {
      out.set(
        t,
        this.keyword(collectionId, `"${t.replace(/"/g, '""')}"`, limit, filter).map((h) => h.segmentId),
      );
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

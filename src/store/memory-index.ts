import type { Db } from './db.js';
import { LabelCache } from './labels.js';
import {
  cosineTo,
  type ChangeFeed,
  type Changes,
  type FeedAnswer,
  type FeedRow,
  type Hit,
  type IndexStats,
  type LabelFilter,
  newStats,
  normOf,
  type Scored,
  VectorIndex,
} from './vector-index.js';

/** The deletion log keeps this many entries; a reader further behind than that reloads. */
export const DELETION_LOG_KEEP = 100_000;

/**
 * A collection whose float32 vectors take at most this many bytes (16k rows of 512 dimensions)
 * keeps them in memory beside its int8 rows, and re-ranks from them; a larger one reads each
 * re-ranked candidate's vector from SQLite (a search of a small collection spent about a tenth of
 * a loaded server's event loop on those reads). Same vectors, same scores.
 */
export const FLOAT_COPY_MAX_BYTES = 32 * 1024 * 1024;

export type MemoryIndexStats = IndexStats;

/** Where a SQLite index last looked: the collection's revision, the deletion log's last seq, the largest id. */
interface SqliteCursor {
  revision: number;
  delSeq: number;
  watermark: number;
}

/**
 * SQLite's "changes since": the collection's revision and the deletion log's last seq say whether
 * anything moved; when they did, one read transaction takes the segments above the largest id seen
 * (ids only grow: appends) and the log's new entries for the collection (deletions). Rows written
 * before `segment_vectors` existed are copied there from sqlite-vec on the first full read.
 */
export class SqliteChangeFeed implements ChangeFeed<SqliteCursor, FeedAnswer> {
  private readonly labels = new LabelCache();
  constructor(
    private readonly db: Db,
    private readonly vecTable: (dim: number) => string,
  ) {}

  private token(collectionId: string): { revision: number | undefined; delSeq: number } {
    const row = this.db
      .prepare('SELECT (SELECT revision FROM collections WHERE id = ?) AS revision, (SELECT MAX(seq) FROM segment_deletions) AS delSeq')
      .get(collectionId) as { revision: number | null; delSeq: number | null };
    return { revision: row.revision ?? undefined, delSeq: row.delSeq ?? 0 };
  }

  /** The rows above `after`, streamed (a million rows are never all in memory at once). */
  private *rowsAfter(collectionId: string, after: number): Iterable<FeedRow> {
    const rows = this.db
      .prepare(
        `SELECT s.id, v.embedding, s.video_id, s.labels_json FROM segments s JOIN segment_vectors v ON v.segment_id = s.id
         WHERE s.collection_id = ? AND s.id > ? ORDER BY s.id`,
      )
      .raw()
      .iterate(collectionId, after) as Iterable<[number, Buffer, string, string | null]>;
    for (const [id, vector, videoId, labels] of rows) yield { id, vector, videoId, labels: this.labels.of(labels) };
  }

  changes(collectionId: string, dim: number, since: SqliteCursor | undefined, consume: (changes: Changes<SqliteCursor>) => boolean): FeedAnswer {
    const now = this.token(collectionId);
    if (now.revision === undefined) return 'gone';
    if (since && since.revision === now.revision && since.delSeq === now.delSeq) return 'unchanged';
    if (!since) return this.full(collectionId, dim, consume);
    return this.db.transaction((): FeedAnswer => {
      const { revision, delSeq } = this.token(collectionId);
      if (revision === undefined) return 'gone';
      let deleted: number[] = [];
      if (delSeq !== since.delSeq) {
        const oldest = this.db.prepare('SELECT MIN(seq) FROM segment_deletions').pluck().get() as number | null;
        if (oldest !== null && oldest > since.delSeq + 1) return 'reload';
        deleted = this.db.prepare('SELECT segment_id FROM segment_deletions WHERE seq > ? AND collection_id = ?').pluck().all(since.delSeq, collectionId) as number[];
      }
      const last = this.db.prepare('SELECT MAX(id) FROM segments WHERE collection_id = ?').pluck().get(collectionId) as number | null;
      const cursor = { revision, delSeq, watermark: Math.max(since.watermark, last ?? 0) };
      return consume({ rows: this.rowsAfter(collectionId, since.watermark), deleted, cursor }) ? 'applied' : 'refused';
    })();
  }

  /**
   * Every row of the collection in one snapshot. Segments written before `segment_vectors` existed
   * have no row there: when fewer rows came than the collection has, their vectors are copied from
   * sqlite-vec (once) and the read is done again, handing `consume` the whole collection anew.
   */
  private full(collectionId: string, dim: number, consume: (changes: Changes<SqliteCursor>) => boolean, backfilled = false): FeedAnswer {
    const answer = this.db.transaction((): FeedAnswer | 'backfill' => {
      const { revision, delSeq } = this.token(collectionId);
      if (revision === undefined) return 'gone';
      const count = this.db.prepare('SELECT COUNT(*) FROM segments WHERE collection_id = ?').pluck().get(collectionId) as number;
      const watermark = (this.db.prepare('SELECT MAX(id) FROM segments WHERE collection_id = ?').pluck().get(collectionId) as number | null) ?? 0;
      let seen = 0;
      const rows = this.rowsAfter(collectionId, 0);
      const counted = (function* () {
        for (const r of rows) {
          seen++;
          yield r;
        }
      })();
      if (!consume({ rows: counted, deleted: [], cursor: { revision, delSeq, watermark }, expected: count })) return 'refused';
      return seen < count && !backfilled ? 'backfill' : 'applied';
    })();
    if (answer !== 'backfill') return answer;
    this.db
      .prepare(
        `INSERT OR IGNORE INTO segment_vectors (segment_id, embedding)
         SELECT v.segment_id, v.embedding FROM ${this.vecTable(dim)} v JOIN segments s ON s.id = v.segment_id WHERE v.collection_id = ?`,
      )
      .run(collectionId);
    return this.full(collectionId, dim, consume, true);
  }
}

interface Held {
  index: VectorIndex;
  cursor: SqliteCursor;
}

/**
 * The in-memory vector indexes (src/store/vector-index.ts) of one SQLite connection, for
 * long-running processes (the server): per collection, a VectorIndex fed by `SqliteChangeFeed`
 * before each query, whichever process wrote. Exact scores come from a float32 copy in memory while
 * the collection is small (FLOAT_COPY_MAX_BYTES), else from point lookups in `segment_vectors`
 * (microseconds each). A collection whose int8 rows would pass
 * 2 GiB stays on sqlite-vec (undefined answers).
 */
export class MemoryVectorIndex {
  private readonly held = new Map<string, Held>();
  /** Collections too large for memory, by the revision at which they were: not tried again until it moves. */
  private readonly tooLarge = new Map<string, number>();
  readonly stats: MemoryIndexStats = newStats();
  private readonly useSimd: boolean;
  private readonly feed: SqliteChangeFeed;
  private readonly floatCopyMaxBytes: number;

  /**
   * `simd: false` scans with plain JavaScript (what happens where WebAssembly SIMD is missing);
   * `floatCopyMaxBytes` (default FLOAT_COPY_MAX_BYTES; 0: never) bounds the float32 copy.
   */
  constructor(
    private readonly db: Db,
    opts: { simd?: boolean; vecTable?: (dim: number) => string; floatCopyMaxBytes?: number } = {},
  ) {
    this.useSimd = opts.simd ?? true;
    this.floatCopyMaxBytes = opts.floatCopyMaxBytes ?? FLOAT_COPY_MAX_BYTES;
    this.feed = new SqliteChangeFeed(db, opts.vecTable ?? ((dim) => `vec_segments_${dim}`));
  }

  /** The collection's index, brought up to date; undefined when it does not fit (use sqlite-vec). */
  private sync(collectionId: string, dim: number): VectorIndex | undefined {
    const have = this.held.get(collectionId);
    if (have && have.index.dim === dim) {
      const answer = this.feed.changes(collectionId, dim, have.cursor, (ch) => {
        if (!have.index.apply(ch, this.stats)) return false;
        have.cursor = ch.cursor;
        return true;
      });
      if (answer === 'unchanged') return have.index;
      if (answer === 'applied') {
        this.stats.catchUps++;
        return have.index;
      }
    }
    this.held.delete(collectionId);
    let loaded: Held | undefined;
    let revision: number | undefined;
    const answer = this.feed.changes(collectionId, dim, undefined, (all) => {
      revision = all.cursor.revision;
      if (this.tooLarge.get(collectionId) === revision) return false;
      const count = all.expected ?? 0;
      const index = VectorIndex.create(dim, count + Math.max(1024, count >> 3), { simd: this.useSimd, keepFloats: this.floatCopyMaxBytes > 0, floatsUpTo: this.floatCopyMaxBytes });
      if (!index || !index.apply(all, newStats())) return false;
      loaded = { index, cursor: all.cursor };
      return true;
    });
    if (answer === 'refused' && revision !== undefined) this.tooLarge.set(collectionId, revision);
    if (!loaded) return undefined;
    this.stats.fullLoads++;
    loaded.index.warmUp();
    this.held.set(collectionId, loaded);
    return loaded.index;
  }

  private exactOf(dim: number, query: Float32Array): (id: number) => number | undefined {
    const lookup = this.db.prepare('SELECT embedding FROM segment_vectors WHERE segment_id = ?').pluck();
    const qNorm = normOf(query);
    return (id) => {
      const blob = lookup.get(id) as Buffer | undefined;
      if (!blob || blob.byteLength !== dim * 4) return undefined; // deleted since the last catch-up
      return cosineTo(new Float32Array(blob.buffer, blob.byteOffset, dim), 0, dim, query, qNorm);
    };
  }

  /**
   * Loads or catches up a collection now (its first query would otherwise): the rows it holds
   * (live ones), or undefined when the collection stays on sqlite-vec.
   */
  refresh(collectionId: string, dim: number): number | undefined {
    return this.sync(collectionId, dim)?.live;
  }

  /**
   * The video of each given segment that the index holds (as of its last sync: call after a query
   * or `refresh` in the same synchronous step); segments it does not hold are left out.
   */
  videosOf(collectionId: string, ids: Iterable<number>): Map<number, string> {
    const out = new Map<number, string>();
    const index = this.held.get(collectionId)?.index;
    if (!index) return out;
    for (const id of ids) {
      const v = index.videoOf(id);
      if (v !== undefined) out.set(id, v);
    }
    return out;
  }

  /**
   * Search candidates: the exact best `k` rows matching `filter` (re-ranked with their float32
   * vectors) and the given `also` segments read off the int8 scan, each with the margin its
   * rounding error stays within: the caller re-scores exactly only what can still matter.
   * Undefined: the collection is not in memory.
   */
  candidates(collectionId: string, dim: number, query: Float32Array, k: number, also: Iterable<number> = [], filter?: LabelFilter, exclude: Iterable<number> = []): Map<number, Scored> | undefined {
    const index = this.sync(collectionId, dim);
    return index?.candidates(query, k, filter, also, { exactTop: true, exactOf: index.hasFloats ? undefined : this.exactOf(dim, query), stats: this.stats, exclude });
  }

  /** The exact best `k` segments by cosine (matching `filter`), or undefined to fall back. */
  nearest(collectionId: string, dim: number, query: Float32Array, k: number, filter?: LabelFilter): Hit[] | undefined {
    const index = this.sync(collectionId, dim);
    const qNorm = normOf(query);
    return index?.nearest(query, k, filter, index.hasFloats ? (id) => index.exact(id, query, qNorm) : this.exactOf(dim, query), this.stats);
  }
}

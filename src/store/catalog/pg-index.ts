import type pg from 'pg';
import type { Queryable } from '../pg/migrate.js';
import { type ChangeFeed, type Changes, type FeedAnswer, type FeedRow, type IndexStats, type Labels, newStats, normOf, VectorIndex } from '../vector-index.js';

/*
 * PostgreSQL's side of the one in-memory vector index (src/store/vector-index.ts): its "changes
 * since" feed and the indexes of one process. Without pgvector, nearest-neighbour search runs in
 * each process over a VectorIndex (int8 scan, exact re-rank) that keeps the float32 vectors beside
 * its int8 rows (a point lookup in the table would cost a round trip), caught up with what any
 * process or machine wrote since its last look, in one statement.
 */

/** ...an index that has not looked for this long reloads the collection instead of catching up
 * (the deletion log keeps a day: src/store/catalog/pg-segments.ts). */
const RELOAD_AFTER_MS = 3600_000;

/** pg_snapshot_xmin of the last read (xid8 as text), and the database's clock then (ms). */
export interface PgCursor {
  xmin: string;
  syncedAt: number;
}

interface SyncRow {
  kind: 0 | 1 | 2;
  id: number | null;
  video_id: string | null;
  labels: Labels | null;
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
  SELECT 0 AS kind, id::float8 AS id, video_id, labels, embedding, NULL::text AS xmin, NULL::float8 AS now_ms
    FROM segments WHERE collection_id = $1 AND dim = $2 AND txid >= $3::xid8 AND embedding IS NOT NULL
  UNION ALL
  SELECT 1, segment_id::float8, NULL, NULL, NULL, NULL, NULL
    FROM segment_deletions WHERE $4 AND collection_id = $1 AND txid >= $3::xid8
  UNION ALL
  SELECT 2, NULL, NULL, NULL, NULL, pg_snapshot_xmin(pg_current_snapshot())::text, (extract(epoch FROM clock_timestamp()) * 1000)::float8`;

/**
 * PostgreSQL's "changes since": one round trip. Rows seen before come again when their transaction
 * was still running at the last read; the index skips them by id. A cursor older than an hour
 * (database clock) answers 'reload', since the deletion log may have been pruned of what it missed.
 */
export class PgChangeFeed implements ChangeFeed<PgCursor, Promise<FeedAnswer>> {
  constructor(private readonly q: Queryable) {}

  async changes(collectionId: string, dim: number, since: PgCursor | undefined, consume: (changes: Changes<PgCursor>) => boolean): Promise<FeedAnswer> {
    const { rows } = await this.q.query<SyncRow>(SYNC, [collectionId, dim, since?.xmin ?? '0', since !== undefined]);
    const appended: FeedRow[] = [];
    const deleted: number[] = [];
    let cursor: PgCursor = { xmin: '0', syncedAt: 0 };
    for (const r of rows) {
      if (r.kind === 0) appended.push({ id: r.id!, videoId: r.video_id!, labels: r.labels ?? {}, vector: r.embedding! });
      else if (r.kind === 1) deleted.push(r.id!);
      else cursor = { xmin: r.xmin!, syncedAt: r.now_ms! };
    }
    if (since && cursor.syncedAt - since.syncedAt > RELOAD_AFTER_MS) return 'reload';
    return consume({ rows: appended, deleted, cursor, expected: appended.length }) ? 'applied' : 'refused';
  }
}

/** The whole collection as `q` sees it, in a new index (searches inside a transaction, or a first load). */
export async function loadIndex(q: Queryable, collectionId: string, dim: number, stats: IndexStats = newStats()): Promise<{ index: VectorIndex; cursor: PgCursor }> {
  let loaded: { index: VectorIndex; cursor: PgCursor } | undefined;
  await new PgChangeFeed(q).changes(collectionId, dim, undefined, (all) => {
    const index = VectorIndex.create(dim, all.expected ?? 0, { keepFloats: true });
    if (!index || !index.apply(all, stats)) return false;
    loaded = { index, cursor: all.cursor };
    return true;
  });
  if (!loaded) throw new Error(`collection ${collectionId} is too large for the in-memory vector index`);
  loaded.index.warmUp();
  return loaded;
}

interface Slot {
  held?: { index: VectorIndex; cursor: PgCursor };
  turn: Promise<unknown>;
}

/**
 * The in-memory vector indexes of one process (one per PgSegmentsCatalog on a pool): per collection
 * and dimension, caught up before each search. Searches of one collection take turns (a catch-up
 * applies on top of the previous one).
 */
export class PgSegmentsIndex {
  private readonly slots = new Map<string, Slot>();
  /** Whole-collection loads, catch-ups, rows appended and deleted so far (tests, benches). */
  readonly stats: IndexStats = newStats();
  private readonly feed: PgChangeFeed;

  constructor(private readonly pool: pg.Pool) {
    this.feed = new PgChangeFeed(pool);
  }

  /** Lets go of every index this process kept (the library moved to pgvector: searches run in the database). */
  drop(): void {
    if (this.slots.size) this.slots.clear();
  }

  /** Exact similarities of the segments the indexes of this dimension hold, each caught up first. */
  async exact(dim: number, ids: number[], query: Float32Array): Promise<Map<number, number>> {
    const out = new Map<number, number>();
    const qNorm = normOf(query);
    for (const key of [...this.slots.keys()]) {
      const [collectionId, d] = key.split('\u0000');
      if (Number(d) !== dim || out.size === ids.length) continue;
      const index = await this.fresh(collectionId, dim);
      for (const id of ids) {
        if (out.has(id)) continue;
        const s = index.exact(id, query, qNorm);
        if (s !== undefined) out.set(id, s);
      }
    }
    return out;
  }

  /** The collection's index caught up, when this process keeps one for it (it searched it before). */
  async freshIfKept(collectionId: string): Promise<VectorIndex | undefined> {
    for (const key of this.slots.keys()) {
      const [id, dim] = key.split('\u0000');
      if (id === collectionId) return this.fresh(collectionId, Number(dim));
    }
    return undefined;
  }

  /**
   * A view of these indexes for one search: each collection is caught up once, at the view's first
   * use of it, and every later call of the view answers from that state (one round trip per search
   * instead of one per call). Other views and the indexes themselves go on catching up as before.
   */
  pinned(): PgSegmentsIndex {
    const seen = new Map<string, Promise<VectorIndex>>();
    const view = Object.create(this) as PgSegmentsIndex;
    view.fresh = (collectionId: string, dim: number) => {
      const key = `${collectionId}\u0000${dim}`;
      let got = seen.get(key);
      if (!got) seen.set(key, (got = this.fresh(collectionId, dim)));
      return got;
    };
    return view;
  }

  /** The collection's index, caught up with every write committed before this call. */
  async fresh(collectionId: string, dim: number): Promise<VectorIndex> {
    const key = `${collectionId}\u0000${dim}`;
    let slot = this.slots.get(key);
    if (!slot) {
      slot = { turn: Promise.resolve() };
      this.slots.set(key, slot);
    }
    const s = slot;
    const run = s.turn.then(async () => {
      const held = s.held;
      if (held) {
        const answer = await this.feed.changes(collectionId, dim, held.cursor, (ch) => {
          if (!held.index.apply(ch, this.stats)) return false;
          held.cursor = ch.cursor;
          return true;
        });
        if (answer === 'applied') {
          this.stats.catchUps++;
          return held.index;
        }
      }
      s.held = undefined;
      s.held = await loadIndex(this.pool, collectionId, dim);
      this.stats.fullLoads++;
      return s.held.index;
    });
    s.turn = run.catch(() => {});
    return run;
  }
}

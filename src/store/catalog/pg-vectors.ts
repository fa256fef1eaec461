import type pg from 'pg';
import Cursor from 'pg-cursor';
import { PG_VECTOR_DEFAULTS, type PgVectorSettings } from '../../env.js';
import { filterEntries } from '../labels.js';
import { isClient, type Queryable } from '../pg/migrate.js';
import { foldDeltas } from '../pg/deltas.js';
import { HNSW_MAX_DIM, indexedExpr, queryVectorParam, queryVectorSql, readVectorBinary } from '../pg/vector-store.js';
import { normOf } from '../vector-index.js';
import type { TagFilter } from './types.js';

/*
 * The vector side of PostgreSQL's segments in pgvector mode (src/store/pg/vector-store.ts): every
 * search runs in SQL, no process holds a copy.
 *
 * candidates: a collection with at most `exactBelow` segments (or a dimension too wide for an
 * HNSW index) is scored exactly (`ORDER BY vec <=> q, id` over the collection's rows, found by the
 * collection index). A larger one asks the dimension's HNSW index for k plus a margin of nearest
 * unit vectors, with the collection and tag filters in the same scan: pgvector 0.8's iterative
 * index scan (`hnsw.iterative_scan = relaxed_order`) goes on past `ef_search` until the LIMIT is
 * filled with rows that pass the filters (at most `hnsw.max_scan_tuples` visited), so a small
 * collection in a big library still fills its page. Each row's exact cosine is read off its
 * float32 column in the same scan, and the rows re-ranked by it (ties to the smaller id): the
 * similarity handed back is exact (margin 0), only recall is approximate. With `videos` the scan
 * is read through a cursor only until its rows hold that many videos. Should the scan come back
 * short of k while the collection holds more, the exact scan answers instead (a very selective tag
 * filter).
 */

/** Candidates asked of the index beyond k, so the exact re-rank can fix the order near the k-th. */
const overFetch = (k: number) => k + Math.max(16, Math.ceil(k / 8));

/** The session settings each connection gets once (hnsw.* apply to the index scans of this process). */
const configured = new WeakSet<object>();

export interface CollectionCounts {
  n: number;
  /** Moves with every write to the collection that this reader can see (the last delta and how many there are). */
  version: string;
}

/** Deltas a collection may gather before a reader folds them into one row. */
const FOLD_AFTER = 256;

export class PgvectorSearch {
  constructor(
    private readonly q: Queryable,
    private readonly settings: PgVectorSettings = PG_VECTOR_DEFAULTS,
  ) {}

  /** Runs `fn` on a connection with this process's hnsw settings (a pool's connection, or the transaction's client). */
  private async on<T>(fn: (c: pg.ClientBase) => Promise<T>): Promise<T> {
    const s = this.settings;
    const setup = async (c: pg.ClientBase) => {
      if (configured.has(c)) return;
      await c.query(
        `SELECT set_config('hnsw.ef_search', $1, false), set_config('hnsw.iterative_scan', 'relaxed_order', false), set_config('hnsw.max_scan_tuples', $2, false)`,
        [String(s.efSearch), String(s.maxScanTuples)],
      );
      configured.add(c);
    };
    if (isClient(this.q)) {
      await setup(this.q);
      return fn(this.q);
    }
    const client = await this.q.connect();
    let broken: Error | undefined;
    try {
      await setup(client);
      return await fn(client);
    } catch (err) {
      // A connection that failed mid-query is not handed out again.
      if ((err as { code?: string }).code === undefined) broken = err as Error;
      throw err;
    } finally {
      client.release(broken);
    }
  }

  /**
   * The collection's segment count and a write version (segment_counts: deltas appended by
   * triggers). When a collection has gathered many deltas, they are folded into one row in the
   * background (one statement: a concurrent fold or write loses nothing).
   */
  async counts(collectionId: string): Promise<CollectionCounts> {
    const { rows } = await this.q.query<{ n: number; last: string; deltas: number }>(
      'SELECT coalesce(sum(n), 0)::float8 AS n, coalesce(max(seq), 0)::text AS last, count(*)::int AS deltas FROM segment_counts WHERE collection_id = $1',
      [collectionId],
    );
    const r = rows[0];
    if (r.deltas > FOLD_AFTER && !isClient(this.q)) foldDeltas(this.q, 'segment_counts', collectionId);
    return { n: r.n, version: `${r.last}:${r.deltas}` };
  }

  /**
   * The k nearest of the collection (matching `filter`), exactly scored; with each one's video.
   * `n`: the collection's segment count; `kind`: what the dimension's index holds.
   */
  async nearest(
    collectionId: string,
    dim: number,
    query: Float32Array,
    k: number,
    filter: TagFilter,
    n: number,
    kind: 'halfvec' | 'vector',
    exclude: number[] = [],
    videos?: number,
  ): Promise<Array<{ id: number; video_id: string; similarity: number }>> {
    if (k <= 0 || n === 0) return [];
    const qt = queryVectorParam(unit(query));
    const qv = queryVectorSql('$2', dim);
    const entries = filterEntries(filter);
    const labels = entries.length ? `AND labels @> $3::jsonb` : 'AND $3::text IS NOT NULL';
    // Segments left out inside the scan (a moment's own video): the iterative scan goes on past them.
    const skip = exclude.length ? 'AND NOT (id = ANY ($5::bigint[]))' : 'AND $5::bigint[] IS NULL';
    const labelsParam = entries.length ? JSON.stringify(Object.fromEntries(entries)) : '';
    const excludeParam = exclude.length ? exclude : null;
    const params: unknown[] = [collectionId, qt, labelsParam, k, excludeParam];
    const exact = () =>
      this.on(async (c) => {
        const { rows } = await c.query<{ id: number; video_id: string; similarity: number }>(
          `SELECT id::float8 AS id, video_id, 1 - (vec <=> ${qv}) AS similarity
           FROM segments WHERE collection_id = $1 AND dim = ${dim} ${labels} ${skip} AND vec IS NOT NULL
           ORDER BY vec <=> ${qv}, id LIMIT $4`,
          params,
        );
        return rows;
      });
    if (n <= this.settings.exactBelow || dim > HNSW_MAX_DIM[kind]) return exact();
    // The dimension's index, nearest first, with the collection and tag filters (and the left-out
    // segments) in the same scan; each row's exact similarity read off its float32 vector. With
    // `videos`, read only until the rows hold that many videos (SegmentsCatalog.candidates).
    const ann = `SELECT id::float8 AS id, video_id, 1 - (vec <=> ${qv}) AS similarity FROM segments
       WHERE collection_id = $1 AND dim = ${dim} ${labels} ${skip}
       ORDER BY ${indexedExpr(dim, kind)} <#> ${qv}::${kind}(${dim}) LIMIT $4`;
    const annParams = [collectionId, qt, labelsParam, overFetch(k), excludeParam];
    const { rows, held } = await this.on((c) =>
      videos !== undefined && videos > 0
        ? readUntilVideos(c, ann, annParams, videos, overFetch(k))
        : c.query<{ id: number; video_id: string; similarity: number }>(ann, annParams).then((r) => ({ rows: r.rows, held: false })),
    );
    // The filtered scan ran out before filling the page (exact is right either way).
    if (!held && rows.length < k && rows.length < n) return exact();
    // The exact re-rank: k + ⅛k read, the k nearest by exact cosine kept (ties to the smaller id).
    return rows.sort((a, b) => b.similarity - a.similarity || a.id - b.id).slice(0, k);
  }

  /** Exact cosine similarity of the ids given (those that exist with this dimension). */
  async similarities(dim: number, ids: number[], query: Float32Array): Promise<Map<number, number>> {
    const out = new Map<number, number>();
    for (const r of await this.scored(dim, ids, query)) out.set(r.id, r.similarity);
    return out;
  }

  /** Exact cosine similarity of the ids given, with each one's video (read off the same row: a search needs both). */
  async scored(dim: number, ids: number[], query: Float32Array): Promise<Array<{ id: number; video_id: string; similarity: number }>> {
    if (ids.length === 0) return [];
    const { rows } = await this.q.query<{ id: number; video_id: string; similarity: number }>(
      `SELECT id::float8 AS id, video_id, 1 - (vec <=> ${queryVectorSql('$2', dim)}) AS similarity FROM segments WHERE id = ANY ($1::bigint[]) AND dim = ${dim} AND vec IS NOT NULL`,
      [ids, queryVectorParam(unit(query))],
    );
    return rows;
  }

  /** The stored vectors (float32, as written). */
  async vectors(dim: number, ids: number[]): Promise<Map<number, Float32Array>> {
    const out = new Map<number, Float32Array>();
    if (ids.length === 0) return out;
    // pgvector's binary form (vector_send): no float printed or parsed.
    const { rows } = await this.q.query<{ id: number; vec: Buffer }>(
      'SELECT id::float8 AS id, vector_send(vec) AS vec FROM segments WHERE id = ANY ($1::bigint[]) AND dim = $2 AND vec IS NOT NULL',
      [ids, dim],
    );
    for (const r of rows) out.set(r.id, readVectorBinary(r.vec));
    return out;
  }
}

/**
 * An index scan read nearest first, in batches, until its rows hold `videos` distinct videos and
 * then as far again as the exact re-rank's margin (overFetch of the rows read by then), or to its
 * end (`limit` rows, or fewer when the filters leave fewer). The scan computes only what is read:
 * pgvector's HNSW scan goes on (its iterative scan) only when asked for more rows. `held`: the
 * rows hold that many videos.
 */
async function readUntilVideos(
  c: pg.ClientBase,
  sql: string,
  params: unknown[],
  videos: number,
  limit: number,
): Promise<{ rows: Array<{ id: number; video_id: string; similarity: number }>; held: boolean }> {
  const cursor = c.query(new Cursor<{ id: number; video_id: string; similarity: number }>(sql, params));
  const rows: Array<{ id: number; video_id: string; similarity: number }> = [];
  const seen = new Set<string>();
  let until = limit;
  // The first batch about what holds that many videos when each has a moment or two near the
  // query (twice as many rows, and the margin); then half as many again each time.
  for (let want = overFetch(2 * videos); rows.length < until; want = Math.max(16, Math.ceil(videos / 2))) {
    const asked = Math.min(want, until - rows.length);
    // A failed read has ended the portal already (pg-cursor syncs on the error): nothing to close.
    const batch = await cursor.read(asked);
    for (const r of batch) {
      rows.push(r);
      if (seen.size < videos && seen.add(r.video_id).size === videos) until = Math.min(limit, overFetch(rows.length));
    }
    if (batch.length < asked) break; // the scan has no more
  }
  await cursor.close();
  return { rows, held: seen.size >= videos };
}

/** The query as a unit vector (cosine is the inner product of unit vectors; the index holds unit vectors). */
function unit(v: Float32Array): Float32Array {
  const n = normOf(v);
  if (n === 0 || Math.abs(n - 1) < 1e-7) return v;
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i] / n;
  return out;
}

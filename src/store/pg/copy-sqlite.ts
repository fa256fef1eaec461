import type pg from 'pg';
import type { Store } from '../index.js';
import { PG_VECTOR_DEFAULTS, type PgVectorRequest, type PgVectorSettings } from '../../env.js';
import { migratePg } from './migrate.js';
import { ensureHnswIndex, indexKind, packVectors, prepareVectorStore, readVectorStore, vectorAt } from './vector-store.js';

/** What `copySqliteToPg` copied, table by table, as counted on each side afterwards. */
export interface CopyCounts {
  table: string;
  sqlite: number;
  postgres: number;
}

/** The tables copied, in order (parents before children), with how each side counts them. */
const TABLES = ['collections', 'videos', 'library_folders', 'excluded_files', 'segments', 'video_signatures', 'video_capabilities', 'tasks', 'api_keys', 'jobs'] as const;
type Table = (typeof TABLES)[number];

/** Jobs still to do: the others (done, failed) are history the queue does not need. */
const OPEN_JOBS = `status IN ('queued', 'running')`;

const SEGMENT_PAGE = 500;

/** An epoch-milliseconds column of SQLite as a timestamptz parameter. */
const ms = (n: number | null) => (n === null ? null : new Date(n).toISOString());

/**
 * Copies a SQLite library into an empty PostgreSQL database (migrated first): collections, videos,
 * segments with their vectors, keywords and facts, signatures, capabilities' states, tasks, API keys (hashes: the keys
 * themselves were never stored) and the open jobs (a job that was running starts again as queued:
 * its worker belonged to the old library). Segment ids are kept. One transaction: on any error
 * nothing is left behind. Blobs are not touched (see `vidembed migrate --storage-to`).
 * Refuses a database that already holds a library. Where the server has pgvector (and `vector`
 * does not ask for the in-memory index), the vectors go straight into the pgvector column and each
 * dimension's HNSW index is built after the copy (src/store/pg/vector-store.ts).
 */
export async function copySqliteToPg(
  store: Store,
  pool: pg.Pool,
  onProgress?: (table: Table | 'hnsw index', done: number, total: number) => void,
  vector: { request: PgVectorRequest; settings: PgVectorSettings } = { request: 'auto', settings: PG_VECTOR_DEFAULTS },
): Promise<CopyCounts[]> {
  await migratePg(pool);
  await prepareVectorStore(pool, vector.request, vector.settings);
  const vectorStore = await readVectorStore(pool);
  const intoPgvector = vectorStore.phase === 'pgvector';
  const db = store.db;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ n: number }>(`SELECT (SELECT count(*) FROM collections) + (SELECT count(*) FROM api_keys) + (SELECT count(*) FROM jobs) AS n`);
    if (Number(rows[0].n) > 0) throw new Error('the PostgreSQL database already holds a library (collections, keys or jobs): migrate into an empty database');
    const total = (t: Table) => sqliteCount(store, t);

    /** Copies `cols` of every row of `table`, in `order`; `map` adjusts a row's values first. */
    const copyRows = async (table: Table, cols: string[], order: string, map: (row: Record<string, unknown>) => unknown[] = (row) => cols.map((c) => row[c])) => {
      const rows = db.prepare(`SELECT ${cols.join(', ')} FROM ${table} ORDER BY ${order}`).all() as Record<string, unknown>[];
      const insert = `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`;
      for (const row of rows) await client.query(insert, map(row));
      onProgress?.(table, rows.length, rows.length);
      return rows;
    };

    const collections = await copyRows('collections', ['id', 'owner', 'name', 'description', 'model', 'dim', 'created_at', 'recipe_json', 'revision'], 'seq');
    // A video kept by key has no path (PostgreSQL holds exactly one of the two).
    const videoCols = ['id', 'collection_id', 'filename', 'path', 'blob_key', 'size_bytes', 'status', 'progress', 'error_message', 'duration', 'width', 'height', 'fps', 'codec', 'playback', 'tags_json', 'content_sha256', 'created_at', 'updated_at', 'fingerprint', 'file_mtime'];
    await copyRows('videos', videoCols, 'created_at, rowid', (v) => videoCols.map((c) => (c === 'path' && v.blob_key ? '' : v[c])));
    const folderCols = ['collection_id', 'path'];
    await copyRows('library_folders', folderCols, 'seq');
    await copyRows('excluded_files', ['collection_id', 'fingerprint', 'path', 'excluded_at'], 'collection_id, fingerprint');

    // Segments in pages: rows, the keyword text the FTS index holds, the float32 vector.
    const dims = new Map(collections.map((c) => [c.id as string, c.dim as number]));
    const segTotal = total('segments');
    const page = db.prepare(
      `SELECT s.id, s.video_id, s.collection_id, s.idx, s.start, s."end", s.description, f.description AS keywords, s.details_json, s.facts_json, s.tags_json,
         s.labels_json, s.phash
       FROM segments s LEFT JOIN segments_fts f ON f.rowid = s.id WHERE s.id > ? ORDER BY s.id LIMIT ?`,
    );
    let after = 0;
    let copied = 0;
    for (;;) {
      const segs = page.all(after, SEGMENT_PAGE) as Record<string, unknown>[];
      if (segs.length === 0) break;
      const byDim = new Map<number, number[]>();
      for (const s of segs) {
        const dim = dims.get(s.collection_id as string);
        if (dim === undefined) throw new Error(`segment ${s.id} belongs to no collection (${s.collection_id})`);
        byDim.set(dim, [...(byDim.get(dim) ?? []), s.id as number]);
      }
      const vectors = new Map<number, Float32Array>();
      for (const [dim, ids] of byDim) for (const [id, v] of store.segments.vectors(dim, ids)) vectors.set(id, v);
      const v = segs.map((s) => {
        const got = vectors.get(s.id as number);
        if (!got) throw new Error(`segment ${s.id} has no stored vector`);
        return got;
      });
      // One statement per page; pgvector's vectors in binary (packVectors: no float printed or parsed).
      const packed = intoPgvector ? packVectors(v) : { data: null, offsets: v.map(() => null) };
      await client.query(
        `INSERT INTO segments (id, video_id, collection_id, idx, start, "end", description, keywords, details_json, facts_json, tags_json,
           labels, phash, dim, embedding${intoPgvector ? ', vec' : ''})
         OVERRIDING SYSTEM VALUE
         SELECT u.id, u.video_id, u.collection_id, u.idx, u.start, u.stop, u.description, to_tsvector('english', u.keywords), u.details, u.facts, u.tags,
           COALESCE(u.labels::jsonb, '{}'), u.phash, u.dim, u.embedding${intoPgvector ? `, ${vectorAt('$17', 'u.off', 'u.dim')}` : ''}
         FROM unnest($1::bigint[], $2::text[], $3::text[], $4::int[], $5::float8[], $6::float8[], $7::text[], $8::text[], $9::text[], $10::text[],
           $11::text[], $12::text[], $13::text[], $14::int[], $15::bytea[], $16::int[])
           AS u(id, video_id, collection_id, idx, start, stop, description, keywords, details, facts, tags, labels, phash, dim, embedding, off)`,
        [
          segs.map((s) => s.id),
          segs.map((s) => s.video_id),
          segs.map((s) => s.collection_id),
          segs.map((s) => s.idx),
          segs.map((s) => s.start),
          segs.map((s) => s.end),
          segs.map((s) => s.description),
          segs.map((s) => (s.keywords as string | null) ?? (s.description as string)),
          segs.map((s) => s.details_json),
          segs.map((s) => s.facts_json),
          segs.map((s) => s.tags_json),
          segs.map((s) => s.labels_json),
          segs.map((s) => s.phash),
          v.map((x) => x.length),
          v.map((x) => (intoPgvector ? null : Buffer.from(x.buffer, x.byteOffset, x.byteLength))),
          packed.offsets,
          ...(intoPgvector ? [packed.data] : []),
        ],
      );
      after = segs[segs.length - 1].id as number;
      copied += segs.length;
      onProgress?.('segments', copied, segTotal);
    }
    // New segments continue after the copied ids.
    await client.query(`SELECT setval(pg_get_serial_sequence('segments', 'id'), GREATEST((SELECT max(id) FROM segments), 1), (SELECT count(*) > 0 FROM segments))`);

    await copyRows('video_signatures', ['video_id', 'version', 'frames', 'data', 'updated_at'], 'video_id');
    await copyRows('video_capabilities', ['video_id', 'capability', 'status', 'version', 'message', 'updated_at'], 'video_id, capability');
    await copyRows('tasks', ['id', 'kind', 'owner', 'status', 'request_json', 'result_json', 'error_message', 'created_at', 'updated_at'], 'created_at, rowid');
    await copyRows('api_keys', ['id', 'name', 'key_hash', 'prefix', 'qps', 'quota', 'used', 'created_at', 'revoked_at', 'owner', 'role', 'limits_json'], 'created_at, rowid');

    const jobs = db.prepare(`SELECT id, kind, ref_id, owner, attempts, max_attempts, last_error, created_at, updated_at FROM jobs WHERE ${OPEN_JOBS} ORDER BY created_at, rowid`).all() as Record<string, unknown>[];
    for (const j of jobs) {
      await client.query(
        `INSERT INTO jobs (id, kind, ref_id, owner, status, attempts, max_attempts, last_error, created_at, updated_at) VALUES ($1, $2, $3, $9, 'queued', $4, $5, $6, $7, $8)`,
        [j.id, j.kind, j.ref_id, Math.min(j.attempts as number, (j.max_attempts as number) - 1), j.max_attempts, j.last_error, ms(j.created_at as number), ms(j.updated_at as number), j.owner],
      );
    }
    onProgress?.('jobs', jobs.length, jobs.length);

    const counts: CopyCounts[] = [];
    for (const t of TABLES) {
      const where = t === 'jobs' ? `WHERE ${OPEN_JOBS}` : '';
      const { rows: r } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${t} ${where}`);
      counts.push({ table: t, sqlite: total(t), postgres: Number(r[0].n) });
    }
    const off = counts.filter((c) => c.sqlite !== c.postgres);
    if (off.length) throw new Error(`the copy does not add up: ${off.map((c) => `${c.table} ${c.sqlite} in SQLite, ${c.postgres} in PostgreSQL`).join('; ')}`);
    await client.query('COMMIT');
    if (intoPgvector) {
      // The indexes once the rows are in (a bulk build is far faster than one insert at a time).
      const dimsUsed = [...new Set(collections.map((c) => c.dim as number))].sort((a, b) => a - b);
      for (const [i, dim] of dimsUsed.entries()) {
        await ensureHnswIndex(pool, dim, indexKind(vectorStore), vector.settings);
        onProgress?.('hnsw index', i + 1, dimsUsed.length);
      }
    }
    return counts;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

function sqliteCount(store: Store, t: Table): number {
  const where = t === 'jobs' ? `WHERE ${OPEN_JOBS}` : '';
  return store.db.prepare(`SELECT COUNT(*) FROM ${t} ${where}`).pluck().get() as number;
}

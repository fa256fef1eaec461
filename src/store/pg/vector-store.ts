import type pg from 'pg';
import { PG_VECTOR_DEFAULTS, type PgVectorRequest, type PgVectorSettings } from '../../env.js';
import type { Queryable } from './migrate.js';

/*
 * Where a PostgreSQL library's vectors are searched (issue 32; docs/scale.md "pgvector").
 *
 * - 'memory': vectors are float32 bytea (`segments.embedding`); every process that searches keeps
 *   an in-memory index of each collection it searched, fed from the table (src/store/catalog/pg-index.ts).
 * - 'pgvector': vectors are in `segments.vec` (pgvector's `vector`, float32, exact as written) and
 *   searched in SQL through one HNSW index per dimension, on the unit vector as `halfvec` (or
 *   `vector`): a partial index `WHERE dim = D` on `(l2_normalize(vec)::halfvec(D))` with inner
 *   product ops. No process holds a copy.
 * - 'migrating': `vidembed db migrate` is moving a 'memory' library: searches still use the
 *   in-memory index, writers fill both columns, and the migration fills `vec` for older rows.
 *
 * The phase is one row (`vidembed_vector_store`, PG migration 20). A writer reads it FOR SHARE in
 * its transaction, so a phase change (an UPDATE of that row) waits for the writes in flight and
 * every later write sees it: no row is written for the old phase after the change commits.
 */

export type VectorPhase = 'memory' | 'migrating' | 'pgvector';

/** What the library's row holds. `settings`: the index kind and build parameters the indexes were made with. */
export interface VectorStoreRow {
  phase: VectorPhase;
  settings: { index?: 'halfvec' | 'vector'; m?: number; ef_construction?: number };
}

/** What a process runs with, and why (`vidembed doctor`, `serve` at start). */
export interface VectorStoreStatus {
  /** Where searches run in this process. */
  mode: 'memory' | 'pgvector';
  phase: VectorPhase;
  /** The `vector` extension: the version installed in this database, and the one the server offers. */
  installed: string | null;
  available: string | null;
  /** One sentence: why this mode. */
  reason: string;
  /** The index kind of this library's HNSW indexes (pgvector mode). */
  index?: 'halfvec' | 'vector';
}

/** The library refuses the mode asked for (say why and what to do). */
export class VectorStoreRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VectorStoreRefusedError';
  }
}

/** Any fixed number: whoever changes the vector store's schema (extension, column, indexes) takes this lock first. */
const VECTOR_DDL_LOCK = 0x76656332; // "vec2"

export async function readVectorStore(q: Queryable, lock: '' | 'FOR SHARE' = ''): Promise<VectorStoreRow> {
  const { rows } = await q.query<VectorStoreRow>(`SELECT phase, settings FROM vidembed_vector_store WHERE id = 1 ${lock}`);
  return rows[0] ?? { phase: 'memory', settings: {} };
}

export async function extensionVersions(q: Queryable): Promise<{ installed: string | null; available: string | null }> {
  const { rows } = await q.query<{ installed: string | null; available: string | null }>(
    `SELECT (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS installed,
            (SELECT default_version FROM pg_available_extensions WHERE name = 'vector') AS available`,
  );
  return rows[0];
}

/** The index kind a library in pgvector mode uses (what its indexes were built with). */
export function indexKind(row: VectorStoreRow): 'halfvec' | 'vector' {
  return row.settings.index ?? PG_VECTOR_DEFAULTS.index;
}

export function hnswIndexName(dim: number): string {
  return `segments_vec_hnsw_${checkedDim(dim)}`;
}

function checkedDim(dim: number): number {
  if (!Number.isInteger(dim) || dim <= 0 || dim > 8192) throw new Error(`bad vector dimension ${dim}`);
  return dim;
}

/** The indexed expression: the unit vector, as `halfvec(D)` or `vector(D)` (inner product = cosine on it). */
export function indexedExpr(dim: number, kind: 'halfvec' | 'vector'): string {
  return `(l2_normalize(vec)::${kind}(${checkedDim(dim)}))`;
}

/** The largest dimension pgvector's HNSW index takes per kind; larger collections are searched exactly. */
export const HNSW_MAX_DIM = { halfvec: 4000, vector: 2000 } as const;

/**
 * The extension and the `vec` column, under the DDL lock, in one transaction. Needs the right to
 * CREATE EXTENSION (a superuser, or the database owner where the extension is trusted) the first
 * time; refused with what to do otherwise.
 */
export async function ensureVecColumn(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [VECTOR_DDL_LOCK]);
    try {
      await client.query('CREATE EXTENSION IF NOT EXISTS vector');
    } catch (err) {
      throw new VectorStoreRefusedError(
        `cannot create the vector extension in this database (${(err as Error).message}): ask its administrator to run CREATE EXTENSION vector, or install pgvector on the server (docs/scale.md)`,
      );
    }
    const has = await client.query(`SELECT 1 FROM information_schema.columns WHERE table_name = 'segments' AND column_name = 'vec' AND table_schema = current_schema()`);
    if (!has.rowCount) {
      // Stored in the row (MAIN: not moved out to TOAST unless the row cannot fit otherwise), so an
      // exact re-rank reads the heap page it already has.
      await client.query(`ALTER TABLE segments ADD COLUMN vec vector, ALTER COLUMN vec SET STORAGE MAIN,
        ADD CONSTRAINT segments_vec_dim CHECK (vec IS NULL OR vector_dims(vec) = dim)`);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/** Sets the phase (and, when given, the index settings): waits for the writers in flight (they hold the row FOR SHARE). */
export async function setPhase(q: Queryable, phase: VectorPhase, settings?: VectorStoreRow['settings']): Promise<void> {
  await q.query(
    `UPDATE vidembed_vector_store SET phase = $1, settings = COALESCE($2::jsonb, settings), updated_at = clock_timestamp() WHERE id = 1`,
    [phase, settings ? JSON.stringify(settings) : null],
  );
}

export function settingsRow(s: PgVectorSettings): VectorStoreRow['settings'] {
  return { index: s.index, m: s.m, ef_construction: s.efConstruction };
}

/** Dimensions that hold segments. */
export async function segmentDims(q: Queryable): Promise<number[]> {
  const { rows } = await q.query<{ dim: number }>(
    `SELECT DISTINCT c.dim FROM collections c
     JOIN (SELECT collection_id FROM segment_counts GROUP BY collection_id HAVING sum(n) > 0) x ON x.collection_id = c.id ORDER BY c.dim`,
  );
  return rows.map((r) => r.dim);
}

/** 'valid', 'invalid' (a build that failed or was interrupted: drop it and build again) or 'missing'. */
export async function hnswIndexState(q: Queryable, dim: number): Promise<'valid' | 'invalid' | 'missing'> {
  const { rows } = await q.query<{ valid: boolean }>(
    `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace`,
    [hnswIndexName(dim)],
  );
  if (!rows.length) return 'missing';
  return rows[0].valid ? 'valid' : 'invalid';
}

/**
 * `maintenance_work_mem` for building one dimension's HNSW graph over `rows` segments: the graph's
 * size (per element the indexed value — 2 bytes a dimension as halfvec, 4 as vector — plus its
 * level-0 neighbour list of 2m entries at 12 bytes and ~100 bytes of bookkeeping) plus a quarter,
 * at least 64 MB, at most `cap` (VIDEMBED_PG_BUILD_MEMORY). A parallel build reserves the whole
 * setting in the server's dynamic shared memory (/dev/shm) whatever the graph needs, so a fixed 2 GB
 * fails a small library's build on a server with a small /dev/shm (Docker: 64 MB) and takes 2 GB
 * from a shared machine for nothing. Returns kB.
 */
export function hnswBuildMemoryKb(rows: number, dim: number, kind: 'halfvec' | 'vector', m: number, cap: string): number {
  const [, num, unit] = /^(\d+)\s*(kB|MB|GB)$/.exec(cap.trim()) ?? [];
  const capKb = num ? Number(num) * (unit === 'GB' ? 1024 * 1024 : unit === 'MB' ? 1024 : 1) : 2 * 1024 * 1024;
  const perElement = dim * (kind === 'halfvec' ? 2 : 4) + 2 * m * 12 + 100;
  const wantKb = Math.ceil((rows * perElement * 1.25) / 1024);
  return Math.min(capKb, Math.max(64 * 1024, wantKb));
}

/**
 * Builds the HNSW index of one dimension when it is missing (an invalid one from an interrupted
 * build is dropped first). `concurrently`: writes go on meanwhile (CREATE INDEX CONCURRENTLY:
 * `db migrate`, `db reindex`); otherwise one short build under the DDL lock (a dimension's first
 * segments). `onProgress` is called every 2 s with pg_stat_progress_create_index's phase and counts.
 */
export async function ensureHnswIndex(
  pool: pg.Pool,
  dim: number,
  kind: 'halfvec' | 'vector',
  s: Pick<PgVectorSettings, 'm' | 'efConstruction' | 'buildMemory'>,
  opts: { concurrently?: boolean; onProgress?: (p: { phase: string; done: number; total: number }) => void; name?: string } = {},
): Promise<'exists' | 'built' | 'too-wide'> {
  if (dim > HNSW_MAX_DIM[kind]) return 'too-wide';
  const name = opts.name ?? hnswIndexName(dim);
  const state = opts.name ? 'missing' : await hnswIndexState(pool, dim);
  if (state === 'valid') return 'exists';
  const client = await pool.connect();
  let timer: NodeJS.Timeout | undefined;
  try {
    // The rows the graph will hold (seconds at 10M rows, against a build of hours).
    const { rows: est } = await client.query<{ n: number }>('SELECT count(*)::float8 AS n FROM segments WHERE dim = $1', [dim]);
    await client.query(`SET maintenance_work_mem = '${hnswBuildMemoryKb(est[0].n, dim, kind, s.m, s.buildMemory)}kB'`);
    await client.query('SET max_parallel_maintenance_workers = 1');
    const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const ddl = (concurrently: boolean) =>
      `CREATE INDEX ${concurrently ? 'CONCURRENTLY ' : ''}IF NOT EXISTS ${name} ON segments
       USING hnsw (${indexedExpr(dim, kind)} ${kind}_ip_ops) WITH (m = ${Math.trunc(s.m)}, ef_construction = ${Math.trunc(s.efConstruction)})
       WHERE dim = ${dim}`;
    if (opts.onProgress) {
      const report = opts.onProgress;
      timer = setInterval(() => {
        pool
          .query<{ phase: string; done: number; total: number }>(
            `SELECT phase, coalesce(nullif(tuples_done, 0), blocks_done)::float8 AS done, coalesce(nullif(tuples_total, 0), blocks_total)::float8 AS total
             FROM pg_stat_progress_create_index WHERE pid = $1`,
            [pid],
          )
          .then((r) => r.rows[0] && report(buildProgress(r.rows[0], est[0].n)))
          .catch(() => {});
      }, 2000);
    }
    if (opts.concurrently) {
      if (state === 'invalid') await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
      await client.query(ddl(true));
    } else {
      await client.query('BEGIN');
      try {
        await client.query('SELECT pg_advisory_xact_lock($1)', [VECTOR_DDL_LOCK]);
        if (state === 'invalid') await client.query(`DROP INDEX IF EXISTS ${name}`);
        await client.query(ddl(false));
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      }
    }
    return 'built';
  } finally {
    if (timer) clearInterval(timer);
    await client.query('RESET maintenance_work_mem').catch(() => {});
    client.release();
  }
}

/**
 * Decides, for a process starting on this database, where its searches run (and moves a new,
 * empty library to pgvector when the extension is there and nothing asks otherwise):
 *
 * | library phase | asked `auto` | asked `pgvector` | asked `memory` |
 * |---|---|---|---|
 * | pgvector | pgvector | pgvector | refused: the vectors are in the database now |
 * | memory, no segments yet, extension available | moves to pgvector | moves to pgvector | memory |
 * | memory, with segments, extension available | memory (run `vidembed db migrate`) | refused: run `vidembed db migrate` | memory |
 * | memory or migrating, no extension | memory | refused: install pgvector | memory |
 * | migrating | memory until the migration ends | memory, said | memory |
 */
export async function prepareVectorStore(pool: pg.Pool, request: PgVectorRequest, settings: PgVectorSettings): Promise<VectorStoreStatus> {
  let row = await readVectorStore(pool);
  const ext = await extensionVersions(pool);
  const status = (mode: 'memory' | 'pgvector', reason: string): VectorStoreStatus => ({
    mode,
    phase: row.phase,
    ...ext,
    reason,
    index: row.phase === 'pgvector' ? indexKind(row) : undefined,
  });
  if (row.phase === 'pgvector') {
    if (request === 'memory') throw new VectorStoreRefusedError('this library keeps its vectors in pgvector (moved by `vidembed db migrate`): --pg-vector memory cannot search it');
    if (!ext.installed) throw new VectorStoreRefusedError('this library keeps its vectors in pgvector, but the vector extension is not installed in this database');
    return status('pgvector', `vectors are in the database (pgvector ${ext.installed}, HNSW on ${indexKind(row)}): searches run in SQL, no process holds a copy`);
  }
  if (row.phase === 'migrating') {
    return status('memory', '`vidembed db migrate` is moving this library to pgvector: searches use the in-memory index until it ends');
  }
  if (request === 'memory') return status('memory', 'asked for (--pg-vector memory / VIDEMBED_PG_VECTOR=memory): each process keeps an in-memory index of the collections it searches');
  if (!ext.available) {
    if (request === 'pgvector') throw new VectorStoreRefusedError('--pg-vector pgvector: the PostgreSQL server has no vector extension (pgvector): install it (scripts/install-pgvector.sh on Debian/Ubuntu; docs/scale.md)');
    return status('memory', 'the PostgreSQL server has no vector extension (pgvector): each process keeps an in-memory index of the collections it searches (install pgvector to search in the database: docs/scale.md)');
  }
  const { rows } = await pool.query<{ any: boolean }>('SELECT EXISTS (SELECT 1 FROM segments) AS any');
  if (rows[0].any) {
    const msg = `pgvector ${ext.available} is available, but this library's vectors are still in the in-memory layout: run \`vidembed db migrate\` to move them (online)`;
    if (request === 'pgvector') throw new VectorStoreRefusedError(msg);
    return status('memory', msg);
  }
  // A library without segments moves at once (nothing to copy).
  await ensureVecColumn(pool);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const now = await readVectorStore(client, 'FOR SHARE');
    const still = await client.query<{ any: boolean }>('SELECT EXISTS (SELECT 1 FROM segments) AS any');
    if (now.phase === 'memory' && !still.rows[0].any) await setPhase(client, 'pgvector', settingsRow(settings));
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
  row = await readVectorStore(pool);
  ext.installed = (await extensionVersions(pool)).installed;
  if (row.phase !== 'pgvector') return prepareVectorStore(pool, request, settings); // another process wrote first
  return status('pgvector', `vectors are in the database (pgvector ${ext.installed}, HNSW on ${indexKind(row)}): searches run in SQL, no process holds a copy`);
}

/** Where this database's searches run now, without changing anything (a catalog not opened through src/store/open.ts). */
export async function describeVectorStore(q: Queryable): Promise<VectorStoreStatus> {
  const row = await readVectorStore(q);
  const ext = await extensionVersions(q);
  if (row.phase === 'pgvector') {
    return { mode: 'pgvector', phase: row.phase, ...ext, index: indexKind(row), reason: `vectors are in the database (pgvector ${ext.installed ?? '(not installed!)'}, HNSW on ${indexKind(row)})` };
  }
  const reason =
    row.phase === 'migrating'
      ? '`vidembed db migrate` is moving this library to pgvector: searches use the in-memory index until it ends'
      : ext.available
        ? `pgvector ${ext.available} is available; this library's vectors are in the in-memory layout (\`vidembed db migrate\` moves them)`
        : 'the PostgreSQL server has no vector extension (pgvector): each process keeps an in-memory index';
  return { mode: 'memory', phase: row.phase, ...ext, reason };
}

/**
 * Float32 vectors as one query parameter, in binary: a `real[]` holding them one after another
 * (node-postgres sends a Buffer parameter in binary form, so no float is printed or parsed and the
 * float32 bits arrive exactly), with each vector's offset in it (null for a row without one). In
 * SQL a row's vector is `vectorAt('$data', 'u.off', 'u.dim')`, a query's `queryVector('$2', dim)`.
 * Why: printing 512 floats as text (pgvector's text form, as before) took ~1 ms a vector in Node and about as long
 * again for PostgreSQL to parse — the whole cost of writing 100k segments (233 s), and ~1 ms of
 * Node's CPU on every search.
 */
export function packVectors(vectors: readonly (Float32Array | null)[]): { data: Buffer; offsets: (number | null)[] } {
  let total = 0;
  const offsets = vectors.map((v) => {
    if (!v) return null;
    const at = total;
    total += v.length;
    return at;
  });
  // array_recv's layout: ndim, has-nulls flag, element type (float4 = 700), then per dimension its
  // length and lower bound; then each element as a 4-byte length and its big-endian bytes.
  const head = total ? 20 : 12;
  const buf = Buffer.allocUnsafe(head + total * 8);
  buf.writeInt32BE(total ? 1 : 0, 0);
  buf.writeInt32BE(0, 4);
  buf.writeInt32BE(700, 8);
  if (total) {
    buf.writeInt32BE(total, 12);
    buf.writeInt32BE(1, 16);
  }
  let at = head;
  for (const v of vectors) {
    if (!v) continue;
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (!Number.isFinite(x)) throw new Error('a vector holds NaN or an infinity');
      buf.writeInt32BE(4, at);
      buf.writeFloatBE(x, at + 4);
      at += 8;
    }
  }
  return { data: buf, offsets };
}

/** The SQL of one packed vector: `data` the parameter of `packVectors(…).data`, `off` and `dim` SQL expressions (null offset → NULL). */
export function vectorAt(data: string, off: string, dim: string): string {
  return `(${data}::real[])[${off} + 1 : ${off} + ${dim}]::vector`;
}

/** A query vector as a binary parameter (`queryVectorSql` in the statement). */
export function queryVectorParam(v: Float32Array): Buffer {
  return packVectors([v]).data;
}

/** The SQL of a query vector passed with `queryVectorParam`: `vector(dim)`. */
export function queryVectorSql(param: string, dim: number): string {
  return `(${param}::real[])::vector(${checkedDim(dim)})`;
}

/** pgvector's binary form (`vector_send`: the dimension and a reserved word as int16, then big-endian float32s) back to float32. */
export function readVectorBinary(b: Buffer): Float32Array {
  const dim = b.readUInt16BE(0);
  if (b.length !== 4 + 4 * dim) throw new Error(`a binary vector of ${b.length} bytes cannot hold ${dim} dimensions`);
  const out = new Float32Array(dim);
  for (let i = 0; i < dim; i++) out[i] = b.readFloatBE(4 + 4 * i);
  return out;
}

/**
 * An HNSW build's progress as reported: while the graph loads its rows, PostgreSQL's total is the
 * table's estimate (reltuples, stale after a bulk write: 560,106 of 334,000 was seen at 1M), so the
 * rows counted before the build are the total then; other phases as PostgreSQL says.
 */
export function buildProgress(p: { phase: string; done: number; total: number }, counted: number): { phase: string; done: number; total: number } {
  return p.phase.includes('loading tuples') ? { ...p, total: Math.max(counted, p.done) } : p;
}

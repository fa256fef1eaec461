import pg from 'pg';
import { PG_MIGRATIONS } from './migrations.js';
import { refuseNewer } from '../migrations.js';
import { pgPreparedStatements } from '../../env.js';
import { nameStatements } from './prepared.js';

export { PG_MIGRATIONS };

/** Any fixed number: every process that migrates takes this transaction-level advisory lock first. */
const MIGRATION_LOCK = 0x76696465; // "vide"

/**
 * Applies the missing steps in one transaction under an advisory lock, so processes starting
 * together do not race (the second waits, then finds nothing left to do). PostgreSQL's DDL is
 * transactional: a failing step leaves the schema as it was. Returns the versions applied.
 */
export async function migratePg(pool: pg.Pool, upTo = Number.POSITIVE_INFINITY): Promise<number[]> {
  const client = await pool.connect();
  const applied: number[] = [];
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS vidembed_schema_migrations (
         version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT clock_timestamp())`,
    );
    const done = new Set((await client.query<{ version: number }>('SELECT version FROM vidembed_schema_migrations')).rows.map((r) => r.version));
    refuseNewer('PostgreSQL', done, PG_MIGRATIONS);
    for (const m of PG_MIGRATIONS) {
      if (done.has(m.version) || m.version > upTo) continue;
      await client.query(m.sql);
      await client.query('INSERT INTO vidembed_schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.version);
    }
    await client.query('COMMIT');
    return applied;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

export async function pgSchemaVersion(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ v: number | null }>('SELECT max(version) AS v FROM vidembed_schema_migrations');
  return rows[0]?.v ?? 0;
}

/**
 * A pool for a `postgres://` URL. An idle client whose connection breaks (server restart) makes
 * the pool emit 'error'; unhandled, that would end the process, so it is only noted here — the
 * next query gets a fresh connection or fails with its own error.
 */
export function openPgPool(url: string, max = 4, opts: { prepared?: boolean } = {}): pg.Pool {
  const prepared = opts.prepared ?? pgPreparedStatements();
  // A server that does not answer (a partition rather than a refusal) fails a checkout in 10 s
  // instead of never: the caller sees an outage (503, a worker's backoff), not a hang.
  const pool = new pg.Pool({
    connectionString: url,
    max,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
    // No JIT compilation: vidembed's statements are short, and the few the planner costs high
    // (ranking a common word's matches at 1M segments) spent ~90 ms of ~780 compiling
    // (docs/scale.md). Awaited before the new connection is handed out (pg-pool's onConnect; a
    // query sent from the 'connect' event would be queued behind it, which pg deprecates); a SET,
    // not a startup option, so poolers that refuse unknown startup parameters (PgBouncer) connect.
    onConnect: async (client: pg.ClientBase) => {
      await client.query('SET jit = off');
      // Reads as named statements (src/store/pg/prepared.ts; VIDEMBED_PG_PREPARED=0: off).
      if (prepared) nameStatements(client);
    },
  });
  pool.on('error', (err) => {
    process.emitWarning(`vidembed: an idle PostgreSQL connection failed: ${err.message}`);
  });
  // A checked-out client whose server goes away between two of its queries emits 'error' with no
  // listener of the pool's attached: noted here (its next query fails and is handled there).
  pool.on('connect', (client) => {
    client.on('error', (err) => process.emitWarning(`vidembed: a PostgreSQL connection failed: ${err.message}`));
  });
  return pool;
}

/** A pool on `url` with the schema migrated; the pool is ended again when migrating fails. */
export async function openMigratedPool(url: string, max = 4): Promise<pg.Pool> {
  const pool = openPgPool(url, max);
  try {
    await migratePg(pool);
  } catch (err) {
    await pool.end();
    throw err;
  }
  return pool;
}

/**
 * Where a repository's statements go: a pool (each statement its own transaction) or a client
 * checked out of one that is inside a transaction (BEGIN .. COMMIT run by whoever checked it out).
 */
export type Queryable = pg.Pool | pg.PoolClient;

/** A checked-out client (it has `release`), as opposed to a pool. */
export function isClient(q: Queryable): q is pg.PoolClient {
  return typeof (q as pg.PoolClient).release === 'function';
}

/**
 * Runs `fn` in one transaction on `q`: on a pool, a client is checked out, BEGIN .. COMMIT (ROLLBACK
 * when `fn` rejects) and released in every case (destroyed when even ROLLBACK failed); on a client,
 * `fn` runs on it as it is, part of the transaction its owner opened.
 */
export async function inTransaction<T>(q: Queryable, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  if (isClient(q)) return fn(q);
  const client = await q.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch((e: unknown) => {
      broken = e instanceof Error ? e : new Error(String(e));
    });
    throw err;
  } finally {
    client.release(broken);
  }
}

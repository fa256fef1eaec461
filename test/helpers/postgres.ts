import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { openMigratedPool, openPgPool } from '../../src/store/pg/migrate.js';
import { findPgBin, startThrowawayCluster, type ThrowawayCluster } from '../../src/store/pg/throwaway.js';

/**
 * PostgreSQL for a test file. With VIDEMBED_TEST_DATABASE_URL set, a fresh database is created on
 * that server (and dropped afterwards); otherwise a throwaway cluster is started in a temp dir on a
 * free port (src/store/pg/throwaway.ts) and stopped afterwards, also when tests fail (the caller's
 * afterAll, plus an exit handler in case the file never gets there).
 *
 * Availability: under CI=true the PostgreSQL suites must run — `pgTestAvailable()` answers true and
 * the start fails loudly when the binaries are missing. Elsewhere, without binaries and without a
 * URL, it answers false after one loud line, and the caller skips.
 */
export function pgTestAvailable(): boolean {
  if (process.env.VIDEMBED_TEST_DATABASE_URL) return true;
  if (process.env.CI === 'true' || process.env.CI === '1') return true;
  if (findPgBin()) return true;
  console.warn(
    '!!! PostgreSQL suites SKIPPED: no server binaries in /usr/lib/postgresql/*/bin (apt-get install postgresql-15) and VIDEMBED_TEST_DATABASE_URL is unset !!!',
  );
  return false;
}

export interface PgTestDatabase {
  /** URL of this test file's own database. */
  url: string;
  /** The throwaway cluster serving it, when this file started one (halt/resume it for outages). */
  cluster?: ThrowawayCluster;
  /** Drops the database and stops the throwaway cluster, if this file started one. Idempotent. */
  teardown(): Promise<void>;
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** `ownCluster`: a throwaway cluster even when VIDEMBED_TEST_DATABASE_URL names a server (a test that stops its server). */
export async function startTestDatabase(opts: { ownCluster?: boolean } = {}): Promise<PgTestDatabase> {
  const name = `vidembed_test_${randomBytes(6).toString('hex')}`;
  const given = opts.ownCluster ? undefined : process.env.VIDEMBED_TEST_DATABASE_URL;
  let cluster: ThrowawayCluster | undefined;
  let adminUrl: string;
  if (given) {
    adminUrl = given;
  } else {
    if (!findPgBin()) {
      throw new Error(
        'PostgreSQL is required here (CI=true) but no server binaries were found in /usr/lib/postgresql/*/bin: install postgresql-15 or set VIDEMBED_TEST_DATABASE_URL',
      );
    }
    cluster = await startThrowawayCluster();
    adminUrl = cluster.url('postgres');
  }
  const onExit = () => cluster?.stop();
  process.once('exit', onExit);
  try {
    await withClient(adminUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  } catch (err) {
    cluster?.stop();
    process.off('exit', onExit);
    throw err;
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  let done = false;
  return {
    url: url.toString(),
    cluster,
    async teardown() {
      if (done) return;
      done = true;
      try {
        if (!cluster) await withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
      } finally {
        cluster?.stop();
        process.off('exit', onExit);
      }
    },
  };
}

/**
 * Hooks for a describe block on its own test database: started and migrated once before its tests
 * (so the first test does not race a migration with another pool), `tables` emptied before each
 * test, dropped afterwards. Returns the database, set once the block's beforeAll ran.
 */
export function usePgTestDatabase(tables: string[]): { readonly url: string } {
  let db: PgTestDatabase | undefined;
  beforeAll(async () => {
    db = await startTestDatabase();
    await (await openMigratedPool(db.url, 1)).end();
  });
  afterAll(async () => {
    await db?.teardown();
  });
  beforeEach(async () => {
    const pool = openPgPool(db!.url, 1);
    try {
      await pool.query(`TRUNCATE ${tables.join(', ')} CASCADE`); // and the tables that refer to them
    } finally {
      await pool.end();
    }
  });
  return {
    get url() {
      if (!db) throw new Error('usePgTestDatabase: the database is not started yet (use it inside tests and hooks)');
      return db.url;
    },
  };
}

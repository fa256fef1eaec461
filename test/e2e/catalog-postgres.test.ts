import { describe, expect, it } from 'vitest';
import { openPgCatalog, PgCatalog } from '../../src/store/catalog/postgres.js';
import { openPgPool, PG_MIGRATIONS } from '../../src/store/pg/migrate.js';
import { PgJobQueue } from '../../src/store/queue/postgres.js';
import { conformance } from '../conformance/catalog.js';
import { pgTestAvailable, usePgTestDatabase } from '../helpers/postgres.js';

/* The catalog rules (test/conformance/catalog.ts) on PostgreSQL: a throwaway cluster, a process, so end-to-end. */

const pgOk = pgTestAvailable();

describe.skipIf(!pgOk)('catalog conformance: PostgreSQL', () => {
  const db = usePgTestDatabase(['collections', 'videos', 'tasks', 'api_keys', 'jobs', 'workers', 'segments', 'segment_deletions', 'video_signatures']);

  conformance(() => ({
    open: async () => {
      const pool = openPgPool(db.url, 2);
      const catalog = new PgCatalog(pool, true);
      return { catalog, queue: new PgJobQueue(pool), close: () => catalog.close() };
    },
  }));

  it('every pooled connection runs without JIT compilation (SET on connect)', async () => {
    const pool = openPgPool(db.url, 2);
    try {
      const clients = [await pool.connect(), await pool.connect()];
      for (const c of clients) expect((await c.query<{ jit: string }>('SHOW jit')).rows[0].jit).toBe('off');
      for (const c of clients) c.release();
      expect((await pool.query<{ jit: string }>('SHOW jit')).rows[0].jit).toBe('off');
    } finally {
      await pool.end();
    }
  });

  it('applies the catalog migration once, also when several processes start together', async () => {
    const catalogs = await Promise.all([openPgCatalog(db.url), openPgCatalog(db.url), openPgCatalog(db.url)]);
    try {
      const { rows } = await catalogs[0].pool.query('SELECT version FROM vidembed_schema_migrations ORDER BY version');
      expect(rows.map((r) => r.version)).toEqual(PG_MIGRATIONS.map((m) => m.version));
      expect(rows.map((r) => r.version)).toContain(2);
      const { rows: tables } = await catalogs[0].pool.query<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`,
      );
      // The catalog's tables (later migrations add more: each is tested by its own suite).
      expect(tables.map((t) => t.table_name).sort()).toEqual(expect.arrayContaining([
        'api_keys',
        'collections',
        'jobs',
        'library_folders',
        'segment_deletions',
        'segments',
        'tasks',
        'vidembed_schema_migrations',
        'video_signatures',
        'videos',
        'workers',
        'excluded_files',
      ]));
    } finally {
      for (const x of catalogs) await x.close();
    }
  });

  it('closes once however often it is asked (a server shutting down closes its store from two places)', async () => {
    const catalog = await openPgCatalog(db.url);
    await catalog.pool.query('SELECT 1');
    await Promise.all([catalog.close(), catalog.close()]);
    await expect(catalog.close()).resolves.toBeUndefined();
  });
});

import pg from 'pg';
import { databaseUrl, pgPoolSize, pgVectorRequest, pgVectorSettings } from '../env.js';
import { openSqliteCatalog } from './catalog/sqlite.js';
import { PgCatalog } from './catalog/postgres.js';
import type { Catalog } from './catalog/types.js';
import { migratePg, openPgPool } from './pg/migrate.js';
import { prepareVectorStore, type VectorStoreStatus } from './pg/vector-store.js';

/**
 * The library's catalog: PostgreSQL when VIDEMBED_DATABASE_URL (or `databaseUrl`) names one, else
 * the SQLite file. Opening is synchronous either way: on PostgreSQL the pool connects, and the
 * schema is migrated, on first use (every query waits for that one migration), so a wrong URL is
 * an error of the first call, naming the server, not of start-up. Right after migrating, the
 * vector store is decided (VIDEMBED_PG_VECTOR, src/store/pg/vector-store.ts prepareVectorStore):
 * a new library moves to pgvector when the server has it; a refusal is the first call's error.
 */
export function openCatalog(sqliteFile: string, opts: { memoryIndex?: boolean; databaseUrl?: string; poolSize?: number } = {}): Catalog {
  const url = opts.databaseUrl ?? databaseUrl();
  if (!url) return openSqliteCatalog(sqliteFile, { memoryIndex: opts.memoryIndex });
  const request = pgVectorRequest();
  const settings = pgVectorSettings();
  let status: VectorStoreStatus | undefined;
  const pool = lazilyMigratedPool(url, opts.poolSize ?? pgPoolSize(), async (raw) => {
    status = await prepareVectorStore(raw, request, settings);
  });
  return new PgCatalog(pool, true, { vectorSettings: settings, vectorStatus: () => status });
}

/** A pool whose queries and checkouts wait for the schema migration (run once, on first use). */
function lazilyMigratedPool(url: string, max: number, then: (pool: pg.Pool) => Promise<void>): pg.Pool {
  const pool = openPgPool(url, max);
  const query = pool.query.bind(pool) as (...a: unknown[]) => Promise<unknown>;
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  let ready: Promise<unknown> | undefined;
  // The migration checks out its client through the pool's own connect, not the waiting one below.
  const migrated = () => (ready ??= migratePg({ connect } as unknown as pg.Pool).then(() => then(pool)).catch((err: unknown) => {
    ready = undefined; // try again on the next call (the server may come up later)
    throw new Error(`PostgreSQL at ${redactUrl(url)}: ${(err as Error).message}`, { cause: err });
  }));
  // A view of the pool, not the pool itself: pg's own query() checks out through pool.connect.
  const view = Object.create(pool) as pg.Pool;
  return Object.assign(view, {
    query: (async (...args: unknown[]) => {
      await migrated();
      return query(...args);
    }) as unknown as pg.Pool['query'],
    connect: (async () => {
      await migrated();
      return connect();
    }) as unknown as pg.Pool['connect'],
    end: () => pool.end(),
  });
}

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the configured database';
  }
}

import type pg from 'pg';
import type { PgVectorSettings } from '../../env.js';
import {
  ensureHnswIndex,
  ensureVecColumn,
  extensionVersions,
  HNSW_MAX_DIM,
  indexKind,
  readVectorStore,
  segmentDims,
  setPhase,
  settingsRow,
  packVectors,
  vectorAt,
  VectorStoreRefusedError,
} from './vector-store.js';

/*
 * `vidembed db migrate`: moves a PostgreSQL library from the in-memory index to pgvector while
 * it serves (issue 32). Every step can be interrupted and run again; it goes on where it stopped.
 *
 * 1. the extension and the `vec` column (a catalog change: a moment's exclusive lock);
 * 2. phase 'migrating': from here every write fills `vec` too (writers read the phase FOR SHARE);
 * 3. backfill: the older rows' `vec` from their bytea, in batches by id, each its own transaction;
 * 4. one HNSW index per dimension, CREATE INDEX CONCURRENTLY (writes go on; an interrupted build
 *    leaves an invalid index, dropped and built again on the next run);
 * 5. phase 'pgvector': searches move to SQL (each process within 5 s; until then its in-memory
 *    index, which still has the bytea, answers);
 * 6. compact: after a grace period, the bytea copies are set to NULL in batches and the table is
 *    vacuumed (the space is reused by new rows; VACUUM FULL or pg_repack returns it to the disk).
 */

export type MigrateStep = 'column' | 'backfill' | 'index' | 'switch' | 'compact' | 'vacuum' | 'done';

export interface MigrateProgress {
  step: MigrateStep;
  done: number;
  total: number;
  /** e.g. the dimension an index is built for, or the build's phase. */
  note?: string;
}

export interface MigrateOptions {
  /** Rows per backfill or compaction batch (default 2000). */
  batch?: number;
  /** Leave the bytea copies (a library that may go back to the in-memory index). Default: compact. */
  keepBytea?: boolean;
  /** How long to wait after the switch before compacting: servers re-read the phase every 5 s (default 6 s). */
  graceMs?: number;
  /** Stops between batches (the run can be resumed). */
  signal?: AbortSignal;
  onProgress?: (p: MigrateProgress) => void;
}

export interface MigrateResult {
  already: boolean;
  backfilled: number;
  indexes: Array<{ dim: number; result: 'exists' | 'built' | 'too-wide' }>;
  compacted: number;
  seconds: Record<string, number>;
}

/** Backfills `vec` from the bytea in batches by id; returns how many rows it filled. */
async function backfill(pool: pg.Pool, batch: number, opts: MigrateOptions, total: number, doneBefore: number): Promise<number> {
  let after = 0;
  let filled = 0;
  for (;;) {
    opts.signal?.throwIfAborted();
    const { rows } = await pool.query<{ id: string; embedding: Buffer }>(
      `SELECT s.id::text AS id, s.embedding FROM segments s WHERE s.id > $1 AND s.vec IS NULL AND s.embedding IS NOT NULL ORDER BY s.id LIMIT $2`,
      [after, batch],
    );
    if (rows.length === 0) return filled;
    const ids = rows.map((r) => r.id);
    // The vectors in binary (packVectors): no float printed or parsed.
    const packed = packVectors(rows.map((r) => new Float32Array(r.embedding.buffer.slice(r.embedding.byteOffset, r.embedding.byteOffset + r.embedding.byteLength))));
    const r = await pool.query(
      `UPDATE segments s SET vec = ${vectorAt('$3', 'u.off', 's.dim')} FROM unnest($1::bigint[], $2::int[]) AS u(id, off) WHERE s.id = u.id AND s.vec IS NULL`,
      [ids, packed.offsets, packed.data],
    );
    filled += r.rowCount ?? 0;
    after = Number(ids[ids.length - 1]);
    opts.onProgress?.({ step: 'backfill', done: Math.min(total, doneBefore + filled), total });
  }
}

export async function migrateToPgvector(pool: pg.Pool, settings: PgVectorSettings, opts: MigrateOptions = {}): Promise<MigrateResult> {
  const batch = opts.batch ?? 2000;
  const say = opts.onProgress ?? (() => {});
  const seconds: Record<string, number> = {};
  const timed = async <T>(step: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = Date.now();
    try {
      return await fn();
    } finally {
      seconds[step] = (seconds[step] ?? 0) + (Date.now() - t0) / 1000;
    }
  };
  const ext = await extensionVersions(pool);
  if (!ext.available) {
    throw new VectorStoreRefusedError(
      'the PostgreSQL server has no vector extension (pgvector): install it first (scripts/install-pgvector.sh on Debian/Ubuntu; docs/scale.md), then run `vidembed db migrate` again',
    );
  }
  let row = await readVectorStore(pool);
  const result: MigrateResult = { already: row.phase === 'pgvector', backfilled: 0, indexes: [], compacted: 0, seconds };

  if (row.phase !== 'pgvector') {
    say({ step: 'column', done: 0, total: 1 });
    await timed('column', () => ensureVecColumn(pool));
    if (row.phase === 'memory') await setPhase(pool, 'migrating', settingsRow(settings));
    row = await readVectorStore(pool);
    say({ step: 'column', done: 1, total: 1 });

    // Rows written before the phase changed; those written since fill `vec` themselves.
    const { rows } = await pool.query<{ n: number; done: number }>(
      `SELECT count(*) FILTER (WHERE vec IS NULL AND embedding IS NOT NULL)::float8 AS n, count(vec)::float8 AS done FROM segments`,
    );
    const total = rows[0].n + rows[0].done;
    say({ step: 'backfill', done: rows[0].done, total });
    result.backfilled = await timed('backfill', () => backfill(pool, batch, opts, total, rows[0].done));
  }

  const kind = indexKind(row);
  const build = { m: row.settings.m ?? settings.m, efConstruction: row.settings.ef_construction ?? settings.efConstruction, buildMemory: settings.buildMemory };
  for (const dim of await segmentDims(pool)) {
    opts.signal?.throwIfAborted();
    say({ step: 'index', done: 0, total: 1, note: `dimension ${dim}${dim > HNSW_MAX_DIM[kind] ? ' (too wide for an HNSW index: searched exactly)' : ''}` });
    const got = await timed('index', () =>
      ensureHnswIndex(pool, dim, kind, build, {
        concurrently: true,
        onProgress: (p) => say({ step: 'index', done: p.done, total: p.total, note: `dimension ${dim}: ${p.phase}` }),
      }),
    );
    result.indexes.push({ dim, result: got });
    say({ step: 'index', done: 1, total: 1, note: `dimension ${dim}: ${got}` });
  }

  if (row.phase !== 'pgvector') {
    // Anything a writer that did not know the phase yet left behind, then the switch.
    const left = await backfill(pool, batch, opts, 0, 0);
    result.backfilled += left;
    opts.signal?.throwIfAborted();
    await timed('switch', () => setPhase(pool, 'pgvector', row.settings.index ? undefined : settingsRow(settings)));
    say({ step: 'switch', done: 1, total: 1 });
  }

  if (!opts.keepBytea) {
    const { rows } = await pool.query<{ n: number }>('SELECT count(embedding)::float8 AS n FROM segments');
    const total = rows[0].n;
    if (total > 0) {
      if (!result.already) await new Promise((r) => setTimeout(r, opts.graceMs ?? 6000));
      let after = 0;
      await timed('compact', async () => {
        for (;;) {
          opts.signal?.throwIfAborted();
          const ids = (
            await pool.query<{ id: string }>(`SELECT s.id::text AS id FROM segments s WHERE s.id > $1 AND s.embedding IS NOT NULL ORDER BY s.id LIMIT $2`, [after, batch])
          ).rows.map((r) => r.id);
          if (ids.length === 0) break;
          const r = await pool.query('UPDATE segments SET embedding = NULL WHERE id = ANY ($1::bigint[]) AND vec IS NOT NULL', [ids]);
          result.compacted += r.rowCount ?? 0;
          after = Number(ids[ids.length - 1]);
          say({ step: 'compact', done: result.compacted, total });
        }
      });
      say({ step: 'vacuum', done: 0, total: 1 });
      await timed('vacuum', () => pool.query('VACUUM (ANALYZE) segments'));
      say({ step: 'vacuum', done: 1, total: 1 });
    }
  }
  say({ step: 'done', done: 1, total: 1 });
  return result;
}

/**
 * `vidembed db reindex`: builds each dimension's HNSW index again with the current settings (m,
 * ef_construction, index kind stay as recorded unless `settings` differ), online: the new index is
 * built CONCURRENTLY beside the old, then swapped in. For after many deletions (pgvector's
 * graph repairs itself on VACUUM, slowly) or to change the build parameters.
 */
export async function reindexPgvector(pool: pg.Pool, settings: PgVectorSettings, onProgress?: (p: MigrateProgress) => void): Promise<Array<{ dim: number; seconds: number }>> {
  const row = await readVectorStore(pool);
  if (row.phase !== 'pgvector') throw new VectorStoreRefusedError('this library is not in pgvector mode: run `vidembed db migrate` first');
  const kind = settings.index;
  const out: Array<{ dim: number; seconds: number }> = [];
  for (const dim of await segmentDims(pool)) {
    if (dim > HNSW_MAX_DIM[kind]) continue;
    const t0 = Date.now();
    const fresh = `segments_vec_hnsw_${dim}_new`;
    await pool.query(`DROP INDEX CONCURRENTLY IF EXISTS ${fresh}`);
    await ensureHnswIndex(pool, dim, kind, settings, {
      concurrently: true,
      name: fresh,
      onProgress: (p) => onProgress?.({ step: 'index', done: p.done, total: p.total, note: `dimension ${dim}: ${p.phase}` }),
    });
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`DROP INDEX IF EXISTS segments_vec_hnsw_${dim}`);
      await client.query(`ALTER INDEX ${fresh} RENAME TO segments_vec_hnsw_${dim}`);
      await setPhase(client, 'pgvector', settingsRow(settings));
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
    out.push({ dim, seconds: (Date.now() - t0) / 1000 });
  }
  return out;
}

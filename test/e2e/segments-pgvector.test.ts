import { beforeAll, describe, expect, it } from 'vitest';
import { PG_VECTOR_DEFAULTS } from '../../src/env.js';
import { PgCatalog } from '../../src/store/catalog/postgres.js';
import { openPgPool } from '../../src/store/pg/migrate.js';
import { conformance, DIM, seg, vec } from '../conformance/segments.js';
import { PG_TABLES, pgvectorTestAvailable, usePgvector } from '../helpers/pgvector.js';
import { usePgTestDatabase } from '../helpers/postgres.js';

/*
 * The segment, signature and transaction rules (test/conformance/segments.ts) on PostgreSQL in
 * pgvector mode (issue 32): vectors in the database, searched in SQL. Twice: as it runs (small
 * collections scored exactly) and with every collection sent through the HNSW index (exactBelow 0).
 */

const ok = pgvectorTestAvailable();

for (const [name, settings] of [
  ['exact below 10k (the default)', PG_VECTOR_DEFAULTS],
  ['every search through the HNSW index', { ...PG_VECTOR_DEFAULTS, exactBelow: 0 }],
] as const) {
  describe.skipIf(!ok)(`segments conformance: PostgreSQL + pgvector, ${name}`, () => {
    const db = usePgTestDatabase(PG_TABLES);
    beforeAll(async () => {
      const pool = openPgPool(db.url, 1);
      try {
        await usePgvector(pool, settings);
      } finally {
        await pool.end();
      }
    });

    conformance(() => ({ open: async () => new PgCatalog(openPgPool(db.url, 3), true, { vectorSettings: settings }) }));

    it('searches run in the database: no in-memory index is loaded, and the vectors are in `vec`', async () => {
      const c = new PgCatalog(openPgPool(db.url, 3), true, { vectorSettings: settings });
      try {
        const col = (await c.collections.insert({ name: 'sql', description: '', model: 'test', dim: DIM })).id;
        await c.videos.insert({ id: 'vid_sql', collection_id: col, filename: 'a.mp4', blob_key: 'videos/sql', size_bytes: 1 });
        await c.segments.replaceForVideo('vid_sql', col, DIM, [seg(0, vec(1, 0, 0, 0)), seg(1, vec(0, 1, 0, 0))]);
        const got = await c.segments.forSearch!().candidates(col, DIM, vec(1, 0.1, 0, 0), 1, {}, []);
        expect(got.size).toBe(1);
        expect(c.segments.index?.stats.fullLoads).toBe(0);
        expect(await c.segments.searchMode()).toBe('pgvector');
        const { rows } = await c.pool.query<{ bytea: number; vec: number }>(
          `SELECT count(embedding)::int AS bytea, count(vec)::int AS vec FROM segments WHERE collection_id = $1`,
          [col],
        );
        expect(rows[0]).toEqual({ bytea: 0, vec: 2 });
        expect((await c.vectorStore()).mode).toBe('pgvector');
      } finally {
        await c.close();
      }
    });
  });
}

/** Every search through the HNSW index (small collections too). */
const THROUGH_INDEX = { ...PG_VECTOR_DEFAULTS, exactBelow: 0 };

describe.skipIf(!ok)('pgvector: candidates read nearest first until they hold the videos asked for', () => {
  const db = usePgTestDatabase(PG_TABLES);
  beforeAll(async () => {
    const pool = openPgPool(db.url, 1);
    try {
      await usePgvector(pool, THROUGH_INDEX);
    } finally {
      await pool.end();
    }
  });

  it('with `videos`, the index scan stops reading once the nearest hold that many videos; a filter that runs the scan dry still fills the page; a failed scan leaves its connection usable', async () => {
    const c = new PgCatalog(openPgPool(db.url, 3), true, { vectorSettings: THROUGH_INDEX });
    try {
      const col = (await c.collections.insert({ name: 'enough', description: '', model: 'test', dim: DIM })).id;
      // Twenty videos of ten near-identical moments, each video around its own direction; one moment in ten is a close-up.
      for (let v = 0; v < 20; v++) {
        await c.videos.insert({ id: `vid_e${v}`, collection_id: col, filename: `${v}.mp4`, blob_key: `videos/e${v}`, size_bytes: 1 });
        const a = (v * Math.PI) / 40;
        await c.segments.replaceForVideo(`vid_e${v}`, col, DIM, Array.from({ length: 10 }, (_, i) => seg(i, vec(Math.cos(a), Math.sin(a), 0.01 * i, 0), { tags: { shot_size: i === 0 ? 'close' : 'wide' } })));
      }
      const q = vec(1, 0, 0, 0);
      const all = await c.segments.forSearch!().candidates(col, DIM, q, 150, {}, []);
      expect(all.size).toBe(150);
      // Three videos are held by the nearest 21-30 moments; the scan reads those and the re-rank's margin (16), not 150.
      const few = await c.segments.forSearch!().candidates(col, DIM, q, 150, {}, [], [], 3);
      expect(few.size).toBeGreaterThanOrEqual(21);
      expect(few.size).toBeLessThanOrEqual(30 + 16);
      for (const [id, s] of few) expect(s.similarity).toBeCloseTo(all.get(id)!.similarity, 6);
      // Close-ups only: 20 of them, one per video; asked for 25 videos, the scan runs dry and every one comes back.
      const close = await c.segments.forSearch!().candidates(col, DIM, q, 30, { shot_size: 'close' }, [], [], 25);
      expect(close.size).toBe(20);
      // A scan that fails on its first read (a query PostgreSQL refuses: NaN) rejects, and the
      // pool's one connection answers the next search (the cursor left nothing behind).
      const one = new PgCatalog(openPgPool(db.url, 1), true, { vectorSettings: THROUGH_INDEX });
      try {
        await expect(one.segments.forSearch!().candidates(col, DIM, vec(NaN, 0, 0, 0), 150, {}, [], [], 3)).rejects.toThrow(/NaN/);
        const again = await one.segments.forSearch!().candidates(col, DIM, q, 150, {}, [], [], 3);
        expect([...again.keys()].sort()).toEqual([...few.keys()].sort());
      } finally {
        await one.close();
      }
    } finally {
      await c.close();
    }
  });
});

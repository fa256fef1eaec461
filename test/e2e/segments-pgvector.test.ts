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

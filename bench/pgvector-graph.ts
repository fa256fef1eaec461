/**
 * `node dist/bench/pgvector-graph.js [N] ['[[m, ef_construction], …]']` (issue 32): what sets the
 * HNSW index's recall — the graph (m, ef_construction) or the search (ef_search, iterative scan)?
 * The pgvector bench's own data (bench/pgvector-scale.ts: the same seeds, centres from
 * VIDEMBED_PGVECTOR_CENTRES, the same 100 queries and exact truth) written to N segments in a
 * throwaway cluster; then for each build, recall@10 and the mean time per query asked six ways:
 * without the iterative scan (LIMIT 10 straight from the index) at ef_search 40/100/400, and as
 * the search asks (iterative scan, LIMIT k + ⅛k = 225, re-ranked exactly) at ef_search 40/100/400.
 * One JSON line per build on stdout. Not part of `npm run bench`: a question asked once, its answer
 * in docs/scale.md ("Recall and the graph").
 */
import { performance } from 'node:perf_hooks';
import { PG_VECTOR_DEFAULTS } from '../src/env.js';
import { PERCEPTION_EMBEDDER_ID } from '../src/models/perception/id.js';
import { PgCatalog } from '../src/store/catalog/postgres.js';
import { migratePg, openPgPool } from '../src/store/pg/migrate.js';
import { ensureHnswIndex, hnswIndexName, indexedExpr, prepareVectorStore, queryVectorParam, queryVectorSql } from '../src/store/pg/vector-store.js';
import { startThrowawayCluster } from '../src/store/pg/throwaway.js';
import { centres, grow, rng, Shapes, Truth } from './pgvector-scale.js';

const DIM = 512;

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 100_000);
  const builds = JSON.parse(process.argv[3] ?? '[[16,64]]') as Array<[number, number]>;
  const cluster = await startThrowawayCluster({ settings: { shared_buffers: '1GB', max_parallel_maintenance_workers: '1' } });
  const url = cluster.url('postgres');
  const pool = openPgPool(url, 4);
  try {
    await migratePg(pool);
    await prepareVectorStore(pool, 'pgvector', PG_VECTOR_DEFAULTS);
    // As the bench: centres, the data's shapes and the queries from the same seeds.
    const c = centres(rng(20261201));
    const shapes = new Shapes(c.list, 42);
    const qShapes = new Shapes(c.list, 7);
    const catalog = new PgCatalog(openPgPool(url, 2), true);
    const big = (await catalog.collections.insert({ name: 'big', description: '', model: PERCEPTION_EMBEDDER_ID, dim: DIM, owner: 'big' })).id;
    const queries = Array.from({ length: 100 }, () => qShapes.near(qShapes.pick(c.list), 0.5));
    const truth = new Truth(queries);
    await grow(pool, big, shapes, 0, n, truth, 'big');
    await pool.query('VACUUM (ANALYZE) segments');
    await catalog.close();
    const qv = queryVectorSql('$1', DIM);
    for (const [m, efConstruction] of builds) {
      await pool.query(`DROP INDEX IF EXISTS ${hnswIndexName(DIM)}`);
      const t0 = performance.now();
      await ensureHnswIndex(pool, DIM, 'halfvec', { m, efConstruction, buildMemory: '1GB' });
      const out: Record<string, unknown> = { segments: n, centres: c.list.length, m, ef_construction: efConstruction, build_s: Math.round((performance.now() - t0) / 100) / 10 };
      const client = await pool.connect();
      try {
        await client.query('SET enable_seqscan = off');
        const ways: Array<[string, number, number]> = [
          ['off', 40, 10],
          ['off', 100, 10],
          ['off', 400, 10],
          ['relaxed_order', 40, 225],
          ['relaxed_order', 100, 225],
          ['relaxed_order', 400, 225],
        ];
        for (const [mode, ef, limit] of ways) {
          await client.query(`SELECT set_config('hnsw.iterative_scan', $1, false), set_config('hnsw.ef_search', $2, false)`, [mode, String(ef)]);
          let recall = 0;
          const t = performance.now();
          for (const [i, q] of queries.entries()) {
            const { rows } = await client.query<{ id: number }>(
              `WITH ann AS MATERIALIZED (SELECT id, vec FROM segments WHERE collection_id = $2 AND dim = ${DIM}
                 ORDER BY ${indexedExpr(DIM, 'halfvec')} <#> ${qv}::halfvec(${DIM}) LIMIT $3)
               SELECT id::float8 AS id FROM ann ORDER BY vec <=> ${qv}, id LIMIT 10`,
              [queryVectorParam(q), big, limit],
            );
            recall += rows.filter((r) => truth.best[i].ids.includes(r.id)).length / 10;
          }
          out[`iterative_${mode}/ef_search_${ef}/limit_${limit}`] = { recall_at_10: Math.round((recall / queries.length) * 1000) / 1000, ms_per_query: Math.round((performance.now() - t) / queries.length * 10) / 10 };
        }
      } finally {
        client.release();
      }
      process.stdout.write(`${JSON.stringify(out)}\n`);
    }
  } finally {
    await pool.end();
    cluster.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});

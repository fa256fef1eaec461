import type { Command } from 'commander';
import { BadRequestError } from '../../api/errors.js';
import { databaseUrl, pgVectorSettings } from '../../env.js';
import type { Run } from '../context.js';
import { printJson, printTable } from '../output.js';

/** What `db status` and `doctor` say about a PostgreSQL library's vector store. */
export async function pgVectorReport(url: string): Promise<Record<string, unknown>> {
  const [{ migratePg, openPgPool, pgSchemaVersion }, vs, { redactUrl }] = await Promise.all([
    import('../../store/pg/migrate.js'),
    import('../../store/pg/vector-store.js'),
    import('../../store/open.js'),
  ]);
  const pool = openPgPool(url, 2);
  try {
    await migratePg(pool);
    const status = await vs.describeVectorStore(pool);
    const { rows: counts } = await pool.query<{ dim: number; segments: number; collections: number }>(
      `SELECT c.dim, sum(x.n)::float8 AS segments, count(*)::int AS collections
       FROM (SELECT collection_id, sum(n) AS n FROM segment_counts GROUP BY collection_id HAVING sum(n) > 0) x JOIN collections c ON c.id = x.collection_id
       GROUP BY c.dim ORDER BY c.dim`,
    );
    const indexes = [];
    for (const c of counts) {
      const state = status.phase === 'migrating' || status.phase === 'pgvector' ? await vs.hnswIndexState(pool, c.dim) : 'n/a';
      const size = state === 'valid' || state === 'invalid' ? (await pool.query<{ mb: number }>(`SELECT round(pg_relation_size($1::regclass) / 1048576.0)::float8 AS mb`, [vs.hnswIndexName(c.dim)])).rows[0].mb : null;
      indexes.push({ dim: c.dim, collections: c.collections, segments: c.segments, hnsw_index: state, index_mb: size });
    }
    const { rows: table } = await pool.query<{ mb: number }>(`SELECT round(pg_total_relation_size('segments') / 1048576.0)::float8 AS mb`);
    return {
      backend: 'postgresql',
      database: redactUrl(url),
      schema_version: await pgSchemaVersion(pool),
      vector_store: status.mode,
      phase: status.phase,
      reason: status.reason,
      pgvector_installed: status.installed,
      pgvector_available: status.available,
      index_kind: status.index ?? null,
      segments_table_mb: table[0].mb,
      dimensions: indexes,
      settings: pgVectorSettings(),
    };
  } finally {
    await pool.end();
  }
}

function requireUrl(): string {
  const url = databaseUrl();
  if (!url) throw new BadRequestError('`vidembed db` works on a PostgreSQL library: set VIDEMBED_DATABASE_URL or pass --database-url');
  return url;
}

export function registerDb(program: Command, run: Run): void {
  const db = program
    .command('db')
    .description('a PostgreSQL library\'s vector store: status, the move to pgvector, index rebuilds')
    .addHelpText('after', '\nExamples:\n  $ vidembed db status\n  $ vidembed db migrate\n  $ VIDEMBED_PG_HNSW_EF_CONSTRUCTION=200 vidembed db reindex\n\ndocs/scale.md "pgvector" says what each does and the settings.');
  db.command('status')
    .description('where searches run and why, the pgvector version, the HNSW index of each dimension')
    .action(async (_o: unknown, cmd: Command) =>
      run(
        cmd,
        async (_ctx, globals) => {
          const report = await pgVectorReport(requireUrl());
          if (globals.json) return printJson(report);
          printStatus(report);
        },
        { localOnly: true },
      ),
    );
  db.command('migrate')
    .description('move this library\'s vectors into pgvector, online: searches and writes go on meanwhile')
    .option('--batch <n>', 'rows per batch', Number, 2000)
    .option('--keep-bytea', 'keep the in-memory layout\'s copy of each vector (to go back; twice the space)')
    .addHelpText(
      'after',
      '\nSteps (each resumable: run it again after an interruption and it goes on where it stopped):\n  the vector extension and column; writers start filling both layouts; older rows in batches;\n  one HNSW index per dimension (CREATE INDEX CONCURRENTLY); the switch (every server moves to\n  SQL search within 5 s); the old copies cleared in batches, then VACUUM.\nIndex settings: VIDEMBED_PG_HNSW_M (24), VIDEMBED_PG_HNSW_EF_CONSTRUCTION (128), VIDEMBED_PG_VECTOR_INDEX (halfvec),\nVIDEMBED_PG_BUILD_MEMORY (2GB).',
    )
    .action(async (opts: { batch: number; keepBytea?: boolean }, cmd: Command) =>
      run(
        cmd,
        async (_ctx, globals) => {
          if (!Number.isInteger(opts.batch) || opts.batch < 1 || opts.batch > 100_000) throw new BadRequestError('--batch must be an integer from 1 to 100000');
          const url = requireUrl();
          const [{ migratePg, openPgPool }, { migrateToPgvector }] = await Promise.all([import('../../store/pg/migrate.js'), import('../../store/pg/vector-migrate.js')]);
          const pool = openPgPool(url, 3);
          const ac = new AbortController();
          const stop = () => {
            process.stderr.write('stopping after this batch (run `vidembed db migrate` again to go on)\n');
            ac.abort();
          };
          process.once('SIGINT', stop);
          let last = '';
          let lastAt = 0;
          try {
            await migratePg(pool);
            const result = await migrateToPgvector(pool, pgVectorSettings(), {
              batch: opts.batch,
              keepBytea: opts.keepBytea,
              signal: ac.signal,
              onProgress: (p) => {
                if (globals.json) return;
                const pct = p.total > 0 ? ` ${((100 * p.done) / p.total).toFixed(1)}%` : '';
                const line = `${p.step}${p.note ? ` ${p.note}` : ''}: ${Math.round(p.done)}/${Math.round(p.total)}${pct}`;
                // Batches report often: a line per second at most, and every step's first and last.
                const now = Date.now();
                if (line !== last && (now - lastAt > 1000 || p.done === 0 || p.done >= p.total)) {
                  process.stderr.write(`${line}\n`);
                  last = line;
                  lastAt = now;
                }
              },
            });
            if (globals.json) return printJson(result);
            process.stdout.write(
              `${result.already ? 'already in pgvector' : 'moved to pgvector'}: ${result.backfilled} vectors copied, ${result.indexes.map((i) => `index ${i.dim}: ${i.result}`).join(', ') || 'no indexes needed'}, ${result.compacted} old copies cleared\n`,
            );
          } finally {
            process.off('SIGINT', stop);
            await pool.end();
          }
        },
        { localOnly: true },
      ),
    );
  db.command('reindex')
    .description('build each dimension\'s HNSW index again (new settings, or after many deletions), online')
    .action(async (_o: unknown, cmd: Command) =>
      run(
        cmd,
        async (_ctx, globals) => {
          const [{ openPgPool }, { reindexPgvector }] = await Promise.all([import('../../store/pg/migrate.js'), import('../../store/pg/vector-migrate.js')]);
          const pool = openPgPool(requireUrl(), 3);
          try {
            const out = await reindexPgvector(pool, pgVectorSettings(), (p) => !globals.json && process.stderr.write(`${p.note}: ${Math.round(p.done)}/${Math.round(p.total)}\n`));
            if (globals.json) return printJson({ reindexed: out });
            for (const r of out) process.stdout.write(`dimension ${r.dim}: rebuilt in ${r.seconds.toFixed(1)} s\n`);
          } finally {
            await pool.end();
          }
        },
        { localOnly: true },
      ),
    );
}

export function printStatus(report: Record<string, unknown>): void {
  const lines = [
    `database: ${report.database} (schema ${report.schema_version})`,
    `vector search: ${report.vector_store === 'pgvector' ? 'in the database (pgvector)' : 'in-memory index in each process'} — ${report.reason}`,
    `pgvector: installed ${report.pgvector_installed ?? 'no'}, available ${report.pgvector_available ?? 'no'}`,
    `segments table: ${report.segments_table_mb} MB`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const dims = report.dimensions as Array<Record<string, unknown>>;
  if (dims.length) printTable(['dim', 'collections', 'segments', 'hnsw index', 'index MB'], dims.map((d) => [d.dim as number, d.collections as number, d.segments as number, String(d.hnsw_index), d.index_mb === null ? '' : (d.index_mb as number)]));
}

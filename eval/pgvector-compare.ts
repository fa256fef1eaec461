/**
 * `node dist/eval/pgvector-compare.js HOME [postgres://…]` (issue 32): the search eval of one
 * stored eval library (HOME: a variant's home kept by `npm run eval -- search --home DIR`, e.g.
 * DIR/base) through SQLite as it was built, and through PostgreSQL + pgvector after `vidembed
 * migrate --to` copied it (straight into pgvector). Same items, same queries, same engine: R@1,
 * R@5 and MRR per half and query column, side by side, and how many queries got the same rank.
 * Without a URL a throwaway cluster is started (it must have the vector extension). Nothing is
 * tuned here: it checks that the backend does not change the answers.
 */
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { LocalEngine } from '../src/runtime/engine.js';
import { startThrowawayCluster } from '../src/store/pg/throwaway.js';
import { loadSearchCatalog, requireEvalDir } from './catalog.js';
import { evaluateSearchQuality, type SearchQuality } from './search-quality.js';
import { HALVES, inHalf } from './split.js';

async function figures(home: string, databaseUrl?: string): Promise<Record<string, SearchQuality>> {
  const items = loadSearchCatalog(requireEvalDir());
  const engine = new LocalEngine({ home, databaseUrl });
  const out: Record<string, SearchQuality> = {};
  try {
    const collections = await engine.listCollections({ limit: 1000 });
    for (const half of HALVES) {
      const col = collections.find((c) => c.name === `eval-${half}`);
      if (!col) throw new Error(`${home} has no eval-${half} collection: build it with npm run eval -- search --home DIR`);
      const rows = inHalf(items, half);
      for (const column of ['query', 'caption'] as const) out[`${half}/${column}`] = await evaluateSearchQuality(engine, col.id, rows, half, () => {}, column);
    }
  } finally {
    await engine.close();
  }
  return out;
}

async function main(): Promise<void> {
  const home = resolve(process.argv[2] ?? '');
  if (!process.argv[2]) throw new Error('usage: node dist/eval/pgvector-compare.js HOME [postgres://…]');
  let url = process.argv[3];
  const cluster = url ? undefined : await startThrowawayCluster();
  url ??= cluster!.url('postgres');
  try {
    process.env.VIDEMBED_MODELS_DIR = join(home, 'models');
    process.env.VIDEMBED_NO_IMAGENET = home.endsWith('imagenet') ? '' : '1';
    const bin = resolve(import.meta.dirname, '..', '..', 'bin', 'vidembed');
    execFileSync(process.execPath, [bin, 'migrate', '--to', url, '--local'], { env: { ...process.env, VIDEMBED_HOME: home, VIDEMBED_PG_VECTOR: 'pgvector' }, stdio: ['ignore', 'ignore', 'inherit'] });
    const sqlite = await figures(home);
    process.env.VIDEMBED_PG_VECTOR = 'pgvector';
    const pg = await figures(home, url);
    const table: Record<string, unknown> = {};
    for (const key of Object.keys(sqlite)) {
      const a = sqlite[key];
      const b = pg[key];
      const same = a.queries.filter((q, i) => q.rank === b.queries[i].rank).length;
      table[key] = {
        n: a.n,
        sqlite: { r1: a.recallAt1, r5: a.recallAt5, mrr: a.mrr, r1_interval: a.interval.recallAt1 },
        pgvector: { r1: b.recallAt1, r5: b.recallAt5, mrr: b.mrr, r1_interval: b.interval.recallAt1 },
        same_rank: `${same}/${a.n}`,
      };
    }
    process.stdout.write(`${JSON.stringify({ home, postgres: cluster ? 'throwaway cluster' : 'given', by_half_and_column: table }, null, 2)}\n`);
  } finally {
    cluster?.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`pgvector-compare failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

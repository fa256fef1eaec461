/**
 * `node dist/eval/picture-queries.js HOME [--half tuning|check] [--variant base|imagenet]
 * [--changes crop-shift,mild] [--out FILE] [--build-only] [-v]`: search by picture on a half's
 * picture-only library (`eval-<half>` in HOME/<variant>, built here once if missing, as
 * eval/mixed-build.ts builds it) — before and after the geometric check, in the same run
 * (eval/picture-eval.ts). Prints the figures per group and every item whose rank is not 1 before
 * or after; with `--out`, every result's evidence parts go to FILE (eval/fit-picture.ts reads the
 * tuning half's). CPU-heavy the first time (the library): run it under `flock /work/team/cpu.lock`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSearchCatalog } from './catalog.js';
import { openVariant, type Variant } from './mixed-library.js';
import { evaluatePictureQueries, formatPictureFigures, pictureFigures, type PictureChange } from './picture-eval.js';
import { ensureLibrary } from './search-quality.js';
import { inHalf, type Half } from './split.js';

async function main(): Promise<void> {
  const [home] = process.argv.slice(2).filter((a) => !a.startsWith('--') && a !== '-v');
  const arg = (name: string) => {
    const at = process.argv.indexOf(name);
    return at >= 0 ? process.argv[at + 1] : undefined;
  };
  if (!home) throw new Error('usage: node dist/eval/picture-queries.js HOME [--half tuning|check] [--variant base|imagenet] [--changes crop-shift,mild] [--out FILE] [--build-only]');
  const half = (arg('--half') ?? 'tuning') as Half;
  const variant = (arg('--variant') ?? 'imagenet') as Variant;
  const changes = (arg('--changes') ?? 'crop-shift,mild').split(',') as PictureChange[];
  const rows = inHalf(loadSearchCatalog(), half);
  const engine = await openVariant(home, variant);
  try {
    const id = await ensureLibrary(engine, rows, half, { home: join(home, variant), log: (s) => process.stderr.write(`${s}\n`) });
    if (process.argv.includes('--build-only')) return;
    const out = await evaluatePictureQueries(engine, id, rows, join(home, variant, 'picture-queries'), changes);
    process.stderr.write(`${formatPictureFigures(`${half} ${variant}`, pictureFigures(out, rows))}\n`);
    for (const o of out) {
      if (o.rank !== 1 || o.rankBefore !== 1 || process.argv.includes('-v')) {
        process.stderr.write(`  ${o.change} ${String(o.rankBefore).padStart(4)} → ${String(o.rank).padStart(4)}  ${o.item}  first ${o.first.filename} ${o.first.label} ${o.first.confidence} ${JSON.stringify(o.first.parts ?? {})}\n`);
      }
    }
    const file = arg('--out');
    if (file) writeFileSync(file, JSON.stringify({ half, variant, outcomes: out }, null, 1));
  } finally {
    await engine.close();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`picture-queries failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);

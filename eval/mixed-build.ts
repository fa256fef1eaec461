/**
 * `node dist/eval/mixed-build.js HOME [--half tuning|check] [--variant base|imagenet]`: builds the
 * eval libraries the mixed eval and eval/fit-evidence.ts read (picture-only `eval-<half>` and mixed
 * `eval-mixed-<half>`, with and without ImageNet) without measuring anything. CPU-heavy: run it
 * under `flock /work/team/cpu.lock` on a shared machine.
 */
import { loadSearchCatalog } from './catalog.js';
import { ensureMixedLibrary, openVariant, VARIANTS } from './mixed-library.js';
import { ensureLibrary } from './search-quality.js';
import { loadSpeechItems } from './speech-data.js';
import { HALVES, inHalf } from './split.js';
import { join } from 'node:path';

async function main(): Promise<void> {
  const [home] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  if (!home) throw new Error('usage: node dist/eval/mixed-build.js HOME [--half tuning|check] [--variant base|imagenet]');
  const arg = (name: string) => {
    const at = process.argv.indexOf(name);
    return at >= 0 ? process.argv[at + 1] : undefined;
  };
  const halves = HALVES.filter((h) => !arg('--half') || h === arg('--half'));
  const variants = VARIANTS.filter((v) => !arg('--variant') || v === arg('--variant'));
  const items = loadSearchCatalog();
  const talks = loadSpeechItems();
  const log = (s: string) => process.stderr.write(`${s}\n`);
  for (const variant of variants) {
    const engine = await openVariant(home, variant);
    try {
      for (const half of halves) {
        const rows = inHalf(items, half);
        await ensureLibrary(engine, rows, half, { home: join(home, variant), log });
        await ensureMixedLibrary(engine, join(home, variant), rows, talks.filter((t) => t.half === half), half, log);
      }
    } finally {
      await engine.close();
    }
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`mixed-build failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);

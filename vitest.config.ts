import { readdirSync } from 'node:fs';
import { configDefaults, defineConfig } from 'vitest/config';
import { FILE_NEEDS, inCi, missingNeeds, skipLine } from './test/needs.js';

/**
 * End-to-end files that load real models: one at a time, after everything else, so that model-heavy
 * suites do not contend for the 2 cores a CI machine has (and their timings stay sane).
 */
const MODEL_SUITES = [
  'test/e2e/analysis-threads.test.ts',
  'test/e2e/clip.test.ts',
  'test/e2e/duplicates.test.ts',
  'test/e2e/engine.test.ts',
  'test/e2e/mcp.test.ts',
  'test/e2e/pg-cluster.test.ts',
  'test/e2e/pg-outage.test.ts',
  'test/e2e/readme-remote.test.ts',
  'test/e2e/reindex.test.ts',
  'test/e2e/search-by-example.test.ts',
  'test/e2e/search-quality.test.ts',
  'test/e2e/server.test.ts',
  'test/e2e/tagging.test.ts',
  'test/e2e/text-encoder-pool.test.ts',
  'test/e2e/web-transcript.test.ts',
  'test/e2e/web-playback.test.ts',
  'test/e2e/web-ui.test.ts',
];

/**
 * End-to-end files that need nothing beyond `npm install` but take long: `npm run test:all` runs
 * them, `npm test` does not (it stays within 5 minutes on 2 cores: docs/testing.md).
 */
const SLOW_SUITES: string[] = ['test/e2e/client-types.test.ts'];

// What `npm test` runs: the unit tests and the end-to-end files that need nothing `npm install`
// does not bring (test/needs.ts) and are not slow. Everything else is in `npm run test:all`.
const e2eFiles = readdirSync('test/e2e')
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => `test/e2e/${f}`);
const FULL_SUITES = e2eFiles.filter((f) => FILE_NEEDS[f] || SLOW_SUITES.includes(f));

// A file whose needs are missing here is left out with one loud line, except under CI=true, where
// it runs and fails (docs/testing.md). The lines are said for the projects this run selects
// (`--project NAME`, all without), once, by the process that reads this file first.
const missing = inCi ? new Map() : missingNeeds();
const leftOut = [...missing.keys()];
const selected = process.argv.flatMap((a, i, all) => (a === '--project' ? [all[i + 1]] : a.startsWith('--project=') ? [a.slice(10)] : []));
const projectOf = (f: string) => (f.startsWith('test/unit/') ? 'unit' : MODEL_SUITES.includes(f) ? 'e2e-models' : 'e2e-full');
if (!process.env.VITEST_WORKER_ID) {
  for (const [file, lacking] of missing) if (!selected.length || selected.includes(projectOf(file))) process.stderr.write(`${skipLine(file, lacking)}\n`);
}

// Four projects (docs/testing.md): unit tests (no child process, no other machine: enforced by the
// setup file; in-memory stores and fakes), the fast end-to-end tests (`npm test`), the end-to-end
// tests that need more or take long, and the model-heavy end-to-end suites (one at a time).
export default defineConfig({
  test: {
    // Both cores: vitest's default (cores − 1) runs one file at a time on a 2-core machine. The
    // model-heavy project still runs its files one at a time (fileParallelism: false).
    maxWorkers: 2,
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...leftOut],
          setupFiles: ['test/helpers/unit-guard.ts'],
          // Unit files share their worker's module graph instead of importing everything again per
          // file (isolation cost ~45 s of the project's ~108 s: 62 s without it, same 819 tests,
          // also with the files shuffled). Unit tests keep no state across files; one that needs
          // a fresh module state resets it itself.
          isolate: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...MODEL_SUITES, ...FULL_SUITES],
          testTimeout: 300_000,
          hookTimeout: 600_000,
        },
      },
      {
        test: {
          name: 'e2e-full',
          include: FULL_SUITES.filter((f) => !MODEL_SUITES.includes(f)),
          exclude: [...configDefaults.exclude, ...leftOut],
          testTimeout: 300_000,
          hookTimeout: 600_000,
        },
      },
      {
        test: {
          name: 'e2e-models',
          include: MODEL_SUITES,
          exclude: [...configDefaults.exclude, ...leftOut],
          testTimeout: 300_000,
          hookTimeout: 600_000,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});

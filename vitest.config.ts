import { configDefaults, defineConfig } from 'vitest/config';

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
  'test/e2e/search-by-example.test.ts',
  'test/e2e/search-quality.test.ts',
  'test/e2e/server.test.ts',
  'test/e2e/tagging.test.ts',
  'test/e2e/text-encoder-pool.test.ts',
  'test/e2e/web-transcript.test.ts',
  'test/e2e/web-playback.test.ts',
  'test/e2e/web-ui.test.ts',
];

// Three projects (docs/testing.md): unit tests (no child process, no other machine: enforced by the
// setup file; in-memory stores and fakes), end-to-end tests that start processes or decode media
// (ffmpeg, the CLI, a PostgreSQL cluster; in parallel), and the model-heavy end-to-end suites.
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
          setupFiles: ['test/helpers/unit-guard.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...MODEL_SUITES],
          testTimeout: 300_000,
          hookTimeout: 600_000,
        },
      },
      {
        test: {
          name: 'e2e-models',
          include: MODEL_SUITES,
          testTimeout: 300_000,
          hookTimeout: 600_000,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});

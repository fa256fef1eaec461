import { defineConfig } from 'vitest/config';

// Two projects: fast unit tests, and slow end-to-end tests (real models, ffmpeg, CLI processes).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          testTimeout: 300_000,
          hookTimeout: 600_000,
          // Model-heavy suites on a 2-core machine: one file at a time keeps timings sane.
          fileParallelism: false,
        },
      },
    ],
  },
});

/**
 * What each test file needs beyond `npm install` (issue 33), in one place: vitest.config.ts reads it
 * to split the fast suite (`npm test`: the unit tests and the end-to-end tests that need nothing
 * else) from the rest (`npm run test:all`), and to leave out, with one loud line each, the files whose
 * needs are missing on this machine — except under CI=true, where they run and fail.
 * test/unit/test-needs.test.ts reads the test files and fails when one uses something it does not
 * declare here.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findPgBin } from '../src/store/pg/throwaway.js';
import { findPocketsphinx } from '../src/speech/pocketsphinx.js';

export type Need = 'shared' | 'postgres' | 'chromium' | 'pocketsphinx';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Debian's Chromium, which playwright-core drives (test/helpers/web-ui.ts). */
export const CHROMIUM = '/usr/bin/chromium';
/** pocketsphinx's English model and the recorded speech of pocketsphinx-testdata. */
export const POCKETSPHINX_DATA = ['/usr/share/pocketsphinx/model/en-us', '/usr/share/pocketsphinx/test/data/librivox'];

/** Each need: what it is, how to get it, and whether this machine has it. */
export const NEEDS: Record<Need, { what: string; how: string; here: () => boolean }> = {
  shared: {
    what: '../shared/eval and ../shared/models beside the repository',
    how: 'the team\'s shared evaluation data',
    here: () => existsSync(path.resolve(repoRoot, '../shared/eval')) && existsSync(path.resolve(repoRoot, '../shared/models')),
  },
  postgres: {
    what: 'PostgreSQL server binaries (/usr/lib/postgresql/*/bin) or VIDEMBED_TEST_DATABASE_URL',
    how: 'apt-get install postgresql-15',
    here: () => Boolean(process.env.VIDEMBED_TEST_DATABASE_URL || findPgBin()),
  },
  chromium: { what: CHROMIUM, how: 'apt-get install chromium', here: () => existsSync(CHROMIUM) },
  pocketsphinx: {
    what: 'pocketsphinx_continuous with its English model and test recordings',
    how: 'apt-get install pocketsphinx pocketsphinx-en-us pocketsphinx-testdata',
    here: () => Boolean(findPocketsphinx()) && POCKETSPHINX_DATA.every((d) => existsSync(d)),
  },
};

/**
 * The files that need something `npm install` does not bring. A file that is not listed needs
 * nothing more (the scan in test/unit/test-needs.test.ts keeps this list honest).
 */
export const FILE_NEEDS: Record<string, Need[]> = {
  'test/e2e/analysis-threads.test.ts': ['shared'],
  'test/e2e/analysis.test.ts': ['shared'],
  'test/e2e/catalog-postgres.test.ts': ['postgres'],
  'test/e2e/clip.test.ts': ['shared'],
  'test/e2e/duplicates.test.ts': ['shared'],
  'test/e2e/engine.test.ts': ['shared'],
  'test/e2e/face-attributes.test.ts': ['shared'],
  'test/e2e/full-disk.test.ts': ['shared'],
  'test/e2e/imagenet-hypernyms.test.ts': ['shared'],
  'test/e2e/imagenet.test.ts': ['shared'],
  'test/e2e/keyframe-reuse.test.ts': ['shared'],
  'test/e2e/lanes.test.ts': ['shared', 'pocketsphinx'],
  'test/e2e/mcp.test.ts': ['pocketsphinx'],
  'test/e2e/media.test.ts': ['shared'],
  'test/e2e/migrate-pg.test.ts': ['postgres'],
  'test/e2e/models-perception.test.ts': ['shared'],
  'test/e2e/ocr.test.ts': ['shared'],
  'test/e2e/pg-cluster.test.ts': ['shared', 'postgres'],
  'test/e2e/pg-outage.test.ts': ['shared', 'postgres'],
  'test/e2e/pg-prepared.test.ts': ['postgres'],
  'test/e2e/pgvector.test.ts': ['postgres'],
  'test/e2e/phash.test.ts': ['shared'],
  'test/e2e/pixel-thread.test.ts': ['shared'],
  'test/e2e/playback-proxy.test.ts': ['shared'],
  'test/e2e/queue-postgres.test.ts': ['postgres'],
  'test/e2e/reindex.test.ts': ['shared'],
  'test/e2e/s3-blobs.test.ts': ['shared'],
  'test/e2e/search-by-example-fake.test.ts': ['shared'],
  'test/e2e/search-by-example.test.ts': ['shared'],
  'test/e2e/search-quality.test.ts': ['shared', 'pocketsphinx'],
  'test/e2e/segments-pgvector.test.ts': ['postgres'],
  'test/e2e/segments-postgres.test.ts': ['postgres'],
  'test/e2e/server.test.ts': ['shared'],
  'test/e2e/speech-narrowband.test.ts': ['pocketsphinx'],
  'test/e2e/speech-parts.test.ts': ['pocketsphinx'],
  'test/e2e/speech.test.ts': ['shared', 'pocketsphinx'],
  'test/e2e/storage.test.ts': ['shared'],
  'test/e2e/tagging-framing.test.ts': ['shared'],
  'test/e2e/tagging-motion.test.ts': ['shared'],
  'test/e2e/tagging-pixels.test.ts': ['shared'],
  'test/e2e/tagging-shots.test.ts': ['shared'],
  'test/e2e/tagging.test.ts': ['shared'],
  'test/e2e/tags-migration.test.ts': ['postgres'],
  'test/e2e/thumbnails.test.ts': ['shared'],
  'test/e2e/web-playback.test.ts': ['shared', 'chromium'],
  'test/e2e/web-transcript.test.ts': ['chromium', 'pocketsphinx'],
  'test/e2e/web-ui.test.ts': ['chromium'],
  'test/e2e/webhooks-postgres.test.ts': ['postgres'],
  'test/e2e/webhooks-workers.test.ts': ['postgres'],
  'test/e2e/whisper.test.ts': ['shared'],
  'test/unit/sigv4-conformance.test.ts': ['shared'],
  'test/unit/whisper.test.ts': ['shared'],
};

/** Under CI every suite must run: missing needs fail there (CI=true or CI=1). */
export const inCi = process.env.CI === 'true' || process.env.CI === '1';

/** The needs this machine lacks, of those `files` have (each need checked once). */
export function missingNeeds(files: string[] = Object.keys(FILE_NEEDS)): Map<string, Need[]> {
  const have = new Map<Need, boolean>();
  const out = new Map<string, Need[]>();
  for (const f of files) {
    const lacking = (FILE_NEEDS[f] ?? []).filter((n) => {
      if (!have.has(n)) have.set(n, NEEDS[n].here());
      return !have.get(n);
    });
    if (lacking.length) out.set(f, lacking);
  }
  return out;
}

/** The one loud line a left-out file gets. */
export function skipLine(file: string, lacking: Need[]): string {
  return `!!! SKIPPING ${file}: needs ${lacking.map((n) => `${NEEDS[n].what} (${NEEDS[n].how})`).join(' and ')} !!!`;
}

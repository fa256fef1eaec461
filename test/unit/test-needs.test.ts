/**
 * test/needs.ts says what each test file needs beyond `npm install`; vitest.config.ts keeps such
 * files out of `npm test` and leaves them out, with one loud line, where the need is missing. This
 * reads every test file and fails when one uses shared data, PostgreSQL, Chromium or pocketsphinx
 * without saying so there (or says so without using it), so a fresh clone's `npm test` stays green.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FILE_NEEDS, skipLine, type Need } from '../needs.js';
import { repoRoot } from '../helpers/clips.js';

/** What in a test file's text means it needs something (the helpers that bring each need). */
const MARKERS: Record<Need, RegExp> = {
  shared: /\b(evalPhotos?|evalVideos?|evalDir|evalPhotosDir|evalVideosDir|sharedModelsDir)\b|tagging-fixtures|\.\.\/shared\//,
  postgres: /helpers\/postgres\.js|startThrowawayCluster/,
  chromium: /helpers\/web-ui\.js/,
  pocketsphinx: /findPocketsphinx|\/usr\/share\/pocketsphinx/,
};

const testFiles = ['test/unit', 'test/e2e'].flatMap((dir) =>
  readdirSync(path.join(repoRoot, dir))
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => `${dir}/${f}`)
    .filter((f) => f !== 'test/unit/test-needs.test.ts'), // this file names the markers
);

describe('what each test file needs (test/needs.ts)', () => {
  it('is declared for every file that uses it, and only for those', () => {
    expect(testFiles.length).toBeGreaterThan(80);
    const found: Record<string, Need[]> = {};
    for (const f of testFiles) {
      const text = readFileSync(path.join(repoRoot, f), 'utf8');
      const needs = (Object.keys(MARKERS) as Need[]).filter((n) => MARKERS[n].test(text));
      if (needs.length) found[f] = needs;
    }
    const sorted = (m: Record<string, Need[]>) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, [...v].sort()]));
    expect(sorted(FILE_NEEDS)).toEqual(sorted(found));
    for (const f of Object.keys(FILE_NEEDS)) expect(existsSync(path.join(repoRoot, f)), f).toBe(true);
  });

  it('a file left out says so in one line: which file, what it needs and how to get it', () => {
    const line = skipLine('test/e2e/web-transcript.test.ts', ['chromium', 'pocketsphinx']);
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toBe(
      '!!! SKIPPING test/e2e/web-transcript.test.ts: needs /usr/bin/chromium (apt-get install chromium) and pocketsphinx_continuous with its English model and test recordings (apt-get install pocketsphinx pocketsphinx-en-us pocketsphinx-testdata) !!!',
    );
  });
});

/**
 * What pocketsphinx needs to hear telephone-band audio (issue 20, docs/speech.md), on top of the
 * band mirroring (pocketsphinx.ts `mirrorBand`):
 *
 * - **the mean cepstrum of narrowband speech** as the initial CMN (`-cmninit`). Live CMN subtracts
 *   the initial mean until its first update (an utterance's end, or after 8 s), so on short prompts
 *   every frame is normalised with it, and the model's is that of wideband speech: mirrored
 *   narrowband speech differs by about 15 in c0 and in c2. The program lets the model's
 *   feat.params override a `-cmninit` given on its command line, so it comes in a copy of the
 *   model's feat.params (`-featparams`) that differs only in that line;
 * - **an MLLR transform** of the model's means for the telephone channel (`-mllr`, one class,
 *   5 KB), estimated with sphinxtrain on voices the eval never hears made narrowband.
 *
 * Both files are in `models/` next to this module's source and ship with the package; they were
 * made by eval/narrowband-adapt.ts and eval/narrowband-mllr.sh.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Part of the engine's version: changes whenever these files do (collections then need a reindex). */
export const NARROWBAND_VERSION = 'nb1';

export const NARROWBAND_FILES = { featParams: 'en-us-narrowband.feat.params', mllr: 'en-us-narrowband.mllr' } as const;

/** The folder holding the files: `models/` beside the source (tests), or the source's from dist/src/speech. */
export function narrowbandDir(here: string = path.dirname(fileURLToPath(import.meta.url))): string {
  const candidates = [path.join(here, 'models'), path.resolve(here, '../../../src/speech/models')];
  const dir = candidates.find((d) => existsSync(path.join(d, NARROWBAND_FILES.mllr)));
  if (!dir) throw new Error(`the narrowband speech model files are missing (looked in ${candidates.join(', ')})`);
  return dir;
}

/** The recognizer's extra options for telephone-band audio. */
export function narrowbandArgs(dir: string = narrowbandDir()): string[] {
  return ['-featparams', path.join(dir, NARROWBAND_FILES.featParams), '-mllr', path.join(dir, NARROWBAND_FILES.mllr)];
}

/** `featParams` (a feat.params file's text) with its `-cmninit` line set to `cmninit` (13 numbers). */
export function withCmninit(featParams: string, cmninit: number[]): string {
  if (cmninit.length !== 13 || !cmninit.every(Number.isFinite)) throw new Error(`-cmninit needs 13 numbers, got ${cmninit.join(',')}`);
  const line = `-cmninit ${cmninit.map((x) => x.toFixed(2)).join(',')}`;
  const lines = featParams.trimEnd().split('\n').filter((l) => !/^-cmninit\s/.test(l));
  return [...lines, line, ''].join('\n');
}

/** The component-wise mean of cepstral means (one per utterance). */
export function meanCepstrum(means: number[][]): number[] {
  if (!means.length) throw new Error('no cepstral means to average');
  return means[0].map((_, k) => means.reduce((s, m) => s + m[k], 0) / means.length);
}

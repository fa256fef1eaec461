/**
 * The telephone-band adaptation of pocketsphinx (src/speech/narrowband.ts): the shipped files, and
 * the pure steps eval/narrowband-adapt.ts makes the feat.params with.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { meanCepstrum, NARROWBAND_FILES, narrowbandArgs, narrowbandDir, withCmninit } from '../../src/speech/narrowband.js';

const MODEL_FEAT = ['-lowerf 130', '-upperf 6800', '-nfilt 25', '-transform dct', '-lifter 22', '-feat 1s_c_d_dd', '-svspec 0-12/13-25/26-38', '-agc none', '-cmn batch', '-varnorm no', '-model ptm', '-cmninit 41.00,-5.29,-0.12,5.09,2.48,-4.07,-1.37,-1.78,-5.08,-2.05,-6.45,-1.42,1.17', ''].join('\n');

describe('narrowband adaptation', () => {
  it('sets the initial cepstral mean and leaves every other feature parameter alone', () => {
    const mean = [56.214, -1.84, 15.87, 8.37, 9.96, -7.03, 6.36, -4.34, -9.52, 5.91, -2.73, 6.62, 0.93];
    const out = withCmninit(MODEL_FEAT, mean);
    const lines = out.trimEnd().split('\n');
    expect(lines.filter((l) => l.startsWith('-cmninit'))).toEqual(['-cmninit 56.21,-1.84,15.87,8.37,9.96,-7.03,6.36,-4.34,-9.52,5.91,-2.73,6.62,0.93']);
    expect(lines.filter((l) => !l.startsWith('-cmninit'))).toEqual(MODEL_FEAT.trimEnd().split('\n').slice(0, -1));
    // A feat.params without the line gets it.
    expect(withCmninit('-nfilt 25\n', mean)).toBe('-nfilt 25\n-cmninit 56.21,-1.84,15.87,8.37,9.96,-7.03,6.36,-4.34,-9.52,5.91,-2.73,6.62,0.93\n');
    expect(() => withCmninit(MODEL_FEAT, [1, 2, 3])).toThrow(/13 numbers/);
    expect(() => withCmninit(MODEL_FEAT, [...mean.slice(0, 12), Number.NaN])).toThrow(/13 numbers/);
  });

  it('averages cepstral means component by component', () => {
    expect(meanCepstrum([[1, 2, 3], [3, 4, 8]])).toEqual([2, 3, 5.5]);
    expect(() => meanCepstrum([])).toThrow(/no cepstral means/);
  });

  it('ships a feat.params that differs from the model’s only in -cmninit, and a one-class MLLR transform', () => {
    const dir = narrowbandDir();
    expect(narrowbandArgs(dir)).toEqual(['-featparams', path.join(dir, NARROWBAND_FILES.featParams), '-mllr', path.join(dir, NARROWBAND_FILES.mllr)]);
    const feat = readFileSync(path.join(dir, NARROWBAND_FILES.featParams), 'utf8').trimEnd().split('\n');
    expect(feat.filter((l) => !l.startsWith('-cmninit'))).toEqual(MODEL_FEAT.trimEnd().split('\n').slice(0, -1));
    const cmninit = feat.find((l) => l.startsWith('-cmninit'))!.split(' ')[1].split(',').map(Number);
    expect(cmninit).toHaveLength(13);
    // Mirrored narrowband speech: far more energy in c0 and c2 than the wideband mean (41.00, -0.12).
    expect(cmninit[0]).toBeGreaterThan(50);
    expect(cmninit[2]).toBeGreaterThan(10);
    // sphinxtrain's format: classes, streams, then per stream its length, A (n×n), b (n) and the variance scale (n).
    const nums = readFileSync(path.join(dir, NARROWBAND_FILES.mllr), 'utf8').trim().split(/\s+/).map(Number);
    expect(nums.slice(0, 2)).toEqual([1, 3]);
    expect(nums.every(Number.isFinite)).toBe(true);
    expect(nums).toHaveLength(2 + 3 * (1 + 13 * 13 + 13 + 13));
    expect(() => narrowbandDir(path.join(dir, 'nowhere', 'deeper', 'still', 'there'))).toThrow(/narrowband speech model files are missing/);
  });
});

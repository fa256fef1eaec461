import { writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DUPLICATE_THRESHOLDS } from '../../src/duplicates/duplicates.js';
import { decodeImage, encodeThumbnail } from '../../src/media/index.js';
import { hamming, phashFrame, phashFromHex, phashGray, phashToHex, popcount32, PHASH_SIDE, type PHash } from '../../src/media/phash.js';
import type { Frame } from '../../src/media/types.js';
import { halfOf } from '../../eval/split.js';
import { evalPhoto, evalPhotos, evalPhotosDir, removeDir, requireSharedData, tempDir } from '../helpers/clips.js';

const u32 = fc.integer({ min: 0, max: 0xffffffff });
const hash64 = fc.record({ hi: u32, lo: u32 });

function naivePopcount(x: number): number {
  let n = 0;
  for (let i = 0; i < 32; i++) n += (x >>> i) & 1;
  return n;
}

function solid(width: number, height: number, rgb: [number, number, number], t = 0): Frame {
  const data = new Uint8Array(width * height * 3);
  for (let i = 0; i < width * height; i++) data.set(rgb, i * 3);
  return { t, width, height, data };
}

describe('pHash arithmetic', () => {
  it('counts bits like the naive loop', () => {
    fc.assert(fc.property(u32, (x) => popcount32(x) === naivePopcount(x)));
    expect(popcount32(0)).toBe(0);
    expect(popcount32(0xffffffff)).toBe(32);
  });

  it('Hamming distance is a metric on 64-bit hashes (0 on itself, symmetric, triangle inequality, at most 64)', () => {
    fc.assert(
      fc.property(hash64, hash64, hash64, (a, b, c) => {
        expect(hamming(a, a)).toBe(0);
        expect(hamming(a, b)).toBe(hamming(b, a));
        expect(hamming(a, c)).toBeLessThanOrEqual(hamming(a, b) + hamming(b, c));
        expect(hamming(a, b)).toBeLessThanOrEqual(64);
        expect(hamming(a, { hi: ~a.hi >>> 0, lo: ~a.lo >>> 0 })).toBe(64);
      }),
    );
  });

  it('round-trips through 16 hex digits', () => {
    fc.assert(
      fc.property(hash64, (h) => {
        expect(phashFromHex(phashToHex(h))).toEqual(h);
      }),
    );
    expect(phashToHex({ hi: 1, lo: 0xabcdef })).toBe('0000000100abcdef');
    expect(() => phashFromHex('xyz')).toThrow(RangeError);
  });

  it('marks uniform pictures flat (their bits would be compression noise) and refuses a wrong working size', () => {
    for (const rgb of [[0, 0, 0], [128, 128, 128], [250, 250, 250]] as [number, number, number][]) expect(phashFrame(solid(64, 36, rgb)).flat).toBe(true);
    expect(() => phashGray({ width: 16, height: 16, data: new Float32Array(256) })).toThrow(RangeError);
    expect(PHASH_SIDE).toBe(32);
  });
});

const have = requireSharedData([evalPhotosDir]);

describe.skipIf(!have)('pHash on real photos (../shared/eval)', () => {
  const name = 'python3-skimage__astronaut.jpg';
  let big: Frame;
  let base: PHash;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir('vidembed-phash-');
    big = await decodeImage(evalPhoto(name), 1024);
    base = phashFrame(big);
  });
  afterAll(() => removeDir(dir));

  it('is deterministic and has structure: not flat, 32 of 64 bits set (median threshold)', async () => {
    const again = phashFrame(await decodeImage(evalPhoto(name), 1024));
    expect(again).toEqual(base);
    expect(base.flat).toBe(false);
    expect(popcount32(base.hi) + popcount32(base.lo)).toBe(32);
  });

  it('barely moves when the photo is resized, brightened, darkened or re-encoded as a small JPEG', async () => {
    const small = phashFrame(await decodeImage(evalPhoto(name), 96));
    const brighter = phashFrame({ ...big, data: big.data.map((x) => Math.min(255, x + 40)) });
    const darker = phashFrame({ ...big, data: big.data.map((x) => Math.round(x * 0.6)) });
    const jpegFile = path.join(dir, 'thumb.jpg');
    writeFileSync(jpegFile, await encodeThumbnail(big, { width: 160, maxBytes: 4096 }));
    const jpeg = phashFrame(await decodeImage(jpegFile, 512));
    for (const [what, h] of Object.entries({ small, brighter, darker, jpeg })) {
      expect(hamming(base, h), what).toBeLessThanOrEqual(4);
      expect(hamming(base, h), what).toBeLessThanOrEqual(DUPLICATE_THRESHOLDS.maxHamming);
    }
  });

  it('puts distinct photos (check half) far apart: every pair beyond the match threshold, typically ~32 bits', async () => {
    const photos = evalPhotos().filter((p) => halfOf(p) === 'check');
    expect(photos.length).toBeGreaterThan(10);
    const hashes = await Promise.all(photos.map(async (p) => phashFrame(await decodeImage(p, 512))));
    const d: number[] = [];
    for (let i = 0; i < hashes.length; i++) for (let j = i + 1; j < hashes.length; j++) d.push(hamming(hashes[i], hashes[j]));
    expect(Math.min(...d)).toBeGreaterThan(DUPLICATE_THRESHOLDS.maxHamming + 4);
    const median = [...d].sort((a, b) => a - b)[d.length >> 1];
    expect(median).toBeGreaterThanOrEqual(26);
    expect(median).toBeLessThanOrEqual(38);
  });
});

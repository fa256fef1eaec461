/**
 * Lighting (luminance histogram) and horizon tilt (Dutch angle) on real photos via ffmpeg.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { makeClip, makeRotatedStill, readFrames, photo, tempDir, pool } from './tagging-fixtures.js';
import { PIXEL_TAGGING_SAMPLING, estimateHorizon, tagHorizon, tagLighting } from '../../src/tagging/index.js';
import type { Frame } from '../../src/media/types.js';

const { fps: FPS, maxSide: MAX_SIDE } = PIXEL_TAGGING_SAMPLING;

function synthetic(draw: (x: number, y: number) => number, w = 256, h = 144): Frame {
  const data = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const v = Math.max(0, Math.min(255, Math.round(draw(x, y))));
      data.fill(v, (y * w + x) * 3, (y * w + x) * 3 + 3);
    }
  }
  return { t: 0, width: w, height: h, data };
}

describe('lighting', () => {
  const tmp = tempDir();
  const cases: Array<[string, string]> = [
    ['labelme-examples__0001.jpg', 'bright'],
    ['plasma-workspace-wallpapers__Path_1920x1080.jpg', 'low_key'],
    ['kphotoalbum__pool_2__rotated270.jpg', 'low_key'],
    ['psychtoolbox-3-common__town.jpg', 'normal'],
    ['kphotoalbum__donna.jpg', 'normal'],
    ['python3-scipy__face_raccoon.jpg', 'normal'],
  ];
  let frames: Frame[][] = [];
  beforeAll(async () => {
    frames = await pool(cases, 2, async ([p], i) => readFrames(await makeClip(join(tmp.dir, `l${i}.mp4`), photo(p), { kind: 'static' }, 0.5), FPS, MAX_SIDE));
  }, 60_000);
  afterAll(() => tmp.cleanup());

  it('labels bright, low-key and normal photos', () => {
    cases.forEach(([p, want], i) => {
      const l = tagLighting(frames[i]);
      expect(l.label, `${p} ${JSON.stringify(l)}`).toBe(want);
      expect(l.confidence).toBeGreaterThan(0.5);
    });
  });

  it('follows exposure: the same photo darkened is low-key, brightened is bright', () => {
    const src = frames[3][0];
    const scale = (f: Frame, k: number, add: number): Frame => ({ ...f, data: f.data.map((v) => Math.min(255, Math.round(v * k + add))) });
    expect(tagLighting([scale(src, 0.3, 0)]).label).toBe('low_key');
    expect(tagLighting([scale(src, 0.5, 140)]).label).toBe('bright');
    const black = synthetic(() => 0);
    const b = tagLighting([black]);
    expect(b.label).toBe('low_key');
    expect(b.confidence).toBeGreaterThan(0.9);
    expect(tagLighting([]).confidence).toBe(0);
  });
});

describe('horizon tilt', () => {
  const tmp = tempDir();
  // Photos with a clear horizon or clear verticals.
  const PHOTOS = ['kphotoalbum__skagen.jpg', 'psychtoolbox-3-common__town.jpg', 'kphotoalbum__grand_canyon_3.jpg'];
  const ANGLES = [-14, -4, 0, 10]; // ffmpeg rotate, + = clockwise ⇒ expected estimate = −angle
  const jobs = PHOTOS.flatMap((p) => ANGLES.map((a) => ({ p, a })));
  let frames: Frame[] = [];
  beforeAll(async () => {
    frames = await pool(jobs, 2, async ({ p, a }, i) => (await readFrames(await makeRotatedStill(join(tmp.dir, `h${i}.mp4`), photo(p), a, 0.2), FPS, MAX_SIDE))[0]);
  }, 60_000);
  afterAll(() => tmp.cleanup());

  it('measures the tilt of rotated photos within 2.5° and flags Dutch angles', () => {
    jobs.forEach(({ p, a }, i) => {
      const h = tagHorizon([frames[i]]);
      console.log(`${p.padEnd(36)} rotate ${String(a).padStart(3)}° → angle ${h.angle.toFixed(2).padStart(6)} conf ${h.confidence.toFixed(2)} dutch ${h.dutch}`);
      expect(Math.abs(h.angle + a), `${p} ${a}`).toBeLessThanOrEqual(2.5);
      expect(h.confidence).toBeGreaterThan(0.4);
      expect(h.dutch).toBe(Math.abs(a) >= 10); // threshold 6°; the photos themselves tilt up to ~1.5°
    });
  });

  it('is exact on synthetic anti-aliased lines and has no confidence on flat frames', () => {
    for (const deg of [-20, -3, 0, 5, 12]) {
      const r = (deg * Math.PI) / 180;
      const f = synthetic((x, y) => 128 + 100 * Math.sin((2 * Math.PI * (x * Math.sin(r) + y * Math.cos(r))) / 24));
      expect(Math.abs(estimateHorizon(f).angle - deg)).toBeLessThan(0.5);
    }
    expect(estimateHorizon(synthetic(() => 90)).confidence).toBe(0);
    expect(tagHorizon([]).confidence).toBe(0);
  });
});

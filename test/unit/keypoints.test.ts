import { describe, expect, it } from 'vitest';
import { boxSum, detectKeypoints, integralImage, matchPictures, pyramidScaled, resizeGray, type GrayImage } from '../../src/media/kernels/index.js';
import { forEachRect } from '../helpers/synthetic-scene.js';

/** A deterministic picture with corners: overlapping rectangles of random levels on a gradient. */
function scene(width: number, height: number, seed: number, rects = 90): GrayImage {
  const data = new Float32Array(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data[y * width + x] = 60 + (80 * x) / width;
  forEachRect(width, height, seed, rects, (x0, y0, w, h, rand) => {
    const v = rand() * 255;
    for (let y = y0; y < y0 + h; y++) for (let x = x0; x < x0 + w; x++) data[y * width + x] = v;
  });
  return { width, height, data };
}

/** The central `share` of the picture (width and height), brought back to `outW` wide. */
function cropCentre(img: GrayImage, share: number, outW: number): GrayImage {
  const w = Math.round(img.width * share);
  const h = Math.round(img.height * share);
  const x0 = Math.round((img.width - w) / 2);
  const y0 = Math.round((img.height - h) / 2);
  const data = new Float32Array(w * h);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) data[y * w + x] = img.data[(y0 + y) * img.width + x0 + x];
  return resizeGray({ width: w, height: h, data }, outW, Math.round((outW * h) / w));
}

/** A colour shift as luma sees it: levels squeezed, lifted and bent (monotone). */
function shiftLevels(img: GrayImage): GrayImage {
  return { ...img, data: img.data.map((v) => 255 * ((0.75 * v + 40) / 255) ** 0.8) };
}

describe('gray kernels for keypoints', () => {
  it('summed-area tables give any rectangle sum in four reads', () => {
    const img = scene(23, 17, 7, 10);
    const t = integralImage(img.data, img.width, img.height);
    let direct = 0;
    for (let y = 3; y <= 11; y++) for (let x = 5; x <= 19; x++) direct += img.data[y * img.width + x];
    expect(boxSum(t, img.width, 5, 3, 19, 11)).toBeCloseTo(direct, 6);
    expect(boxSum(t, img.width, 0, 0, 22, 16)).toBeCloseTo(img.data.reduce((a, b) => a + b, 0), 4);
  });

  it('a scaled pyramid shrinks by its factor and stops at the smallest side', () => {
    const img = scene(200, 100, 3, 5);
    const levels = pyramidScaled(img, 8, 1.5, 40);
    expect(levels.map((l) => [l.width, l.height])).toEqual([
      [200, 100],
      [133, 67],
      [89, 44],
    ]);
    expect(() => pyramidScaled(img, 3, 1)).toThrow(RangeError);
  });
});

describe('keypoints and their geometric match', () => {
  const original = scene(240, 180, 11);

  it('finds the same corners every time, inside the image, with 256-bit descriptors', () => {
    const a = detectKeypoints(original);
    const b = detectKeypoints(original);
    expect(a.n).toBeGreaterThan(100);
    expect(a.n).toBeLessThanOrEqual(400);
    expect(Array.from(a.x)).toEqual(Array.from(b.x));
    expect(Array.from(a.desc)).toEqual(Array.from(b.desc));
    expect(a.desc.length).toBe(a.n * 8);
    for (let i = 0; i < a.n; i++) {
      expect(a.x[i]).toBeGreaterThanOrEqual(0);
      expect(a.x[i]).toBeLessThan(240);
      expect(a.y[i]).toBeLessThan(180);
    }
    // A flat picture has no corners; one too small for a patch has none either.
    expect(detectKeypoints({ width: 100, height: 80, data: new Float32Array(8000).fill(128) }).n).toBe(0);
    expect(detectKeypoints(scene(20, 20, 5)).n).toBe(0);
  });

  it('a 70 % crop with its levels shifted is found in the original: many inliers, the crop geometry', () => {
    const query = shiftLevels(cropCentre(original, 0.7, 240));
    const m = matchPictures(detectKeypoints(query), detectKeypoints(original));
    expect(m.inliers).toBeGreaterThanOrEqual(20);
    // Original = 0.7·query + the crop's corner (36, 27).
    expect(m.scale).toBeGreaterThan(0.66);
    expect(m.scale).toBeLessThan(0.74);
    expect(m.tx).toBeGreaterThan(30);
    expect(m.tx).toBeLessThan(42);
    expect(m.ty).toBeGreaterThan(21);
    expect(m.ty).toBeLessThan(33);
    expect(m.inside).toBeGreaterThan(0.95);
  });

  it('an unrelated picture shares no geometry: far fewer inliers than the copy', () => {
    const query = shiftLevels(cropCentre(original, 0.7, 240));
    const copy = matchPictures(detectKeypoints(query), detectKeypoints(original));
    for (const seed of [12, 13]) {
      const other = matchPictures(detectKeypoints(query), detectKeypoints(scene(240, 180, seed)));
      expect(other.inliers).toBeLessThan(12);
      expect(other.inliers * 10).toBeLessThan(copy.inliers);
    }
  });

  it('too few points give no match rather than a guess', () => {
    const none = detectKeypoints({ width: 100, height: 80, data: new Float32Array(8000).fill(0) });
    expect(matchPictures(none, detectKeypoints(original))).toMatchObject({ matches: 0, inliers: 0 });
  });
});

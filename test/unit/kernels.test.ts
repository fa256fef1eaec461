import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  boxBlur,
  checkFrame,
  clamp01,
  fitSize,
  frameLuma,
  frameToGray,
  halve,
  luma,
  LUMA_Q8,
  LUMA_WEIGHTS,
  lumaByte,
  lumaQ8,
  median,
  percentile,
  popcount32,
  pyramid,
  resizeGray,
  round,
  round3,
  round4,
  sigmoid,
  type GrayImage,
} from '../../src/media/kernels/index.js';
import type { Frame } from '../../src/media/types.js';

const gray = (width: number, height: number, values: number[]): GrayImage => ({ width, height, data: Float32Array.from(values) });
const rgb = (width: number, height: number, pixels: Array<[number, number, number]>): Frame => ({ t: 0, width, height, data: Uint8Array.from(pixels.flat()) });

describe('luma (Rec. 601)', () => {
  it('weighs pure red, green and blue by 0.299, 0.587 and 0.114; white is 255, black 0', () => {
    expect(LUMA_WEIGHTS).toEqual([0.299, 0.587, 0.114]);
    expect(luma(255, 0, 0)).toBeCloseTo(76.245, 10);
    expect(luma(0, 255, 0)).toBeCloseTo(149.685, 10);
    expect(luma(0, 0, 255)).toBeCloseTo(29.07, 10);
    expect(luma(255, 255, 255)).toBe(255);
    expect(luma(0, 0, 0)).toBe(0);
  });

  it('has an 8.8 fixed-point form with the same weights (77, 150, 29; sum 256) within half a level', () => {
    expect(LUMA_Q8).toEqual({ r: 77, g: 150, b: 29 });
    expect(lumaByte(255, 255, 255)).toBe(255);
    expect(lumaByte(255, 0, 0)).toBe(76);
    expect(lumaByte(0, 255, 0)).toBe(149);
    expect(lumaByte(0, 0, 255)).toBe(28);
    expect(lumaQ8(1, 1, 1)).toBe(256);
    const byte = fc.integer({ min: 0, max: 255 });
    fc.assert(
      fc.property(byte, byte, byte, (r, g, b) => {
        expect(Math.abs(lumaQ8(r, g, b) / 256 - luma(r, g, b))).toBeLessThan(0.5);
        expect(lumaByte(r, g, b)).toBe(lumaQ8(r, g, b) >> 8);
      }),
    );
  });

  it('converts a frame pixel by pixel and rejects a short buffer', () => {
    const f = rgb(2, 1, [
      [255, 0, 0],
      [10, 20, 30],
    ]);
    const g = frameLuma(f);
    expect([g.width, g.height]).toEqual([2, 1]);
    expect(g.data[0]).toBeCloseTo(76.245, 4);
    expect(g.data[1]).toBeCloseTo(0.299 * 10 + 0.587 * 20 + 0.114 * 30, 4);
    expect(() => checkFrame({ t: 0, width: 2, height: 2, data: new Uint8Array(11) })).toThrow(RangeError);
    expect(() => checkFrame({ t: 0, width: 0, height: 2, data: new Uint8Array(0) })).toThrow(RangeError);
  });

  it('frameToGray area-averages the luma to the working size', () => {
    // 4×2: left half white, right half black → 2×1 at maxSide 2: [255, 0].
    const w: [number, number, number] = [255, 255, 255];
    const k: [number, number, number] = [0, 0, 0];
    const g = frameToGray(rgb(4, 2, [w, w, k, k, w, w, k, k]), 2);
    expect([g.width, g.height]).toEqual([2, 1]);
    expect(g.data[0]).toBeCloseTo(255, 3);
    expect(g.data[1]).toBeCloseTo(0, 6);
  });
});

describe('resampling', () => {
  it('fitSize keeps the aspect ratio and never upscales', () => {
    expect(fitSize(1920, 1080, 192)).toEqual({ width: 192, height: 108 });
    expect(fitSize(100, 50, 400)).toEqual({ width: 100, height: 50 });
  });

  it('halves a 4×4 by 2×2 means', () => {
    // prettier-ignore
    const img = gray(4, 4, [
      1, 3, 10, 20,
      5, 7, 30, 40,
      0, 0, 100, 100,
      0, 4, 100, 200,
    ]);
    const h = halve(img);
    expect([h.width, h.height]).toEqual([2, 2]);
    expect(Array.from(h.data)).toEqual([4, 25, 1, 125]);
  });

  it('halving drops an odd last row and column; a 1-px-high strip is averaged along its length', () => {
    const h = halve(gray(3, 3, [1, 1, 9, 1, 1, 9, 9, 9, 9]));
    expect([h.width, h.height, h.data[0]]).toEqual([1, 1, 1]);
    const strip = halve(gray(4, 1, [2, 4, 6, 8]));
    expect([strip.width, strip.height]).toEqual([2, 1]);
    expect(Array.from(strip.data)).toEqual([3, 7]);
  });

  it('builds a pyramid of halvings', () => {
    const levels = pyramid(gray(8, 4, Array.from({ length: 32 }, (_, i) => i)), 3);
    expect(levels.map((l) => [l.width, l.height])).toEqual([
      [8, 4],
      [4, 2],
      [2, 1],
    ]);
    // Mean is kept by 2×2 averaging of an even-sized image.
    const mean = (g: GrayImage): number => g.data.reduce((a, b) => a + b, 0) / g.data.length;
    expect(mean(levels[2])).toBeCloseTo(15.5, 5);
  });

  it('area resampling by a non-integer factor keeps the mean and a constant', () => {
    const img = gray(5, 1, [0, 5, 10, 15, 20]);
    const r = resizeGray(img, 2, 1);
    // Output pixel 0 covers source [0, 2.5): (0 + 5 + 0.5·10) / 2.5 = 4; pixel 1 covers [2.5, 5): 16.
    expect(r.data[0]).toBeCloseTo(4, 5);
    expect(r.data[1]).toBeCloseTo(16, 5);
    const flat = resizeGray(gray(7, 3, new Array(21).fill(42)), 3, 2);
    for (const v of flat.data) expect(v).toBeCloseTo(42, 4);
  });
});

describe('boxBlur', () => {
  it('spreads an impulse into a (2r+1)² square of equal weights summing to 1', () => {
    const w = 7;
    const h = 7;
    const src = new Float32Array(w * h);
    src[3 * w + 3] = 9;
    const out = boxBlur(src, w, h, 1);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        const inside = Math.abs(x - 3) <= 1 && Math.abs(y - 3) <= 1;
        expect(out[y * w + x]).toBeCloseTo(inside ? 1 : 0, 6);
      }
    }
  });

  it('clamps at the edges: an impulse in the corner keeps its mass inside the image weighted by the repeats', () => {
    const src = new Float32Array(9);
    src[0] = 9;
    const out = boxBlur(src, 3, 3, 1);
    // Edge clamping counts the corner pixel twice along each axis: 9 · (2/3) · (2/3) = 4 at (0,0).
    expect(out[0]).toBeCloseTo(4, 5);
    expect(out[1]).toBeCloseTo(2, 5);
    expect(out[4]).toBeCloseTo(1, 5);
    expect(out[8]).toBeCloseTo(0, 6);
  });
});

describe('numeric helpers', () => {
  it('median of odd and even counts, empty, without reordering the input', () => {
    const xs = [5, 1, 3];
    expect(median(xs)).toBe(3);
    expect(xs).toEqual([5, 1, 3]);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median(Float64Array.from([2, 8]))).toBe(5);
    expect(median([])).toBe(0);
  });

  it('nearest-rank percentile', () => {
    const xs = [10, 0, 30, 20, 40];
    expect(percentile(xs, 0)).toBe(0);
    expect(percentile(xs, 0.5)).toBe(20);
    expect(percentile(xs, 0.6)).toBe(20);
    expect(percentile(xs, 0.65)).toBe(30);
    expect(percentile(xs, 1)).toBe(40);
    expect(percentile([], 0.5)).toBe(0);
  });

  it('popcount32 counts set bits of any 32-bit pattern', () => {
    expect(popcount32(0)).toBe(0);
    expect(popcount32(0xffffffff)).toBe(32);
    expect(popcount32(0x80000001)).toBe(2);
    expect(popcount32(0b1011_0110)).toBe(5);
  });

  it('rounds, clamps and squashes', () => {
    expect(round(1.23456)).toBe(1.235);
    expect(round(1.23456, 2)).toBe(1.23);
    expect(round3(0.0005)).toBe(0.001);
    expect(round3(2 / 3)).toBe(0.667);
    expect(round4(2 / 3)).toBe(0.6667);
    expect(clamp01(-0.5)).toBe(0);
    expect(clamp01(0.25)).toBe(0.25);
    expect(clamp01(7)).toBe(1);
    expect(sigmoid(0)).toBe(0.5);
    expect(sigmoid(2) + sigmoid(-2)).toBeCloseTo(1, 12);
    expect(sigmoid(Math.log(3))).toBeCloseTo(0.75, 12);
  });
});

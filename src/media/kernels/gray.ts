/**
 * Single-channel image kernels: area-averaging resample, 2× halving and pyramids (halving or any
 * ratio), separable box blur, summed-area tables. Images are row-major Float32Array planes ({@link GrayImage}); luma planes come from
 * luma.ts.
 */
import type { Frame } from '../types.js';

export interface GrayImage {
  width: number;
  height: number;
  /** Row-major values (luma: 0..255). */
  data: Float32Array;
}

/** Throws on a frame whose buffer does not hold `width * height * 3` bytes. */
export function checkFrame(frame: Frame): void {
  const { width, height, data } = frame;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new RangeError(`frame has invalid size ${width}x${height}`);
  }
  if (!data || data.length < width * height * 3) {
    throw new RangeError(`frame buffer holds ${data?.length ?? 0} bytes, need ${width * height * 3}`);
  }
}

/** Output size with the longest side at most `maxSide` (never upscales), aspect kept. */
export function fitSize(width: number, height: number, maxSide: number): { width: number; height: number } {
  const s = Math.min(1, maxSide / Math.max(width, height));
  return { width: Math.max(1, Math.round(width * s)), height: Math.max(1, Math.round(height * s)) };
}

interface Taps {
  start: Int32Array;
  count: Int32Array;
  weights: Float32Array;
  stride: number;
}

/** For each output index, the source indices it covers and their weights (area averaging). */
function areaTaps(srcLen: number, dstLen: number): Taps {
  const f = srcLen / dstLen;
  const stride = Math.ceil(f) + 2;
  const start = new Int32Array(dstLen);
  const count = new Int32Array(dstLen);
  const weights = new Float32Array(dstLen * stride);
  for (let o = 0; o < dstLen; o++) {
    const a = o * f;
    const b = Math.min(srcLen, (o + 1) * f);
    const i0 = Math.floor(a);
    let k = 0;
    for (let i = i0; i < b && k < stride; i++, k++) {
      const w = Math.min(b, i + 1) - Math.max(a, i);
      weights[o * stride + k] = w / f;
    }
    start[o] = i0;
    count[o] = k;
  }
  return { start, count, weights, stride };
}

/** Area-averaging resample of a single-channel image (a box filter over the exact source footprint: never aliases). */
export function resizeGray(src: GrayImage, width: number, height: number): GrayImage {
  if (width === src.width && height === src.height) return src;
  const tx = areaTaps(src.width, width);
  const ty = areaTaps(src.height, height);
  const sw = src.width;
  const tmp = new Float32Array(width * src.height);
  for (let y = 0; y < src.height; y++) {
    const row = y * sw;
    for (let x = 0; x < width; x++) {
      const s0 = tx.start[x];
      const c = tx.count[x];
      const wo = x * tx.stride;
      let acc = 0;
      for (let k = 0; k < c; k++) acc += src.data[row + s0 + k] * tx.weights[wo + k];
      tmp[y * width + x] = acc;
    }
  }
  const out = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    const s0 = ty.start[y];
    const c = ty.count[y];
    const wo = y * ty.stride;
    for (let k = 0; k < c; k++) {
      const w = ty.weights[wo + k];
      const srow = (s0 + k) * width;
      const orow = y * width;
      for (let x = 0; x < width; x++) out[orow + x] += tmp[srow + x] * w;
    }
  }
  return { width, height, data: out };
}

/**
 * 2× downscale by 2×2 averaging (an odd last row/column is dropped). An image one pixel wide or
 * high is area-resampled along the other axis instead.
 */
export function halve(src: GrayImage): GrayImage {
  const w = Math.max(1, src.width >> 1);
  const h = Math.max(1, src.height >> 1);
  if (src.width < 2 || src.height < 2) return resizeGray(src, w, h);
  const out = new Float32Array(w * h);
  const sw = src.width;
  const d = src.data;
  for (let y = 0; y < h; y++) {
    const r0 = 2 * y * sw;
    const r1 = r0 + sw;
    for (let x = 0; x < w; x++) {
      const i = 2 * x;
      out[y * w + x] = 0.25 * (d[r0 + i] + d[r0 + i + 1] + d[r1 + i] + d[r1 + i + 1]);
    }
  }
  return { width: w, height: h, data: out };
}

/** Pyramid: level 0 is `img`, each next level half the size ({@link halve}). */
export function pyramid(img: GrayImage, levels: number): GrayImage[] {
  const out = [img];
  for (let l = 1; l < levels; l++) out.push(halve(out[l - 1]));
  return out;
}

/**
 * Pyramid with a free ratio: level 0 is `img`, level i is `img` area-resampled by `factor ** -i`
 * (from level 0 each time: no blur piles up). Stops before a level's shorter side drops under `minSide`.
 */
export function pyramidScaled(img: GrayImage, levels: number, factor: number, minSide = 1): GrayImage[] {
  if (!(factor > 1)) throw new RangeError(`pyramid factor must be above 1, got ${factor}`);
  const out = [img];
  for (let l = 1; l < levels; l++) {
    const s = factor ** -l;
    const w = Math.round(img.width * s);
    const h = Math.round(img.height * s);
    if (Math.min(w, h) < minSide) break;
    out.push(resizeGray(img, w, h));
  }
  return out;
}

/**
 * Summed-area table of a `w`×`h` plane: `(w+1)×(h+1)`, entry (x, y) the sum of every value above
 * and left of it, so any rectangle's sum is four reads ({@link boxSum}).
 */
export function integralImage(src: Float32Array, w: number, h: number): Float64Array {
  const W = w + 1;
  const out = new Float64Array(W * (h + 1));
  for (let y = 0; y < h; y++) {
    let row = 0;
    for (let x = 0; x < w; x++) {
      row += src[y * w + x];
      out[(y + 1) * W + x + 1] = out[y * W + x + 1] + row;
    }
  }
  return out;
}

/** Sum of the values in columns x0..x1 and rows y0..y1 (inclusive) from a summed-area table of width `w`. */
export function boxSum(table: Float64Array, w: number, x0: number, y0: number, x1: number, y1: number): number {
  const W = w + 1;
  return table[(y1 + 1) * W + x1 + 1] - table[y0 * W + x1 + 1] - table[(y1 + 1) * W + x0] + table[y0 * W + x0];
}

/** Separable box blur of a `w`×`h` plane with radius `r` (window 2r+1), edges clamped. */
export function boxBlur(src: Float32Array, w: number, h: number, r: number): Float32Array {
  const tmp = new Float32Array(w * h);
  const out = new Float32Array(w * h);
  const norm = 1 / (2 * r + 1);
  for (let y = 0; y < h; y++) {
    const row = y * w;
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let k = -r; k <= r; k++) s += src[row + Math.min(w - 1, Math.max(0, x + k))];
      tmp[row + x] = s * norm;
    }
  }
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let k = -r; k <= r; k++) s += tmp[Math.min(h - 1, Math.max(0, y + k)) * w + x];
      out[y * w + x] = s * norm;
    }
  }
  return out;
}

/**
 * Pixel helpers for OCR: resampling packed RGB24 frames straight into the float tensors the
 * PaddleOCR models take, and crops. Pure TypeScript, no dependencies.
 */
import type { Frame } from '../../media/types.js';

/** A rectangle in pixels of some image: x, y of the top-left corner, width, height. */
export interface PixelBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

/**
 * Integer box pre-shrink for big reductions: bilinear alone aliases thin strokes away when the
 * output is less than half the input. Returns the frame itself when `factor` < 2.
 */
export function boxShrink(frame: Frame, factor: number): Frame {
  const f = Math.floor(factor);
  if (f < 2) return frame;
  const w = Math.max(1, Math.floor(frame.width / f));
  const h = Math.max(1, Math.floor(frame.height / f));
  const out = new Uint8Array(w * h * 3);
  const src = frame.data;
  const sw = frame.width;
  const n = f * f;
  const acc = new Uint32Array(w * 3);
  for (let y = 0; y < h; y++) {
    acc.fill(0);
    for (let dy = 0; dy < f; dy++) {
      const row = (y * f + dy) * sw * 3;
      for (let x = 0; x < w; x++) {
        let p = row + x * f * 3;
        let r = 0;
        let g = 0;
        let b = 0;
        for (let dx = 0; dx < f; dx++, p += 3) {
          r += src[p];
          g += src[p + 1];
          b += src[p + 2];
        }
        acc[x * 3] += r;
        acc[x * 3 + 1] += g;
        acc[x * 3 + 2] += b;
      }
    }
    const o = y * w * 3;
    for (let i = 0; i < w * 3; i++) out[o + i] = (acc[i] + (n >> 1)) / n;
  }
  return { t: frame.t, width: w, height: h, data: out };
}

export interface TensorTarget {
  /** Destination NCHW float32 buffer (one image: 3 planes of `stride * rows`). */
  out: Float32Array;
  /** Offset of this image in `out` (elements). */
  offset: number;
  /** Row length of the destination planes (≥ `width`): columns past `width` are left as they are (padding). */
  stride: number;
  /** Rows per plane. */
  rows: number;
  /** Size the region is resampled to. */
  width: number;
  height: number;
  /** Per output channel: value = (byte / 255 - mean[c]) / std[c]. */
  mean: readonly [number, number, number];
  std: readonly [number, number, number];
  /** Source channel for each output channel: [2, 1, 0] writes BGR planes (PaddleOCR's order). */
  order: readonly [number, number, number];
}

/**
 * Bilinear resample of `region` of `frame` (pixels; default the whole frame) into a normalised
 * NCHW tensor. Half-pixel centres, edge clamped (as OpenCV's INTER_LINEAR). Reductions past 2x
 * are box-shrunk first so strokes are averaged, not skipped.
 */
export function resampleToTensor(frame: Frame, t: TensorTarget, region?: PixelBox): void {
  let src = frame;
  let rx = region?.x ?? 0;
  let ry = region?.y ?? 0;
  let rw = region?.w ?? frame.width;
  let rh = region?.h ?? frame.height;
  const shrink = Math.min(rw / t.width, rh / t.height);
  if (shrink >= 2) {
    src = boxShrink(region ? crop(frame, region) : frame, shrink);
    rx = ry = 0;
    rw = src.width;
    rh = src.height;
  }
  const W = src.width;
  const H = src.height;
  const data = src.data;
  const sx = rw / t.width;
  const sy = rh / t.height;
  const plane = t.stride * t.rows;
  // Per-channel affine: byte * a + b.
  const a = [0, 0, 0];
  const b = [0, 0, 0];
  for (let c = 0; c < 3; c++) {
    a[c] = 1 / (255 * t.std[c]);
    b[c] = -t.mean[c] / t.std[c];
  }
  const [c0, c1, c2] = t.order;
  const x0s = new Int32Array(t.width);
  const x1s = new Int32Array(t.width);
  const wxs = new Float32Array(t.width);
  for (let x = 0; x < t.width; x++) {
    const fx = Math.min(W - 1, Math.max(0, rx + (x + 0.5) * sx - 0.5));
    const x0 = Math.min(W - 1, Math.floor(fx));
    x0s[x] = x0 * 3;
    x1s[x] = Math.min(W - 1, x0 + 1) * 3;
    wxs[x] = fx - x0;
  }
  for (let y = 0; y < t.height; y++) {
    const fy = Math.min(H - 1, Math.max(0, ry + (y + 0.5) * sy - 0.5));
    const y0 = Math.min(H - 1, Math.floor(fy));
    const y1 = Math.min(H - 1, y0 + 1);
    const wy = fy - y0;
    const r0 = y0 * W * 3;
    const r1 = y1 * W * 3;
    const o = t.offset + y * t.stride;
    for (let x = 0; x < t.width; x++) {
      const wx = wxs[x];
      const p00 = r0 + x0s[x];
      const p01 = r0 + x1s[x];
      const p10 = r1 + x0s[x];
      const p11 = r1 + x1s[x];
      const w00 = (1 - wx) * (1 - wy);
      const w01 = wx * (1 - wy);
      const w10 = (1 - wx) * wy;
      const w11 = wx * wy;
      const v0 = data[p00 + c0] * w00 + data[p01 + c0] * w01 + data[p10 + c0] * w10 + data[p11 + c0] * w11;
      const v1 = data[p00 + c1] * w00 + data[p01 + c1] * w01 + data[p10 + c1] * w10 + data[p11 + c1] * w11;
      const v2 = data[p00 + c2] * w00 + data[p01 + c2] * w01 + data[p10 + c2] * w10 + data[p11 + c2] * w11;
      t.out[o + x] = v0 * a[0] + b[0];
      t.out[o + plane + x] = v1 * a[1] + b[1];
      t.out[o + 2 * plane + x] = v2 * a[2] + b[2];
    }
  }
}

/** A copy of `box` (whole pixels, clamped to the frame) as a frame of its own. */
export function crop(frame: Frame, box: PixelBox): Frame {
  const x0 = Math.max(0, Math.min(frame.width - 1, Math.floor(box.x)));
  const y0 = Math.max(0, Math.min(frame.height - 1, Math.floor(box.y)));
  const x1 = Math.max(x0 + 1, Math.min(frame.width, Math.ceil(box.x + box.w)));
  const y1 = Math.max(y0 + 1, Math.min(frame.height, Math.ceil(box.y + box.h)));
  const w = x1 - x0;
  const h = y1 - y0;
  const out = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++) out.set(frame.data.subarray(((y0 + y) * frame.width + x0) * 3, ((y0 + y) * frame.width + x1) * 3), y * w * 3);
  return { t: frame.t, width: w, height: h, data: out };
}

/** The frame turned 90° counter-clockwise (its top row becomes the left column, read bottom-up). */
export function rotateCcw(frame: Frame): Frame {
  const { width: W, height: H, data } = frame;
  const out = new Uint8Array(W * H * 3);
  // Output is H wide, W high: out(x', y') = in(x = W - 1 - y', y = x').
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const p = (y * W + x) * 3;
      const q = ((W - 1 - x) * H + y) * 3;
      out[q] = data[p];
      out[q + 1] = data[p + 1];
      out[q + 2] = data[p + 2];
    }
  }
  return { t: frame.t, width: H, height: W, data: out };
}

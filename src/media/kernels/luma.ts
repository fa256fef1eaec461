/**
 * RGB → luma, the one formula: Rec. 601 (BT.601) weights, `0.299 R + 0.587 G + 0.114 B`, on the
 * 0..255 scale of the input bytes. Every pixel kernel (tagging, perception, pHash, OCR, thumbnails)
 * reads luma through this file.
 *
 * Loops that produce bytes (the lighting histogram, the OCR gate) use the same
 * weights in 8.8 fixed point ({@link LUMA_Q8}, derived from the float weights below: 77, 150, 29,
 * summing to 256) so they stay in integer arithmetic; the two forms differ by < 0.5 of a level.
 */
import type { Frame } from '../types.js';
import { checkFrame, fitSize, resizeGray, type GrayImage } from './gray.js';

/** Rec. 601 luma weights of R, G and B (sum 1). */
export const LUMA_WEIGHTS: readonly [number, number, number] = [0.299, 0.587, 0.114];

/** Luma of one RGB pixel, 0..255 for byte input (Rec. 601). */
export function luma(r: number, g: number, b: number): number {
  return 0.299 * r + 0.587 * g + 0.114 * b;
}

/** {@link LUMA_WEIGHTS} in 8.8 fixed point: `(R·r + G·g + B·b) >> 8` is a luma byte. */
export const LUMA_Q8: { readonly r: number; readonly g: number; readonly b: number } = (() => {
  const [r, g, b] = LUMA_WEIGHTS.map((w) => Math.round(w * 256));
  if (r + g + b !== 256) throw new Error('luma weights do not sum to 256 in 8.8 fixed point');
  return { r, g, b };
})();

/** Luma of one RGB pixel times 256 (integer, exact for byte input): shift by 8 for a byte, by 10 for the mean of four. */
export function lumaQ8(r: number, g: number, b: number): number {
  return LUMA_Q8.r * r + LUMA_Q8.g * g + LUMA_Q8.b * b;
}

/** Luma byte of one RGB pixel, floored (`lumaQ8 >> 8`). */
export function lumaByte(r: number, g: number, b: number): number {
  return (LUMA_Q8.r * r + LUMA_Q8.g * g + LUMA_Q8.b * b) >> 8;
}

/** Full-resolution luma of a packed RGB24 frame (float, 0..255). */
export function frameLuma(frame: Frame): GrayImage {
  checkFrame(frame);
  const { width, height, data } = frame;
  const n = width * height;
  const out = new Float32Array(n);
  for (let i = 0, j = 0; i < n; i++, j += 3) out[i] = luma(data[j], data[j + 1], data[j + 2]);
  return { width, height, data: out };
}

/**
 * Luma at a working size with the longest side ≤ maxSide. Converting RGB→luma first then
 * area-resampling equals resampling each channel then converting (both are linear).
 */
export function frameToGray(frame: Frame, maxSide: number): GrayImage {
  const l = frameLuma(frame);
  const size = fitSize(frame.width, frame.height, maxSide);
  return resizeGray(l, size.width, size.height);
}

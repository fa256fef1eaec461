/**
 * Small numeric helpers the pixel kernels and the taggers share: rounding for reported figures,
 * order statistics, squashing functions and bit counts. One copy each; see kernels/index.ts.
 */

/** `x` rounded to `digits` decimals (reported figures: scores, seconds, similarities). */
export function round(x: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** `x` rounded to 3 decimals (seconds, similarities). */
export const round3 = (x: number): number => Math.round(x * 1000) / 1000;

/** `x` rounded to 4 decimals (tag scores and confidences). */
export const round4 = (x: number): number => Math.round(x * 1e4) / 1e4;

/** `x` clamped to [0, 1]. */
export const clamp01 = (x: number): number => (x < 0 ? 0 : x > 1 ? 1 : x);

/** Logistic function 1 / (1 + e^−x). */
export const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

/** Median (mean of the two middle values for an even count); 0 for no values. Does not reorder `xs`. */
export function median(xs: ArrayLike<number>): number {
  if (xs.length === 0) return 0;
  const s = Array.from(xs).sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : 0.5 * (s[m - 1] + s[m]);
}

/** Nearest-rank percentile: the sorted value at index round(q·(n−1)); 0 for no values. Does not reorder `xs`. */
export function percentile(xs: ArrayLike<number>, q: number): number {
  const s = Array.from(xs).sort((a, b) => a - b);
  if (s.length === 0) return 0;
  return s[Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))))];
}

/** Set bits of a 32-bit integer. */
export function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/**
 * Perceptual hash of a picture (DCT pHash): 64 bits that stay almost the same when the picture is
 * re-encoded, resized, brightened or lightly blurred, and differ in about half their bits between
 * unrelated pictures. Near-duplicate detection (src/duplicates/duplicates.ts) compares them by Hamming
 * distance.
 *
 * The frame's luma is area-averaged down to 32×32 (the aspect ratio is dropped, so a resize that
 * keeps it changes nothing), transformed by a 2-D DCT-II, and the 64 lowest-frequency coefficients
 * after the DC term (zig-zag order, as JPEG reads them) become one bit each: 1 when the coefficient
 * is above their median. Leaving out DC and thresholding at the median makes the hash blind to
 * brightness and contrast changes, and sets exactly 32 bits on any picture with structure.
 *
 * A nearly uniform picture (black, a fade, a white wall) has no structure to hash: its bits would
 * come from compression noise. Such frames are marked `flat` and never count as a match.
 */
import { frameLuma, median, popcount32, resizeGray, type GrayImage } from './kernels/index.js';
import type { Frame } from './types.js';

/** Side of the grayscale square the DCT runs on. */
export const PHASH_SIDE = 32;
/** Bits per hash. */
export const PHASH_BITS = 64;
/**
 * A picture whose 32×32 luma has a standard deviation below this (0–255 scale) is `flat`. Black and
 * faded frames measure ≈0–1.5; the dimmest real scenes of the eval set are far above 3.
 */
export const FLAT_LUMA_STD = 3;

/** A 64-bit perceptual hash as two unsigned 32-bit halves (bits 0–31 in `lo`, 32–63 in `hi`). */
export interface PHash {
  hi: number;
  lo: number;
  /** Nearly uniform picture: the bits mean nothing; never a match. */
  flat: boolean;
}

/** (u, v) of the 64 AC coefficients the hash reads, lowest frequencies first (JPEG zig-zag). */
const ZIGZAG: [number, number][] = (() => {
  const out: [number, number][] = [];
  for (let s = 1; out.length < PHASH_BITS; s++) {
    const diag: [number, number][] = [];
    for (let u = 0; u <= s; u++) diag.push([u, s - u]);
    if (s % 2 === 1) diag.reverse();
    for (const p of diag) if (out.length < PHASH_BITS) out.push(p);
  }
  return out;
})();
/** Highest frequency index the hash needs in either direction. */
const MAX_FREQ = Math.max(...ZIGZAG.flat());

/** cos(π (2n + 1) k / 2N) for k ≤ MAX_FREQ, n < N: the DCT-II basis, row k. */
const COS: Float64Array = (() => {
  const n = PHASH_SIDE;
  const t = new Float64Array((MAX_FREQ + 1) * n);
  for (let k = 0; k <= MAX_FREQ; k++) for (let i = 0; i < n; i++) t[k * n + i] = Math.cos((Math.PI * (2 * i + 1) * k) / (2 * n));
  return t;
})();

/** The 32×32 luma square a frame is hashed from (area-averaged: no aliasing whatever the input size). */
export function hashGray(frame: Frame): GrayImage {
  return resizeGray(frameLuma(frame), PHASH_SIDE, PHASH_SIDE);
}

/** pHash of a 32×32 grayscale square (see the file header). */
export function phashGray(g: GrayImage): PHash {
  const n = PHASH_SIDE;
  if (g.width !== n || g.height !== n) throw new RangeError(`phashGray needs a ${n}x${n} image, got ${g.width}x${g.height}`);
  const d = g.data;
  let sum = 0;
  let sq = 0;
  for (let i = 0; i < n * n; i++) {
    sum += d[i];
    sq += d[i] * d[i];
  }
  const mean = sum / (n * n);
  const std = Math.sqrt(Math.max(0, sq / (n * n) - mean * mean));
  // Rows first (only the low frequencies are needed), then columns.
  const rows = new Float64Array(n * (MAX_FREQ + 1)); // rows[y * (K) + v]
  const K = MAX_FREQ + 1;
  for (let y = 0; y < n; y++) {
    for (let v = 0; v < K; v++) {
      let acc = 0;
      const c = v * n;
      const r = y * n;
      for (let x = 0; x < n; x++) acc += d[r + x] * COS[c + x];
      rows[y * K + v] = acc;
    }
  }
  const coef = new Float64Array(PHASH_BITS);
  ZIGZAG.forEach(([u, v], i) => {
    let acc = 0;
    const c = u * n;
    for (let y = 0; y < n; y++) acc += rows[y * K + v] * COS[c + y];
    coef[i] = acc;
  });
  const mid = median(coef);
  let lo = 0;
  let hi = 0;
  for (let i = 0; i < PHASH_BITS; i++) {
    if (coef[i] > mid) {
      if (i < 32) lo |= 1 << i;
      else hi |= 1 << (i - 32);
    }
  }
  return { hi: hi >>> 0, lo: lo >>> 0, flat: std < FLAT_LUMA_STD };
}

/** pHash of a decoded frame (packed RGB24, any size). */
export function phashFrame(frame: Frame): PHash {
  return phashGray(hashGray(frame));
}

export { popcount32 };

/** Bits in which two hashes differ, 0–64. */
export function hamming(a: Pick<PHash, 'hi' | 'lo'>, b: Pick<PHash, 'hi' | 'lo'>): number {
  return popcount32((a.hi ^ b.hi) >>> 0) + popcount32((a.lo ^ b.lo) >>> 0);
}

/** 16 hex digits, most significant first (how a hash is stored and shown). */
export function phashToHex(h: Pick<PHash, 'hi' | 'lo'>): string {
  return (h.hi >>> 0).toString(16).padStart(8, '0') + (h.lo >>> 0).toString(16).padStart(8, '0');
}

/** The inverse of phashToHex (`flat` is not part of the hex form). */
export function phashFromHex(hex: string): Pick<PHash, 'hi' | 'lo'> {
  if (!/^[0-9a-f]{16}$/i.test(hex)) throw new RangeError(`not a 64-bit hex hash: ${hex}`);
  return { hi: parseInt(hex.slice(0, 8), 16) >>> 0, lo: parseInt(hex.slice(8), 16) >>> 0 };
}

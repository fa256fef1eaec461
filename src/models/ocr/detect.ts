/**
 * PP-OCR text detection (DB, "Differentiable Binarization") pre- and post-processing.
 *
 * Pre: the frame is resampled so each side is a multiple of 32 (longest side ≤ `maxSide`, never
 * enlarged past the frame except to reach 32), BGR planes (the order PaddleOCR trains on: OpenCV
 * images), ImageNet mean/std on x/255, NCHW.
 *
 * Post: the probability map is thresholded, 8-connected components become axis-aligned boxes,
 * each scored by the mean probability inside its rectangle (PaddleOCR's `box_score_fast` for
 * horizontal text), kept when the score is high enough, then "unclipped": DB shrinks text
 * regions in training, so each box grows by d = area × ratio / perimeter on every side.
 */
import { boxSum, integralImage } from '../../media/kernels/index.js';
import type { PixelBox } from './image.js';

export const DET_MEAN = [0.485, 0.456, 0.406] as const;
export const DET_STD = [0.229, 0.224, 0.225] as const;

/** The det model's input size for a frame: sides multiples of 32, longest ≤ maxSide. */
export function detInputSize(width: number, height: number, maxSide: number): { width: number; height: number } {
  const ratio = Math.min(1, maxSide / Math.max(width, height));
  const cap = Math.max(32, Math.floor(maxSide / 32) * 32);
  const r32 = (v: number) => Math.min(cap, Math.max(32, Math.round((v * ratio) / 32) * 32));
  return { width: r32(width), height: r32(height) };
}

export interface DbOptions {
  /** Binarisation threshold on the probability map (PaddleOCR 0.3). */
  thresh?: number;
  /** Minimum mean probability inside a box (PaddleOCR 0.6). */
  boxThresh?: number;
  /** DB unclip ratio (PaddleOCR 1.5). */
  unclipRatio?: number;
  /** Boxes whose short side (map pixels) is below this are dropped, before and after unclip (+2). */
  minSize?: number;
  /** At most this many components are scored (largest first). */
  maxCandidates?: number;
}

export interface DetBox extends PixelBox {
  /** Mean probability inside the (un-expanded) box. */
  score: number;
}

/**
 * Boxes (in probability-map pixels, already unclipped and clamped to the map) from a DB
 * probability map of `width` × `height`.
 */
export function dbBoxes(prob: Float32Array, width: number, height: number, opts: DbOptions = {}): DetBox[] {
  const thresh = opts.thresh ?? 0.3;
  const boxThresh = opts.boxThresh ?? 0.6;
  const ratio = opts.unclipRatio ?? 1.5;
  const minSize = opts.minSize ?? 3;
  const maxCandidates = opts.maxCandidates ?? 1000;
  const n = width * height;
  if (prob.length < n) throw new Error(`probability map has ${prob.length} values, expected ${n}`);

  // Components (8-connected) by flood fill; label 0 = background / unvisited.
  const labels = new Int32Array(n);
  const stack = new Int32Array(n);
  interface Comp {
    x0: number;
    y0: number;
    x1: number;
    y1: number;
    count: number;
  }
  const comps: Comp[] = [];
  for (let start = 0; start < n; start++) {
    if (labels[start] !== 0 || prob[start] <= thresh) continue;
    const id = comps.length + 1;
    const c: Comp = { x0: width, y0: height, x1: -1, y1: -1, count: 0 };
    let top = 0;
    stack[top++] = start;
    labels[start] = id;
    while (top > 0) {
      const p = stack[--top];
      const y = (p / width) | 0;
      const x = p - y * width;
      c.count++;
      if (x < c.x0) c.x0 = x;
      if (x > c.x1) c.x1 = x;
      if (y < c.y0) c.y0 = y;
      if (y > c.y1) c.y1 = y;
      for (let dy = -1; dy <= 1; dy++) {
        const yy = y + dy;
        if (yy < 0 || yy >= height) continue;
        for (let dx = -1; dx <= 1; dx++) {
          const xx = x + dx;
          if (xx < 0 || xx >= width || (dx === 0 && dy === 0)) continue;
          const q = yy * width + xx;
          if (labels[q] === 0 && prob[q] > thresh) {
            labels[q] = id;
            stack[top++] = q;
          }
        }
      }
    }
    comps.push(c);
  }
  if (comps.length === 0) return [];
  comps.sort((a, b) => b.count - a.count);
  if (comps.length > maxCandidates) comps.length = maxCandidates;

  // Integral image of the probabilities for O(1) rectangle means.
  const integral = integralImage(prob, width, height);
  const rectMean = (x0: number, y0: number, x1: number, y1: number) => boxSum(integral, width, x0, y0, x1, y1) / ((x1 - x0 + 1) * (y1 - y0 + 1));

  const out: DetBox[] = [];
  for (const c of comps) {
    const w = c.x1 - c.x0 + 1;
    const h = c.y1 - c.y0 + 1;
    if (Math.min(w, h) < minSize) continue;
    const score = rectMean(c.x0, c.y0, c.x1, c.y1);
    if (score < boxThresh) continue;
    const d = (w * h * ratio) / (2 * (w + h));
    if (Math.min(w, h) + 2 * d < minSize + 2) continue;
    const x0 = Math.max(0, c.x0 - d);
    const y0 = Math.max(0, c.y0 - d);
    const x1 = Math.min(width, c.x1 + 1 + d);
    const y1 = Math.min(height, c.y1 + 1 + d);
    out.push({ x: x0, y: y0, w: x1 - x0, h: y1 - y0, score });
  }
  // Reading order: top to bottom, then left to right within a line (PaddleOCR's sorted_boxes).
  out.sort((a, b) => a.y - b.y || a.x - b.x);
  for (let i = 0; i + 1 < out.length; i++) {
    for (let j = i; j >= 0; j--) {
      const a = out[j];
      const b = out[j + 1];
      if (Math.abs(b.y - a.y) < 10 && b.x < a.x) {
        out[j] = b;
        out[j + 1] = a;
      } else break;
    }
  }
  return out;
}

/**
 * Shot boundaries (hard cuts) from colour-histogram differences between consecutive sampled frames.
 *
 * Feature per frame: a joint RGB histogram (8×8×8 bins) of the whole frame plus 4×4×4-bin
 * histograms of its four quadrants (so two shots with similar colours but a different layout still
 * differ). Distance between frames: ½·TV(global) + ½·mean TV(quadrants), TV = total variation
 * distance (½·L1), in [0, 1].
 *
 * Adaptive threshold: a pair is a cut when its distance is a local maximum and exceeds
 *   max(MIN_ABS, median + K·MAD-σ, RATIO·median) of the distances around it (±~1.5 s, itself
 * excluded), so steady motion (pans, moving subjects) that changes the histograms at every sample
 * raises the bar around it while one isolated jump stands out. A one-sample flash (A→B→A) is
 * not a cut. Gradual transitions (dissolves, fades) are not detected.
 * Cut time = midpoint of the two frames: ±half the sampling interval.
 */
import type { Frame } from '../media/types.js';
import { checkFrame, median } from '../media/kernels/index.js';

export interface ShotFeatures {
  t: number;
  /** 512-bin joint RGB histogram, normalised to sum 1. */
  global: Float32Array;
  /** 4 quadrants × 64 bins, each quadrant normalised to sum 1. */
  cells: Float32Array;
}

export interface Cut {
  /** Seconds: midpoint between the last frame of one shot and the first of the next. */
  t: number;
  /** Histogram distance across the cut, 0..1. */
  score: number;
  /** The adaptive threshold it beat. */
  threshold: number;
  /** How clearly it beat the threshold, 0..1 (0.5 at the threshold). */
  confidence: number;
}

export interface Shot {
  start: number;
  end: number;
}

export interface ShotDetection {
  shots: Shot[];
  cuts: Cut[];
  /** Distance between each consecutive pair of frames (length frames − 1). */
  distances: number[];
}

export interface ShotOptions {
  /** Start of the first shot (default: first frame's time). */
  start?: number;
  /** End of the last shot (default: last frame's time + one sampling interval). */
  end?: number;
  /** Shots shorter than this (s) are merged into a neighbour; the weaker cut goes. Default 0.5. */
  minShot?: number;
}

const MIN_ABS = 0.25;
/** With no neighbours to compare against (2–3 frames), only a large jump counts. */
const MIN_ABS_ALONE = 0.45;
const K = 6;
const RATIO = 3;
/** Half-window of neighbours, seconds. */
export const WINDOW_S = 1.5;

/** Histogram features of one frame (pixels subsampled to ≤ ~20k). */
export function shotFeatures(frame: Frame): ShotFeatures {
  checkFrame(frame);
  const { width: w, height: h, data } = frame;
  const global = new Float32Array(512);
  const cells = new Float32Array(256);
  const step = Math.max(1, Math.floor(Math.sqrt((w * h) / 20000)));
  const hw = w / 2;
  const hh = h / 2;
  const cellN = new Float32Array(4);
  let n = 0;
  for (let y = 0; y < h; y += step) {
    const cy = y < hh ? 0 : 2;
    for (let x = 0; x < w; x += step) {
      const i = (y * w + x) * 3;
      const r = data[i];
      const g = data[i + 1];
      const b = data[i + 2];
      global[((r >> 5) << 6) | ((g >> 5) << 3) | (b >> 5)]++;
      const c = cy + (x < hw ? 0 : 1);
      cells[c * 64 + (((r >> 6) << 4) | ((g >> 6) << 2) | (b >> 6))]++;
      cellN[c]++;
      n++;
    }
  }
  for (let i = 0; i < 512; i++) global[i] /= n;
  for (let c = 0; c < 4; c++) {
    const cn = cellN[c] || 1;
    for (let i = 0; i < 64; i++) cells[c * 64 + i] /= cn;
  }
  return { t: frame.t, global, cells };
}

/** Histogram distance between two frames' features, 0 (same colours) .. 1 (disjoint). */
export function featureDistance(a: ShotFeatures, b: ShotFeatures): number {
  let g = 0;
  for (let i = 0; i < 512; i++) g += Math.abs(a.global[i] - b.global[i]);
  let c = 0;
  for (let i = 0; i < 256; i++) c += Math.abs(a.cells[i] - b.cells[i]);
  return 0.5 * (0.5 * g) + 0.5 * (0.5 * c) / 4;
}

/** Detects hard cuts in time-ordered frames (or their precomputed features) and returns the shots. */
export function detectShots(input: Frame[] | ShotFeatures[], opts: ShotOptions = {}): ShotDetection {
  const feats: ShotFeatures[] = input.map((f) => ('global' in f ? f : shotFeatures(f)));
  const n = feats.length;
  const dts: number[] = [];
  for (let i = 1; i < n; i++) dts.push(feats[i].t - feats[i - 1].t);
  const dt = dts.length ? Math.max(1e-3, median(dts)) : 0;
  const start = opts.start ?? (n ? feats[0].t : 0);
  const end = Math.max(start, opts.end ?? (n ? feats[n - 1].t + dt : start));
  const minShot = opts.minShot ?? 0.5;
  const d: number[] = [];
  for (let i = 0; i + 1 < n; i++) d.push(featureDistance(feats[i], feats[i + 1]));

  const half = Math.max(2, Math.round(WINDOW_S / (dt || 1)));
  let cuts: Cut[] = [];
  for (let i = 0; i < d.length; i++) {
    if ((i > 0 && d[i - 1] > d[i]) || (i + 1 < d.length && d[i + 1] > d[i])) continue;
    const neigh: number[] = [];
    for (let j = Math.max(0, i - half); j <= Math.min(d.length - 1, i + half); j++) if (j !== i) neigh.push(d[j]);
    let thr: number;
    if (neigh.length < 2) thr = MIN_ABS_ALONE;
    else {
      const m = median(neigh);
      const sigma = 1.4826 * median(neigh.map((x) => Math.abs(x - m)));
      thr = Math.max(MIN_ABS, m + K * Math.max(sigma, 0.02), RATIO * m);
    }
    if (d[i] <= thr) continue;
    // Flash: the frame after the jump differs but the one after that matches the frame before.
    if (i + 2 < n && featureDistance(feats[i], feats[i + 2]) < 0.5 * thr) continue;
    const confidence = 1 / (1 + Math.exp(-8 * (d[i] / thr - 1)));
    cuts.push({ t: 0.5 * (feats[i].t + feats[i + 1].t), score: d[i], threshold: thr, confidence });
  }
  // Enforce the minimum shot length: drop the weaker of two cuts that are too close (or too near the ends).
  cuts = cuts.filter((c) => c.t - start >= minShot * 0.5 && end - c.t >= minShot * 0.5);
  let changed = true;
  while (changed) {
    changed = false;
    for (let k = 0; k + 1 < cuts.length; k++) {
      if (cuts[k + 1].t - cuts[k].t < minShot) {
        cuts.splice(cuts[k].score >= cuts[k + 1].score ? k + 1 : k, 1);
        changed = true;
        break;
      }
    }
  }
  const shots: Shot[] = [];
  if (n > 0 || opts.end !== undefined) {
    let s = start;
    for (const c of cuts) {
      shots.push({ start: s, end: c.t });
      s = c.t;
    }
    shots.push({ start: s, end });
  }
  return { shots, cuts, distances: d };
}

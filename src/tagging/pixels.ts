/**
 * Simple pixel tags: lighting key from the luminance histogram, and horizon tilt (Dutch angle)
 * from the dominant orientation of long straight structure.
 */
import type { TagValue } from '../api/types.js';
import type { Frame } from '../media/types.js';
import { boxBlur, checkFrame, frameToGray, lumaByte, round, round4, sigmoid, type GrayImage } from '../media/kernels/index.js';
import { labelsOf } from '../tags/registry.js';

// ---------------------------------------------------------------------------------------------
// Lighting

/** Declared in the tag registry (src/tags/registry.ts). */
export const LIGHTING_LABELS = labelsOf('lighting');
export type LightingLabel = (typeof LIGHTING_LABELS)[number];

export interface LightingStats {
  /** Mean luma, 0..1. */
  mean: number;
  median: number;
  p05: number;
  p95: number;
  /** Share of pixels with luma < 0.2 and > 0.8. */
  darkShare: number;
  brightShare: number;
}

/**
 * `low_key`: mostly dark frame (night, low-key interior); `bright`: mostly light (daylight
 * exteriors, high key, snow); `normal`: in between. Scores are logistic in the mean luma and the
 * share of dark / bright pixels; confidence = the winning score (low near the boundaries).
 */
export interface LightingTag extends TagValue {
  label: LightingLabel;
  confidence: number;
  scores: Record<LightingLabel, number>;
  stats: LightingStats;
}

/** 256-bin luma histogram (counts) of a frame, pixels subsampled to ≤ ~40k. */
export function lumaHistogram(frame: Frame): Float64Array {
  checkFrame(frame);
  const { width: w, height: h, data } = frame;
  const hist = new Float64Array(256);
  const step = Math.max(1, Math.floor(Math.sqrt((w * h) / 40000)));
  for (let y = 0; y < h; y += step) {
    for (let x = 0; x < w; x += step) {
      const i = (y * w + x) * 3;
      hist[lumaByte(data[i], data[i + 1], data[i + 2])]++;
    }
  }
  return hist;
}


/** Lighting from frames, or from summed luma histograms ({@link lumaHistogram}). */
export function tagLighting(input: Frame[] | Float64Array[]): LightingTag {
  const hist = new Float64Array(256);
  for (const x of input) {
    const h = x instanceof Float64Array ? x : lumaHistogram(x);
    for (let i = 0; i < 256; i++) hist[i] += h[i];
  }
  let total = 0;
  for (let i = 0; i < 256; i++) total += hist[i];
  if (total === 0) {
    const scores = { low_key: 1 / 3, normal: 1 / 3, bright: 1 / 3 };
    return { label: 'normal', confidence: 0, scores, stats: { mean: 0, median: 0, p05: 0, p95: 0, darkShare: 0, brightShare: 0 } };
  }
  let mean = 0;
  let dark = 0;
  let bright = 0;
  for (let i = 0; i < 256; i++) {
    mean += i * hist[i];
    if (i < 51) dark += hist[i];
    if (i > 204) bright += hist[i];
  }
  mean /= 255 * total;
  dark /= total;
  bright /= total;
  const pct = (q: number): number => {
    let acc = 0;
    for (let i = 0; i < 256; i++) {
      acc += hist[i];
      if (acc >= q * total) return i / 255;
    }
    return 1;
  };
  const stats: LightingStats = {
    mean: round4(mean),
    median: round4(pct(0.5)),
    p05: round4(pct(0.05)),
    p95: round4(pct(0.95)),
    darkShare: round4(dark),
    brightShare: round4(bright),
  };
  // Evidence for each end of the scale; normal takes what neither claims.
  const low = sigmoid(((0.27 - mean) / 0.05 + (dark - 0.55) / 0.12) / 2);
  const high = sigmoid(((mean - 0.63) / 0.05 + (bright - 0.3) / 0.12) / 2);
  const normal = (1 - low) * (1 - high);
  const sum = low + high + normal;
  const scores: Record<LightingLabel, number> = { low_key: round4(low / sum), normal: round4(normal / sum), bright: round4(high / sum) };
  let label: LightingLabel = 'normal';
  for (const l of LIGHTING_LABELS) if (scores[l] > scores[label]) label = l;
  return { label, confidence: scores[label], scores, stats };
}

// ---------------------------------------------------------------------------------------------
// Horizon tilt

export interface HorizonEstimate {
  /**
   * Rotation of the scene's dominant horizontal/vertical structure from the frame axes, degrees in
   * (−45, 45]: + = counter-clockwise on screen (a horizon rising to the right).
   */
  angle: number;
  /** 0..1: how much of the line evidence sits in the peak, and how much line evidence there is. */
  confidence: number;
  /** Per line family (same sign convention; score 0..1 = concentration × coverage). */
  families?: { horizontal: { angle: number; score: number }; vertical: { angle: number; score: number } };
}

export interface HorizonTag {
  angle: number;
  confidence: number;
  /** |angle| ≥ {@link DUTCH_MIN_DEG} with enough confidence: a Dutch (canted) angle. */
  dutch: boolean;
  /** 0..1 evidence for a Dutch angle (angle size × confidence). */
  dutchScore: number;
}

export const DUTCH_MIN_DEG = 6;
const HORIZON_SIDE = 320;
/** Structure-tensor integration radius (window 2r+1 px). */
const TENSOR_R = 4;

/**
 * Dominant tilt of line-like structure. Luma at ≤ 320 px, lightly smoothed → Sobel gradients →
 * structure tensor averaged over 9×9 → pixels that are strongly (top 20 % energy) and coherently
 * (line-like, not texture) oriented vote with their line direction, weighted by gradient
 * magnitude × coherence, in two families: near-horizontal and near-vertical lines (a rolled camera
 * turns both by the same angle). Per family, the peak of the smoothed 0.5°-bin histogram within
 * ±40°, refined by the weighted mean within ±3°; its score = (share of votes in the peak vs.
 * uniform) × (share of the image such lines cover, saturating). Families that agree are averaged;
 * when they disagree the stronger one wins with reduced confidence.
 * Known limits: strong receding lines (perspective of a facade, a boardwalk) read as tilt; the
 * confidence drops only when the other family disagrees.
 */
export function estimateHorizon(frame: Frame | GrayImage): HorizonEstimate {
  const g: GrayImage = 'data' in frame && frame.data instanceof Float32Array ? (frame as GrayImage) : frameToGray(frame as Frame, HORIZON_SIDE);
  const { width: w, height: h } = g;
  if (w < 8 || h < 8) return { angle: 0, confidence: 0 };
  const n = w * h;
  // Light pre-smoothing (binomial 5-tap ≈ σ 1 px) so aliased staircase edges read as straight lines.
  const data = binomial5(g.data, w, h);
  const jxx = new Float32Array(n);
  const jyy = new Float32Array(n);
  const jxy = new Float32Array(n);
  for (let y = 1; y < h - 1; y++) {
    for (let x = 1; x < w - 1; x++) {
      const i = y * w + x;
      const a = data[i - w - 1];
      const b = data[i - w];
      const c = data[i - w + 1];
      const d = data[i - 1];
      const f = data[i + 1];
      const gg = data[i + w - 1];
      const hh = data[i + w];
      const k = data[i + w + 1];
      const gx = (c + 2 * f + k - a - 2 * d - gg) / 8;
      const gy = (gg + 2 * hh + k - a - 2 * b - c) / 8;
      jxx[i] = gx * gx;
      jyy[i] = gy * gy;
      jxy[i] = gx * gy;
    }
  }
  const sxx = boxBlur(jxx, w, h, TENSOR_R);
  const syy = boxBlur(jyy, w, h, TENSOR_R);
  const sxy = boxBlur(jxy, w, h, TENSOR_R);
  // Energy threshold: strong structure only (relative to the frame, with an absolute floor).
  const energies: number[] = [];
  for (let i = 0; i < n; i += 7) energies.push(sxx[i] + syy[i]);
  energies.sort((p, q) => p - q);
  const eThr = Math.max(4, energies[Math.floor(energies.length * 0.8)] ?? 0);
  // Votes per family: near-horizontal lines (horizon, tops of walls) and near-vertical lines
  // (building edges, poles). Deviation from the family's axis in (−45°, 45°], image coords
  // (y down, + = clockwise on screen).
  const fams = [new Family(), new Family()];
  const B = TENSOR_R + 2;
  for (let y = B; y < h - B; y++) {
    for (let x = B; x < w - B; x++) {
      const i = y * w + x;
      const e = sxx[i] + syy[i];
      if (e < eThr) continue;
      const diff = sxx[i] - syy[i];
      const coh = Math.sqrt(diff * diff + 4 * sxy[i] * sxy[i]) / e;
      if (coh < 0.8) continue;
      // Dominant gradient direction, then the line direction ⟂ to it, in [0, 180).
      const phi = 0.5 * Math.atan2(2 * sxy[i], diff);
      let line = ((phi * 180) / Math.PI + 90) % 180;
      if (line < 0) line += 180;
      const horizontal = line <= 45 || line > 135;
      const dev = horizontal ? (line > 135 ? line - 180 : line) : line - 90;
      fams[horizontal ? 0 : 1].add(dev, Math.sqrt(e) * coh);
    }
  }
  const [hor, ver] = fams.map((f) => f.analyse(n));
  let angleImg: number;
  let confidence: number;
  const a = hor.score >= ver.score ? hor : ver;
  const b = hor.score >= ver.score ? ver : hor;
  if (a.score <= 0) return { angle: 0, confidence: 0 };
  if (b.score > 0.2 && Math.abs(a.angle - b.angle) <= 3) {
    angleImg = (a.angle * a.score + b.angle * b.score) / (a.score + b.score);
    confidence = Math.min(1, a.score + 0.5 * b.score);
  } else {
    angleImg = a.angle;
    // A clear family that disagrees is evidence against (e.g. receding lines of a facade).
    confidence = Math.max(0, a.score - 0.75 * b.score);
  }
  // Image y points down: a positive deviation is a clockwise line; report counter-clockwise +.
  const ccw = (x: number): number => (x === 0 ? 0 : round(-x, 2));
  return {
    angle: ccw(angleImg),
    confidence: round(confidence, 3),
    families: {
      horizontal: { angle: ccw(hor.angle), score: round(hor.score, 3) },
      vertical: { angle: ccw(ver.angle), score: round(ver.score, 3) },
    },
  };
}

/** Orientation votes of one line family. */
class Family {
  static readonly BINS = 180; // 0.5° bins over (−45°, 45°]
  readonly hist = new Float64Array(Family.BINS);
  readonly devs: number[] = [];
  readonly wgts: number[] = [];
  votes = 0;

  add(dev: number, w: number): void {
    const b = Math.min(Family.BINS - 1, Math.max(0, Math.floor((dev + 45) * 2)));
    this.hist[b] += w;
    this.devs.push(dev);
    this.wgts.push(w);
    this.votes += w;
  }

  /** Peak angle (image coords), and score = concentration × coverage, both 0..1. */
  analyse(n: number): { angle: number; score: number; px: number } {
    const BINS = Family.BINS;
    const px = this.devs.length;
    if (this.votes === 0 || px < 0.003 * n) return { angle: 0, score: 0, px };
    const ker = [0.0545, 0.2442, 0.4026, 0.2442, 0.0545];
    let best = -1;
    let bestV = -1;
    for (let i = 10; i < BINS - 10; i++) {
      let v = 0;
      for (let k = -2; k <= 2; k++) v += this.hist[i + k] * ker[k + 2];
      if (v > bestV) {
        bestV = v;
        best = i;
      }
    }
    const centre = (best + 0.5) / 2 - 45;
    let acc = 0;
    let accW = 0;
    for (let i = 0; i < px; i++) {
      const d = this.devs[i] - centre;
      if (Math.abs(d) > 3) continue;
      acc += this.wgts[i] * d;
      accW += this.wgts[i];
    }
    const angle = centre + (accW > 0 ? acc / accW : 0);
    const share = accW / this.votes;
    const uniform = 12 / BINS;
    const concentration = Math.max(0, Math.min(1, (share - uniform) / (0.6 - uniform)));
    const coverage = Math.min(1, px / (0.02 * n));
    return { angle, score: concentration * coverage, px };
  }
}

/** Separable [1 4 6 4 1]/16 smoothing, edges clamped. */
function binomial5(src: Float32Array, w: number, h: number): Float32Array {
  const k = [1 / 16, 4 / 16, 6 / 16, 4 / 16, 1 / 16];
  const tmp = new Float32Array(w * h);
  const out = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    const row = y * w;
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let j = -2; j <= 2; j++) s += src[row + Math.min(w - 1, Math.max(0, x + j))] * k[j + 2];
      tmp[row + x] = s;
    }
  }
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let j = -2; j <= 2; j++) s += tmp[Math.min(h - 1, Math.max(0, y + j)) * w + x] * k[j + 2];
      out[y * w + x] = s;
    }
  }
  return out;
}

/** Horizon of a segment: confidence-weighted median of per-frame estimates. */
export function tagHorizon(input: Frame[] | HorizonEstimate[]): HorizonTag {
  const est: HorizonEstimate[] = input.map((x) => ('angle' in x ? x : estimateHorizon(x as Frame)));
  const good = est.filter((e) => e.confidence > 0).sort((a, b) => a.angle - b.angle);
  if (good.length === 0) return { angle: 0, confidence: 0, dutch: false, dutchScore: 0 };
  const total = good.reduce((s, e) => s + e.confidence, 0);
  let acc = 0;
  let angle = good[0].angle;
  for (const e of good) {
    acc += e.confidence;
    angle = e.angle;
    if (acc >= total / 2) break;
  }
  // Agreement: confidence share of estimates within 3° of the median.
  const agree = good.filter((e) => Math.abs(e.angle - angle) <= 3).reduce((s, e) => s + e.confidence, 0) / total;
  const confidence = round((total / est.length) * agree, 3);
  const dutchScore = round(confidence * sigmoid((Math.abs(angle) - DUTCH_MIN_DEG) / 1.0), 3);
  return { angle, confidence, dutch: Math.abs(angle) >= DUTCH_MIN_DEG && confidence >= 0.4, dutchScore };
}

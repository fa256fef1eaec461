/**
 * Shot size and shooting angle from geometry (pure functions: no model runs here).
 *
 * Input is a {@link FramingEvidence}: what the perception models found on a keyframe (faces with
 * their six BlazeFace keypoints, the main person's MoveNet keypoints, COCO boxes), the horizon
 * estimate of the pixel tagger, and a few pixel cues measured by {@link framingPixelCues} (focus
 * map, sky band, converging verticals). Each cue votes with a likelihood over the classes; votes
 * are pooled log-linearly with per-cue weights and a prior, so a strong cue (a face filling 60 %
 * of the frame) dominates and weak ones (a sky band) only break ties. See docs/tagging.md.
 *
 * Shot size conventions (cinematography; e.g. Mascelli, "The Five C's of Cinematography", 1965;
 * Bowen & Thompson, "Grammar of the Shot", 3rd ed. 2013, ch. 1; StudioBinder's shot-size guide):
 * the frame is named after where its lower edge cuts the main subject's body —
 *   extreme_close_up  part of the face (eyes, mouth): face box taller than ~80 % of the frame
 *   close_up          the face/head fills the frame: face box ≈ 36–80 % of frame height
 *   medium_close_up   head and shoulders, cut at mid-chest: face box ≈ 25–36 %
 *   medium            waist (hips) up: face box ≈ 13–25 %
 *   medium_wide       knees up ("cowboy"/American shot): face box ≈ 9–13 %
 *   wide              whole figure, feet in frame ("full shot"): face box ≈ 2–9 %, figure ≥ ~15 %
 *                     of the frame height
 *   extreme_wide      figure tiny (< ~15 % of frame height, face < 2 %) or absent; the setting is
 *                     the subject
 * The fractions follow from the canon of ~8 heads per body height (Loomis) with the usual headroom
 * and BlazeFace's box at ≈ 0.65 of a head: e.g. a frame cut at the hips holds ~4–5 heads, ~6–7
 * face boxes. The numbers live in {@link FRAMING_WEIGHTS} (framing-weights.ts).
 * Without people: the main subject's share of the frame, whether it is cut by the frame edges,
 * its physical scale (a cup filling the frame is a close-up, a car filling it is a medium shot),
 * shallow depth of field (bokeh ⇒ close), and landscape cues (sky band + horizon ⇒ wide).
 *
 * Angle conventions: eye_level (camera roughly level with the subject, ±~15°), high_angle
 * (camera above, looking down), low_angle (below, looking up), overhead (bird's-eye, straight
 * down: flat lays, table tops), dutch (camera rolled: horizon tilted ≥ 6°, {@link DUTCH_MIN_DEG}).
 */
import { faceCounts, personBoxes } from '../models/perception/people.js';
import type { TagValue } from '../api/types.js';
import type { Frame } from '../media/types.js';
import { checkFrame } from '../media/kernels/index.js';
import { FRAMING_WEIGHTS, type FramingWeights } from './framing-weights.js';
import { DUTCH_MIN_DEG, estimateHorizon, type HorizonEstimate, type HorizonTag } from './pixels.js';

export { FRAMING_WEIGHTS, type FramingWeights } from './framing-weights.js';

export const SHOT_SIZE_LABELS = [
  'extreme_close_up',
  'close_up',
  'medium_close_up',
  'medium',
  'medium_wide',
  'wide',
  'extreme_wide',
] as const;
export type ShotSizeLabel = (typeof SHOT_SIZE_LABELS)[number];

export const SHOOTING_ANGLE_LABELS = ['eye_level', 'high_angle', 'low_angle', 'overhead', 'dutch'] as const;
export type ShootingAngleLabel = (typeof SHOOTING_ANGLE_LABELS)[number];

export interface ShotSizeTag extends TagValue {
  label: ShotSizeLabel;
  scores: Record<ShotSizeLabel, number>;
}
export interface ShootingAngleTag extends TagValue {
  label: ShootingAngleLabel;
  scores: Record<ShootingAngleLabel, number>;
}
export interface FramingTags {
  shot_size: ShotSizeTag;
  shooting_angle: ShootingAngleTag;
}

// ---------------------------------------------------------------------------------------------
// Evidence

/** Axis-aligned box, normalised frame coordinates (x, y top-left; w, h size), as perception's Box. */
export interface FramingBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface FramingFace {
  score: number;
  box: FramingBox;
  /**
   * BlazeFace keypoints, normalised [x, y]: right eye, left eye, nose, mouth, right ear, left ear.
   * Optional: without them the face still gives scale, not angle.
   */
  keypoints?: Array<[number, number]>;
}

export interface FramingKeypoint {
  /** COCO keypoint name (nose, left_eye, …, right_ankle). */
  name: string;
  /** Normalised frame coordinates (may lie outside [0, 1] for parts MoveNet places off-frame). */
  x: number;
  y: number;
  score: number;
}

export interface FramingPose {
  score?: number;
  /** Box of the person the pose belongs to. */
  box?: FramingBox;
  /** Keypoints with coordinates (best). */
  keypoints?: FramingKeypoint[];
  /** Only the names of the visible parts (what SegmentObservation keeps today): cut level, no geometry. */
  parts?: string[];
}

export interface FramingObject {
  label: string;
  score: number;
  box: FramingBox;
}

/** Pixel cues of one frame, from {@link framingPixelCues}. */
export interface FramingPixelCues {
  /** Share of the frame that holds out-of-focus content (smooth but not flat): bokeh. */
  defocus: number;
  /** Share of the frame with fine, in-focus detail. */
  sharp: number;
  /** Share of the frame that is flat (uniform: sky, wall, table). */
  flat: number;
  /** How much the sharpest cells out-detail the median cell (log ratio, 0 = uniform focus). */
  focusSpread: number;
  /** Sky-likeness of the top band of the frame, 0..1. */
  skyTop: number;
  /** Share of the frame that looks like sky. */
  skyShare: number;
  /** Lowest y (0..1) of the sky region connected to the top edge, 0 when there is none. */
  skyLine: number;
  /** Mean absolute difference of top-third vs bottom-third statistics (0 = alike, as in a flat lay). */
  topBottomDiff: number;
  /**
   * Converging verticals, degrees: + = lines converge upwards (camera tilted up), − = downwards.
   * 0 with `keystoneScore` 0 when there are no clear verticals on both sides.
   */
  keystone: number;
  keystoneScore: number;
  /** Mean saturation 0..1 (grayscale footage ≈ 0). */
  saturation: number;
  /**
   * Slope of fine-detail energy across scales: ln(detail at full working size / detail at 1/4
   * size) / 2. Near 0 when fine detail is as strong as coarse structure (many small far things:
   * foliage, streets, crowds), ≈ −1 or below when the picture is made of large smooth shapes.
   */
  detailSlope?: number;
}

export interface FramingEvidence {
  /** Frame size in pixels (aspect ratio matters: boxes are normalised per axis). */
  width: number;
  height: number;
  faces: FramingFace[];
  /** Poses of the main person(s), largest person first. */
  poses?: FramingPose[];
  objects: FramingObject[];
  /** Horizon estimate of the frame ({@link estimateHorizon}) or of the segment ({@link tagHorizon}). */
  horizon?: HorizonEstimate | HorizonTag;
  cues?: FramingPixelCues;
}

// ---------------------------------------------------------------------------------------------
// Pixel cues

const clamp01 = (x: number): number => (x < 0 ? 0 : x > 1 ? 1 : x);
const r4 = (x: number): number => Math.round(x * 1e4) / 1e4;

function percentile(xs: ArrayLike<number>, q: number): number {
  const s = Array.from(xs).sort((a, b) => a - b);
  if (s.length === 0) return 0;
  return s[Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))))];
}

/** Area-averaged RGB planes at a working size with the longest side ≤ `side`. */
function smallRgb(frame: Frame, side: number): { w: number; h: number; r: Float32Array; g: Float32Array; b: Float32Array; l: Float32Array } {
  const { width: W, height: H, data } = frame;
  const s = Math.min(1, side / Math.max(W, H));
  const w = Math.max(8, Math.round(W * s));
  const h = Math.max(8, Math.round(H * s));
  const r = new Float32Array(w * h);
  const g = new Float32Array(w * h);
  const b = new Float32Array(w * h);
  const n = new Float32Array(w * h);
  for (let y = 0; y < H; y++) {
    const oy = Math.min(h - 1, Math.floor((y * h) / H));
    for (let x = 0; x < W; x++) {
      const ox = Math.min(w - 1, Math.floor((x * w) / W));
      const o = oy * w + ox;
      const i = (y * W + x) * 3;
      r[o] += data[i];
      g[o] += data[i + 1];
      b[o] += data[i + 2];
      n[o]++;
    }
  }
  const l = new Float32Array(w * h);
  for (let i = 0; i < w * h; i++) {
    const k = n[i] || 1;
    r[i] /= k;
    g[i] /= k;
    b[i] /= k;
    l[i] = 0.299 * r[i] + 0.587 * g[i] + 0.114 * b[i];
  }
  return { w, h, r, g, b, l };
}

function boxBlur(src: Float32Array, w: number, h: number, rad: number): Float32Array {
  const tmp = new Float32Array(w * h);
  const out = new Float32Array(w * h);
  const norm = 1 / (2 * rad + 1);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let k = -rad; k <= rad; k++) s += src[y * w + Math.min(w - 1, Math.max(0, x + k))];
      tmp[y * w + x] = s * norm;
    }
  }
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let k = -rad; k <= rad; k++) s += tmp[Math.min(h - 1, Math.max(0, y + k)) * w + x];
      out[y * w + x] = s * norm;
    }
  }
  return out;
}

/**
 * Pixel cues for framing, measured on a ≤ 256 px copy of the frame (≈ 10–20 ms): a 16-column
 * grid of cells, each with its fine detail (mean |Laplacian|), its coarse contrast (luma spread
 * after a 7-px blur), brightness and colour. Cells are `sharp` (fine detail near the frame's best),
 * `defocused` (coarse structure without fine detail — bokeh, the signature of a close subject and
 * shallow depth of field) or `flat`. Sky = smooth, bright, bluish or neutral cells connected to
 * the top edge. Converging verticals from the vertical line family of {@link estimateHorizon} run
 * on the left and right 40 % of the frame separately.
 */
export function framingPixelCues(frame: Frame, weights: FramingWeights = FRAMING_WEIGHTS): FramingPixelCues {
  checkFrame(frame);
  const P = weights.pixels;
  const { w, h, r, g, b, l } = smallRgb(frame, P.side);
  const blur = boxBlur(l, w, h, P.blurRadius);
  const lap = new Float32Array(w * h);
  for (let y = 1; y < h - 1; y++) {
    for (let x = 1; x < w - 1; x++) {
      const i = y * w + x;
      lap[i] = Math.abs(4 * l[i] - l[i - 1] - l[i + 1] - l[i - w] - l[i + w]);
    }
  }
  const cols = P.cols;
  const rows = Math.max(P.minRows, Math.round((cols * h) / w));
  const nc = cols * rows;
  const hf = new Float32Array(nc);
  const lf = new Float32Array(nc);
  const lum = new Float32Array(nc);
  const sat = new Float32Array(nc);
  const blu = new Float32Array(nc);
  for (let cy = 0; cy < rows; cy++) {
    const y0 = Math.max(1, Math.floor((cy * h) / rows));
    const y1 = Math.min(h - 1, Math.floor(((cy + 1) * h) / rows));
    for (let cx = 0; cx < cols; cx++) {
      const x0 = Math.max(1, Math.floor((cx * w) / cols));
      const x1 = Math.min(w - 1, Math.floor(((cx + 1) * w) / cols));
      let n = 0;
      let sh = 0;
      let sb = 0;
      let sbb = 0;
      let sl = 0;
      let ss = 0;
      let sblue = 0;
      for (let y = y0; y < y1; y++) {
        for (let x = x0; x < x1; x++) {
          const i = y * w + x;
          n++;
          sh += lap[i];
          sb += blur[i];
          sbb += blur[i] * blur[i];
          sl += l[i];
          const mx = Math.max(r[i], g[i], b[i]);
          const mn = Math.min(r[i], g[i], b[i]);
          ss += mx > 0 ? (mx - mn) / mx : 0;
          sblue += b[i] - r[i];
        }
      }
      const c = cy * cols + cx;
      if (n === 0) continue;
      hf[c] = sh / n;
      lf[c] = Math.sqrt(Math.max(0, sbb / n - (sb / n) ** 2));
      lum[c] = sl / n / 255;
      sat[c] = ss / n;
      blu[c] = sblue / n / 255;
    }
  }
  const hfRef = Math.max(P.hfRefMin, percentile(hf, P.hfRefPercentile));
  const hfMed = percentile(hf, 0.5);
  let sharp = 0;
  let defocus = 0;
  let flat = 0;
  const isSkyCell = new Uint8Array(nc);
  for (let c = 0; c < nc; c++) {
    const fine = hf[c] / hfRef;
    if (fine >= P.sharpRel && hf[c] >= P.sharpAbs) sharp++;
    else if (lf[c] < P.flatLf && hf[c] < Math.max(P.flatHfAbs, P.flatHfRel * hfRef)) flat++;
    else if (fine < P.defocusRel && hf[c] < P.defocusLfSlope * lf[c] + P.defocusLfOffset) defocus++;
    // Sky: smooth, fairly bright, blue or neutral (clouds, haze, dusk glow).
    const smooth = hf[c] < Math.max(P.skyHfAbs, P.skyHfRel * hfRef) && lf[c] < P.skyLf;
    // Blue (even a deep polarised blue), or neutral and bright (clouds, haze), or pale.
    const blue = blu[c] > P.skyBlue && lum[c] > P.skyBlueMinLum;
    const neutral = sat[c] < P.skyNeutralSat && lum[c] > P.skyNeutralLum;
    const pale = lum[c] > P.skyPaleLum && sat[c] < P.skyPaleSat;
    if (smooth && (blue || neutral || pale)) isSkyCell[c] = 1;
  }
  // Sky connected to the top edge (4-neighbour flood fill).
  const sky = new Uint8Array(nc);
  const stack: number[] = [];
  for (let cx = 0; cx < cols; cx++) if (isSkyCell[cx]) {
    sky[cx] = 1;
    stack.push(cx);
  }
  while (stack.length) {
    const c = stack.pop()!;
    const cx = c % cols;
    const cy = (c - cx) / cols;
    const nb = [cy > 0 ? c - cols : -1, cy < rows - 1 ? c + cols : -1, cx > 0 ? c - 1 : -1, cx < cols - 1 ? c + 1 : -1];
    for (const d of nb) if (d >= 0 && isSkyCell[d] && !sky[d]) {
      sky[d] = 1;
      stack.push(d);
    }
  }
  let skyN = 0;
  let skyTopN = 0;
  let depth = 0;
  for (let cx = 0; cx < cols; cx++) {
    if (sky[cx]) skyTopN++;
    let k = 0;
    while (k < rows && sky[k * cols + cx]) k++;
    depth += k / rows;
  }
  for (let c = 0; c < nc; c++) skyN += sky[c];
  // Top vs bottom third.
  const third = Math.max(1, Math.floor(rows / 3));
  const region = (fromRow: number): { l: number; hf: number; s: number; bl: number } => {
    let sl = 0;
    let sh = 0;
    let ss = 0;
    let sb = 0;
    let n = 0;
    for (let cy = fromRow; cy < fromRow + third; cy++) {
      for (let cx = 0; cx < cols; cx++) {
        const c = cy * cols + cx;
        sl += lum[c];
        sh += Math.log1p(hf[c]);
        ss += sat[c];
        sb += blu[c];
        n++;
      }
    }
    return { l: sl / n, hf: sh / n, s: ss / n, bl: sb / n };
  };
  const top = region(0);
  const bot = region(rows - third);
  const topBottomDiff = Math.abs(top.l - bot.l) + P.tbdDetail * Math.abs(top.hf - bot.hf) + Math.abs(top.s - bot.s) + P.tbdBlue * Math.abs(top.bl - bot.bl);
  let satAll = 0;
  for (let c = 0; c < nc; c++) satAll += sat[c] / nc;

  // Detail spectrum: mean |Laplacian| at the working size vs a quarter of it.
  const lapMean = (img: Float32Array, iw: number, ih: number): number => {
    let acc = 0;
    let n = 0;
    for (let y = 1; y < ih - 1; y++) {
      for (let x = 1; x < iw - 1; x++) {
        const i = y * iw + x;
        acc += Math.abs(4 * img[i] - img[i - 1] - img[i + 1] - img[i - iw] - img[i + iw]);
        n++;
      }
    }
    return n ? acc / n : 0;
  };
  let q = { d: l, w, h };
  const energies = [lapMean(l, w, h)];
  for (let lev = 0; lev < 2; lev++) {
    q = halveGray(q.d, q.w, q.h);
    energies.push(lapMean(q.d, q.w, q.h));
  }
  const detailSlope = Math.log((energies[0] + 0.5) / (energies[2] + 0.5)) / 2;

  // Converging verticals: vertical line family on each side.
  const k = keystone(l, w, h);
  return {
    defocus: r4(defocus / nc),
    sharp: r4(sharp / nc),
    flat: r4(flat / nc),
    focusSpread: r4(Math.log((percentile(hf, P.focusPercentile) + 0.5) / (hfMed + 0.5))),
    skyTop: r4(skyTopN / cols),
    skyShare: r4(skyN / nc),
    skyLine: r4(depth / cols),
    topBottomDiff: r4(topBottomDiff),
    keystone: k.angle,
    keystoneScore: k.score,
    saturation: r4(satAll),
    detailSlope: r4(detailSlope),
  };
}

function halveGray(src: Float32Array, w: number, h: number): { d: Float32Array; w: number; h: number } {
  const ow = Math.max(1, w >> 1);
  const oh = Math.max(1, h >> 1);
  const d = new Float32Array(ow * oh);
  for (let y = 0; y < oh; y++) {
    for (let x = 0; x < ow; x++) {
      const i = 2 * y * w + 2 * x;
      const x1 = Math.min(w - 1, 2 * x + 1) - 2 * x;
      const y1 = Math.min(h - 1, 2 * y + 1) - 2 * y;
      d[y * ow + x] = 0.25 * (src[i] + src[i + x1] + src[i + y1 * w] + src[i + y1 * w + x1]);
    }
  }
  return { d, w: ow, h: oh };
}

function keystone(l: Float32Array, w: number, h: number): { angle: number; score: number } {
  const cw = Math.round(0.4 * w);
  if (cw < 16 || h < 16) return { angle: 0, score: 0 };
  const crop = (x0: number): { width: number; height: number; data: Float32Array } => {
    const data = new Float32Array(cw * h);
    for (let y = 0; y < h; y++) for (let x = 0; x < cw; x++) data[y * cw + x] = l[y * w + x0 + x];
    return { width: cw, height: h, data };
  };
  const left = estimateHorizon(crop(0)).families?.vertical;
  const right = estimateHorizon(crop(w - cw)).families?.vertical;
  if (!left || !right || left.score <= 0 || right.score <= 0) return { angle: 0, score: 0 };
  // Angles are + counter-clockwise; lines converging upwards lean right on the left side (−) and
  // left on the right side (+).
  return { angle: Math.round(((right.angle - left.angle) / 2) * 100) / 100, score: r4(Math.min(left.score, right.score)) };
}

// ---------------------------------------------------------------------------------------------
// Pooling helpers

type Vec = number[];
const EPS = 0.02;

const erf = (x: number): number => {
  // Abramowitz–Stegun 7.1.26 (|error| < 1.5e-7).
  const s = Math.sign(x);
  const t = 1 / (1 + 0.3275911 * Math.abs(x));
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return s * y;
};
const Phi = (x: number): number => 0.5 * (1 + erf(x / Math.SQRT2));
const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

function normalise(v: Vec): Vec {
  const s = v.reduce((a, b) => a + b, 0);
  return s > 0 ? v.map((x) => x / s) : v.map(() => 1 / v.length);
}

/** Class probabilities of a log-normal estimate `value` (σ in ln units) over bins split at `bounds`. */
function binned(value: number, sigma: number, bounds: number[]): Vec {
  const mu = Math.log(value);
  const out: Vec = [];
  let prev = 0;
  for (const b of bounds) {
    const c = Phi((Math.log(b) - mu) / sigma);
    out.push(c - prev);
    prev = c;
  }
  out.push(1 - prev);
  return out;
}

/** One cue's vote: a likelihood over the classes and how much it is trusted. */
interface Vote {
  cue: string;
  q: Vec;
  w: number;
  /** The measurement behind the vote (for explanations). */
  value?: number;
}

/** Log-linear pooling: p ∝ prior · Π (q_i + ε)^(w_i). */
function pool(prior: Vec, votes: Vote[]): Vec {
  const logp = prior.map((p) => Math.log(p));
  for (const v of votes) {
    if (!(v.w > 0)) continue;
    const q = normalise(v.q);
    for (let k = 0; k < logp.length; k++) logp[k] += v.w * Math.log(q[k] + EPS);
  }
  const m = Math.max(...logp);
  return normalise(logp.map((x) => Math.exp(x - m)));
}

function toTag<L extends string>(labels: readonly L[], p: Vec, confidence: number, extra: Record<string, unknown>): TagValue & { label: L; scores: Record<L, number> } {
  let best = 0;
  for (let k = 1; k < p.length; k++) if (p[k] > p[best]) best = k;
  const scores = {} as Record<L, number>;
  labels.forEach((l, k) => (scores[l] = r4(p[k])));
  return { label: labels[best], confidence: r4(clamp01(confidence)), scores, ...extra };
}

// ---------------------------------------------------------------------------------------------
// Shot size

/**
 * Frame height in BlazeFace face-box heights at the boundaries between the classes (ECU | CU,
 * CU | MCU, MCU | M, M | MW, MW | W, W | EW): `FRAMING_WEIGHTS.shot.faceBounds`. BlazeFace's box
 * spans roughly brows to chin, ≈ 0.65 of a head; see framing-weights.ts for how the bounds follow
 * from where the frame cuts the body.
 */
export const FACE_SCALE_BOUNDS: readonly number[] = FRAMING_WEIGHTS.shot.faceBounds;

/** Whole-figure height fraction below which a fully visible person makes an extreme wide shot. */
export const EXTREME_WIDE_FIGURE: number = FRAMING_WEIGHTS.shot.extremeWideFigure;

const ANIMALS = new Set(['bird', 'cat', 'dog', 'horse', 'sheep', 'cow', 'elephant', 'bear', 'zebra', 'giraffe']);
/** Hand-held sized things: filling the frame they make a close-up (an "insert"). */
const SMALL_OBJECTS = new Set([
  'bottle', 'wine glass', 'cup', 'fork', 'knife', 'spoon', 'bowl', 'banana', 'apple', 'sandwich', 'orange', 'broccoli',
  'carrot', 'hot dog', 'pizza', 'donut', 'cake', 'mouse', 'remote', 'keyboard', 'cell phone', 'book', 'clock', 'vase',
  'scissors', 'teddy bear', 'hair drier', 'toothbrush', 'sports ball', 'handbag', 'tie', 'backpack', 'frisbee',
  'baseball glove', 'potted plant', 'laptop', 'toaster',
]);
/** Vehicle / furniture sized things: filling the frame they make a medium shot. */
const LARGE_OBJECTS = new Set([
  'bicycle', 'car', 'motorcycle', 'airplane', 'bus', 'train', 'truck', 'boat', 'bench', 'couch', 'bed', 'dining table',
  'refrigerator', 'tv', 'oven', 'toilet', 'chair', 'sink', 'microwave',
]);

const area = (b: FramingBox): number => b.w * b.h;

/** Number of frame edges the box touches (within `margin` of the frame). */
function edgesCut(b: FramingBox, m: number): number {
  return (b.x <= m ? 1 : 0) + (b.y <= m ? 1 : 0) + (b.x + b.w >= 1 - m ? 1 : 0) + (b.y + b.h >= 1 - m ? 1 : 0);
}

const inside = (k: FramingKeypoint): boolean => k.x >= -0.01 && k.x <= 1.01 && k.y >= -0.01 && k.y <= 1.01;

/** Faces a frame's framing should follow: confident, or plausible and inside a detected person. */
function usableFaces(e: FramingEvidence, W: FramingWeights): Array<FramingFace & { human: boolean }> {
  const F = W.shot.faces;
  const persons = personBoxes(e.objects, F.personMin);
  return e.faces
    .filter((f) => f.score >= F.min && f.box.h > 0)
    .map((f) => ({ ...f, human: faceCounts(f, persons, { confident: F.human, inPerson: F.humanInPerson }) }))
    .sort((a, b) => Number(b.human) - Number(a.human) || b.box.h - a.box.h);
}

type CutLevel = keyof FramingWeights['shot']['cutLevel'];

interface PoseSummary {
  level: CutLevel | null;
  /** Mean score of the keypoints that decided the level. */
  quality: number;
  /** Figure height fraction (head top to ankles) when the feet are in frame. */
  figure?: number;
  visible: Set<string>;
  kp: Map<string, FramingKeypoint>;
}

function summarisePose(p: FramingPose, W: FramingWeights): PoseSummary {
  const minScore = W.shot.poseMinScore;
  const visible = new Set<string>();
  const kp = new Map<string, FramingKeypoint>();
  let qs: number[] = [];
  if (p.keypoints?.length) {
    for (const k of p.keypoints) {
      kp.set(k.name, k);
      if (k.score >= minScore && inside(k)) visible.add(k.name);
    }
  } else for (const n of p.parts ?? []) visible.add(n);
  const any = (...ns: string[]): boolean => ns.some((n) => visible.has(n));
  const head = any('nose', 'left_eye', 'right_eye', 'left_ear', 'right_ear');
  let level: PoseSummary['level'] = null;
  if (!head && !any('left_shoulder', 'right_shoulder')) return { level, quality: 0, visible, kp };
  let parts: string[];
  if (any('left_ankle', 'right_ankle') && any('left_knee', 'right_knee')) {
    level = 'feet';
    parts = ['left_ankle', 'right_ankle', 'left_knee', 'right_knee'];
  } else if (any('left_knee', 'right_knee') && any('left_hip', 'right_hip')) {
    level = 'knee';
    parts = ['left_knee', 'right_knee', 'left_hip', 'right_hip'];
  } else if (any('left_hip', 'right_hip')) {
    level = 'hip';
    parts = ['left_hip', 'right_hip', 'left_shoulder', 'right_shoulder'];
  } else if (any('left_elbow', 'right_elbow')) {
    level = 'elbow';
    parts = ['left_elbow', 'right_elbow', 'left_shoulder', 'right_shoulder'];
  } else if (any('left_shoulder', 'right_shoulder')) {
    level = 'shoulder';
    parts = ['left_shoulder', 'right_shoulder', 'nose'];
  } else {
    level = 'head';
    parts = ['nose', 'left_eye', 'right_eye'];
  }
  qs = parts.map((n) => kp.get(n)?.score ?? (visible.has(n) ? 0.6 : 0)).filter((s) => s > 0);
  const quality = qs.length ? qs.reduce((a, b) => a + b, 0) / qs.length : 0.6;
  let figure: number | undefined;
  if (level === 'feet' && kp.size) {
    const ys = ['nose', 'left_eye', 'right_eye'].map((n) => kp.get(n)).filter((k): k is FramingKeypoint => !!k && k.score >= minScore);
    const feet = ['left_ankle', 'right_ankle'].map((n) => kp.get(n)).filter((k): k is FramingKeypoint => !!k && k.score >= minScore);
    if (ys.length && feet.length) {
      const top = Math.min(...ys.map((k) => k.y));
      const bottom = Math.max(...feet.map((k) => k.y));
      // Eyes sit ~1/16 of the figure below the crown; ankles ~1/20 above the soles.
      figure = Math.max(0, (bottom - top) * W.shot.figureFromEyes);
    }
  }
  return { level, quality: clamp01(quality), figure, visible, kp };
}

export interface ShotSizeDetails {
  /** Cues that voted, with their weights (for explanations and debugging). */
  cues: Array<{ cue: string; weight: number; top: ShotSizeLabel; value?: number }>;
  /** Whether a person (face or pose) decided the framing. */
  person: boolean;
}

/** Shot size of one keyframe's evidence. `weights`: the tuned numbers (default {@link FRAMING_WEIGHTS}). */
export function classifyShotSize(e: FramingEvidence, weights: FramingWeights = FRAMING_WEIGHTS): ShotSizeTag & { details: ShotSizeDetails } {
  const S = weights.shot;
  const votes: Vote[] = [];
  const faces = usableFaces(e, weights);
  const human = faces.filter((f) => f.human);
  // Main person: largest confident face; else largest person box.
  const persons = e.objects.filter((o) => o.label === 'person' && o.score >= S.personScore).sort((a, b) => area(b.box) - area(a.box));
  const mainPerson = persons[0];
  const personSubject = human.length > 0 ? human[0].box.h >= S.subjectFaceH : !!mainPerson && area(mainPerson.box) >= S.subjectPersonArea;
  const tiny = (figure: number): number => sigmoid((S.extremeWideFigure - figure) / S.tinyFigureWidth);

  // 1. Face scale.
  if (faces.length) {
    const f = faces[0];
    // A face cut by the frame is larger than its box: push towards closer.
    const cut = edgesCut(f.box, S.edgeMargin) >= 2 ? S.faceCutFactor : 1;
    const w = f.human ? S.faceWeight : S.faceLikeWeight;
    votes.push({ cue: f.human ? 'face' : 'face_like', q: binned((1 / f.box.h) * cut, S.faceSigma, S.faceBounds), w: w * Math.min(1, f.score / S.faceFullScore) });
  }

  // 2. Pose: where the frame cuts the body.
  const pose = e.poses?.[0];
  let ps: PoseSummary | null = null;
  if (pose) {
    ps = summarisePose(pose, weights);
    // A pose counts when its person is the subject, or when the pose itself is convincing.
    if (ps.level && (personSubject || (pose.score ?? ps.quality) >= S.poseMinQuality)) {
      let q = S.cutLevel[ps.level];
      if (ps.level === 'feet' && ps.figure !== undefined) {
        const small = tiny(ps.figure);
        q = q.map((x, k) => (1 - small) * x + small * S.tinyFigure[k]);
      }
      votes.push({ cue: `pose_${ps.level}`, q, w: S.poseWeight * ps.quality });
    }
  }

  // 3. Person box: a figure whose box is inside the frame top and bottom is seen whole.
  if (mainPerson && area(mainPerson.box) >= S.personBox.minArea) {
    const b = mainPerson.box;
    if (b.y > S.personBox.margin && b.y + b.h < 1 - S.personBox.margin) {
      const small = tiny(b.h);
      const q = S.personBox.q.map((x, k) => (1 - small) * x + small * S.tinyFigure[k]);
      votes.push({ cue: 'person_box_whole', q, w: S.personBox.weight * Math.min(1, mainPerson.score / S.personBox.fullScore) });
    }
  }

  // 4. Non-person subject: the most salient animal / object.
  const O = S.subject;
  const things = e.objects
    .filter((o) => o.label !== 'person' && o.score >= O.minScore)
    .map((o) => ({ o, sal: o.score * Math.sqrt(area(o.box)) }))
    .sort((a, b) => b.sal - a.sal);
  const subjectWeight = personSubject ? O.withPerson : 1;
  const main = things[0]?.o;
  if (main) {
    const a = area(main.box);
    const cut = edgesCut(main.box, S.edgeMargin);
    const side = Math.max(main.box.w, main.box.h);
    const conf = Math.min(1, main.score / O.fullScore);
    let q: Vec | null = null;
    let w = 0;
    if (ANIMALS.has(main.label)) {
      if (a >= O.animal.fillArea || cut >= 3) q = O.animal.fill;
      else if (cut === 2) q = O.animal.cut2;
      else if (a >= O.animal.wholeMinArea) q = O.animal.whole;
      else q = O.animal.small;
      w = O.animal.weight;
    } else if (SMALL_OBJECTS.has(main.label)) {
      if (side >= O.small.bigSide) q = O.small.big;
      else if (side >= O.small.midSide) q = O.small.mid;
      w = O.small.weight;
    } else if (LARGE_OBJECTS.has(main.label)) {
      if (a >= O.large.bigArea) q = O.large.big;
      else if (a >= O.large.midArea) q = O.large.mid;
      else q = O.large.small;
      w = O.large.weight;
    }
    if (q) votes.push({ cue: `object_${main.label}`, q, w: w * conf * subjectWeight });
  }

  // 5. Scene cues from the pixels: sky over a different-looking ground ⇒ landscape; the detail
  //    spectrum (fine detail everywhere ⇒ far; coarse structure ⇒ near).
  const c = e.cues;
  const sceneWeight = personSubject ? S.sceneWeight.person : main ? S.sceneWeight.subject : S.sceneWeight.none;
  if (c) {
    const land = c.skyTop * sigmoid((c.topBottomDiff - S.sky.tbdCentre) / S.sky.tbdWidth);
    const emptyScene = !main && !personSubject && faces.length === 0;
    if (land > S.sky.minLand) {
      votes.push({ cue: 'sky_over_ground', q: emptyScene ? S.sky.empty : S.sky.withSubject, w: S.sky.weight * land * sceneWeight });
    }
    if (c.detailSlope !== undefined) {
      const far = sigmoid((c.detailSlope - S.detail.split) / S.detail.width);
      const q = S.detail.far.map((x, k) => far * x + (1 - far) * S.detail.near[k]);
      votes.push({ cue: 'detail_spectrum', q, w: S.detail.weight * sceneWeight, value: far });
    }
  }

  const p = pool(S.prior, votes);
  // Confidence: the posterior's top score, discounted when only weak (scene) cues spoke.
  const C = S.confidence;
  const strong = votes.filter((v) => v.cue === 'face' || v.cue.startsWith('pose_')).reduce((s, v) => s + v.w, 0);
  const subj = votes.filter((v) => v.cue.startsWith('object_') || v.cue === 'face_like').reduce((s, v) => s + v.w, 0);
  const support = clamp01(C.base + C.strong * Math.min(1, strong / C.strongFull) + C.subject * Math.min(1, subj));
  const top = Math.max(...p);
  // `scale`: the pooled posterior is flatter than the measured accuracy.
  const tag = toTag(SHOT_SIZE_LABELS, p, Math.min(C.max, C.scale * top * support), {});
  return {
    ...tag,
    details: {
      cues: votes.map((v) => ({ cue: v.cue, weight: r4(v.w), top: SHOT_SIZE_LABELS[normalise(v.q).indexOf(Math.max(...normalise(v.q)))], value: v.value === undefined ? undefined : r4(v.value) })),
      person: personSubject,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Shooting angle

export interface ShootingAngleDetails {
  cues: Array<{ cue: string; weight: number; top: ShootingAngleLabel; value?: number }>;
  /** Horizon tilt used for the Dutch decision (degrees, + = counter-clockwise). */
  tilt: number;
}

/**
 * Face pitch from BlazeFace keypoints: vertical offset of the ear midpoint below the eye
 * midpoint, in inter-ocular distances. Seen level, the ears sit slightly below the eyes
 * (≈ +0.17 on the eval faces, sd ≈ 0.13); a camera above the face drops the eyes relative to
 * the ears (offset ↓, high angle), a camera below raises them (offset ↑, low angle). Head pitch
 * of the subject is indistinguishable from camera pitch: a weak cue.
 */
export function facePitchOffset(f: FramingFace, width: number, height: number): { offset: number; yaw: number } | null {
  const k = f.keypoints;
  if (!k || k.length < 6) return null;
  const px = (i: number): [number, number] => [k[i][0] * width, k[i][1] * height];
  const [re, le, nose, , rear, lear] = [0, 1, 2, 3, 4, 5].map(px);
  const iod = Math.hypot(le[0] - re[0], le[1] - re[1]);
  if (!(iod > 2)) return null;
  // Undo in-plane roll of the head before measuring.
  const ang = Math.atan2(le[1] - re[1], le[0] - re[0]);
  const rot = (p: [number, number]): [number, number] => {
    const c = Math.cos(-ang);
    const s = Math.sin(-ang);
    return [p[0] * c - p[1] * s, p[0] * s + p[1] * c];
  };
  const [a, b, n, er, el] = [re, le, nose, rear, lear].map(rot);
  const eyeY = (a[1] + b[1]) / 2;
  const earY = (er[1] + el[1]) / 2;
  return { offset: (earY - eyeY) / iod, yaw: (n[0] - (a[0] + b[0]) / 2) / iod };
}

/** Shooting angle of one keyframe's evidence. `weights`: the tuned numbers (default {@link FRAMING_WEIGHTS}). */
export function classifyShootingAngle(e: FramingEvidence, weights: FramingWeights = FRAMING_WEIGHTS): ShootingAngleTag & { details: ShootingAngleDetails } {
  const A = weights.angle;
  const D = A.dutch;
  const votes: Vote[] = [];
  const c = e.cues;
  const hz = e.horizon;
  let tilt = 0;

  // 1. Dutch: the horizon (and verticals) rotated. Both line families agreeing is what a rolled
  //    camera does; one family alone is often perspective (a receding facade, a boardwalk).
  if (hz && hz.confidence > 0) {
    tilt = hz.angle;
    const fam = 'families' in hz ? hz.families : undefined;
    let agreement = D.noFamilies;
    if (fam) {
      // The family that set the angle, and the other one: agreeing (a rolled camera turns both),
      // absent (a sea horizon has no verticals: no objection), or disagreeing (perspective).
      const [main, other] = fam.horizontal.score >= fam.vertical.score ? [fam.horizontal, fam.vertical] : [fam.vertical, fam.horizontal];
      const agrees = Math.abs(main.angle - other.angle) <= D.agreeDeg;
      if (other.score >= D.strongOther) agreement = agrees ? D.strongAgree : D.strongDisagree;
      else if (other.score >= D.weakOther) agreement = agrees ? D.weakAgree : D.weakDisagree;
      else agreement = D.absent;
    }
    const t = Math.abs(hz.angle);
    const pd = sigmoid((t - DUTCH_MIN_DEG) / D.width) * clamp01(hz.confidence / D.fullConfidence) * agreement * (t <= D.maxDeg ? 1 : D.beyondMax);
    if (pd > D.minP) votes.push({ cue: 'horizon_tilt', q: [1, 1, 1, 1, 1 + D.gain * pd], w: 1, value: pd });
    else if (t < D.levelDeg && hz.confidence >= D.levelConfidence) votes.push({ cue: 'horizon_level', q: D.level, w: 1 });
  }
  const levelHorizon = (minConfidence: number, maxDeg: number): boolean => !!hz && hz.confidence >= minConfidence && Math.abs(hz.angle) < maxDeg;

  // 2. Faces: pitch from the keypoints (frontal-ish human faces only).
  const FP = A.facePitch;
  const faces = usableFaces(e, weights).filter((f) => f.human);
  const pitches = faces.map((f) => facePitchOffset(f, e.width, e.height)).filter((x): x is { offset: number; yaw: number } => !!x && Math.abs(x.yaw) < FP.maxYaw);
  if (pitches.length) {
    const off = pitches.map((p) => p.offset).sort((a, b) => a - b)[pitches.length >> 1];
    const ph = sigmoid((FP.high - off) / FP.width);
    const pl = sigmoid((off - FP.low) / FP.width);
    votes.push({ cue: 'face_pitch', q: [FP.q.level - ph - pl, FP.q.floor + FP.q.gain * ph, FP.q.floor + FP.q.gain * pl, FP.q.overhead, FP.q.dutch], w: FP.weight, value: off });
  }
  if (faces.length) votes.push({ cue: 'upright_face', q: A.uprightFace, w: 1 });

  // 3. Full figure: legs vs torso. A camera above foreshortens the far-away legs.
  const pose = e.poses?.[0];
  if (pose?.keypoints?.length) {
    const ps = summarisePose(pose, weights);
    const g = (n: string): [number, number] | null => {
      const k = ps.kp.get(n);
      return k && k.score >= weights.shot.poseMinScore && inside(k) ? [k.x * e.width, k.y * e.height] : null;
    };
    const mid = (a: [number, number] | null, b: [number, number] | null): [number, number] | null =>
      a && b ? [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2] : a ?? b;
    const sh = mid(g('left_shoulder'), g('right_shoulder'));
    const hip = mid(g('left_hip'), g('right_hip'));
    const ank = mid(g('left_ankle'), g('right_ankle'));
    if (sh && hip && ank && ps.level === 'feet') {
      const torso = Math.hypot(hip[0] - sh[0], hip[1] - sh[1]);
      const legs = Math.hypot(ank[0] - hip[0], ank[1] - hip[1]);
      const LT = A.legTorso;
      if (torso > LT.minTorsoPx) {
        const ratio = legs / torso;
        const ph = sigmoid((LT.high - ratio) / LT.width);
        const pl = sigmoid((ratio - LT.low) / LT.width);
        votes.push({ cue: 'leg_torso_ratio', q: [LT.q.level - ph - pl, LT.q.floor + LT.q.gain * ph, LT.q.floor + LT.q.gain * pl, LT.q.overhead, LT.q.dutch], w: LT.weight * ps.quality });
      }
      // A standing figure (shoulders above hips above ankles) is not seen from straight above.
      if (sh[1] < hip[1] && hip[1] < ank[1]) votes.push({ cue: 'standing_figure', q: A.standingFigure, w: 1 });
    }
  }

  if (c) {
    // 4. Mostly sky: the camera points up — unless a confident level horizon is in view (then the
    //    camera is about level and the horizon merely sits low in the frame).
    const SF = A.skyFilled;
    const pl = sigmoid((c.skyShare - SF.centre) / SF.width);
    if (pl > SF.minP && !levelHorizon(SF.levelConfidence, SF.levelDeg)) {
      votes.push({ cue: 'sky_filled', q: [1, SF.high, 1 + SF.gain * pl, SF.overhead, 1], w: SF.weight, value: c.skyShare });
    }
    // 5. Converging verticals (keystone): + = converge upwards (looking up).
    const K = A.keystone;
    const k = Math.abs(c.keystone);
    if (c.keystoneScore >= K.minScore && k >= K.minDeg && k <= K.maxDeg) {
      const pk = Math.min(1, (k - K.degFrom) / K.degFull) * clamp01((c.keystoneScore - K.scoreFrom) / K.scoreFull);
      const q = c.keystone > 0 ? [1, 1 - K.against * pk, 1 + K.towards * pk, 1, 1] : [1, 1 + K.towards * pk, 1 - K.against * pk, 1, 1];
      votes.push({ cue: 'converging_verticals', q, w: K.weight });
    }
    // 6. Flat lay: no horizon, no sky, top and bottom of the frame alike, everything in focus.
    const FL = A.flatLay;
    const noHorizon = 1 - clamp01((hz?.confidence ?? 0) / FL.horizonFull);
    const pOver = noHorizon * (1 - c.skyTop) * sigmoid((FL.tbdCentre - c.topBottomDiff) / FL.tbdWidth) * (1 - clamp01(c.defocus / FL.defocusFull));
    if (pOver > FL.minP && faces.length === 0) votes.push({ cue: 'flat_lay', q: [1, 1 + FL.high * pOver, 1 - FL.low * pOver, 1 + FL.overhead * pOver, 1], w: 1, value: pOver });
  }

  const p = pool(A.prior, votes);
  const C = A.confidence;
  const decisive = votes.filter((v) => v.cue !== 'upright_face' && v.cue !== 'standing_figure').reduce((s, v) => s + v.w, 0);
  const support = clamp01(C.base + C.decisive * Math.min(1, decisive));
  const top = Math.max(...p);
  const tag = toTag(SHOOTING_ANGLE_LABELS, p, Math.min(C.max, C.scale * top * support), {});
  return {
    ...tag,
    details: {
      cues: votes.map((v) => ({ cue: v.cue, weight: r4(v.w), top: SHOOTING_ANGLE_LABELS[normalise(v.q).indexOf(Math.max(...normalise(v.q)))], value: v.value === undefined ? undefined : r4(v.value) })),
      tilt,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Public entry points

/**
 * Shot size and shooting angle of a segment from one or more keyframes' evidence: each keyframe
 * is classified, scores are averaged, the confidence is the mean confidence of the keyframes
 * that agree with the winning label (scaled by their share).
 */
export function tagFraming(evidence: FramingEvidence | FramingEvidence[], weights: FramingWeights = FRAMING_WEIGHTS): FramingTags {
  const list = Array.isArray(evidence) ? evidence : [evidence];
  if (list.length === 0) {
    const uniform = (labels: readonly string[]): Record<string, number> => Object.fromEntries(labels.map((l) => [l, r4(1 / labels.length)]));
    return {
      shot_size: { label: 'medium', confidence: 0, scores: uniform(SHOT_SIZE_LABELS) as Record<ShotSizeLabel, number> },
      shooting_angle: { label: 'eye_level', confidence: 0, scores: uniform(SHOOTING_ANGLE_LABELS) as Record<ShootingAngleLabel, number> },
    };
  }
  if (list.length === 1) {
    // The API's tag shape only: {label, confidence, scores} (the classifiers add `details`).
    const { details: _s, ...s } = classifyShotSize(list[0], weights);
    const { details: _a, ...a } = classifyShootingAngle(list[0], weights);
    return { shot_size: s, shooting_angle: a };
  }
  return {
    shot_size: combine(SHOT_SIZE_LABELS, list.map((e) => classifyShotSize(e, weights))),
    shooting_angle: combine(SHOOTING_ANGLE_LABELS, list.map((e) => classifyShootingAngle(e, weights))),
  };
}

function combine<L extends string>(labels: readonly L[], tags: Array<TagValue & { label: L; scores: Record<L, number> }>): TagValue & { label: L; scores: Record<L, number> } {
  const p = labels.map((l) => tags.reduce((s, t) => s + t.scores[l], 0) / tags.length);
  let best = 0;
  for (let k = 1; k < p.length; k++) if (p[k] > p[best]) best = k;
  const agree = tags.filter((t) => t.label === labels[best]);
  const conf = agree.reduce((s, t) => s + t.confidence, 0) / tags.length;
  return toTag(labels, p, conf, {});
}

// ---------------------------------------------------------------------------------------------
// Adapters

/** What the perception layer records per keyframe (structurally: `KeyframeObservation`). */
export interface KeyframeLike {
  objects: Array<{ label: string; score: number; box: FramingBox }>;
  faces: Array<{ score: number; box: FramingBox; keypoints?: Array<[number, number]> }>;
  poseParts?: string[];
  poseBox?: FramingBox;
  /** Full MoveNet keypoints, when the perception layer keeps them. */
  poseKeypoints?: FramingKeypoint[];
  /** Frame size and framing cues, when the perception layer records them. */
  width?: number;
  height?: number;
  cues?: FramingPixelCues;
}

/**
 * Evidence from a perception keyframe (`SegmentObservation.keyframes[i]` or the embedder's
 * `details.keyframes[i]`). The perception embedder keeps face keypoints, pose keypoints, frame
 * size, horizon and pixel cues on its keyframes; older stored details may lack some, and then shot
 * size falls back on face box heights, the visible-part list and object boxes, and the angle on
 * the horizon only. `extra` supplies what the caller has (frame size, horizon estimate, cues).
 */
export function framingEvidenceFromKeyframe(
  kf: KeyframeLike,
  extra: { width?: number; height?: number; horizon?: HorizonEstimate | HorizonTag; cues?: FramingPixelCues } = {},
): FramingEvidence {
  const poses: FramingPose[] = [];
  if (kf.poseKeypoints?.length || kf.poseParts?.length) {
    poses.push({ box: kf.poseBox, keypoints: kf.poseKeypoints, parts: kf.poseKeypoints?.length ? undefined : kf.poseParts });
  }
  return {
    width: extra.width ?? kf.width ?? 16,
    height: extra.height ?? kf.height ?? 9,
    faces: kf.faces.map((f) => ({ score: f.score, box: f.box, keypoints: f.keypoints })),
    poses,
    objects: kf.objects.map((o) => ({ label: o.label, score: o.score, box: o.box })),
    horizon: extra.horizon,
    cues: extra.cues ?? kf.cues,
  };
}

/** Evidence for a frame from raw detections plus the pixel measurements done here. */
export function framingEvidenceFromFrame(
  frame: Frame,
  det: { faces: FramingFace[]; objects: FramingObject[]; poses?: FramingPose[] },
  horizon?: HorizonEstimate | HorizonTag,
): FramingEvidence {
  return {
    width: frame.width,
    height: frame.height,
    faces: det.faces,
    objects: det.objects,
    poses: det.poses ?? [],
    horizon: horizon ?? estimateHorizon(frame),
    cues: framingPixelCues(frame),
  };
}

/**
 * Camera movement of one segment from the sequence of per-pair global motions (motion.ts).
 *
 * Convention — labels name what the CAMERA does; the image content moves the opposite way:
 *   pan_left   camera turns left        ⇒ content moves RIGHT in frame (PairMotion.dx > 0)
 *   pan_right  camera turns right       ⇒ content moves LEFT          (dx < 0)
 *   tilt_up    camera tilts up          ⇒ content moves DOWN           (dy > 0, y axis points down)
 *   tilt_down  camera tilts down        ⇒ content moves UP             (dy < 0)
 *   zoom_in    focal length grows (or dolly in) ⇒ content grows       (zoom > 0)
 *   zoom_out   content shrinks                                        (zoom < 0)
 *   roll       camera rotates about its optical axis ⇒ content turns the other way
 *   handheld   significant high-frequency, direction-changing shake with no dominant direction
 *   static     none of the above
 * Rates reported (camera-centric, sign = the camera's own motion):
 *   pan    fraction of frame width per second, + = right
 *   tilt   fraction of frame WIDTH per second, + = up
 *   zoom   percent magnification change per second, + = in
 *   roll   degrees per second, + = camera turns clockwise as seen by the operator
 *          (content turns counter-clockwise on screen)
 *   jitter RMS of the camera path's high-frequency part (path minus its ~1 s moving average),
 *          fraction of frame width (an amplitude, not a rate: it does not depend on the fps);
 *          per-pair steps within ±50 % of the steady step count as steady (sampling-time noise)
 *
 * Classifier: each movement's robust magnitude (median over pairs; jitter for handheld) is divided
 * by its decision threshold, so 1 means "exactly at the threshold", and static has magnitude 1.
 * Scores are a softmax of β·ln(magnitude) — p(label) ∝ magnitude^β — so a movement at its threshold
 * ties with static, at 2× the threshold it gets 2^β : 1, etc. Confidence = top score × fit quality
 * (share of trustworthy pairs, inlier ratio, how many pairs) × temporal agreement (share of pairs
 * that individually show the winning movement): every factor lowers confidence exactly where
 * the label is more often wrong — near a threshold, on flat or occluded images, on short segments
 * and on inconsistent motion.
 */
import type { TagValue } from '../api/types.js';
import { clamp01, median, round, round4 } from '../media/kernels/index.js';
import type { PairMotion } from './motion.js';
import { labelsOf } from '../tags/registry.js';

/** Declared in the tag registry (src/tags/registry.ts). */
export const CAMERA_MOVEMENT_LABELS = labelsOf('camera_movement');
export type CameraMovementLabel = (typeof CAMERA_MOVEMENT_LABELS)[number];

export interface CameraRates {
  pan: number;
  tilt: number;
  zoom: number;
  roll: number;
  jitter: number;
}

export interface CameraMovementTag extends TagValue {
  label: CameraMovementLabel;
  confidence: number;
  scores: Record<CameraMovementLabel, number>;
  rates: CameraRates;
  /** Pairs of frames measured, and how many of them could be trusted. */
  pairs: number;
  validPairs: number;
}

export interface CameraMovementThresholds {
  /** Fraction of width per second: ~1/40 of the frame per second. */
  pan: number;
  tilt: number;
  /** ln(scale) per second (≈ fraction per second). */
  zoom: number;
  /** Degrees per second. */
  roll: number;
  /** Fraction of width (RMS high-frequency camera-path amplitude). */
  jitter: number;
}

export const DEFAULT_THRESHOLDS: CameraMovementThresholds = {
  pan: 0.025,
  tilt: 0.025,
  zoom: 0.03,
  roll: 2,
  jitter: 0.004,
};

/** Softmax sharpness: p ∝ (magnitude / threshold)^BETA. */
const BETA = 2.5;
/** Pairs further apart than this (seconds) are not treated as consecutive. */
const MAX_GAP = 2;

/**
 * RMS distance of the camera path from its moving average over ~1 s (fraction of width).
 * `steps` are per-pair camera displacements (fraction of width), `dt` the median pair spacing.
 */
function pathJitter(stepsX: number[], stepsY: number[], dt: number): number {
  const n = stepsX.length + 1;
  if (n < 3) return 0;
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  for (let i = 1; i < n; i++) {
    x[i] = x[i - 1] + stepsX[i - 1];
    y[i] = y[i - 1] + stepsY[i - 1];
  }
  const h = Math.max(1, Math.round(0.5 / Math.max(dt, 1e-3)));
  let acc = 0;
  let cnt = 0;
  const lo = n > 2 * h ? h : 1;
  const hi = n > 2 * h ? n - h : n - 1;
  for (let i = lo; i < hi; i++) {
    // Symmetric window truncated symmetrically at the ends (keeps a linear path exact).
    const r = Math.min(h, i, n - 1 - i);
    let sx = 0;
    let sy = 0;
    for (let k = i - r; k <= i + r; k++) {
      sx += x[k];
      sy += y[k];
    }
    const ex = x[i] - sx / (2 * r + 1);
    const ey = y[i] - sy / (2 * r + 1);
    acc += ex * ex + ey * ey;
    cnt++;
  }
  return cnt ? Math.sqrt(acc / cnt) : 0;
}

/** Classifies a segment's camera movement from its consecutive-pair motions. */
export function classifyCameraMovement(
  motions: PairMotion[],
  thresholds: CameraMovementThresholds = DEFAULT_THRESHOLDS,
): CameraMovementTag {
  const th = thresholds;
  const usable = motions.filter((m) => m.dt > 0 && m.dt <= MAX_GAP);
  const valid = usable.filter((m) => m.valid);
  // Camera-centric per-pair rates.
  const pan = valid.map((m) => -m.dx);
  const tilt = valid.map((m) => m.dy);
  const zoom = valid.map((m) => m.zoom);
  const roll = valid.map((m) => -m.rot);
  const P = median(pan);
  const T = median(tilt);
  const Z = median(zoom);
  const R = median(roll);
  const dtMed = median(usable.map((m) => m.dt));
  // Camera path from all usable pairs; untrusted pairs contribute the segment's median motion.
  // Sampled frames can sit up to ~100 ms off their nominal times (decoders skipping non-reference
  // frames), which makes a steady pan's per-pair steps vary by up to ~40 %: deviations from the
  // steady step smaller than half of it are not shake, so they are shrunk away (soft threshold).
  const steady = (steps: number[], s: number): number[] =>
    steps.map((d) => {
      const e = d - s;
      return s + Math.sign(e) * Math.max(0, Math.abs(e) - 0.5 * Math.abs(s));
    });
  const stepsX = usable.map((m) => (m.valid ? -m.tx : P * m.dt));
  const stepsY = usable.map((m) => (m.valid ? m.ty : T * m.dt));
  const J = pathJitter(steady(stepsX, median(stepsX)), steady(stepsY, median(stepsY)), dtMed);

  const mag: Record<CameraMovementLabel, number> = {
    static: 1,
    pan_left: P < 0 ? -P / th.pan : 0,
    pan_right: P > 0 ? P / th.pan : 0,
    tilt_up: T > 0 ? T / th.tilt : 0,
    tilt_down: T < 0 ? -T / th.tilt : 0,
    zoom_in: Z > 0 ? Z / th.zoom : 0,
    zoom_out: Z < 0 ? -Z / th.zoom : 0,
    roll: Math.abs(R) / th.roll,
    handheld: J / th.jitter,
  };
  let total = 0;
  const raw = {} as Record<CameraMovementLabel, number>;
  for (const l of CAMERA_MOVEMENT_LABELS) {
    raw[l] = Math.pow(Math.min(mag[l], 1e3), BETA);
    total += raw[l];
  }
  const scores = {} as Record<CameraMovementLabel, number>;
  let label: CameraMovementLabel = 'static';
  for (const l of CAMERA_MOVEMENT_LABELS) {
    scores[l] = raw[l] / total;
    if (scores[l] > scores[label]) label = l;
  }

  // Fit quality: share of trustworthy pairs, their inlier ratio, and how many there are.
  const validShare = usable.length ? valid.length / usable.length : 0;
  const inl = valid.length ? valid.reduce((s, m) => s + m.inlierRatio, 0) / valid.length : 0;
  const inlierFactor = clamp01((inl - 0.3) / 0.4);
  const countFactor = 1 - Math.exp(-valid.length / 2);
  const quality = validShare * inlierFactor * countFactor;

  // Temporal agreement: share of pairs that on their own show the winning movement.
  const agree = (pred: (i: number) => boolean): number => {
    if (valid.length === 0) return 0;
    let k = 0;
    for (let i = 0; i < valid.length; i++) if (pred(i)) k++;
    return k / valid.length;
  };
  let agreement: number;
  switch (label) {
    case 'pan_left':
      agreement = agree((i) => -pan[i] >= 0.5 * th.pan);
      break;
    case 'pan_right':
      agreement = agree((i) => pan[i] >= 0.5 * th.pan);
      break;
    case 'tilt_up':
      agreement = agree((i) => tilt[i] >= 0.5 * th.tilt);
      break;
    case 'tilt_down':
      agreement = agree((i) => -tilt[i] >= 0.5 * th.tilt);
      break;
    case 'zoom_in':
      agreement = agree((i) => zoom[i] >= 0.5 * th.zoom);
      break;
    case 'zoom_out':
      agreement = agree((i) => -zoom[i] >= 0.5 * th.zoom);
      break;
    case 'roll':
      agreement = agree((i) => Math.sign(roll[i]) === Math.sign(R) && Math.abs(roll[i]) >= 0.5 * th.roll);
      break;
    case 'handheld': {
      // Pairs whose displacement departs from the segment's steady motion by a shake-sized step.
      const sx = median(valid.map((m) => -m.tx));
      const sy = median(valid.map((m) => m.ty));
      agreement = agree((i) => Math.hypot(-valid[i].tx - sx, valid[i].ty - sy) >= th.jitter);
      break;
    }
    default: {
      agreement = agree(
        (i) =>
          Math.abs(pan[i]) < 1.5 * th.pan &&
          Math.abs(tilt[i]) < 1.5 * th.tilt &&
          Math.abs(zoom[i]) < 1.5 * th.zoom &&
          Math.abs(roll[i]) < 1.5 * th.roll,
      );
      // Sub-threshold but consistent drift (every pair moving the same way) or shake is evidence
      // of a slow movement: static is then less certain than the magnitudes alone suggest.
      const signConsistency = (xs: number[]): number => (xs.length ? Math.abs(xs.reduce((s, x) => s + Math.sign(x), 0)) / xs.length : 0);
      const drift = Math.max(
        (Math.abs(P) / th.pan) * signConsistency(pan),
        (Math.abs(T) / th.tilt) * signConsistency(tilt),
        (Math.abs(Z) / th.zoom) * signConsistency(zoom),
        (Math.abs(R) / th.roll) * signConsistency(roll),
        J / th.jitter,
      );
      agreement *= 1 - 0.6 * Math.min(1, drift);
    }
  }
  const confidence = clamp01(scores[label] * quality * (0.5 + 0.5 * agreement));

  const roundedScores = {} as Record<CameraMovementLabel, number>;
  for (const l of CAMERA_MOVEMENT_LABELS) roundedScores[l] = round4(scores[l]);
  return {
    label,
    confidence: round4(confidence),
    scores: roundedScores,
    rates: {
      pan: round4(P),
      tilt: round4(T),
      zoom: round(100 * (Math.exp(Z) - 1), 3),
      roll: round(R, 3),
      jitter: round(J, 5),
    },
    pairs: usable.length,
    validPairs: valid.length,
  };
}

/**
 * Pixel taggers (pure TypeScript, no ML): camera movement, shot boundaries, lighting and horizon
 * tilt, all measured from decoded frames.
 *
 * Feed: frames of the video sampled at {@link PIXEL_TAGGING_SAMPLING} (4 fps, longest side 256),
 * in time order — the same frames the embedder samples can be shared, so tagging needs no extra
 * decode. Motion runs on a 192-px luma pyramid, histograms on the frame as given; more pixels do
 * not help; under ~160 px wide or ~3 fps, slow motion, shake and cut timing suffer (cuts are
 * placed to ±half the sampling interval).
 * Cost (measured on the 2-core dev box under load): ≈ 4–5 ms CPU per frame for motion, ≈ 0.5 ms for
 * histograms, ≈ 12 ms per horizon estimate (one per second) — ≈ 8 ms per frame all in, ≈ 2 s of
 * CPU for a 60 s video at 4 fps. Decoding the video costs far more than the taggers.
 *
 * Two ways to drive it:
 *  - one-shot helpers on an array of frames of ONE segment: {@link tagMotion}, {@link tagLighting},
 *    {@link tagHorizon}, and {@link detectShots} over a whole video;
 *  - streaming: `const t = new PixelTagger(); for await (const f of sampleFrames(...)) t.push(f);
 *    const tags = t.finish({ duration, segments })` — keeps only the previous frame's pyramid and
 *    small per-frame summaries, finds the shots, and tags each shot (or each given segment).
 */
import { round4 } from '../media/kernels/index.js';
import type { Frame } from '../media/types.js';
import { aggregateOverTime } from '../tags/aggregate.js';
import {
  CAMERA_MOVEMENT_LABELS,
  classifyCameraMovement,
  type CameraMovementLabel,
  type CameraMovementTag,
} from './camera-movement.js';
import { estimateMotions, estimatePairMotion, prepareMotionFrame, type MotionFrame, type PairMotion } from './motion.js';
import { estimateHorizon, lumaHistogram, tagHorizon, tagLighting, type HorizonEstimate, type HorizonTag, type LightingTag } from './pixels.js';
import { detectShots, shotFeatures, WINDOW_S, type Cut, type Shot, type ShotDetection, type ShotFeatures, type ShotOptions } from './shots.js';

export { CAMERA_MOVEMENT_LABELS, classifyCameraMovement, DEFAULT_THRESHOLDS } from './camera-movement.js';
export type { CameraMovementLabel, CameraMovementTag, CameraRates, CameraMovementThresholds } from './camera-movement.js';
export { estimateMotions, estimatePairMotion, prepareMotionFrame, MOTION_WORK_SIDE } from './motion.js';
export type { PairMotion, MotionFrame } from './motion.js';
export { detectShots, shotFeatures, featureDistance } from './shots.js';
export type { Cut, Shot, ShotDetection, ShotFeatures, ShotOptions } from './shots.js';
export { tagLighting, lumaHistogram, estimateHorizon, tagHorizon, LIGHTING_LABELS, DUTCH_MIN_DEG } from './pixels.js';
export type { LightingLabel, LightingTag, LightingStats, HorizonEstimate, HorizonTag } from './pixels.js';

/** Seconds of frames on each side that the cut detector's adaptive threshold looks at. */
export const CUT_CONTEXT_S = WINDOW_S;

/**
 * Bump when the pixel taggers' segments (cuts) or tags for the same frames can change: a new
 * version re-runs the picture lane of every video (src/capabilities).
 */
export const PIXEL_TAGGING_VERSION = 'pixels-1';

/** The sampling the engine should feed these taggers. */
export const PIXEL_TAGGING_SAMPLING = { fps: 4, maxSide: 256 } as const;

/** Camera movement of one segment (frames of one shot, time-ordered, ≥ 2 for any evidence). */
export function tagMotion(frames: Frame[]): CameraMovementTag {
  return classifyCameraMovement(estimateMotions(sortByTime(frames)));
}

export interface PixelSegmentTags {
  start: number;
  end: number;
  camera_movement: CameraMovementTag;
  lighting: LightingTag;
  horizon: HorizonTag;
}

export interface PixelTags {
  /** Whole-video aggregates (duration-weighted over the segments). */
  camera_movement: CameraMovementTag;
  lighting: LightingTag;
  horizon: HorizonTag;
  shots: Shot[];
  cuts: Cut[];
  /** One entry per shot, or per requested segment. */
  segments: PixelSegmentTags[];
  frames: number;
  /** CPU milliseconds spent in push() and finish(). */
  cpuMs: number;
}

export interface PixelTaggerOptions {
  /** Seconds between horizon estimates (default 1). */
  horizonInterval?: number;
}

export interface FinishOptions extends Pick<ShotOptions, 'minShot'> {
  /** Start of the first shot (s), default 0. */
  start?: number;
  /** Video duration (s): end of the last shot. */
  duration?: number;
  /**
   * Segments to tag (e.g. the engine's embedding segments). Default: the detected shots. Frame
   * pairs that straddle a detected cut never count towards a segment's camera movement.
   */
  segments?: Array<{ start: number; end: number }>;
}

/** Streaming tagger: push frames in time order, then finish(). */
export class PixelTagger {
  private prev: MotionFrame | null = null;
  private motions: PairMotion[] = [];
  private feats: ShotFeatures[] = [];
  private lumas: Float64Array[] = [];
  private horizons: Array<HorizonEstimate & { t: number }> = [];
  private lastHorizonT = -Infinity;
  private cpu = 0;
  private readonly horizonInterval: number;

  constructor(opts: PixelTaggerOptions = {}) {
    this.horizonInterval = opts.horizonInterval ?? 1;
  }

  get frameCount(): number {
    return this.feats.length;
  }

  push(frame: Frame): void {
    const t0 = performance.now();
    const last = this.feats[this.feats.length - 1];
    if (last && !(frame.t > last.t)) throw new RangeError(`frames must be in increasing time order (${frame.t} after ${last.t})`);
    const mf = prepareMotionFrame(frame);
    if (this.prev) this.motions.push(estimatePairMotion(this.prev, mf, this.motions[this.motions.length - 1]));
    this.prev = mf;
    this.feats.push(shotFeatures(frame));
    this.lumas.push(lumaHistogram(frame));
    if (frame.t - this.lastHorizonT >= this.horizonInterval - 1e-6) {
      this.horizons.push({ t: frame.t, ...estimateHorizon(frame) });
      this.lastHorizonT = frame.t;
    }
    this.cpu += performance.now() - t0;
  }

  /**
   * Hard cuts strictly inside (from, to), judged on the frames around that range. A cut's verdict
   * needs the ±1.5 s around it, so call this once frames up to `to + CUT_CONTEXT_S` are pushed.
   */
  cutsIn(from: number, to: number): Cut[] {
    const lo = from - CUT_CONTEXT_S;
    const hi = to + CUT_CONTEXT_S;
    const feats = this.feats.filter((f) => f.t >= lo && f.t <= hi);
    if (feats.length < 2) return [];
    return detectShots(feats, { minShot: 0 }).cuts.filter((c) => c.t > from && c.t < to);
  }

  /** Pixel tags of one time range (a segment the engine has cut), from what was pushed so far. */
  tagRange(start: number, end: number): PixelSegmentTags {
    const t0 = performance.now();
    const inSeg = (t: number): boolean => t >= start && t < end;
    const cuts = this.cutsIn(start, end).map((c) => c.t);
    const pairs = this.motions.filter((m) => inSeg(m.t0) && inSeg(m.t1) && !cuts.some((c) => c > m.t0 && c < m.t1));
    const lumas = this.lumas.filter((_, i) => inSeg(this.feats[i].t));
    let hz = this.horizons.filter((h) => inSeg(h.t));
    if (hz.length === 0 && this.horizons.length) {
      const mid = 0.5 * (start + end);
      hz = [this.horizons.reduce((a, b) => (Math.abs(b.t - mid) < Math.abs(a.t - mid) ? b : a))];
    }
    const out = {
      start,
      end,
      camera_movement: classifyCameraMovement(pairs),
      lighting: tagLighting(lumas.length ? lumas : this.lumas),
      horizon: tagHorizon(hz),
    };
    this.cpu += performance.now() - t0;
    return out;
  }

  finish(opts: FinishOptions = {}): PixelTags {
    const t0 = performance.now();
    const feats = this.feats;
    const det: ShotDetection = detectShots(feats, { start: opts.start ?? 0, end: opts.duration, minShot: opts.minShot });
    const cutTimes = det.cuts.map((c) => c.t);
    const ranges = opts.segments?.length ? opts.segments : det.shots;
    const segments: PixelSegmentTags[] = ranges.map(({ start, end }) => {
      const inSeg = (t: number): boolean => t >= start && t < end;
      const pairs = this.motions.filter((m) => inSeg(m.t0) && inSeg(m.t1) && !cutTimes.some((c) => c > m.t0 && c < m.t1));
      const lumas = this.lumas.filter((_, i) => inSeg(feats[i].t));
      let hz = this.horizons.filter((h) => inSeg(h.t));
      if (hz.length === 0 && this.horizons.length) {
        const mid = 0.5 * (start + end);
        hz = [this.horizons.reduce((a, b) => (Math.abs(b.t - mid) < Math.abs(a.t - mid) ? b : a))];
      }
      return {
        start,
        end,
        camera_movement: classifyCameraMovement(pairs),
        lighting: tagLighting(lumas.length ? lumas : this.lumas),
        horizon: tagHorizon(hz),
      };
    });
    const out: PixelTags = {
      camera_movement: aggregateCameraMovement(segments),
      lighting: tagLighting(this.lumas),
      horizon: tagHorizon(this.horizons),
      shots: det.shots,
      cuts: det.cuts,
      segments,
      frames: feats.length,
      cpuMs: 0,
    };
    this.cpu += performance.now() - t0;
    out.cpuMs = Math.round(this.cpu);
    return out;
  }
}

/** All pixel tags of a whole video's sampled frames (see {@link PixelTagger}). */
export function tagFrames(frames: Frame[], opts: FinishOptions & PixelTaggerOptions = {}): PixelTags {
  const t = new PixelTagger(opts);
  for (const f of sortByTime(frames)) t.push(f);
  return t.finish(opts);
}

/**
 * Whole-video camera movement from per-segment tags: label, confidence and scores by the one
 * aggregation rule (src/tags/aggregate.ts, duration-weighted), plus the duration-weighted rates and
 * the summed pair counts.
 */
export function aggregateCameraMovement(segments: Array<{ start: number; end: number; camera_movement: CameraMovementTag }>): CameraMovementTag {
  const total = segments.reduce((s, x) => s + Math.max(0, x.end - x.start), 0);
  if (segments.length === 0 || total <= 0) return classifyCameraMovement([]);
  if (segments.length === 1) return segments[0].camera_movement;
  const agg = aggregateOverTime(segments.map((s) => ({ start: s.start, end: s.end, tag: s.camera_movement })), CAMERA_MOVEMENT_LABELS)!;
  const rates = { pan: 0, tilt: 0, zoom: 0, roll: 0, jitter: 0 };
  let pairs = 0;
  let validPairs = 0;
  for (const s of segments) {
    const w = Math.max(0, s.end - s.start) / total;
    for (const k of Object.keys(rates) as Array<keyof typeof rates>) rates[k] += w * s.camera_movement.rates[k];
    pairs += s.camera_movement.pairs;
    validPairs += s.camera_movement.validPairs;
  }
  for (const k of Object.keys(rates) as Array<keyof typeof rates>) rates[k] = round4(rates[k]);
  return { label: agg.label as CameraMovementLabel, confidence: agg.confidence, scores: agg.scores as Record<CameraMovementLabel, number>, rates, pairs, validPairs };
}

/** Frames in strictly increasing time order (sorted; later duplicates of a timestamp dropped). */
function sortByTime(frames: Frame[]): Frame[] {
  let ordered = true;
  for (let i = 1; i < frames.length && ordered; i++) if (!(frames[i].t > frames[i - 1].t)) ordered = false;
  if (ordered) return frames;
  return [...frames].sort((a, b) => a.t - b.t).filter((f, i, arr) => i === 0 || f.t > arr[i - 1].t);
}

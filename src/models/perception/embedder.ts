/**
 * Tier 1 embedder (`perception-use-v1`): a segment's vector is the Universal Sentence Encoder
 * embedding of an English description of what the perception models saw in it; a query's vector
 * is USE on the query. Both live in USE's 512-d space.
 *
 * Cost control (2-core target, ≥5x real time at 4 s segments / 1 fps): colour statistics run on
 * every frame (a few ms); the object detector (~270 ms on wasm) runs on the middle frame, plus on
 * a second frame only when the picture changes a lot inside the segment, and is skipped when the
 * keyframe is nearly identical to the previous segment's (static shots); faces (~22 ms) run on
 * every analysed keyframe, pose only on the main person.
 *
 * Shot size and shooting angle come from the analysed keyframes' geometry (`tagFraming`: face
 * boxes and keypoints, pose keypoints, object boxes, plus the keyframe's horizon estimate and
 * framing pixel cues, ~30 ms a keyframe); a reused keyframe brings its evidence along.
 */
import type { Frame } from '../../media/types.js';
import { framingEvidenceFromKeyframe, framingPixelCues, tagFraming, type FramingEvidence } from '../../tagging/framing.js';
import { estimateHorizon } from '../../tagging/pixels.js';
import type { Embedder, SegmentContext, SegmentEmbedding, TextEmbedding } from '../embedder.js';
import { SerialQueue } from '../tfjs.js';
import { UseTextEncoder, getUseTextEncoder, l2normalize } from '../use/text-encoder.js';
import { boxColour, colourStats, meanStats, thumbDiff, type ColourStats } from './colour.js';
import { describeSegment, type Description, type KeyframeObservation, type SegmentObservation } from './describe.js';
import { ObjectDetector } from './detector.js';
import { FaceDetector } from './faces.js';
import { PoseEstimator, visibleParts } from './pose.js';

import { PERCEPTION_EMBEDDER_ID } from './id.js';
export { PERCEPTION_EMBEDDER_ID };

export interface PerceptionOptions {
  /** Thumbnail difference above which a second keyframe is analysed. */
  secondKeyframeDiff?: number;
  /** Thumbnail difference below which the previous segment's keyframe analysis is reused. */
  reuseDiff?: number;
  /** Longest side of the frames wanted from the decoder. */
  frameMaxSide?: number;
  /** Square input side of the object detector (multiple of 32; 416 default, 512 = native). */
  detectorInput?: number;
}

export interface ModelTiming {
  calls: number;
  ms: number;
}

/** `framing`: the keyframe's horizon estimate and framing pixel cues (shot size / angle evidence). */
export type TimingKey = 'colour' | 'detector' | 'faces' | 'pose' | 'framing' | 'text' | 'segment';

/** BlazeFace threshold: what the framing tagger was evaluated with (faces 0.5–0.75 outside a
 * person count as weak "face-like" evidence there); describe keeps < 0.85 only inside a person. */
const FACE_MIN_SCORE = 0.5;
/** Smallest person box (share of the frame) that gets a pose. */
const POSE_MIN_AREA = 0.01;

const r3 = (x: number): number => Math.round(x * 1000) / 1000;

/** Framing evidence of an analysed keyframe (what `tagFraming` reads). */
export function keyframeFramingEvidence(kf: KeyframeObservation): FramingEvidence {
  const ev = framingEvidenceFromKeyframe(kf, { horizon: kf.horizon });
  if (ev.poses?.[0] && kf.poseScore !== undefined) ev.poses[0].score = kf.poseScore;
  return ev;
}

export interface SegmentAnalysis {
  observation: SegmentObservation;
  description: Description;
}

export class PerceptionEmbedder implements Embedder {
  readonly id = PERCEPTION_EMBEDDER_ID;
  readonly dim = 512;
  readonly frameMaxSide: number;

  private readonly text: UseTextEncoder;
  private readonly detector: ObjectDetector;
  private readonly faces = new FaceDetector();
  private readonly pose = new PoseEstimator();
  private loading: Promise<void> | null = null;
  private readonly secondKeyframeDiff: number;
  private readonly reuseDiff: number;
  private last: { stats: ColourStats; kf: KeyframeObservation; width: number; height: number } | null = null;
  private readonly timings: Record<TimingKey, ModelTiming> = PerceptionEmbedder.emptyTimings();
  private reused = 0;
  /** Perception runs one segment at a time (single wasm thread; keeps `last` consistent). */
  private readonly queue = new SerialQueue();

  constructor(opts: PerceptionOptions = {}, text: UseTextEncoder = getUseTextEncoder()) {
    this.frameMaxSide = opts.frameMaxSide ?? 512;
    this.secondKeyframeDiff = opts.secondKeyframeDiff ?? 0.15;
    this.reuseDiff = opts.reuseDiff ?? 0.02;
    this.text = text;
    this.detector = new ObjectDetector(opts.detectorInput);
  }

  private static emptyTimings(): Record<TimingKey, ModelTiming> {
    return {
      colour: { calls: 0, ms: 0 },
      detector: { calls: 0, ms: 0 },
      faces: { calls: 0, ms: 0 },
      pose: { calls: 0, ms: 0 },
      framing: { calls: 0, ms: 0 },
      text: { calls: 0, ms: 0 },
      segment: { calls: 0, ms: 0 },
    };
  }

  load(): Promise<void> {
    if (!this.loading) {
      this.loading = Promise.all([this.text.load(), this.detector.load(), this.faces.load(), this.pose.load()]).then(() => undefined);
      this.loading.catch(() => {
        this.loading = null;
      });
    }
    return this.loading;
  }

  /** Cumulative wall-clock time per model since construction / the last reset. */
  getTimings(): Record<TimingKey, ModelTiming> & { reusedKeyframes: number } {
    const copy = JSON.parse(JSON.stringify(this.timings)) as Record<TimingKey, ModelTiming>;
    return { ...copy, reusedKeyframes: this.reused };
  }

  resetTimings(): void {
    Object.assign(this.timings, PerceptionEmbedder.emptyTimings());
    this.reused = 0;
  }

  private async timed<T>(key: TimingKey, f: () => Promise<T> | T): Promise<T> {
    const t0 = performance.now();
    try {
      return await f();
    } finally {
      this.timings[key].calls++;
      this.timings[key].ms += performance.now() - t0;
    }
  }

  async embedText(text: string): Promise<TextEmbedding> {
    if (!text || !text.trim()) throw new Error('embedText: text is empty');
    await this.load();
    const [e] = await this.timed('text', () => this.text.embedDetailed([text]));
    return { vector: e.vector, truncated: e.truncated };
  }

  async embedSegment(frames: Frame[], ctx: SegmentContext): Promise<SegmentEmbedding> {
    const t0 = performance.now();
    const { observation, description } = await this.analyseSegment(frames, ctx);
    const vector = await this.embedDescription(description);
    this.timings.segment.calls++;
    this.timings.segment.ms += performance.now() - t0;
    const framing = observation.framing ?? tagFraming(observation.keyframes.map(keyframeFramingEvidence));
    return {
      vector,
      description: description.text,
      details: {
        ...description.facts,
        // Shaped like KeyframeObservation (framingEvidenceFromKeyframe reads it back).
        keyframes: observation.keyframes.map((k) => ({
          t: k.t,
          width: k.width,
          height: k.height,
          objects: k.objects.filter((o) => o.score >= 0.3),
          faces: k.faces,
          poseParts: k.poseParts,
          poseBox: k.poseBox,
          poseScore: k.poseScore,
          poseKeypoints: k.poseKeypoints,
          horizon: k.horizon,
          cues: k.cues,
        })),
        frames: observation.frameCount,
        change: r3(observation.change),
      },
      tags: { shot_size: framing.shot_size, shooting_angle: framing.shooting_angle },
    };
  }

  /** Weighted mean of the parts' USE embeddings, L2-normalised. */
  async embedDescription(description: Description): Promise<Float32Array> {
    const parts = description.parts.length ? description.parts : [{ kind: 'subject' as const, text: 'an empty scene', weight: 1 }];
    const vecs = await this.timed('text', () => this.text.embed(parts.map((p) => p.text)));
    const out = new Float32Array(this.dim);
    parts.forEach((p, i) => {
      const v = vecs[i];
      for (let d = 0; d < out.length; d++) out[d] += p.weight * v[d];
    });
    return l2normalize(out);
  }

  /** Runs perception on a segment's frames and describes it (no text embedding). */
  async analyseSegment(frames: Frame[], ctx: SegmentContext): Promise<SegmentAnalysis> {
    if (frames.length === 0) throw new Error('embedSegment: no frames');
    await this.load();
    return this.queue.run(() => this.analyseLocked(frames, ctx));
  }

  private async analyseLocked(frames: Frame[], ctx: SegmentContext): Promise<SegmentAnalysis> {
    const stats = await this.timed('colour', () => frames.map((f) => colourStats(f)));
    let change = 0;
    for (let i = 1; i < stats.length; i++) change += thumbDiff(stats[i - 1], stats[i]) / (stats.length - 1);

    const mainIdx = frames.length >> 1;
    const keyframes: KeyframeObservation[] = [];
    const main = frames[mainIdx];
    const last = this.last;
    if (last && last.width === main.width && last.height === main.height && thumbDiff(last.stats, stats[mainIdx]) < this.reuseDiff) {
      keyframes.push({ ...last.kf, t: main.t });
      this.reused++;
    } else {
      keyframes.push(await this.analyseKeyframe(main));
    }
    this.last = { stats: stats[mainIdx], kf: keyframes[0], width: main.width, height: main.height };

    // A second keyframe where the picture differs most from the main one (cut, big movement).
    let farIdx = -1;
    let farDiff = 0;
    stats.forEach((s, i) => {
      const d = i === mainIdx ? 0 : thumbDiff(s, stats[mainIdx]);
      if (d > farDiff) {
        farDiff = d;
        farIdx = i;
      }
    });
    if (farIdx >= 0 && farDiff >= this.secondKeyframeDiff) keyframes.push(await this.analyseKeyframe(frames[farIdx]));

    const observation: SegmentObservation = {
      start: ctx.start,
      end: ctx.end,
      frameCount: frames.length,
      colour: meanStats(stats),
      keyframes,
      change,
      tags: ctx.tags,
      framing: tagFraming(keyframes.map(keyframeFramingEvidence)),
    };
    return { observation, description: describeSegment(observation) };
  }

  private async analyseKeyframe(frame: Frame): Promise<KeyframeObservation> {
    const dets = await this.timed('detector', () => this.detector.detect(frame));
    const objects = dets.map((d) => ({
      ...d,
      // A person's colour is their clothing: the torso part of the box.
      colour: boxColour(frame, d.label === 'person' ? { x: d.box.x + d.box.w * 0.1, y: d.box.y + d.box.h * 0.3, w: d.box.w * 0.8, h: d.box.h * 0.5 } : d.box),
    }));
    const kf: KeyframeObservation = { t: frame.t, width: frame.width, height: frame.height, objects, faces: [] };
    // Faces on every keyframe: a face filling the frame often has no person box, and shot size
    // follows the face. Weak faces are kept as evidence; describe and tagFraming filter them.
    const faces = await this.timed('faces', () => this.faces.detect(frame, FACE_MIN_SCORE));
    kf.faces = faces.map((f) => ({ score: f.score, box: f.box, keypoints: f.keypoints }));
    const mainPerson = objects
      .filter((p) => p.label === 'person' && p.score >= 0.4 && p.box.w * p.box.h >= POSE_MIN_AREA)
      .sort((a, b) => b.box.w * b.box.h - a.box.w * a.box.h)[0];
    if (mainPerson) {
      const pose = await this.timed('pose', () => this.pose.estimate(frame, mainPerson.box));
      kf.poseParts = [...visibleParts(pose, 0.4)];
      kf.poseBox = mainPerson.box;
      kf.poseKeypoints = pose.keypoints;
      kf.poseScore = pose.score;
    }
    await this.timed('framing', () => {
      kf.horizon = estimateHorizon(frame);
      kf.cues = framingPixelCues(frame);
    });
    return kf;
  }

  async dispose(): Promise<void> {
    this.last = null;
    this.loading = null;
    await Promise.all([this.detector.dispose(), this.faces.dispose(), this.pose.dispose()]);
  }
}

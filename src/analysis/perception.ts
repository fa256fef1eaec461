/**
 * The perception analyzer: what the frame models see in a segment — COCO objects (detector),
 * faces (BlazeFace), the main person's pose (MoveNet), colour and light statistics — plus shot
 * size and shooting angle from that geometry (`tagFraming`), and a structured English account of
 * it all (`describeSegment`). It runs for every collection, whatever its embedder, so every
 * collection gets every tag.
 *
 * Cost control (2-core target): colour statistics on every frame (a few ms); the detector
 * (~270 ms on wasm) on the middle frame, plus a second frame only when the picture changes a lot
 * inside the segment; faces on every analysed keyframe; pose only on the main person. When the
 * pipeline says the middle frame is nearly identical to the last analysed keyframe of the video
 * (`ctx.reuse`, src/pipeline/keyframe-reuse.ts), that keyframe's observation (objects, faces, pose,
 * horizon, framing cues, same confidences) stands for it and no model runs on it
 * (`details.reused_from`).
 */
import { round3 } from '../media/kernels/index.js';
import type { Frame } from '../media/types.js';
import { boxColour, colourStats, meanStats, thumbDiff } from '../models/perception/colour.js';
import { describeSegment, type Description, type FaceSighting, type KeyframeObservation, type SegmentObservation } from '../models/perception/describe.js';
import { ObjectDetector } from '../models/perception/detector.js';
import { carryGender, FaceAttributeReader, MAX_FACES } from '../models/perception/face-attributes.js';
import { FaceDetector } from '../models/perception/faces.js';
import { cocoBroaderNames } from '../models/perception/labels.js';
import { DESCRIBED_FACE, faceCounts, personBoxes } from '../tagging/face-rule.js';
import { PoseEstimator, visibleParts } from '../models/perception/pose.js';
import { sceneWords } from '../models/perception/scene-words.js';
import { SerialQueue } from '../models/local.js';
import { framingEvidenceFromKeyframe, framingPixelCues, tagFraming, type FramingEvidence } from '../tagging/framing.js';
import { estimateHorizon } from '../tagging/pixels.js';
import type { Analyzer, AnalyzerContext, AnalyzerOutput, Fact, PixelWork } from './types.js';
import { PERCEPTION_ANALYZER_VERSION } from './versions.js';

export interface PerceptionOptions {
  /** Thumbnail difference above which a second keyframe is analysed. */
  secondKeyframeDiff?: number;
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
export type TimingKey = 'colour' | 'detector' | 'faces' | 'face_attributes' | 'pose' | 'framing' | 'text' | 'segment';

/** BlazeFace threshold: weak faces are kept as evidence; describe and tagFraming filter them. */
const FACE_MIN_SCORE = 0.5;
/** Smallest person box (share of the frame) that gets a pose. */
const POSE_MIN_AREA = 0.01;


/** Framing evidence of an analysed keyframe (what `tagFraming` reads). */
export function keyframeFramingEvidence(kf: KeyframeObservation): FramingEvidence {
  const ev = framingEvidenceFromKeyframe(kf, { horizon: kf.horizon });
  if (ev.poses?.[0] && kf.poseScore !== undefined) ev.poses[0].score = kf.poseScore;
  return ev;
}

export interface PerceptionResult {
  observation: SegmentObservation;
  description: Description;
  /** The main keyframe's observation was the one given to reuse (no model ran on it). */
  reused?: boolean;
}

/** `details.description` of a perception output: the weighted English parts the embedder pools. */
export interface PerceptionDetails extends Record<string, unknown> {
  description: { text: string; parts: Description['parts'] };
}

export { PERCEPTION_ANALYZER_VERSION };

export class PerceptionAnalyzer implements Analyzer {
  readonly name = 'perception';
  readonly version = PERCEPTION_ANALYZER_VERSION;
  readonly frameMaxSide: number;
  private readonly detector: ObjectDetector;
  private readonly faces = new FaceDetector();
  private readonly faceAttributes = new FaceAttributeReader();
  private readonly pose = new PoseEstimator();
  private loading: Promise<void> | null = null;
  private readonly secondKeyframeDiff: number;
  /** The main keyframe each output of this analyzer was made from (what `ctx.reuse` may reuse). */
  private readonly analysed = new WeakMap<AnalyzerOutput, KeyframeObservation>();
  readonly timings: Record<TimingKey, ModelTiming> = PerceptionAnalyzer.emptyTimings();
  /** Keyframes whose observation was reused rather than analysed. */
  reused = 0;
  /** One segment at a time (single wasm thread). */
  private readonly queue = new SerialQueue();

  constructor(opts: PerceptionOptions = {}) {
    this.frameMaxSide = opts.frameMaxSide ?? 512;
    this.secondKeyframeDiff = opts.secondKeyframeDiff ?? 0.15;
    this.detector = new ObjectDetector(opts.detectorInput);
  }

  static emptyTimings(): Record<TimingKey, ModelTiming> {
    return {
      colour: { calls: 0, ms: 0 },
      detector: { calls: 0, ms: 0 },
      faces: { calls: 0, ms: 0 },
      face_attributes: { calls: 0, ms: 0 },
      pose: { calls: 0, ms: 0 },
      framing: { calls: 0, ms: 0 },
      text: { calls: 0, ms: 0 },
      segment: { calls: 0, ms: 0 },
    };
  }

  resetTimings(): void {
    Object.assign(this.timings, PerceptionAnalyzer.emptyTimings());
    this.reused = 0;
  }

  load(): Promise<void> {
    if (!this.loading) {
      this.loading = Promise.all([this.detector.load(), this.faces.load(), this.faceAttributes.load(), this.pose.load()]).then(() => undefined);
      this.loading.catch(() => {
        this.loading = null;
      });
    }
    return this.loading;
  }

  async timed<T>(key: TimingKey, f: () => Promise<T> | T): Promise<T> {
    const t0 = performance.now();
    try {
      return await f();
    } finally {
      this.timings[key].calls++;
      this.timings[key].ms += performance.now() - t0;
    }
  }

  async analyzeSegment(frames: Frame[], ctx: AnalyzerContext): Promise<AnalyzerOutput> {
    const prev = ctx.reuse?.analysis.perception;
    const reuse = prev && ctx.reuse ? this.analysed.get(prev) : undefined;
    const { observation, description, reused } = await this.observe(frames, ctx, reuse);
    const framing = observation.framing ?? tagFraming(observation.keyframes.map(keyframeFramingEvidence));
    const details: PerceptionDetails = {
      description: { text: description.text, parts: description.parts },
      ...description.facts,
      uncertain: description.uncertain,
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
      change: round3(observation.change),
    };
    const reusedFrom = reused && ctx.reuse ? ctx.reuse.from : undefined;
    if (reusedFrom !== undefined) details.reused_from = reusedFrom;
    const out: AnalyzerOutput = {
      facts: perceptionFacts(description),
      description: { text: description.text, parts: description.parts },
      tags: { shot_size: framing.shot_size, shooting_angle: framing.shooting_angle },
      details,
    };
    if (reusedFrom === undefined) this.analysed.set(out, observation.keyframes[0]);
    return out;
  }

  /**
   * Runs the frame models on a segment and describes what they saw. `reuse`: the observation of a
   * keyframe nearly identical to this segment's middle frame, which then stands for it (marked `reused`).
   */
  async observe(frames: Frame[], ctx: AnalyzerContext, reuse?: KeyframeObservation): Promise<PerceptionResult> {
    if (frames.length === 0) throw new Error('analyzeSegment: no frames');
    await this.load();
    return this.queue.run(() => this.observeLocked(frames, ctx, reuse));
  }

  private async observeLocked(frames: Frame[], ctx: AnalyzerContext, reuse?: KeyframeObservation): Promise<PerceptionResult> {
    const stats = await this.timed('colour', () => frames.map((f) => colourStats(f)));
    let change = 0;
    for (let i = 1; i < stats.length; i++) change += thumbDiff(stats[i - 1], stats[i]) / (stats.length - 1);

    const mainIdx = frames.length >> 1;
    const keyframes: KeyframeObservation[] = [];
    const main = frames[mainIdx];
    const reused = !!reuse && reuse.width === main.width && reuse.height === main.height;
    if (reused) {
      keyframes.push({ ...reuse, t: main.t });
      this.reused++;
    } else {
      keyframes.push(await this.analyseKeyframe(main, ctx.pixelWork, earlierFaces(ctx)));
    }

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
    if (farIdx >= 0 && farDiff >= this.secondKeyframeDiff) keyframes.push(await this.analyseKeyframe(frames[farIdx], ctx.pixelWork, earlierFaces(ctx)));

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
    return { observation, description: describeSegment(observation), reused };
  }

  private async analyseKeyframe(frame: Frame, work?: PixelWork, earlier: FaceSighting[] = []): Promise<KeyframeObservation> {
    const local = () => ({ horizon: estimateHorizon(frame), cues: framingPixelCues(frame) });
    // The horizon and framing cues are pixel work: handed off first (when the pipeline can), so
    // they are measured while the models below run on this thread; else measured here at the end.
    const handedOff = work?.framing(frame).catch(local);
    const dets = await this.timed('detector', () => this.detector.detect(frame));
    const objects = dets.map((d) => ({
      ...d,
      // A person's colour is their clothing: the torso part of the box.
      colour: boxColour(frame, d.label === 'person' ? { x: d.box.x + d.box.w * 0.1, y: d.box.y + d.box.h * 0.3, w: d.box.w * 0.8, h: d.box.h * 0.5 } : d.box),
    }));
    const kf: KeyframeObservation = { t: frame.t, width: frame.width, height: frame.height, objects, faces: [] };
    // Faces on every keyframe: a face filling the frame often has no person box, and shot size
    // follows the face.
    const faces = await this.timed('faces', () => this.faces.detect(frame, FACE_MIN_SCORE));
    kf.faces = faces.map((f) => ({ score: f.score, box: f.box, keypoints: f.keypoints }));
    // Who the people are: gender and expression of the largest faces that count as people.
    const persons = personBoxes(objects, DESCRIBED_FACE.personMin);
    const read = kf.faces
      .filter((f) => faceCounts(f, persons, DESCRIBED_FACE))
      .sort((a, b) => b.box.w * b.box.h - a.box.w * a.box.h)
      .slice(0, MAX_FACES);
    if (read.length > 0) {
      const boxes = read.map((f) => f.box);
      const attrs = await this.timed('face_attributes', () => this.faceAttributes.read(frame, boxes, carryGender(boxes, earlier)));
      read.forEach((f, i) => (f.attributes = attrs[i]));
    }
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
    await this.timed('framing', async () => {
      const { horizon, cues } = handedOff ? await handedOff : local();
      kf.horizon = horizon;
      kf.cues = cues;
    });
    return kf;
  }

  async dispose(): Promise<void> {
    this.loading = null;
    await Promise.all([this.detector.dispose(), this.faces.dispose(), this.faceAttributes.dispose(), this.pose.dispose()]);
  }
}

/** Faces read on the previous segment's analysed keyframes (whose gender the same people keep). */
function earlierFaces(ctx: AnalyzerContext): FaceSighting[] {
  const kfs = (ctx.previous?.perception?.details as { keyframes?: Array<{ faces?: FaceSighting[] }> } | undefined)?.keyframes ?? [];
  return kfs.flatMap((k) => k.faces ?? []).filter((f) => f.attributes);
}

/** The description's evidence as generic facts (objects, soft objects, people, setting, colours). */
function perceptionFacts(d: Description): Fact[] {
  const facts: Fact[] = [];
  // Each object also goes by its class's other names (a dog: puppy, animal), as sure as the object.
  const named = (label: string, confidence: number) => cocoBroaderNames(label).map((n) => ({ label: n, confidence }));
  for (const o of d.facts.objects) {
    const alternatives = named(o.label, o.score);
    facts.push({ kind: 'object', label: o.label, confidence: o.score, area: o.area, count: o.count, ...(alternatives.length ? { alternatives } : {}) });
  }
  for (const u of d.uncertain) {
    const alternatives = [...u.alternatives.map((label) => ({ label, confidence: u.score })), ...named(u.label, u.score)];
    facts.push({ kind: 'object', label: u.label, confidence: u.score, area: u.area, alternatives });
  }
  if (d.facts.people > 0) facts.push({ kind: 'people', label: d.facts.people === 1 ? 'person' : 'people', confidence: 1, count: d.facts.people });
  for (const f of d.facts.faces) facts.push({ kind: 'face', label: 'face', confidence: f.score, area: f.box.w * f.box.h });
  for (const g of d.facts.who) {
    if (g.label !== 'person') facts.push({ kind: 'person', label: g.count > 1 ? (g.label === 'woman' ? 'women' : 'men') : g.label, confidence: g.confidence, count: g.count });
    if (g.smiling > 0) facts.push({ kind: 'expression', label: 'smiling', confidence: g.smilingConfidence, count: g.smiling });
  }
  const s = d.facts.setting;
  if (s.outdoor) facts.push({ kind: 'setting', label: 'outdoor', confidence: 1 });
  if (s.indoor) facts.push({ kind: 'setting', label: 'indoor', confidence: 1 });
  if (s.lighting !== 'normal') facts.push({ kind: 'setting', label: s.lighting, confidence: 1 });
  // Light and saturation in the words people type ("black and white", "grayscale", "low light").
  for (const w of sceneWords(d.facts)) if (!facts.some((f) => f.kind === 'setting' && f.label === w)) facts.push({ kind: 'setting', label: w, confidence: 1 });
  for (const cue of s.cues) facts.push({ kind: 'scene', label: cue, confidence: 1 });
  for (const c of d.facts.colours) facts.push({ kind: 'colour', label: c, confidence: 1 });
  return facts;
}

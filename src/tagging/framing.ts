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
 * Modules: framing-labels.ts (labels, tag and evidence types), framing-cues.ts (pixel cues),
 * framing-subject.ts (which faces count, where the frame cuts the body), framing-pool.ts (vote
 * pooling), shot-size.ts and shooting-angle.ts (the two classifiers), framing-weights.ts (the tuned
 * numbers). This file: {@link tagFraming}, the evidence adapters, and every name re-exported.
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
import { round4 } from '../media/kernels/index.js';
import type { Frame } from '../media/types.js';
import { framingPixelCues } from './framing-cues.js';
import {
  SHOOTING_ANGLE_LABELS,
  SHOT_SIZE_LABELS,
  type FramingBox,
  type FramingEvidence,
  type FramingFace,
  type FramingKeypoint,
  type FramingObject,
  type FramingPixelCues,
  type FramingPose,
  type FramingTags,
  type ShootingAngleLabel,
  type ShotSizeLabel,
} from './framing-labels.js';
import { combine } from './framing-pool.js';
import { FRAMING_WEIGHTS, type FramingWeights } from './framing-weights.js';
import { classifyShootingAngle } from './shooting-angle.js';
import { classifyShotSize } from './shot-size.js';
import { estimateHorizon, type HorizonEstimate, type HorizonTag } from './pixels.js';

export { FRAMING_WEIGHTS, type FramingWeights } from './framing-weights.js';
export * from './framing-labels.js';
export { framingPixelCues } from './framing-cues.js';
export { classifyShotSize, EXTREME_WIDE_FIGURE, FACE_SCALE_BOUNDS, type ShotSizeDetails } from './shot-size.js';
export { classifyShootingAngle, facePitchOffset, type ShootingAngleDetails } from './shooting-angle.js';

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
    const uniform = (labels: readonly string[]): Record<string, number> => Object.fromEntries(labels.map((l) => [l, round4(1 / labels.length)]));
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

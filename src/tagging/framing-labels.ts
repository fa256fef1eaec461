/**
 * Framing vocabulary: the shot size and shooting angle labels, the tag shapes, and the evidence a
 * keyframe gives the classifiers (faces, poses, objects, horizon, pixel cues). Types only, plus
 * the label lists. See framing.ts.
 */
import type { TagValue } from '../api/types.js';
import type { HorizonEstimate, HorizonTag } from './pixels.js';
import { labelsOf } from '../tags/registry.js';

/** Declared in the tag registry (src/tags/registry.ts). */
export const SHOT_SIZE_LABELS = labelsOf('shot_size');
export type ShotSizeLabel = (typeof SHOT_SIZE_LABELS)[number];

export const SHOOTING_ANGLE_LABELS = labelsOf('shooting_angle');
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

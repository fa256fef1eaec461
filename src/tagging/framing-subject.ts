/**
 * The framing subject: which faces count (confident, or plausible inside a detected person) and
 * where the frame cuts the main person's body (from MoveNet keypoints or the visible-part list).
 * Shared by the shot size and shooting angle classifiers.
 */
import { faceCounts, personBoxes } from './face-rule.js';
import { clamp01 } from '../media/kernels/index.js';
import type { FramingWeights } from './framing-weights.js';
import type { FramingEvidence, FramingFace, FramingKeypoint, FramingPose } from './framing-labels.js';

export const inside = (k: FramingKeypoint): boolean => k.x >= -0.01 && k.x <= 1.01 && k.y >= -0.01 && k.y <= 1.01;

/** Faces a frame's framing should follow: confident, or plausible and inside a detected person. */
export function usableFaces(e: FramingEvidence, W: FramingWeights): Array<FramingFace & { human: boolean }> {
  const F = W.shot.faces;
  const persons = personBoxes(e.objects, F.personMin);
  return e.faces
    .filter((f) => f.score >= F.min && f.box.h > 0)
    .map((f) => ({ ...f, human: faceCounts(f, persons, { confident: F.human, inPerson: F.humanInPerson }) }))
    .sort((a, b) => Number(b.human) - Number(a.human) || b.box.h - a.box.h);
}

export type CutLevel = keyof FramingWeights['shot']['cutLevel'];

export interface PoseSummary {
  level: CutLevel | null;
  /** Mean score of the keypoints that decided the level. */
  quality: number;
  /** Figure height fraction (head top to ankles) when the feet are in frame. */
  figure?: number;
  visible: Set<string>;
  kp: Map<string, FramingKeypoint>;
}

export function summarisePose(p: FramingPose, W: FramingWeights): PoseSummary {
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

/**
 * Shooting angle of one keyframe's evidence: horizon tilt (Dutch), face pitch from BlazeFace
 * keypoints, leg/torso foreshortening, sky filling the frame, converging verticals and flat lays,
 * pooled log-linearly. Conventions: see framing.ts.
 */
import { clamp01, sigmoid } from '../media/kernels/index.js';
import { FRAMING_WEIGHTS, type FramingWeights } from './framing-weights.js';
import { SHOOTING_ANGLE_LABELS, type FramingEvidence, type FramingFace, type ShootingAngleLabel, type ShootingAngleTag } from './framing-labels.js';
import { explainVotes, pool, toTag, type Vote } from './framing-pool.js';
import { inside, summarisePose, usableFaces } from './framing-subject.js';
import { DUTCH_MIN_DEG } from './pixels.js';

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
      cues: explainVotes(SHOOTING_ANGLE_LABELS, votes),
      tilt,
    },
  };
}

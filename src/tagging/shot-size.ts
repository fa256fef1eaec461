/**
 * Shot size of one keyframe's evidence: face scale, where the frame cuts the body (pose), a whole
 * figure's box, the main non-person subject's size and physical scale, and scene cues (sky over
 * ground, detail spectrum), pooled log-linearly. Conventions: see framing.ts.
 */
import { clamp01, sigmoid } from '../media/kernels/index.js';
import { FRAMING_WEIGHTS, type FramingWeights } from './framing-weights.js';
import { SHOT_SIZE_LABELS, type FramingBox, type FramingEvidence, type ShotSizeLabel, type ShotSizeTag } from './framing-labels.js';
import { binned, explainVotes, pool, toTag, type Vec, type Vote } from './framing-pool.js';
import { summarisePose, usableFaces, type PoseSummary } from './framing-subject.js';

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
      cues: explainVotes(SHOT_SIZE_LABELS, votes),
      person: personSubject,
    },
  };
}

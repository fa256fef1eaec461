/**
 * Shot size and shooting angle (src/tagging/framing.ts) on the real catalog photos, with the real
 * detectors (CenterNet objects, BlazeFace faces + keypoints, MoveNet pose) building the evidence;
 * the person's judgement in catalog.tsv is the truth (ambiguous rows excluded). Accuracy is
 * asserted on the CHECK half of the held-out split only (eval/split.ts): the framing weights
 * (src/tagging/framing-weights.ts) were chosen on the tuning half. Plus crops (cropping on a face
 * must make the shot closer), Dutch-angle rotations, and the pure functions on hand-made evidence.
 *
 * The shared eval set (../shared/eval beside the repository) is required under CI; elsewhere its
 * absence skips the catalog tests with a loud line.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeImage } from '../../src/media/frames.js';
import type { Frame } from '../../src/media/types.js';
import type { KeyframeObservation } from '../../src/models/perception/describe.js';
import {
  FRAMING_WEIGHTS,
  SHOOTING_ANGLE_LABELS,
  SHOT_SIZE_LABELS,
  classifyShotSize,
  facePitchOffset,
  framingEvidenceFromKeyframe,
  framingPixelCues,
  tagFraming,
  type FramingEvidence,
  type FramingKeypoint,
  type ShotSizeLabel,
} from '../../src/tagging/framing.js';
import { loadCatalog, mapAngle, mapShotSize, type CatalogRow } from '../../eval/catalog.js';
import { cropFrame, FramingEvidenceBuilder, rotateFrame } from '../../eval/evidence.js';
import { confusion, formatConfusion, reliability, formatReliability } from '../../eval/metrics.js';
import { halfOf, inHalf } from '../../eval/split.js';
import { evalDir, isCI, requireSharedData } from '../helpers/clips.js';

const EVAL_DATA = [join(evalDir, 'catalog.tsv'), join(evalDir, 'photos')];
/** Under CI the catalog suite always runs (its beforeAll fails when the data is missing). */
const haveData = isCI || requireSharedData(EVAL_DATA);
const MAX_SIDE = 512;
const shotIndex = (l: ShotSizeLabel): number => SHOT_SIZE_LABELS.indexOf(l);

describe('catalog label mapping', () => {
  it('maps the free-text judgements onto the tag vocabularies', () => {
    expect(mapShotSize('medium (chest-up)')).toBe('medium');
    expect(mapShotSize('close-up (flat lay)')).toBe('close_up');
    expect(mapShotSize('extreme close-up')).toBe('extreme_close_up');
    expect(mapShotSize('full (whole animal)')).toBe('wide');
    expect(mapShotSize('wide (whole table)')).toBe('wide');
    expect(mapShotSize('extreme wide')).toBe('extreme_wide');
    expect(mapShotSize('medium-full (ambiguous)')).toBeNull();
    expect(mapShotSize('close-up (insect small in frame; ambiguous)')).toBeNull();
    expect(mapAngle('eye level (low)')).toBe('eye_level');
    expect(mapAngle('high (slight)')).toBe('high_angle');
    expect(mapAngle('low (ground level)')).toBe('low_angle');
    expect(mapAngle('overhead')).toBe('overhead');
    expect(mapAngle('ambiguous (moving handheld)')).toBeNull();
  });
});

describe('framing from hand-made evidence', () => {
  const base = (over: Partial<FramingEvidence> = {}): FramingEvidence => ({ width: 640, height: 480, faces: [], objects: [], poses: [], ...over });
  const face = (h: number, y = 0.1) => ({ score: 0.95, box: { x: 0.4, y, w: h * 0.75, h } });
  const kp = (parts: Record<string, [number, number]>): FramingKeypoint[] =>
    Object.entries(parts).map(([name, [x, y]]) => ({ name, x, y, score: 0.8 }));

  it('follows the face-height conventions', () => {
    // Bounds in face-box heights per frame: [1.25, 2.8, 4, 7.7, 11, 45] (BlazeFace's box ≈ 0.65 head).
    // A face cut by the top and bottom of the frame: only eyes to mouth in view.
    expect(classifyShotSize(base({ faces: [{ score: 0.9, box: { x: 0.2, y: 0, w: 0.6, h: 1 } }] })).label).toBe('extreme_close_up');
    expect(classifyShotSize(base({ faces: [face(0.6)] })).label).toBe('close_up');
    expect(classifyShotSize(base({ faces: [face(0.3)] })).label).toBe('medium_close_up');
    expect(classifyShotSize(base({ faces: [face(0.18)] })).label).toBe('medium');
    expect(classifyShotSize(base({ faces: [face(0.108)] })).label).toBe('medium_wide'); // ≈ 9.2 faces: mid-bin (the prior favours wide)
    expect(classifyShotSize(base({ faces: [face(0.05)] })).label).toBe('wide');
    expect(classifyShotSize(base({ faces: [face(0.012)] })).label).toBe('extreme_wide');
  });

  it('takes its numbers from the weights object it is given', () => {
    // Every vector over the classes has one entry per class; priors are distributions.
    const S = FRAMING_WEIGHTS.shot;
    for (const v of [S.prior, S.tinyFigure, S.personBox.q, S.sky.empty, S.sky.withSubject, S.detail.far, S.detail.near, ...Object.values(S.cutLevel)]) {
      expect(v).toHaveLength(SHOT_SIZE_LABELS.length);
    }
    expect(S.faceBounds).toHaveLength(SHOT_SIZE_LABELS.length - 1);
    expect([...S.faceBounds].sort((a, b) => a - b)).toEqual(S.faceBounds);
    expect(FRAMING_WEIGHTS.angle.prior).toHaveLength(SHOOTING_ANGLE_LABELS.length);
    for (const prior of [S.prior, FRAMING_WEIGHTS.angle.prior]) expect(prior.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 6);
    // A 20 %-of-the-frame face is a medium shot with the default bounds, a wide one when the
    // (hypothetical) bounds say a frame of 5 faces is already wide: the classifier reads `weights`.
    const ev = base({ faces: [face(0.2)] });
    expect(tagFraming(ev).shot_size.label).toBe('medium');
    const wider = structuredClone(FRAMING_WEIGHTS);
    wider.shot.faceBounds = [1.1, 1.5, 2, 3, 4, 45];
    expect(tagFraming(ev, wider).shot_size.label).toBe('wide');
    expect(classifyShotSize(ev, wider).label).toBe('wide');
  });

  it('follows where the frame cuts the body (pose), and a tiny whole figure is an extreme wide', () => {
    const head = { nose: [0.5, 0.2] as [number, number], left_eye: [0.52, 0.18] as [number, number], right_eye: [0.48, 0.18] as [number, number] };
    const toHips = kp({ ...head, left_shoulder: [0.6, 0.45], right_shoulder: [0.4, 0.45], left_hip: [0.57, 0.95], right_hip: [0.43, 0.95] });
    expect(classifyShotSize(base({ poses: [{ keypoints: toHips }] })).label).toBe('medium');
    const toKnees = kp({ ...head, left_shoulder: [0.6, 0.35], right_shoulder: [0.4, 0.35], left_hip: [0.57, 0.65], right_hip: [0.43, 0.65], left_knee: [0.56, 0.95], right_knee: [0.44, 0.95] });
    expect(classifyShotSize(base({ poses: [{ keypoints: toKnees }] })).label).toBe('medium_wide');
    // A figure 6 % of the frame tall, seen head to ankles.
    const tiny = kp({
      nose: [0.5, 0.5], left_eye: [0.501, 0.499], right_eye: [0.499, 0.499], left_shoulder: [0.503, 0.51], right_shoulder: [0.497, 0.51],
      left_hip: [0.502, 0.527], right_hip: [0.498, 0.527], left_knee: [0.502, 0.541], right_knee: [0.498, 0.541], left_ankle: [0.502, 0.555], right_ankle: [0.498, 0.555],
    });
    const t = classifyShotSize(base({ poses: [{ keypoints: tiny }], objects: [{ label: 'person', score: 0.8, box: { x: 0.49, y: 0.495, w: 0.02, h: 0.065 } }] }));
    expect(t.label).toBe('extreme_wide');
    // The perception layer's parts-only pose (no coordinates) still gives the cut level.
    const kf: KeyframeObservation = { t: 0, objects: [], faces: [], poseParts: ['nose', 'left_eye', 'left_shoulder', 'left_hip'] };
    const partsOnly = framingEvidenceFromKeyframe(kf, { width: 640, height: 480 });
    expect(tagFraming(partsOnly).shot_size.label).toBe('medium');
  });

  it('uses object scale without people: a cup filling the frame is a close-up, a car a medium shot', () => {
    expect(classifyShotSize(base({ objects: [{ label: 'cup', score: 0.7, box: { x: 0.2, y: 0.2, w: 0.6, h: 0.6 } }] })).label).toBe('close_up');
    expect(classifyShotSize(base({ objects: [{ label: 'car', score: 0.7, box: { x: 0, y: 0.05, w: 1, h: 0.9 } }] })).label).toBe('medium');
    expect(classifyShotSize(base({ objects: [{ label: 'airplane', score: 0.7, box: { x: 0.4, y: 0.5, w: 0.2, h: 0.1 } }] })).label).toBe('wide');
  });

  it('returns well-formed tags: scores sum to 1, confidence in [0,1], zero confidence without evidence', () => {
    for (const e of [base(), base({ faces: [face(0.3)] }), base({ objects: [{ label: 'dog', score: 0.5, box: { x: 0.1, y: 0.1, w: 0.3, h: 0.3 } }] })]) {
      const t = tagFraming(e);
      for (const tag of [t.shot_size, t.shooting_angle]) {
        const sum = Object.values(tag.scores).reduce((a, b) => a + b, 0);
        expect(sum).toBeCloseTo(1, 3);
        expect(tag.confidence).toBeGreaterThanOrEqual(0);
        expect(tag.confidence).toBeLessThanOrEqual(1);
        expect(tag.scores[tag.label as keyof typeof tag.scores]).toBe(Math.max(...Object.values(tag.scores)));
      }
      expect(Object.keys(t.shot_size.scores)).toEqual([...SHOT_SIZE_LABELS]);
      expect(Object.keys(t.shooting_angle.scores)).toEqual([...SHOOTING_ANGLE_LABELS]);
    }
    // No evidence at all: a guess, flagged by a low confidence.
    expect(tagFraming(base()).shot_size.confidence).toBeLessThan(0.3);
    expect(tagFraming([]).shot_size.confidence).toBe(0);
    // A strong face cue is more confident than nothing.
    expect(tagFraming(base({ faces: [face(0.6)] })).shot_size.confidence).toBeGreaterThan(tagFraming(base()).shot_size.confidence);
  });

  it('reads face pitch from the keypoints and a tilted horizon as Dutch', () => {
    // Ears level with the eyes' line + 0.6 inter-ocular distances below: looking up at the face.
    const f = { score: 0.95, box: { x: 0.4, y: 0.3, w: 0.2, h: 0.27 }, keypoints: [[0.45, 0.4], [0.55, 0.4], [0.5, 0.45], [0.5, 0.5], [0.41, 0.4 + 0.075], [0.59, 0.4 + 0.075]] as Array<[number, number]> };
    const p = facePitchOffset(f, 640, 480)!;
    expect(p.offset).toBeCloseTo((0.075 * 480) / (0.1 * 640), 2);
    expect(tagFraming(base({ faces: [f] })).shooting_angle.scores.low_angle).toBeGreaterThan(tagFraming(base({ faces: [{ ...f, keypoints: undefined }] })).shooting_angle.scores.low_angle);
    const tilted = { angle: 14, confidence: 0.8, families: { horizontal: { angle: 14, score: 0.7 }, vertical: { angle: 13, score: 0.5 } } };
    expect(tagFraming(base({ horizon: tilted })).shooting_angle.label).toBe('dutch');
    const perspective = { ...tilted, families: { horizontal: { angle: 14, score: 0.7 }, vertical: { angle: 0.5, score: 0.5 } } };
    expect(tagFraming(base({ horizon: perspective })).shooting_angle.scores.dutch).toBeLessThan(tagFraming(base({ horizon: tilted })).shooting_angle.scores.dutch);
    expect(tagFraming(base({ horizon: { angle: 0.5, confidence: 0.9 } })).shooting_angle.label).toBe('eye_level');
  });
});

describe.skipIf(!haveData)('framing on the catalog photos (real detectors)', () => {
  const builder = new FramingEvidenceBuilder();
  const frames = new Map<string, Frame>();
  const evidence = new Map<string, FramingEvidence>();
  let photos: CatalogRow[] = [];
  /** The check half of the held-out split: what the accuracy assertions below measure. */
  let check: CatalogRow[] = [];

  beforeAll(async () => {
    requireSharedData(EVAL_DATA); // throws under CI when missing
    await builder.load();
    photos = loadCatalog(evalDir).filter((r) => r.kind === 'photo');
    check = inHalf(photos, 'check');
    for (const row of photos) {
      const f = await decodeImage(row.file, MAX_SIDE);
      frames.set(row.name, f);
      evidence.set(row.name, await builder.build(f));
    }
  }, 120_000);
  afterAll(() => builder.dispose());

  const shotReport = () => {
    const preds = check
      .filter((r) => r.shot)
      .map((r) => {
        const t = tagFraming(evidence.get(r.name)!).shot_size;
        return { id: r.name, truth: r.shot!, label: t.label, confidence: t.confidence };
      });
    return { preds, rep: confusion(SHOT_SIZE_LABELS, preds, true) };
  };
  const angleReport = () => {
    const preds = check
      .filter((r) => r.angle)
      .map((r) => {
        const t = tagFraming(evidence.get(r.name)!).shooting_angle;
        return { id: r.name, truth: r.angle!, label: t.label, confidence: t.confidence };
      });
    return { preds, rep: confusion(SHOOTING_ANGLE_LABELS, preds) };
  };

  it('the check half is a usable held-out set', () => {
    expect(check.length).toBeGreaterThanOrEqual(20);
    expect(check.every((r) => halfOf(r.name) === 'check')).toBe(true);
    expect(check.filter((r) => r.shot).length).toBeGreaterThanOrEqual(20);
    expect(check.filter((r) => r.angle).length).toBeGreaterThanOrEqual(20);
  });

  it('shot size on the check half: ≥ 70 % exact (the target), well above the majority class', () => {
    const { preds, rep } = shotReport();
    const rel = reliability(preds.map((p) => ({ confidence: p.confidence, correct: p.label === p.truth })));
    console.log(`shot size, check half: exact ${rep.accuracy} (${rep.correct}/${rep.n}), within one ${rep.withinOneAccuracy}, majority ${JSON.stringify(rep.majorityBaseline)}\n${formatConfusion(rep)}\n${formatReliability('shot size', rel)}`);
    // Measured 15/21 = 0.714 exact, 16/21 = 0.762 within one step; majority baseline 7/21 = 0.333
    // (`medium`, tied with `wide`). Before the tuning-half revision of the weights: 12/21 = 0.571.
    // The gate is the target; one more miss (14/21 = 0.667) fails it.
    expect(rep.n).toBeGreaterThanOrEqual(20);
    expect(rep.accuracy).toBeGreaterThanOrEqual(0.7);
    expect(rep.withinOneAccuracy!).toBeGreaterThanOrEqual(0.7);
    expect(rep.accuracy).toBeGreaterThanOrEqual(rep.majorityBaseline.accuracy + 0.3);
    // No confidence-ordering assertion for shot size: on the tuning half the confident half of the
    // photos is not more accurate than the rest (upper − lower = −0.08 over 27 photos, 5 misses).
  });

  it('shooting angle on the check half: low confidence flags the photos that are not eye level', () => {
    const { preds, rep } = angleReport();
    const rel = reliability(preds.map((p) => ({ confidence: p.confidence, correct: p.label === p.truth })));
    console.log(`shooting angle, check half: ${rep.accuracy} (${rep.correct}/${rep.n}), majority ${JSON.stringify(rep.majorityBaseline)}\n${formatConfusion(rep)}\n${formatReliability('angle', rel)}`);
    expect(rep.n).toBeGreaterThanOrEqual(20);
    // Measured: upper-half minus lower-half accuracy 0.4 (10 vs 10 photos; 0.29 on the tuning
    // half): confident answers are level horizons, the misses sit in the low-confidence half.
    expect(rel.upperMinusLowerAccuracy).toBeGreaterThanOrEqual(0.2);
  });

  // The target — 10 points above the check half's majority baseline — is NOT reached:
  // measured 17/21 = 0.810 = the baseline (`eye_level`, 17/21); the tagger answers eye level on
  // every check photo (3 high, 1 low missed). Kept as a known failure so that it turns red (and
  // must become a plain `it`) once the tagger reaches the target.
  it.fails('shooting angle on the check half beats the majority baseline by ≥ 10 points (target not reached)', () => {
    const { rep } = angleReport();
    expect(rep.accuracy).toBeGreaterThanOrEqual(rep.majorityBaseline.accuracy + 0.1);
  });

  it('cropping tightly on a detected face makes the shot closer', async () => {
    // Photos whose main face is large enough to crop at a usable resolution.
    const names = ['python3-skimage__astronaut.jpg', 'kphotoalbum__bar55.jpg', 'kphotoalbum__grand_canyon_1__rotated180.jpg', 'opencv-doc__messi5.jpg', 'kphotoalbum__new_wave_2.jpg'];
    const lines: string[] = [];
    for (const name of names) {
      const row = photos.find((r) => r.name === name)!;
      const big = await decodeImage(row.file, 1024);
      const ev = evidence.get(name)!;
      const f = ev.faces.filter((x) => x.score >= 0.75).sort((a, b) => b.box.h - a.box.h)[0];
      expect(f, `${name}: a confident face`).toBeDefined();
      const orig = tagFraming(ev).shot_size.label;
      // Crop: the face plus 40 % of its height above and 60 % below → the face fills ~50 %.
      const h = Math.min(1, f.box.h * 2);
      const w = Math.min(1, (h * big.height * 4) / 3 / big.width);
      const cx = f.box.x + f.box.w / 2;
      const box = { x: Math.max(0, Math.min(1 - w, cx - w / 2)), y: Math.max(0, Math.min(1 - h, f.box.y - 0.4 * f.box.h)), w, h };
      const crop = cropFrame(big, box);
      const cropped = tagFraming(await builder.build(crop)).shot_size.label;
      lines.push(`${name}: ${orig} → ${cropped} (crop ${crop.width}x${crop.height})`);
      // Closer than before (a close-up may stay a close-up), and at most a medium close-up.
      if (shotIndex(orig) > shotIndex('close_up')) expect(shotIndex(cropped), `${name}: ${orig} → ${cropped}`).toBeLessThan(shotIndex(orig));
      else expect(shotIndex(cropped), `${name}: ${orig} → ${cropped}`).toBeLessThanOrEqual(shotIndex(orig));
      expect(shotIndex(cropped)).toBeLessThanOrEqual(shotIndex('medium_close_up'));
    }
    console.log(lines.join('\n'));
  });

  it('a level photo rotated by 12° reads as a Dutch angle; the original does not', async () => {
    const names = ['kphotoalbum__skagen.jpg', 'golang-github-rwcarlsen-goexif-dev__sample1.jpg', 'psychtoolbox-3-common__town.jpg', 'plasma-workspace-wallpapers__Path_1920x1080.jpg'];
    const lines: string[] = [];
    for (const name of names) {
      const f = frames.get(name)!;
      const orig = tagFraming(evidence.get(name)!).shooting_angle;
      const rot = rotateFrame(f, 12);
      const ev = await builder.build(rot);
      const tilted = tagFraming(ev).shooting_angle;
      lines.push(`${name}: ${orig.label} (${orig.confidence}) → ${tilted.label} (${tilted.confidence}), horizon ${ev.horizon?.angle}°`);
      expect(orig.label).not.toBe('dutch');
      expect(tilted.label, name).toBe('dutch');
      expect(ev.horizon!.angle).toBeGreaterThan(9);
    }
    console.log(lines.join('\n'));
  });

  // Their cost is reported by `npm run bench -- ingest` (ingest.tagging_ms), not asserted here.
  it('pixel cues are well-formed and tell a sky from a flat lay', () => {
    const canyon = framingPixelCues(frames.get('kphotoalbum__grand_canyon_3.jpg')!);
    const coins = framingPixelCues(frames.get('python3-skimage__coins.jpg')!);
    expect(canyon.skyTop).toBeGreaterThan(0.8); // sky over the canyon
    expect(coins.skyTop).toBeLessThan(0.1); // coins on a dark cloth, seen from above
    expect(coins.saturation).toBeLessThan(0.05); // grayscale
    expect(canyon.topBottomDiff).toBeGreaterThan(coins.topBottomDiff + 0.5);
    for (const c of [canyon, coins]) {
      for (const v of [c.defocus, c.sharp, c.flat, c.skyTop, c.skyShare, c.skyLine, c.saturation]) {
        expect(v).toBeGreaterThanOrEqual(0);
        expect(v).toBeLessThanOrEqual(1);
      }
    }
  });
});

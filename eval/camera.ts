/** Camera movement accuracy on generated clips with known motion (eval/clips.ts). */
import { join } from 'node:path';
import { readAllFrames } from '../src/media/frames.js';
import { CAMERA_MOVEMENT_LABELS, PIXEL_TAGGING_SAMPLING, tagMotion, type CameraMovementLabel } from '../src/tagging/index.js';
import { makeClip, motionCases, pool, tempDir, type MotionCase } from './clips.js';
import { confusion, reliability, type ConfusionReport, type Prediction, type ReliabilityReport } from './metrics.js';

export interface CameraEvalResult {
  main: ConfusionReport<CameraMovementLabel>;
  all: ConfusionReport<CameraMovementLabel> & { reliability: ReliabilityReport };
  clips: Array<{ expected: string; label: string; confidence: number; hard: boolean; motion: MotionCase['motion']; photo: string }>;
  ms: { total: number };
}

export async function evaluateCameraMovement(photo: (name: string) => string, log: (s: string) => void = () => {}): Promise<CameraEvalResult> {
  const t0 = performance.now();
  const tmp = tempDir();
  try {
    const cases = motionCases(photo);
    const results = await pool(cases, 2, async (c, i) => {
      const file = await makeClip(join(tmp.dir, `m${i}.mp4`), c.photo, c.motion);
      const frames = await readAllFrames(file, { fps: PIXEL_TAGGING_SAMPLING.fps, maxSide: PIXEL_TAGGING_SAMPLING.maxSide });
      const tag = tagMotion(frames);
      log(`  ${c.hard ? 'hard ' : ''}${c.expected} → ${tag.label} (${tag.confidence})`);
      return { c, tag };
    });
    const preds = (rs: typeof results): Array<Prediction<CameraMovementLabel>> =>
      rs.map((r, i) => ({ id: String(i), truth: r.c.expected as CameraMovementLabel, label: r.tag.label, confidence: r.tag.confidence }));
    const all = preds(results);
    return {
      main: confusion(CAMERA_MOVEMENT_LABELS, preds(results.filter((r) => !r.c.hard))),
      all: { ...confusion(CAMERA_MOVEMENT_LABELS, all), reliability: reliability(all.map((p) => ({ confidence: p.confidence, correct: p.label === p.truth }))) },
      clips: results.map((r) => ({
        expected: r.c.expected,
        label: r.tag.label,
        confidence: r.tag.confidence,
        hard: !!r.c.hard,
        motion: r.c.motion.kind === 'subject' ? { ...r.c.motion, subject: r.c.motion.subject.replace(/^.*\//, '') } : r.c.motion,
        photo: r.c.photo.replace(/^.*\//, ''),
      })),
      ms: { total: Math.round(performance.now() - t0) },
    };
  } finally {
    tmp.cleanup();
  }
}

/**
 * Single-person body pose with MoveNet Lightning (192x192 int32 input, output [1,1,17,3] =
 * y, x, score per COCO keypoint, normalised to the input). Run on a square crop around one
 * detected person (the way MoveNet is meant to be fed), mapped back to frame coordinates.
 */
import type { Frame } from '../../media/types.js';
import { loadGraphModelFromDir, tf, type GraphModel } from '../tfjs.js';
import { cropWindows, frameToTensor, humanModelsDir, round, squareWindow, type Box } from './image.js';

export const KEYPOINT_NAMES = [
  'nose', 'left_eye', 'right_eye', 'left_ear', 'right_ear', 'left_shoulder', 'right_shoulder', 'left_elbow',
  'right_elbow', 'left_wrist', 'right_wrist', 'left_hip', 'right_hip', 'left_knee', 'right_knee', 'left_ankle',
  'right_ankle',
] as const;
export type KeypointName = (typeof KEYPOINT_NAMES)[number];

export interface Keypoint {
  name: KeypointName;
  /** Normalised frame coordinates (may fall slightly outside [0,1] for parts out of frame). */
  x: number;
  y: number;
  score: number;
}

export interface Pose {
  score: number;
  keypoints: Keypoint[];
}

const INPUT = 192;

export class PoseEstimator {
  private model: GraphModel | null = null;
  private loading: Promise<void> | null = null;

  load(): Promise<void> {
    if (!this.loading) {
      this.loading = loadGraphModelFromDir(humanModelsDir(), 'movenet-lightning.json').then((m) => {
        this.model = m;
      });
      this.loading.catch(() => {
        this.loading = null;
      });
    }
    return this.loading;
  }

  /** Pose of the person in `box` (normalised), or of the whole frame when no box is given. */
  async estimate(frame: Frame, box?: Box): Promise<Pose> {
    await this.load();
    const model = this.model!;
    const { width: fw, height: fh } = frame;
    // Square crop around the box, 20% margin, in pixels; may extend past the frame (zero padded).
    const b = box ?? { x: 0, y: 0, w: 1, h: 1 };
    const { x1, y1, side } = squareWindow(frame, b, box ? 1.2 : 1);
    const out = tf.tidy(() => {
      const crop = cropWindows(frameToTensor(frame), [{ x1, y1, side }], INPUT);
      return model.execute(tf.cast(crop, 'int32')) as tf.Tensor;
    });
    let raw: Float32Array;
    try {
      raw = (await out.data()) as Float32Array;
    } finally {
      out.dispose();
    }
    const keypoints: Keypoint[] = KEYPOINT_NAMES.map((name, k) => ({
      name,
      y: round((y1 + raw[3 * k] * side) / fh),
      x: round((x1 + raw[3 * k + 1] * side) / fw),
      score: round(raw[3 * k + 2]),
    }));
    const score = round(keypoints.reduce((s, k) => s + k.score, 0) / keypoints.length);
    return { score, keypoints };
  }

  async dispose(): Promise<void> {
    this.model = null;
    this.loading = null;
  }
}

/** Which body parts are visible (score above threshold and inside the frame). */
export function visibleParts(pose: Pose, minScore = 0.3): Set<KeypointName> {
  const s = new Set<KeypointName>();
  for (const k of pose.keypoints) {
    if (k.score >= minScore && k.x >= -0.01 && k.x <= 1.01 && k.y >= -0.01 && k.y <= 1.01) s.add(k.name);
  }
  return s;
}

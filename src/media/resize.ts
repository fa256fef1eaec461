import type { Frame } from './types.js';

/** Bilinear resize of a packed RGB24 frame so its longest side is `maxSide` (never enlarges). */
export function resizeFrame(frame: Frame, maxSide: number): Frame {
  const scale = Math.min(1, maxSide / Math.max(frame.width, frame.height));
  if (scale === 1) return frame;
  const w = Math.max(2, Math.round((frame.width * scale) / 2) * 2);
  const h = Math.max(2, Math.round((frame.height * scale) / 2) * 2);
  const out = new Uint8Array(w * h * 3);
  const sx = frame.width / w;
  const sy = frame.height / h;
  const src = frame.data;
  for (let y = 0; y < h; y++) {
    const fy = Math.min(frame.height - 1, Math.max(0, (y + 0.5) * sy - 0.5));
    const y0 = Math.floor(fy);
    const y1 = Math.min(frame.height - 1, y0 + 1);
    const wy = fy - y0;
    for (let x = 0; x < w; x++) {
      const fx = Math.min(frame.width - 1, Math.max(0, (x + 0.5) * sx - 0.5));
      const x0 = Math.floor(fx);
      const x1 = Math.min(frame.width - 1, x0 + 1);
      const wx = fx - x0;
      for (let c = 0; c < 3; c++) {
        const a = src[(y0 * frame.width + x0) * 3 + c];
        const b = src[(y0 * frame.width + x1) * 3 + c];
        const d = src[(y1 * frame.width + x0) * 3 + c];
        const e = src[(y1 * frame.width + x1) * 3 + c];
        out[(y * w + x) * 3 + c] = Math.round((a * (1 - wx) + b * wx) * (1 - wy) + (d * (1 - wx) + e * wx) * wy);
      }
    }
  }
  return { t: frame.t, width: w, height: h, data: out };
}

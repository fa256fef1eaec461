/**
 * Least-squares similarity between two point sets: q ≈ z·p + t with complex z = a + ib (scale and
 * turn) and t = (tx, ty). `turn: false` fits scale only (b = 0). One kernel for the motion tagger
 * (block motion → camera move) and the picture matcher (keypoints of a crop in a frame).
 */
export interface Similarity {
  a: number;
  b: number;
  tx: number;
  ty: number;
}

/** Point pairs as parallel arrays: p = (px[k], py[k]) moves to q = (qx[k], qy[k]). */
export interface PointPairs {
  px: ArrayLike<number>;
  py: ArrayLike<number>;
  qx: ArrayLike<number>;
  qy: ArrayLike<number>;
}

/** The fit over pairs `ks` (indices into the arrays); null for fewer than two. With no spread in p, a pure shift. */
export function fitSimilarity(pairs: PointPairs, ks: ArrayLike<number>, turn = true): Similarity | null {
  const n = ks.length;
  if (n < 2) return null;
  const { px, py, qx, qy } = pairs;
  let mpx = 0;
  let mpy = 0;
  let mqx = 0;
  let mqy = 0;
  for (let j = 0; j < n; j++) {
    const k = ks[j];
    mpx += px[k];
    mpy += py[k];
    mqx += qx[k];
    mqy += qy[k];
  }
  mpx /= n;
  mpy /= n;
  mqx /= n;
  mqy /= n;
  let re = 0;
  let im = 0;
  let den = 0;
  for (let j = 0; j < n; j++) {
    const k = ks[j];
    const dpx = px[k] - mpx;
    const dpy = py[k] - mpy;
    const dqx = qx[k] - mqx;
    const dqy = qy[k] - mqy;
    re += dqx * dpx + dqy * dpy;
    im += dqy * dpx - dqx * dpy;
    den += dpx * dpx + dpy * dpy;
  }
  if (den < 1e-6) return { a: 1, b: 0, tx: mqx - mpx, ty: mqy - mpy };
  const a = re / den;
  const b = turn ? im / den : 0;
  return { a, b, tx: mqx - (a * mpx - b * mpy), ty: mqy - (b * mpx + a * mpy) };
}

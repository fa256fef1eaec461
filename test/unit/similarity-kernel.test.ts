import { describe, expect, it } from 'vitest';
import { fitSimilarity } from '../../src/media/kernels/index.js';

/** Points moved by a known similarity (scale 1.25, a 20° turn, a shift), as the motion tagger and the picture matcher fit them. */
function moved(turn: number, scale: number, tx: number, ty: number) {
  const px = [0, 40, -30, 12, 55, -18];
  const py = [0, 10, 25, -40, 33, -7];
  const a = scale * Math.cos(turn);
  const b = scale * Math.sin(turn);
  return { px, py, qx: px.map((x, k) => a * x - b * py[k] + tx), qy: px.map((x, k) => b * x + a * py[k] + ty) };
}

describe('fitSimilarity (one kernel for block motion and keypoint matching)', () => {
  it('recovers scale, turn and shift exactly from clean pairs', () => {
    const g = fitSimilarity(moved((20 * Math.PI) / 180, 1.25, 7, -3), [0, 1, 2, 3, 4, 5])!;
    expect(Math.hypot(g.a, g.b)).toBeCloseTo(1.25, 9);
    expect((Math.atan2(g.b, g.a) * 180) / Math.PI).toBeCloseTo(20, 9);
    expect(g.tx).toBeCloseTo(7, 9);
    expect(g.ty).toBeCloseTo(-3, 9);
  });

  it('without a turn fits scale and shift only, and uses only the pairs asked for', () => {
    const pairs = moved(0, 0.8, -12, 4);
    (pairs.qx as number[])[5] = 999; // an outlier left out of ks
    const g = fitSimilarity(pairs, [0, 1, 2, 3, 4], false)!;
    expect(g.b).toBe(0);
    expect(g.a).toBeCloseTo(0.8, 9);
    expect(g.tx).toBeCloseTo(-12, 9);
    expect(g.ty).toBeCloseTo(4, 9);
  });

  it('is null for fewer than two pairs and a pure shift when the points do not spread', () => {
    const pairs = { px: [5, 5], py: [5, 5], qx: [8, 8], qy: [1, 1] };
    expect(fitSimilarity(pairs, [0])).toBeNull();
    expect(fitSimilarity(pairs, [0, 1])).toEqual({ a: 1, b: 0, tx: 3, ty: -4 });
  });
});

/**
 * Is picture A (a query: maybe cropped, zoomed, colour-shifted) a part of picture B (a stored
 * keyframe)? Keypoints (keypoints.ts) of A are matched to B's by Hamming distance with Lowe's ratio
 * test, then the matches are checked for one geometry: B = s·A + t (a crop and a zoom, no turn),
 * found by exhaustive two-point hypotheses over the best matches (deterministic RANSAC) and refined
 * by least squares on its inliers. The verdict is how many matches agree with it: unrelated
 * pictures share a few chance matches in no common geometry; a crop of the same picture shares
 * dozens in one.
 */
import { popcount32 } from '../../util/numeric.js';
import type { Keypoints } from './keypoints.js';
import { fitSimilarity, type PointPairs } from './similarity.js';

export interface PictureMatch {
  /** Matches that passed the distance and ratio tests. */
  matches: number;
  /** Matches consistent with the geometry found (0 when none holds). */
  inliers: number;
  /** B = scale·A + (tx, ty), in level-0 pixels of each. */
  scale: number;
  tx: number;
  ty: number;
  /** Share of A's area whose mapping lands inside B (a crop of B: near 1). */
  inside: number;
}

export const MATCH_DEFAULTS = {
  /** Largest Hamming distance (of 256 bits) a match may have. */
  maxDistance: 72,
  /** Lowe's ratio: the best match must be this much closer than the second best. */
  ratio: 0.85,
  /** Reprojection tolerance as a share of B's longer side. */
  tolerance: 0.015,
  /** The zoom a crop may have (B's pixels per A's pixel). */
  minScale: 0.15,
  maxScale: 6,
  /** Matches (best first) the two-point hypotheses are drawn from. */
  hypothesisPool: 40,
};

export type MatchOptions = Partial<typeof MATCH_DEFAULTS>;

const NONE: PictureMatch = { matches: 0, inliers: 0, scale: 1, tx: 0, ty: 0, inside: 0 };

/**
 * Hamming distance of descriptors `i` of `a` and `j` of `b`, or any value ≥ `bound` as soon as the
 * partial sum reaches it (neither the best nor the second best: the rest need not be read).
 */
function hammingWithin(a: Uint32Array, i: number, b: Uint32Array, j: number, bound: number): number {
  let d = 0;
  const ai = i * 8;
  const bj = j * 8;
  for (let k = 0; k < 8 && d < bound; k++) d += popcount32(a[ai + k] ^ b[bj + k]);
  return d;
}

/** A's points' best matches in B that pass the distance and ratio tests, best first. */
export function matchDescriptors(a: Keypoints, b: Keypoints, options: MatchOptions = {}): Array<{ i: number; j: number; d: number }> {
  const o = { ...MATCH_DEFAULTS, ...options };
  const out: Array<{ i: number; j: number; d: number }> = [];
  for (let i = 0; i < a.n; i++) {
    let best = 257;
    let second = 257;
    let at = -1;
    for (let j = 0; j < b.n; j++) {
      const d = hammingWithin(a.desc, i, b.desc, j, second);
      if (d < best) {
        second = best;
        best = d;
        at = j;
      } else if (d < second) second = d;
    }
    if (at >= 0 && best <= o.maxDistance && best < o.ratio * second) out.push({ i, j: at, d: best });
  }
  return out.sort((p, q) => p.d - q.d || p.i - q.i);
}

/** How well B = s·A + t explains the matches: which are inliers. */
function inliersOf(a: Keypoints, b: Keypoints, m: Array<{ i: number; j: number }>, s: number, tx: number, ty: number, tol2: number): number[] {
  const out: number[] = [];
  for (let k = 0; k < m.length; k++) {
    const ex = s * a.x[m[k].i] + tx - b.x[m[k].j];
    const ey = s * a.y[m[k].i] + ty - b.y[m[k].j];
    if (ex * ex + ey * ey <= tol2) out.push(k);
  }
  return out;
}

/** Least-squares s, tx, ty of B = s·A + t over the given matches (the similarity kernel without a turn). */
function fit(pairs: PointPairs, ks: number[]): { s: number; tx: number; ty: number } {
  const g = fitSimilarity(pairs, ks, false);
  return g ? { s: g.a, tx: g.tx, ty: g.ty } : { s: 1, tx: 0, ty: 0 };
}

/** The matched keypoints' positions in A and in B, as the similarity kernel reads them. */
function matchedPairs(a: Keypoints, b: Keypoints, m: Array<{ i: number; j: number }>): PointPairs {
  return { px: m.map((x) => a.x[x.i]), py: m.map((x) => a.y[x.i]), qx: m.map((x) => b.x[x.j]), qy: m.map((x) => b.y[x.j]) };
}

/** Does A appear in B (cropped and zoomed)? The matches, the geometry found and its inliers. */
export function matchPictures(a: Keypoints, b: Keypoints, options: MatchOptions = {}): PictureMatch {
  const o = { ...MATCH_DEFAULTS, ...options };
  if (a.n < 2 || b.n < 2) return NONE;
  const m = matchDescriptors(a, b, o);
  if (m.length < 2) return { ...NONE, matches: m.length };
  const tol = o.tolerance * Math.max(b.width, b.height);
  const tol2 = tol * tol;
  const pool = Math.min(m.length, o.hypothesisPool);
  // Two matches at least this far apart in A fix a scale well enough.
  const minSpan = 0.05 * Math.max(a.width, a.height);
  let best: number[] = [];
  let bestModel = { s: 1, tx: 0, ty: 0 };
  for (let p = 0; p < pool; p++) {
    for (let q = p + 1; q < pool; q++) {
      const dax = a.x[m[q].i] - a.x[m[p].i];
      const day = a.y[m[q].i] - a.y[m[p].i];
      const la = Math.hypot(dax, day);
      if (la < minSpan) continue;
      const dbx = b.x[m[q].j] - b.x[m[p].j];
      const dby = b.y[m[q].j] - b.y[m[p].j];
      const s = Math.hypot(dbx, dby) / la;
      if (!(s >= o.minScale && s <= o.maxScale)) continue;
      // The two displacements must point the same way (no turn): cos of their angle.
      if ((dax * dbx + day * dby) / (la * Math.hypot(dbx, dby)) < 0.97) continue;
      const tx = (b.x[m[p].j] + b.x[m[q].j] - s * (a.x[m[p].i] + a.x[m[q].i])) / 2;
      const ty = (b.y[m[p].j] + b.y[m[q].j] - s * (a.y[m[p].i] + a.y[m[q].i])) / 2;
      const ins = inliersOf(a, b, m, s, tx, ty, tol2);
      if (ins.length > best.length) {
        best = ins;
        bestModel = { s, tx, ty };
      }
    }
  }
  if (best.length < 3) return { ...NONE, matches: m.length };
  // Refine on the inliers, count again (twice: the refit may gain points at the edges).
  let model = bestModel;
  const pairs = matchedPairs(a, b, m);
  for (let r = 0; r < 2; r++) {
    const refit = fit(pairs, best);
    if (!(refit.s >= o.minScale && refit.s <= o.maxScale)) break;
    const ins = inliersOf(a, b, m, refit.s, refit.tx, refit.ty, tol2);
    if (ins.length < best.length) break;
    best = ins;
    model = refit;
  }
  return { matches: m.length, inliers: best.length, scale: model.s, tx: model.tx, ty: model.ty, inside: insideShare(a, b, model) };
}

/** Share of A's rectangle that lands inside B's under the model. */
function insideShare(a: Keypoints, b: Keypoints, g: { s: number; tx: number; ty: number }): number {
  const x0 = g.tx;
  const y0 = g.ty;
  const x1 = g.s * a.width + g.tx;
  const y1 = g.s * a.height + g.ty;
  const w = Math.max(0, Math.min(x1, b.width) - Math.max(x0, 0));
  const h = Math.max(0, Math.min(y1, b.height) - Math.max(y0, 0));
  const area = (x1 - x0) * (y1 - y0);
  return area > 0 ? (w * h) / area : 0;
}

/**
 * Local image features on grayscale, ORB-like without the rotation: FAST-9 corners on a scale
 * pyramid (factor {@link KEYPOINT_DEFAULTS.scaleFactor}), ranked by their Harris response and thinned
 * by non-maximum suppression, each described by 256 binary comparisons of 5×5 box sums (BRIEF as
 * ORB computes it) inside a 31×31 patch. Upright on purpose: a crop, a zoom and a colour change do not
 * turn the picture, and an upright descriptor tells more points apart than a steered one.
 *
 * Luma only (frameToGray, the one RGB→luma formula): a colour shift moves the levels but, where it
 * keeps the order of neighbouring pixels, not the bits. Matching and the geometric check are in
 * match.ts.
 */
import { boxSum, integralImage, pyramidScaled, type GrayImage } from './gray.js';

export interface Keypoints {
  /** Size of the image the points were found in (level 0). */
  width: number;
  height: number;
  n: number;
  /** Position in level-0 pixels. */
  x: Float32Array;
  y: Float32Array;
  /** Pyramid level each point was found at (its scale is scaleFactor ** level). */
  level: Uint8Array;
  /** 256-bit descriptors, 8 words a point. */
  desc: Uint32Array;
}

export const KEYPOINT_DEFAULTS = {
  /** Points kept per image (over all levels, shared out by level area). */
  maxPoints: 400,
  /** Pyramid levels and the size ratio between neighbours. */
  levels: 5,
  scaleFactor: 1.3,
  /** FAST threshold on 0..255 luma: an arc of 9 pixels each this much brighter or darker than the centre. */
  fastThreshold: 8,
};

export type KeypointOptions = Partial<typeof KEYPOINT_DEFAULTS>;

/** Half the descriptor patch: sampling offsets stay within ±PATCH. */
const PATCH = 13;
/** Half the side of the box each descriptor sample sums (5×5). */
const SMOOTH = 2;
/** Points keep this far from the edge: every sample box inside the level. */
const BORDER = PATCH + SMOOTH + 1;

/** The 16 offsets of the radius-3 Bresenham circle, clockwise from the top. */
const CIRCLE: ReadonlyArray<readonly [number, number]> = [
  [0, -3], [1, -3], [2, -2], [3, -1], [3, 0], [3, 1], [2, 2], [1, 3],
  [0, 3], [-1, 3], [-2, 2], [-3, 1], [-3, 0], [-3, -1], [-2, -2], [-1, -3],
];

/** The 256 BRIEF comparisons: pairs of offsets from an isotropic Gaussian (σ = patch/5), fixed by a seed. */
export const BRIEF_PAIRS: Int8Array = (() => {
  let s = 0x2545f491;
  const rand = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
  const gauss = () => {
    const u = Math.max(rand(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
  };
  const sigma = (2 * PATCH + 1) / 5;
  const out = new Int8Array(256 * 4);
  for (let i = 0; i < out.length; i++) out[i] = Math.max(-PATCH, Math.min(PATCH, Math.round(gauss() * sigma)));
  return out;
})();

/**
 * FAST-9 at offset `o`: 9 contiguous circle pixels all brighter than centre + t or all darker than
 * centre − t. Returns the corner's FAST score (the summed excess of the circle pixels beyond the
 * threshold, on the side of its arc), 0 when it is no corner.
 */
function fastScore(d: Float32Array, o: number, t: number, ring: Int32Array): number {
  const c = d[o];
  const hi = c + t;
  const lo = c - t;
  // Any arc of 9 of 16 holds pixel 0 or pixel 8 (they are 8 apart both ways round): most pixels end here.
  const top = d[o + ring[0]];
  const bottom = d[o + ring[8]];
  if (top <= hi && top >= lo && bottom <= hi && bottom >= lo) return 0;
  // And at least two of the four compass points (0, 4, 8, 12).
  let nb = 0;
  let nd = 0;
  for (let k = 0; k < 16; k += 4) {
    const v = d[o + ring[k]];
    if (v > hi) nb++;
    else if (v < lo) nd++;
  }
  if (nb < 2 && nd < 2) return 0;
  let runB = 0;
  let runD = 0;
  let side = 0;
  for (let k = 0; k < 25 && side === 0; k++) {
    const v = d[o + ring[k & 15]];
    if (v > hi) {
      runB++;
      runD = 0;
      if (runB >= 9) side = 1;
    } else if (v < lo) {
      runD++;
      runB = 0;
      if (runD >= 9) side = -1;
    } else {
      runB = 0;
      runD = 0;
    }
  }
  if (side === 0) return 0;
  let score = 0;
  for (let k = 0; k < 16; k++) {
    const e = side * (d[o + ring[k]] - c) - t;
    if (e > 0) score += e;
  }
  return score;
}

/** Harris response (k = 0.04) over a 7×7 window of central-difference gradients. */
function harris(d: Float32Array, w: number, x: number, y: number): number {
  let a = 0;
  let b = 0;
  let c = 0;
  for (let dy = -3; dy <= 3; dy++) {
    const row = (y + dy) * w;
    for (let dx = -3; dx <= 3; dx++) {
      const i = row + x + dx;
      const ix = d[i + 1] - d[i - 1];
      const iy = d[i + w] - d[i - w];
      a += ix * ix;
      b += iy * iy;
      c += ix * iy;
    }
  }
  return a * b - c * c - 0.04 * (a + b) * (a + b);
}

interface Candidate {
  x: number;
  y: number;
  score: number;
}

/**
 * FAST corners of one level, 3×3 non-maximum suppressed by FAST score; the best 3·keep of those
 * ranked again by their Harris response (ORB's order: corners, not edges, first), best `keep` kept.
 */
function levelCorners(img: GrayImage, t: number, keep: number): Candidate[] {
  const { width: w, height: h, data: d } = img;
  if (w <= 2 * BORDER || h <= 2 * BORDER || keep <= 0) return [];
  const ring = Int32Array.from(CIRCLE, ([dx, dy]) => dy * w + dx);
  const score = new Float32Array(w * h);
  const found: number[] = [];
  for (let y = BORDER; y < h - BORDER; y++) {
    for (let x = BORDER; x < w - BORDER; x++) {
      const o = y * w + x;
      const s = fastScore(d, o, t, ring);
      if (s > 0) {
        score[o] = s;
        found.push(o);
      }
    }
  }
  const local: Candidate[] = [];
  for (const i of found) {
    const s = score[i];
    // Ties go to the first in reading order, so a flat run of equal scores keeps one point.
    if (score[i - w - 1] >= s || score[i - w] >= s || score[i - w + 1] >= s || score[i - 1] >= s) continue;
    if (score[i + 1] > s || score[i + w - 1] > s || score[i + w] > s || score[i + w + 1] > s) continue;
    local.push({ x: i % w, y: Math.floor(i / w), score: s });
  }
  const byOrder = (p: Candidate, q: Candidate) => q.score - p.score || p.y - q.y || p.x - q.x;
  const pre = local.sort(byOrder).slice(0, 3 * keep);
  for (const c of pre) c.score = harris(d, w, c.x, c.y);
  return pre
    .filter((c) => c.score > 0)
    .sort(byOrder)
    .slice(0, keep);
}

/**
 * The 256-bit BRIEF descriptor of (x, y), written at `desc[at…at+8)`: each bit compares the 5×5
 * box sums (ORB's smoothing) around two sampling offsets, read from the level's summed-area table.
 */
function describe(table: Float64Array, w: number, x: number, y: number, desc: Uint32Array, at: number): void {
  const r = SMOOTH;
  for (let word = 0; word < 8; word++) {
    let bits = 0;
    for (let b = 0; b < 32; b++) {
      const p = (word * 32 + b) * 4;
      const x1 = x + BRIEF_PAIRS[p];
      const y1 = y + BRIEF_PAIRS[p + 1];
      const x2 = x + BRIEF_PAIRS[p + 2];
      const y2 = y + BRIEF_PAIRS[p + 3];
      if (boxSum(table, w, x1 - r, y1 - r, x1 + r, y1 + r) < boxSum(table, w, x2 - r, y2 - r, x2 + r, y2 + r)) bits |= 1 << b;
    }
    desc[at + word] = bits >>> 0;
  }
}

/**
 * Keypoints of a luma image (0..255): the best `maxPoints` FAST corners over the pyramid, shared
 * out by level area, each with its BRIEF descriptor. Deterministic; an image too small for a
 * patch gives none.
 */
export function detectKeypoints(img: GrayImage, options: KeypointOptions = {}): Keypoints {
  const o = { ...KEYPOINT_DEFAULTS, ...options };
  const levels = pyramidScaled(img, o.levels, o.scaleFactor, 2 * BORDER + 1);
  // Each level's share of the points, as ORB shares them: proportional to its area.
  const areas = levels.map((l) => l.width * l.height);
  const total = areas.reduce((a, b) => a + b, 0);
  const picked: Array<{ level: number; c: Candidate }> = [];
  levels.forEach((l, i) => {
    for (const c of levelCorners(l, o.fastThreshold, Math.round((o.maxPoints * areas[i]) / total))) picked.push({ level: i, c });
  });
  const n = picked.length;
  const out: Keypoints = { width: img.width, height: img.height, n, x: new Float32Array(n), y: new Float32Array(n), level: new Uint8Array(n), desc: new Uint32Array(n * 8) };
  const tables = levels.map((l) => integralImage(l.data, l.width, l.height));
  picked.forEach(({ level, c }, k) => {
    const l = levels[level];
    // Level pixel centres back to level-0 pixels.
    const sx = img.width / l.width;
    const sy = img.height / l.height;
    out.x[k] = (c.x + 0.5) * sx - 0.5;
    out.y[k] = (c.y + 0.5) * sy - 0.5;
    out.level[k] = level;
    describe(tables[level], l.width, c.x, c.y, out.desc, k * 8);
  });
  return out;
}

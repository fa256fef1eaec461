/**
 * Global (camera) motion between two frames, measured from pixels.
 *
 * 1. Both frames → luma at a small working size (longest side {@link MOTION_WORK_SIDE} px) and a
 *    4-level pyramid.
 * 2. An exhaustive translation search on the coarsest level (±30 % of the frame) gives candidate
 *    global shifts (its best local minima, zero, and the previous pair's motion), refined one level
 *    down; they are tried best-first until most textured blocks agree (periodic textures alias).
 * 3. A grid of 16×16 blocks (every 16 px) keeps the textured ones (structure-tensor min-eigenvalue
 *    test, so flat areas and bare edges — the aperture problem — are skipped); each is matched
 *    coarse-to-fine (SSD; ±3 px at level 2, ±2 px at level 1, then a 3×3 hill-climb at level 0)
 *    with a parabolic sub-pixel refinement.
 * 4. A similarity transform q = s·R(θ)·p + t (p relative to the image centre) is fitted to the
 *    block vectors with RANSAC then least squares on the inliers. The inlier ratio says how much
 *    of the textured image moves together: a small subject moving over a still background is an
 *    outlier set and leaves the camera motion at zero.
 *
 * Sign convention (all values describe how the IMAGE CONTENT moves on screen, y axis down):
 *   dx > 0: content moves right;  dy > 0: content moves down;
 *   zoom > 0: content grows (magnification increases);
 *   rot > 0: content turns clockwise on screen.
 * Camera-centric names (pan/tilt/zoom/roll) are derived in camera-movement.ts.
 */
import type { Frame } from '../media/types.js';
import { frameToGray, pyramid, fitSimilarity, type GrayImage, type PointPairs, type Similarity } from '../media/kernels/index.js';

/** Longest side of the working luma image used for motion. */
export const MOTION_WORK_SIDE = 192;
const LEVELS = 4;
/** Pyramid level where per-block search starts. */
const BLOCK_TOP = 2;
/** Block sizes (px at that level) for levels 0, 1, 2: they cover 16, 24, 32 px of level 0. */
const BLOCK = [16, 12, 8];
/** Exhaustive search radius per level (level 0 hill-climbs from the level-1 result instead). */
const SEARCH = [1, 2, 3];
/** Grid step between block centres at level 0. */
const GRID_STEP = 16;
/** Minimum structure-tensor eigenvalue (per pixel, luma² units) for a block to be trusted. */
const MIN_TEXTURE = 6;
/** RANSAC inlier distance, px at level 0. */
const INLIER_PX = 1.25;
/** Below this many textured blocks or inliers a pair's motion is not trusted. */
const MIN_BLOCKS = 6;

/** A frame prepared for motion estimation (keep it to pair with the next frame). */
export interface MotionFrame {
  t: number;
  /** Pyramid, level 0 = working size. */
  levels: GrayImage[];
  /** Width of the original frame (px) — for reference only; motion is normalised by width. */
  sourceWidth: number;
  /** Origins (level-0 px) of the grid blocks with enough texture to match. */
  blocks: Array<[number, number]>;
}

export interface PairMotion {
  t0: number;
  t1: number;
  dt: number;
  /** Content translation of the image centre, fraction of frame width per second (+ = right). */
  dx: number;
  /** Content translation, fraction of frame WIDTH per second (+ = down). */
  dy: number;
  /** Content scale rate, ln(scale)/s (≈ fraction per second; + = content grows). */
  zoom: number;
  /** Content rotation, degrees per second (+ = clockwise on screen). */
  rot: number;
  /** Per-pair displacement (not a rate): translation as fraction of width, scale ratio, rotation rad. */
  tx: number;
  ty: number;
  scale: number;
  theta: number;
  /** Inliers / textured blocks of the first frame (blocks that left the frame count as misses), 0..1. */
  inlierRatio: number;
  /** RMS residual of inliers, px at the working size. */
  residual: number;
  /** Textured blocks in the first frame. */
  blocks: number;
  /** Enough texture and agreement to trust this estimate. */
  valid: boolean;
}

export function prepareMotionFrame(frame: Frame, workSide = MOTION_WORK_SIDE): MotionFrame {
  const g = frameToGray(frame, workSide);
  const mf: MotionFrame = { t: frame.t, levels: pyramid(g, LEVELS), sourceWidth: frame.width, blocks: [] };
  mf.blocks = texturedBlocks(mf);
  return mf;
}

/** Sum of squared differences of a bs×bs block at (ax,ay) in a and (bx,by) in b (same width). */
function ssd(a: Float32Array, b: Float32Array, w: number, ax: number, ay: number, bx: number, by: number, bs: number): number {
  let s = 0;
  for (let y = 0; y < bs; y++) {
    let ia = (ay + y) * w + ax;
    let ib = (by + y) * w + bx;
    const end = ia + bs;
    for (; ia < end; ia++, ib++) {
      const d = a[ia] - b[ib];
      s += d * d;
    }
  }
  return s;
}

interface Shift {
  dx: number;
  dy: number;
  cost: number;
}

/**
 * Mean SSD over the overlap for every integer translation in [cx±rx]×[cy±ry] at one pyramid level
 * (row-major, (2rx+1)×(2ry+1); Infinity where the overlap is too small).
 */
function shiftCosts(a: GrayImage, b: GrayImage, cx: number, cy: number, rx: number, ry: number): Shift[] {
  const { width: w, height: h } = a;
  const out: Shift[] = [];
  const minOverlap = 0.35 * w * h;
  for (let dy = cy - ry; dy <= cy + ry; dy++) {
    const y0 = Math.max(0, -dy);
    const y1 = Math.min(h, h - dy);
    for (let dx = cx - rx; dx <= cx + rx; dx++) {
      const x0 = Math.max(0, -dx);
      const x1 = Math.min(w, w - dx);
      const n = Math.max(0, x1 - x0) * Math.max(0, y1 - y0);
      if (n < minOverlap) {
        out.push({ dx, dy, cost: Infinity });
        continue;
      }
      let s = 0;
      for (let y = y0; y < y1; y++) {
        let ia = y * w + x0;
        let ib = (y + dy) * w + x0 + dx;
        const end = y * w + x1;
        for (; ia < end; ia++, ib++) {
          const d = a.data[ia] - b.data[ib];
          s += d * d;
        }
      }
      // A slight preference for small shifts breaks ties on flat images.
      out.push({ dx, dy, cost: s / n + 1e-3 * (dx * dx + dy * dy) });
    }
  }
  return out;
}

/** The `k` lowest local minima (3×3) of a cost grid from {@link shiftCosts}. */
function localMinima(costs: Shift[], rx: number, ry: number, k: number): Shift[] {
  const nx = 2 * rx + 1;
  const ny = 2 * ry + 1;
  const mins: Shift[] = [];
  for (let j = 0; j < ny; j++) {
    for (let i = 0; i < nx; i++) {
      const c = costs[j * nx + i];
      if (c.cost === Infinity) continue;
      let isMin = true;
      for (let v = -1; v <= 1 && isMin; v++) {
        for (let u = -1; u <= 1; u++) {
          if ((u || v) && i + u >= 0 && i + u < nx && j + v >= 0 && j + v < ny && costs[(j + v) * nx + i + u].cost < c.cost) {
            isMin = false;
            break;
          }
        }
      }
      if (isMin) mins.push(c);
    }
  }
  return mins.sort((x, y) => x.cost - y.cost).slice(0, k);
}

/**
 * Global translation candidates at pyramid level `lvl`: the best local minima of an exhaustive
 * search at the coarsest level (±30 % of the frame), the zero shift and the optional prior, each
 * refined ±1 px at `lvl`, best first.
 */
function globalCandidates(a: MotionFrame, b: MotionFrame, lvl: number, prior?: [number, number]): Shift[] {
  const top = a.levels.length - 1;
  const at = a.levels[top];
  const bt = b.levels[top];
  const rx = Math.max(2, Math.floor(at.width * 0.3));
  const ry = Math.max(2, Math.floor(at.height * 0.3));
  const f = 1 << (top - lvl);
  const seeds: Array<[number, number]> = localMinima(shiftCosts(at, bt, 0, 0, rx, ry), rx, ry, 3).map((c) => [c.dx * f, c.dy * f]);
  seeds.push([0, 0]);
  if (prior) seeds.push([Math.round(prior[0]), Math.round(prior[1])]);
  const A = a.levels[lvl];
  const B = b.levels[lvl];
  const seen = new Set<string>();
  const out: Shift[] = [];
  for (const [sx, sy] of seeds) {
    const r = f >> 1 || 1;
    let best: Shift = { dx: sx, dy: sy, cost: Infinity };
    for (const c of shiftCosts(A, B, sx, sy, r, r)) if (c.cost < best.cost) best = c;
    const key = `${best.dx},${best.dy}`;
    if (best.cost === Infinity || seen.has(key)) continue;
    seen.add(key);
    out.push(best);
  }
  return out.sort((x, y) => x.cost - y.cost);
}

/** Smallest eigenvalue of the block's structure tensor, per pixel. */
function blockTexture(img: GrayImage, x0: number, y0: number, bs: number): number {
  const { width: w, height: h, data } = img;
  let sxx = 0;
  let syy = 0;
  let sxy = 0;
  let n = 0;
  for (let y = Math.max(1, y0); y < Math.min(h - 1, y0 + bs); y++) {
    for (let x = Math.max(1, x0); x < Math.min(w - 1, x0 + bs); x++) {
      const i = y * w + x;
      const gx = 0.5 * (data[i + 1] - data[i - 1]);
      const gy = 0.5 * (data[i + w] - data[i - w]);
      sxx += gx * gx;
      syy += gy * gy;
      sxy += gx * gy;
      n++;
    }
  }
  if (n === 0) return 0;
  sxx /= n;
  syy /= n;
  sxy /= n;
  const m = 0.5 * (sxx + syy);
  const d = Math.sqrt(0.25 * (sxx - syy) * (sxx - syy) + sxy * sxy);
  return m - d;
}

interface BlockVector {
  /** Centre relative to the image centre, level-0 px. */
  px: number;
  py: number;
  /** Displacement, level-0 px. */
  dx: number;
  dy: number;
}

/** Exhaustive integer search of block (ax,ay) in B around (px,py) ± r; [dx, dy, ssd]. */
function searchBlock(A: GrayImage, B: GrayImage, ax: number, ay: number, bs: number, px: number, py: number, r: number): [number, number, number] {
  let best = Infinity;
  let bdx = px;
  let bdy = py;
  for (let dy = py - r; dy <= py + r; dy++) {
    const by = ay + dy;
    if (by < 0 || by + bs > B.height) continue;
    for (let dx = px - r; dx <= px + r; dx++) {
      const bx = ax + dx;
      if (bx < 0 || bx + bs > B.width) continue;
      const s = ssd(A.data, B.data, A.width, ax, ay, bx, by, bs);
      if (s < best) {
        best = s;
        bdx = dx;
        bdy = dy;
      }
    }
  }
  return [bdx, bdy, best];
}

/** Textured block origins (level 0) of a frame: the grid cells worth matching. */
function texturedBlocks(a: MotionFrame): Array<[number, number]> {
  const l0 = a.levels[0];
  const W = l0.width;
  const H = l0.height;
  const bs0 = BLOCK[0];
  const margin = 4;
  const nx = Math.max(1, Math.floor((W - 2 * margin - bs0) / GRID_STEP) + 1);
  const ny = Math.max(1, Math.floor((H - 2 * margin - bs0) / GRID_STEP) + 1);
  const offX = (W - ((nx - 1) * GRID_STEP + bs0)) / 2;
  const offY = (H - ((ny - 1) * GRID_STEP + bs0)) / 2;
  const out: Array<[number, number]> = [];
  for (let j = 0; j < ny; j++) {
    for (let i = 0; i < nx; i++) {
      const bx0 = Math.round(offX + i * GRID_STEP);
      const by0 = Math.round(offY + j * GRID_STEP);
      if (bx0 < 0 || by0 < 0 || bx0 + bs0 > W || by0 + bs0 > H) continue;
      if (blockTexture(l0, bx0, by0, bs0) >= MIN_TEXTURE) out.push([bx0, by0]);
    }
  }
  return out;
}

/** Block vectors for the given textured blocks, searched around the global prediction (gx, gy) at level BLOCK_TOP. */
function matchBlocks(a: MotionFrame, b: MotionFrame, blocks: Array<[number, number]>, gx: number, gy: number): BlockVector[] {
  const blockTop = BLOCK_TOP;
  const l0 = a.levels[0];
  const b0 = b.levels[0];
  const W = l0.width;
  const H = l0.height;
  const out: BlockVector[] = [];
  const bs0 = BLOCK[0];
  const grid = new Float64Array(9);
  for (const [bx0, by0] of blocks) {
    const cx = bx0 + bs0 / 2;
    const cy = by0 + bs0 / 2;
    // Coarse to fine; (px, py) is the integer displacement prediction at the current level.
    let px = gx;
    let py = gy;
    let ok = true;
    for (let l = blockTop; l >= 1; l--) {
      const A = a.levels[l];
      const B = b.levels[l];
      const bs = BLOCK[l];
      const sc = 1 << l;
      const ax = Math.round(cx / sc - bs / 2);
      const ay = Math.round(cy / sc - bs / 2);
      if (ax >= 0 && ay >= 0 && ax + bs <= A.width && ay + bs <= A.height) {
        const [dx, dy, s] = searchBlock(A, B, ax, ay, bs, px, py, SEARCH[l]);
        if (s === Infinity) {
          ok = false;
          break;
        }
        px = dx;
        py = dy;
      }
      px *= 2;
      py *= 2;
    }
    if (!ok) continue;
    // Level 0: hill-climb on a 3×3 SSD neighbourhood until the centre is the minimum.
    const ax = bx0;
    const ay = by0;
    const bs = bs0;
    let found = false;
    for (let iter = 0; iter < 4 && !found; iter++) {
      for (let k = 0; k < 9; k++) {
        const bx = ax + px + (k % 3) - 1;
        const by = ay + py + Math.floor(k / 3) - 1;
        grid[k] = bx < 0 || by < 0 || bx + bs > b0.width || by + bs > b0.height ? Infinity : ssd(l0.data, b0.data, W, ax, ay, bx, by, bs);
      }
      let bi = 4;
      for (let k = 0; k < 9; k++) if (grid[k] < grid[bi]) bi = k;
      if (grid[4] === Infinity) break;
      if (bi === 4) found = true;
      else {
        px += (bi % 3) - 1;
        py += Math.floor(bi / 3) - 1;
      }
    }
    if (!found) continue;
    // Mean squared error per pixel too large: occlusion, a cut, or a blurred frame.
    if (grid[4] / (bs * bs) > 900) continue;
    const sx = parabola(grid[3], grid[4], grid[5]);
    const sy = parabola(grid[1], grid[4], grid[7]);
    out.push({ px: cx - W / 2, py: cy - H / 2, dx: px + sx, dy: py + sy });
  }
  return out;
}

function parabola(m: number, c: number, p: number): number {
  if (!Number.isFinite(m) || !Number.isFinite(p)) return 0;
  const den = m - 2 * c + p;
  if (den <= 1e-9) return 0;
  const d = (0.5 * (m - p)) / den;
  return Math.max(-0.5, Math.min(0.5, d));
}

/** Similarity q = z·p + t with complex z = a + ib (the kernel's fit). */
type Sim = Similarity;

function residual(m: Sim, v: BlockVector): number {
  const qx = v.px + v.dx;
  const qy = v.py + v.dy;
  const ex = m.a * v.px - m.b * v.py + m.tx - qx;
  const ey = m.b * v.px + m.a * v.py + m.ty - qy;
  return Math.hypot(ex, ey);
}

/** Deterministic PRNG (mulberry32) so results are reproducible. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Each block's centre and where it moved, as the similarity kernel reads them. */
function blockPairs(v: BlockVector[]): PointPairs {
  const px = new Float64Array(v.length);
  const py = new Float64Array(v.length);
  const qx = new Float64Array(v.length);
  const qy = new Float64Array(v.length);
  for (let i = 0; i < v.length; i++) {
    px[i] = v[i].px;
    py[i] = v[i].py;
    qx[i] = v[i].px + v[i].dx;
    qy[i] = v[i].py + v[i].dy;
  }
  return { px, py, qx, qy };
}

function inliersOf(m: Sim, v: BlockVector[], thr: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < v.length; i++) if (residual(m, v[i]) <= thr) out.push(i);
  return out;
}

/** RANSAC (MSAC cost) over 2-point similarity and 1-point translation hypotheses, then LS refits. */
function robustSimilarity(v: BlockVector[], W: number): { model: Sim; inliers: number[] } | null {
  const n = v.length;
  if (n < 2) return null;
  const pairs = blockPairs(v);
  const rand = rng(0x9e3779b9 ^ n);
  const t2 = INLIER_PX * INLIER_PX;
  let best: Sim | null = null;
  let bestCost = Infinity;
  const consider = (m: Sim | null): void => {
    if (!m) return;
    const s = Math.hypot(m.a, m.b);
    if (!(s > 0.5 && s < 2)) return;
    // Truncated squared residuals: prefers the tighter fit among equal inlier counts.
    let cost = 0;
    for (let i = 0; i < n && cost < bestCost; i++) {
      const r = residual(m, v[i]);
      cost += Math.min(r * r, t2);
    }
    if (cost < bestCost) {
      bestCost = cost;
      best = m;
    }
  };
  const minDist = 0.15 * W;
  const iters = Math.min(120, n * (n - 1));
  const pair = [0, 0];
  for (let k = 0; k < iters; k++) {
    const i = Math.floor(rand() * n);
    const j = Math.floor(rand() * n);
    if (i === j) {
      consider({ a: 1, b: 0, tx: v[i].dx, ty: v[i].dy });
      continue;
    }
    const dpx = v[j].px - v[i].px;
    const dpy = v[j].py - v[i].py;
    if (dpx * dpx + dpy * dpy < minDist * minDist) {
      consider({ a: 1, b: 0, tx: 0.5 * (v[i].dx + v[j].dx), ty: 0.5 * (v[i].dy + v[j].dy) });
      continue;
    }
    pair[0] = i;
    pair[1] = j;
    consider(fitSimilarity(pairs, pair));
  }
  consider({ a: 1, b: 0, tx: 0, ty: 0 });
  if (!best) return null;
  let model: Sim = best;
  let ins = inliersOf(model, v, INLIER_PX);
  if (ins.length < 2) return null;
  for (let r = 0; r < 4; r++) {
    const m = fitSimilarity(pairs, ins);
    if (!m) break;
    const next = inliersOf(m, v, INLIER_PX);
    if (next.length < 2) break;
    model = m;
    const same = next.length === ins.length && next.every((x, i) => x === ins[i]);
    ins = next;
    if (same) break;
  }
  return { model, inliers: ins };
}

/** Global motion between two prepared frames; `prior` (the previous pair's motion) seeds the search. */
export function estimatePairMotion(a: MotionFrame, b: MotionFrame, prior?: PairMotion): PairMotion {
  const l0 = a.levels[0];
  const W = l0.width;
  const dt = b.t - a.t;
  const base = { t0: a.t, t1: b.t, dt };
  const textured = a.blocks.length;
  const none: PairMotion = { ...base, dx: 0, dy: 0, zoom: 0, rot: 0, tx: 0, ty: 0, scale: 1, theta: 0, inlierRatio: 0, residual: 0, blocks: textured, valid: false };
  if (!(dt > 0) || textured < 2 || l0.width !== b.levels[0].width || l0.height !== b.levels[0].height) return none;
  const f = 1 / (1 << BLOCK_TOP);
  const seed: [number, number] | undefined =
    prior && prior.valid && prior.dt > 0 ? [(prior.tx * W * dt * f) / prior.dt, (prior.ty * W * dt * f) / prior.dt] : undefined;
  const candidates = globalCandidates(a, b, BLOCK_TOP, seed);
  // Try global predictions best-first; stop once most textured blocks agree.
  let best: { vectors: BlockVector[]; model: Sim; inliers: number[]; rms: number } | null = null;
  for (const c of candidates.slice(0, 3)) {
    const vectors = matchBlocks(a, b, a.blocks, c.dx, c.dy);
    const fit = robustSimilarity(vectors, W);
    if (!fit) continue;
    let r2 = 0;
    for (const i of fit.inliers) r2 += residual(fit.model, vectors[i]) ** 2;
    const rms = Math.sqrt(r2 / fit.inliers.length);
    if (!best || fit.inliers.length > best.inliers.length || (fit.inliers.length === best.inliers.length && rms < best.rms)) {
      best = { vectors, model: fit.model, inliers: fit.inliers, rms };
    }
    if (best.inliers.length >= 0.6 * textured) break;
  }
  if (!best) return none;
  const { model, inliers } = best;
  const scale = Math.hypot(model.a, model.b);
  const theta = Math.atan2(model.b, model.a);
  const inlierRatio = inliers.length / textured;
  const tx = model.tx / W;
  const ty = model.ty / W;
  return {
    ...base,
    dx: tx / dt,
    dy: ty / dt,
    zoom: Math.log(scale) / dt,
    rot: (theta * 180) / Math.PI / dt,
    tx,
    ty,
    scale,
    theta,
    inlierRatio,
    residual: best.rms,
    blocks: textured,
    valid: textured >= MIN_BLOCKS && inliers.length >= MIN_BLOCKS && inlierRatio >= 0.3,
  };
}

/** Motion of every consecutive pair of frames (frames sorted by time). */
export function estimateMotions(frames: Frame[], workSide = MOTION_WORK_SIDE): PairMotion[] {
  const out: PairMotion[] = [];
  let prev: MotionFrame | null = null;
  for (const f of frames) {
    const cur = prepareMotionFrame(f, workSide);
    if (prev) out.push(estimatePairMotion(prev, cur, out[out.length - 1]));
    prev = cur;
  }
  return out;
}

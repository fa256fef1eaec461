/**
 * The cheap "is there text here?" gate run before OCR detection: 5–13 ms of pure
 * TypeScript for a 1280×720 frame (detection costs 70–110 ms), so footage without text pays little.
 *
 * Text is rows of glyphs: blobs of one ink colour, about the same height and stroke width,
 * sitting on a common baseline with small gaps between them. The gate looks for exactly that:
 *
 * 1. luma, box-shrunk so the longest side is ≤ `workSide` (640);
 * 2. "ink": pixels darker or lighter than the mean of a window around them (half-size
 *    `windowFrac` of the short side) by more than `contrast` grey levels, two polarities;
 * 3. 4-connected components of each polarity, kept when glyph-shaped: height ≥ `minHeight`
 *    px (5) and ≤ a third of the frame, width ≤ 3× height, filled 12–80% of their box (solid
 *    blobs are allowed only if narrow, like I, l, 1, and at most half of a chain may be such
 *    bars); stroke width ≈ 2 × area / perimeter;
 * 4. each glyph links to its nearest right neighbour of the same polarity whose height is
 *    within 2×, vertical centre within 0.3 h, top or bottom aligned within 0.15 h, gap ≤ 1 h,
 *    core ink colour (darkest or lightest pixel) within 30 grey levels and stroke width within
 *    1.8×. A link is *strict* when it is a capital-letter-like match (heights within 1.15×, top and bottom within 0.12 h, gap
 *    ≤ 0.6 h, ink within 15, stroke width within 1.4×);
 * 5. the frame has text-like regions when a chain of links reaches `looseChain` (5) glyphs or
 *    a run of strict links `strictChain` (3) glyphs ("EXIT", "STOP"), at most half of them
 *    bars, and its glyphs hold at least `purity` (60%) of the ink of their polarity inside the
 *    chain's box (text sits on clean background; chance chains in clutter and noise do not).
 *
 * Windows of a facade, foliage and stones make chains too, but seldom five glyphs long or three
 * strictly alike; small, curved, blurred or sideways text is missed (as it mostly is by the
 * detector at the resolution OCR runs at). Measured rates are in docs/models.md.
 */
import { lumaQ8 } from '../../media/kernels/index.js';
import type { Frame } from '../../media/types.js';

export interface GateOptions {
  /** Longest side of the analysed luma image. Default 640. */
  workSide?: number;
  /** Grey levels an ink pixel must differ from its neighbourhood mean. Default 24. */
  contrast?: number;
  /** Half-size of the neighbourhood window, as a fraction of the work image's short side. Default 0.08. */
  windowFrac?: number;
  /** Smallest glyph height in work pixels. Default 5. */
  minHeight?: number;
  /** Glyphs in a chain that make text. Default 5. */
  looseChain?: number;
  /** Glyphs in a run of strict links that make text. Default 3. */
  strictChain?: number;
  /** Largest height ratio of linked glyphs (x-height letters next to capitals, broken strokes). Default 2. */
  heightRatio?: number;
  /**
   * Smallest share of a chain's box's ink (of the chain's polarity) that belongs to the chain:
   * text sits on clean background, chance chains in clutter and noise do not. Default 0.6.
   */
  purity?: number;
}

export interface GateRegion {
  /** Fractions of the frame. */
  x: number;
  y: number;
  w: number;
  h: number;
  glyphs: number;
}

export interface GateResult {
  hasText: boolean;
  /** Glyph-shaped components found. */
  glyphs: number;
  /** Longest chain of linked glyphs and longest run of strict links (before the purity check). */
  longestChain: number;
  longestStrictChain: number;
  /** Chains that passed (fractions of the frame). */
  regions: GateRegion[];
}

interface Glyph {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
  h: number;
  w: number;
  cy: number;
  pol: number;
  /** Core ink colour (grey level). */
  ink: number;
  sw: number;
  /** Pixels. */
  n: number;
  /** A solid or very narrow blob (I, l, 1 — or a window, a post). */
  bar: boolean;
}

/** Luma (Rec. 601, integer), box-averaged by an integer factor so the longest side ≤ `side`. */
function workLuma(frame: Frame, side: number): { L: Uint8Array; w: number; h: number; f: number } {
  const f = Math.max(1, Math.ceil(Math.max(frame.width, frame.height) / side));
  const w = Math.max(1, Math.floor(frame.width / f));
  const h = Math.max(1, Math.floor(frame.height / f));
  const L = new Uint8Array(w * h);
  const d = frame.data;
  const fw = frame.width;
  if (f === 1) {
    for (let y = 0; y < h; y++) {
      let p = y * fw * 3;
      const o = y * w;
      for (let x = 0; x < w; x++, p += 3) L[o + x] = lumaQ8(d[p], d[p + 1], d[p + 2]) >> 8;
    }
    return { L, w, h, f };
  }
  if (f === 2) {
    // The common case (1280-px frames): no inner loops.
    const rs = fw * 3;
    for (let y = 0; y < h; y++) {
      let p = 2 * y * rs;
      const o = y * w;
      for (let x = 0; x < w; x++, p += 6) {
        const q = p + rs;
        const r = d[p] + d[p + 3] + d[q] + d[q + 3];
        const g = d[p + 1] + d[p + 4] + d[q + 1] + d[q + 4];
        const b = d[p + 2] + d[p + 5] + d[q + 2] + d[q + 5];
        L[o + x] = lumaQ8(r, g, b) >> 10;
      }
    }
    return { L, w, h, f };
  }
  const acc = new Uint32Array(w);
  const div = f * f * 256;
  for (let y = 0; y < h; y++) {
    acc.fill(0);
    for (let dy = 0; dy < f; dy++) {
      let p = (y * f + dy) * fw * 3;
      for (let x = 0; x < w; x++) {
        let s = 0;
        for (let dx = 0; dx < f; dx++, p += 3) s += lumaQ8(d[p], d[p + 1], d[p + 2]);
        acc[x] += s;
      }
    }
    const o = y * w;
    for (let x = 0; x < w; x++) L[o + x] = (acc[x] / div) | 0;
  }
  return { L, w, h, f };
}

export function textLikeRegions(frame: Frame, opts: GateOptions = {}): GateResult {
  const workSide = opts.workSide ?? 640;
  const K = opts.contrast ?? 24;
  const minH = opts.minHeight ?? 5;
  const looseChain = opts.looseChain ?? 5;
  const strictChain = opts.strictChain ?? 3;
  const hr = opts.heightRatio ?? 2;
  const minPurity = opts.purity ?? 0.6;
  const none: GateResult = { hasText: false, glyphs: 0, longestChain: 0, longestStrictChain: 0, regions: [] };
  if (frame.width < 8 || frame.height < 8) return none;
  const { L, w, h } = workLuma(frame, workSide);
  const N = w * h;

  // Integral image (fits in int32: ≤ 640 × 640 × 255).
  const W1 = w + 1;
  const I = new Int32Array(W1 * (h + 1));
  for (let y = 0; y < h; y++) {
    let row = 0;
    const o = (y + 1) * W1;
    const u = y * W1;
    for (let x = 0; x < w; x++) {
      row += L[y * w + x];
      I[o + x + 1] = I[u + x + 1] + row;
    }
  }

  // Ink: 1 = darker than the neighbourhood, 2 = lighter.
  const R = Math.max(4, Math.round((opts.windowFrac ?? 0.08) * Math.min(w, h)));
  const ink = new Uint8Array(N);
  const K1 = K;
  const classify = (row: number, y: number, a: number, b: number, dy: number, from: number, to: number) => {
    for (let x = from; x < to; x++) {
      const x0 = x - R > 0 ? x - R : 0;
      const x1 = x + R + 1 < w ? x + R + 1 : w;
      const sum = I[a + x1] - I[b + x1] - I[a + x0] + I[b + x0];
      const area = dy * (x1 - x0);
      const v = L[row + x] * area;
      const k = K1 * area;
      ink[row + x] = v < sum - k ? 1 : v > sum + k ? 2 : 0;
    }
  };
  for (let y = 0; y < h; y++) {
    const y0 = Math.max(0, y - R);
    const y1 = Math.min(h, y + R + 1);
    const a = y1 * W1;
    const b = y0 * W1;
    const dy = y1 - y0;
    const row = y * w;
    // Borders with clamped windows; the interior with a full one, no clamping.
    const left = Math.min(w, R);
    const right = Math.max(left, w - R - 1);
    classify(row, y, a, b, dy, 0, left);
    const area = dy * (2 * R + 1);
    const k = K * area;
    for (let x = left; x < right; x++) {
      const sum = I[a + x + R + 1] - I[b + x + R + 1] - I[a + x - R] + I[b + x - R];
      const v = L[row + x] * area;
      ink[row + x] = v < sum - k ? 1 : v > sum + k ? 2 : 0;
    }
    classify(row, y, a, b, dy, right, w);
  }

  // Glyph-shaped components.
  const seen = new Uint8Array(N);
  const stack = new Int32Array(N);
  const glyphs: Glyph[] = [];
  const maxH = h / 3;
  for (let s = 0; s < N; s++) {
    const pol = ink[s];
    if (pol === 0 || seen[s]) continue;
    let top = 0;
    stack[top++] = s;
    seen[s] = 1;
    let x0 = w;
    let x1 = -1;
    let y0 = h;
    let y1 = -1;
    let cnt = 0;
    // The ink's core colour: the darkest (dark ink) or lightest (light ink) pixel. A mean would
    // mix in the anti-aliased rim, which weighs more in thin glyphs than in a solid I.
    let core = pol === 1 ? 255 : 0;
    let per = 0;
    while (top > 0) {
      const p = stack[--top];
      const y = (p / w) | 0;
      const x = p - y * w;
      cnt++;
      const v = L[p];
      if (pol === 1 ? v < core : v > core) core = v;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
      let edge = false;
      if (x > 0) {
        if (ink[p - 1] === pol) {
          if (!seen[p - 1]) {
            seen[p - 1] = 1;
            stack[top++] = p - 1;
          }
        } else edge = true;
      } else edge = true;
      if (x < w - 1) {
        if (ink[p + 1] === pol) {
          if (!seen[p + 1]) {
            seen[p + 1] = 1;
            stack[top++] = p + 1;
          }
        } else edge = true;
      } else edge = true;
      if (y > 0) {
        if (ink[p - w] === pol) {
          if (!seen[p - w]) {
            seen[p - w] = 1;
            stack[top++] = p - w;
          }
        } else edge = true;
      } else edge = true;
      if (y < h - 1) {
        if (ink[p + w] === pol) {
          if (!seen[p + w]) {
            seen[p + w] = 1;
            stack[top++] = p + w;
          }
        } else edge = true;
      } else edge = true;
      if (edge) per++;
    }
    const bw = x1 - x0 + 1;
    const bh = y1 - y0 + 1;
    if (bh < minH || bh > maxH || bw > 3 * bh || bw * 8 < bh) continue;
    const fill = cnt / (bw * bh);
    if (fill < 0.12 || (fill > 0.8 && bw > 0.4 * bh)) continue;
    glyphs.push({ x0, x1, y0, y1, w: bw, h: bh, cy: (y0 + y1) / 2, pol, ink: core, sw: (2 * cnt) / Math.max(1, per), bar: fill > 0.8 || bw < 0.3 * bh, n: cnt });
  }
  if (glyphs.length < Math.min(looseChain, strictChain)) return { ...none, glyphs: glyphs.length };

  // Link each glyph to its nearest compatible right neighbour (each glyph has one predecessor at most).
  glyphs.sort((a, b) => a.x0 - b.x0);
  const G = glyphs.length;
  const next = new Int32Array(G).fill(-1);
  const hasPrev = new Uint8Array(G);
  const strict = new Uint8Array(G);
  for (let i = 0; i < G; i++) {
    const a = glyphs[i];
    let best = -1;
    let bestGap = Infinity;
    for (let j = i + 1; j < G; j++) {
      const b = glyphs[j];
      const mh = a.h > b.h ? a.h : b.h;
      const gap = b.x0 - a.x1;
      if (gap > hr * a.h) break; // sorted by x0, and a partner is at most hr× taller than a: none further on fits
      if (gap > mh || b.pol !== a.pol || gap < -0.2 * Math.min(a.w, b.w)) continue;
      if (mh / Math.min(a.h, b.h) > hr) continue;
      if (Math.abs(a.cy - b.cy) > 0.3 * mh) continue;
      if (Math.abs(a.y1 - b.y1) > 0.15 * mh && Math.abs(a.y0 - b.y0) > 0.15 * mh) continue;
      if (Math.abs(a.ink - b.ink) > 30) continue;
      if (Math.max(a.sw, b.sw) / Math.min(a.sw, b.sw) > 1.8) continue;
      if (gap < bestGap) {
        bestGap = gap;
        best = j;
      }
    }
    if (best < 0 || hasPrev[best]) continue;
    next[i] = best;
    hasPrev[best] = 1;
    const b = glyphs[best];
    const mh = Math.max(a.h, b.h);
    strict[i] =
      mh / Math.min(a.h, b.h) <= 1.15 &&
      Math.abs(a.ink - b.ink) <= 15 &&
      Math.max(a.sw, b.sw) / Math.min(a.sw, b.sw) <= 1.4 &&
      Math.abs(a.y0 - b.y0) <= 0.12 * mh &&
      Math.abs(a.y1 - b.y1) <= 0.12 * mh &&
      b.x0 - a.x1 <= 0.6 * mh
        ? 1
        : 0;
  }

  let longest = 0;
  let longestStrict = 1;
  const regions: GateRegion[] = [];
  for (let i = 0; i < G; i++) {
    if (hasPrev[i]) continue;
    let n = 1;
    let px = glyphs[i].n;
    let bars = glyphs[i].bar ? 1 : 0;
    let run = 1;
    let bestRun = 1;
    let j = i;
    let rx0 = glyphs[i].x0;
    let rx1 = glyphs[i].x1;
    let ry0 = glyphs[i].y0;
    let ry1 = glyphs[i].y1;
    while (next[j] >= 0) {
      run = strict[j] ? run + 1 : 1;
      if (run > bestRun) bestRun = run;
      j = next[j];
      n++;
      const g = glyphs[j];
      if (g.bar) bars++;
      px += g.n;
      if (g.x0 < rx0) rx0 = g.x0;
      if (g.x1 > rx1) rx1 = g.x1;
      if (g.y0 < ry0) ry0 = g.y0;
      if (g.y1 > ry1) ry1 = g.y1;
    }
    // A row of solid bars is a fence, a colonnade or a row of windows, not a word.
    if (2 * bars > n) continue;
    if (n > longest) longest = n;
    if (bestRun > longestStrict) longestStrict = bestRun;
    if (n >= looseChain || bestRun >= strictChain) {
      let inkPx = 0;
      const pol = glyphs[i].pol;
      for (let y = ry0; y <= ry1; y++) for (let x = rx0, p = y * w + rx0; x <= rx1; x++, p++) if (ink[p] === pol) inkPx++;
      if (px < minPurity * inkPx) continue;
      regions.push({ x: rx0 / w, y: ry0 / h, w: (rx1 - rx0 + 1) / w, h: (ry1 - ry0 + 1) / h, glyphs: n });
    }
  }
  return { hasText: regions.length > 0, glyphs: G, longestChain: longest, longestStrictChain: longestStrict, regions };
}

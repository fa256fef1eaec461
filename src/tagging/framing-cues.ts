/**
 * Pixel cues for framing ({@link framingPixelCues}): focus map (sharp / defocused / flat cells),
 * sky band, top-vs-bottom difference, detail spectrum and converging verticals, measured on a
 * ≤ 256 px copy of the frame. The kernels (luma, blur, halving, percentile) are media/kernels.
 */
import { boxBlur, checkFrame, halve, luma, percentile, round4, type GrayImage } from '../media/kernels/index.js';
import type { Frame } from '../media/types.js';
import { FRAMING_WEIGHTS, type FramingWeights } from './framing-weights.js';
import type { FramingPixelCues } from './framing-labels.js';
import { estimateHorizon } from './pixels.js';

/** Area-averaged RGB planes at a working size with the longest side ≤ `side`. */
function smallRgb(frame: Frame, side: number): { w: number; h: number; r: Float32Array; g: Float32Array; b: Float32Array; l: Float32Array } {
  const { width: W, height: H, data } = frame;
  const s = Math.min(1, side / Math.max(W, H));
  const w = Math.max(8, Math.round(W * s));
  const h = Math.max(8, Math.round(H * s));
  const r = new Float32Array(w * h);
  const g = new Float32Array(w * h);
  const b = new Float32Array(w * h);
  const n = new Float32Array(w * h);
  for (let y = 0; y < H; y++) {
    const oy = Math.min(h - 1, Math.floor((y * h) / H));
    for (let x = 0; x < W; x++) {
      const ox = Math.min(w - 1, Math.floor((x * w) / W));
      const o = oy * w + ox;
      const i = (y * W + x) * 3;
      r[o] += data[i];
      g[o] += data[i + 1];
      b[o] += data[i + 2];
      n[o]++;
    }
  }
  const l = new Float32Array(w * h);
  for (let i = 0; i < w * h; i++) {
    const k = n[i] || 1;
    r[i] /= k;
    g[i] /= k;
    b[i] /= k;
    l[i] = luma(r[i], g[i], b[i]);
  }
  return { w, h, r, g, b, l };
}

/**
 * Pixel cues for framing, measured on a ≤ 256 px copy of the frame (≈ 10–20 ms): a 16-column
 * grid of cells, each with its fine detail (mean |Laplacian|), its coarse contrast (luma spread
 * after a 7-px blur), brightness and colour. Cells are `sharp` (fine detail near the frame's best),
 * `defocused` (coarse structure without fine detail — bokeh, the signature of a close subject and
 * shallow depth of field) or `flat`. Sky = smooth, bright, bluish or neutral cells connected to
 * the top edge. Converging verticals from the vertical line family of {@link estimateHorizon} run
 * on the left and right 40 % of the frame separately.
 */
export function framingPixelCues(frame: Frame, weights: FramingWeights = FRAMING_WEIGHTS): FramingPixelCues {
  checkFrame(frame);
  const P = weights.pixels;
  const { w, h, r, g, b, l } = smallRgb(frame, P.side);
  const blur = boxBlur(l, w, h, P.blurRadius);
  const lap = new Float32Array(w * h);
  for (let y = 1; y < h - 1; y++) {
    for (let x = 1; x < w - 1; x++) {
      const i = y * w + x;
      lap[i] = Math.abs(4 * l[i] - l[i - 1] - l[i + 1] - l[i - w] - l[i + w]);
    }
  }
  const cols = P.cols;
  const rows = Math.max(P.minRows, Math.round((cols * h) / w));
  const nc = cols * rows;
  const hf = new Float32Array(nc);
  const lf = new Float32Array(nc);
  const lum = new Float32Array(nc);
  const sat = new Float32Array(nc);
  const blu = new Float32Array(nc);
  for (let cy = 0; cy < rows; cy++) {
    const y0 = Math.max(1, Math.floor((cy * h) / rows));
    const y1 = Math.min(h - 1, Math.floor(((cy + 1) * h) / rows));
    for (let cx = 0; cx < cols; cx++) {
      const x0 = Math.max(1, Math.floor((cx * w) / cols));
      const x1 = Math.min(w - 1, Math.floor(((cx + 1) * w) / cols));
      let n = 0;
      let sh = 0;
      let sb = 0;
      let sbb = 0;
      let sl = 0;
      let ss = 0;
      let sblue = 0;
      for (let y = y0; y < y1; y++) {
        for (let x = x0; x < x1; x++) {
          const i = y * w + x;
          n++;
          sh += lap[i];
          sb += blur[i];
          sbb += blur[i] * blur[i];
          sl += l[i];
          const mx = Math.max(r[i], g[i], b[i]);
          const mn = Math.min(r[i], g[i], b[i]);
          ss += mx > 0 ? (mx - mn) / mx : 0;
          sblue += b[i] - r[i];
        }
      }
      const c = cy * cols + cx;
      if (n === 0) continue;
      hf[c] = sh / n;
      lf[c] = Math.sqrt(Math.max(0, sbb / n - (sb / n) ** 2));
      lum[c] = sl / n / 255;
      sat[c] = ss / n;
      blu[c] = sblue / n / 255;
    }
  }
  const hfRef = Math.max(P.hfRefMin, percentile(hf, P.hfRefPercentile));
  const hfMed = percentile(hf, 0.5);
  let sharp = 0;
  let defocus = 0;
  let flat = 0;
  const isSkyCell = new Uint8Array(nc);
  for (let c = 0; c < nc; c++) {
    const fine = hf[c] / hfRef;
    if (fine >= P.sharpRel && hf[c] >= P.sharpAbs) sharp++;
    else if (lf[c] < P.flatLf && hf[c] < Math.max(P.flatHfAbs, P.flatHfRel * hfRef)) flat++;
    else if (fine < P.defocusRel && hf[c] < P.defocusLfSlope * lf[c] + P.defocusLfOffset) defocus++;
    // Sky: smooth, fairly bright, blue or neutral (clouds, haze, dusk glow).
    const smooth = hf[c] < Math.max(P.skyHfAbs, P.skyHfRel * hfRef) && lf[c] < P.skyLf;
    // Blue (even a deep polarised blue), or neutral and bright (clouds, haze), or pale.
    const blue = blu[c] > P.skyBlue && lum[c] > P.skyBlueMinLum;
    const neutral = sat[c] < P.skyNeutralSat && lum[c] > P.skyNeutralLum;
    const pale = lum[c] > P.skyPaleLum && sat[c] < P.skyPaleSat;
    if (smooth && (blue || neutral || pale)) isSkyCell[c] = 1;
  }
  // Sky connected to the top edge (4-neighbour flood fill).
  const sky = new Uint8Array(nc);
  const stack: number[] = [];
  for (let cx = 0; cx < cols; cx++) if (isSkyCell[cx]) {
    sky[cx] = 1;
    stack.push(cx);
  }
  while (stack.length) {
    const c = stack.pop()!;
    const cx = c % cols;
    const cy = (c - cx) / cols;
    const nb = [cy > 0 ? c - cols : -1, cy < rows - 1 ? c + cols : -1, cx > 0 ? c - 1 : -1, cx < cols - 1 ? c + 1 : -1];
    for (const d of nb) if (d >= 0 && isSkyCell[d] && !sky[d]) {
      sky[d] = 1;
      stack.push(d);
    }
  }
  let skyN = 0;
  let skyTopN = 0;
  let depth = 0;
  for (let cx = 0; cx < cols; cx++) {
    if (sky[cx]) skyTopN++;
    let k = 0;
    while (k < rows && sky[k * cols + cx]) k++;
    depth += k / rows;
  }
  for (let c = 0; c < nc; c++) skyN += sky[c];
  // Top vs bottom third.
  const third = Math.max(1, Math.floor(rows / 3));
  const region = (fromRow: number): { l: number; hf: number; s: number; bl: number } => {
    let sl = 0;
    let sh = 0;
    let ss = 0;
    let sb = 0;
    let n = 0;
    for (let cy = fromRow; cy < fromRow + third; cy++) {
      for (let cx = 0; cx < cols; cx++) {
        const c = cy * cols + cx;
        sl += lum[c];
        sh += Math.log1p(hf[c]);
        ss += sat[c];
        sb += blu[c];
        n++;
      }
    }
    return { l: sl / n, hf: sh / n, s: ss / n, bl: sb / n };
  };
  const top = region(0);
  const bot = region(rows - third);
  const topBottomDiff = Math.abs(top.l - bot.l) + P.tbdDetail * Math.abs(top.hf - bot.hf) + Math.abs(top.s - bot.s) + P.tbdBlue * Math.abs(top.bl - bot.bl);
  let satAll = 0;
  for (let c = 0; c < nc; c++) satAll += sat[c] / nc;

  // Detail spectrum: mean |Laplacian| at the working size vs a quarter of it.
  const lapMean = (img: Float32Array, iw: number, ih: number): number => {
    let acc = 0;
    let n = 0;
    for (let y = 1; y < ih - 1; y++) {
      for (let x = 1; x < iw - 1; x++) {
        const i = y * iw + x;
        acc += Math.abs(4 * img[i] - img[i - 1] - img[i + 1] - img[i - iw] - img[i + iw]);
        n++;
      }
    }
    return n ? acc / n : 0;
  };
  let q: GrayImage = { width: w, height: h, data: l };
  const energies = [lapMean(l, w, h)];
  for (let lev = 0; lev < 2; lev++) {
    q = halve(q);
    energies.push(lapMean(q.data, q.width, q.height));
  }
  const detailSlope = Math.log((energies[0] + 0.5) / (energies[2] + 0.5)) / 2;

  // Converging verticals: vertical line family on each side.
  const k = keystone(l, w, h);
  return {
    defocus: round4(defocus / nc),
    sharp: round4(sharp / nc),
    flat: round4(flat / nc),
    focusSpread: round4(Math.log((percentile(hf, P.focusPercentile) + 0.5) / (hfMed + 0.5))),
    skyTop: round4(skyTopN / cols),
    skyShare: round4(skyN / nc),
    skyLine: round4(depth / cols),
    topBottomDiff: round4(topBottomDiff),
    keystone: k.angle,
    keystoneScore: k.score,
    saturation: round4(satAll),
    detailSlope: round4(detailSlope),
  };
}

function keystone(l: Float32Array, w: number, h: number): { angle: number; score: number } {
  const cw = Math.round(0.4 * w);
  if (cw < 16 || h < 16) return { angle: 0, score: 0 };
  const crop = (x0: number): { width: number; height: number; data: Float32Array } => {
    const data = new Float32Array(cw * h);
    for (let y = 0; y < h; y++) for (let x = 0; x < cw; x++) data[y * cw + x] = l[y * w + x0 + x];
    return { width: cw, height: h, data };
  };
  const left = estimateHorizon(crop(0)).families?.vertical;
  const right = estimateHorizon(crop(w - cw)).families?.vertical;
  if (!left || !right || left.score <= 0 || right.score <= 0) return { angle: 0, score: 0 };
  // Angles are + counter-clockwise; lines converging upwards lean right on the left side (−) and
  // left on the right side (+).
  return { angle: Math.round(((right.angle - left.angle) / 2) * 100) / 100, score: round4(Math.min(left.score, right.score)) };
}

/**
 * Colour, brightness and layout statistics straight from the pixels (no model): overall lighting,
 * named dominant colours, and what the top / bottom of the frame look like (sky, vegetation,
 * water, snow...). A few ms per frame on a sub-sampled grid.
 */
import { luma } from '../../media/kernels/index.js';
import type { Frame } from '../../media/types.js';

export const COLOUR_NAMES = [
  'black', 'grey', 'white', 'red', 'orange', 'brown', 'yellow', 'green', 'teal', 'blue', 'purple', 'pink',
] as const;
export type ColourName = (typeof COLOUR_NAMES)[number];
export type ColourHistogram = Record<ColourName, number>;

export interface RegionStats {
  /** Mean luma in [0,1]. */
  brightness: number;
  /** Mean HSV saturation in [0,1]. */
  saturation: number;
  /** Mean absolute luma gradient (texture / detail) in [0,1]. */
  texture: number;
  /** Fraction of sampled pixels per named colour (sums to 1). */
  colours: ColourHistogram;
}

export interface ColourStats extends RegionStats {
  /** Standard deviation of luma in [0,1]. */
  contrast: number;
  /** Hasler–Süsstrunk colourfulness, scaled to roughly [0,1]. */
  colourfulness: number;
  /** Fraction of very bright pixels (luma > 0.85). */
  highlights: number;
  /** Fraction of very dark pixels (luma < 0.12). */
  shadows: number;
  /** Mean (r - b) in [-1,1]: positive = warm light, negative = cool. */
  warmth: number;
  top: RegionStats;
  middle: RegionStats;
  bottom: RegionStats;
  /** 32x18-ish grey thumbnail (luma 0..255) for cheap change detection between frames. */
  thumb: Uint8Array;
  thumbW: number;
  thumbH: number;
}

/** Name of an RGB colour (0..255 each). */
export function colourName(r: number, g: number, b: number): ColourName {
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const v = max / 255;
  const s = max === 0 ? 0 : (max - min) / max;
  if (v < 0.16) return 'black';
  if (s < 0.16 || max - min < 18) {
    if (v > 0.8) return 'white';
    if (v < 0.25) return 'black';
    return 'grey';
  }
  let h: number;
  const d = max - min;
  if (max === r) h = ((g - b) / d) % 6;
  else if (max === g) h = (b - r) / d + 2;
  else h = (r - g) / d + 4;
  h *= 60;
  if (h < 0) h += 360;
  if (h >= 345 || h < 15) {
    if (v < 0.45 && s > 0.25) return 'brown';
    return s < 0.4 && v > 0.7 ? 'pink' : 'red';
  }
  if (h < 42) return v < 0.62 ? 'brown' : 'orange';
  if (h < 70) return v < 0.45 ? 'brown' : 'yellow';
  if (h < 160) return 'green';
  if (h < 185) return 'teal';
  if (h < 255) return 'blue';
  if (h < 290) return 'purple';
  return 'pink';
}

function emptyHist(): ColourHistogram {
  return Object.fromEntries(COLOUR_NAMES.map((c) => [c, 0])) as ColourHistogram;
}

interface Acc {
  n: number;
  luma: number;
  sat: number;
  tex: number;
  texN: number;
  hist: ColourHistogram;
}

function newAcc(): Acc {
  return { n: 0, luma: 0, sat: 0, tex: 0, texN: 0, hist: emptyHist() };
}

function finish(a: Acc): RegionStats {
  const n = Math.max(1, a.n);
  const colours = emptyHist();
  for (const c of COLOUR_NAMES) colours[c] = a.hist[c] / n;
  return { brightness: a.luma / n, saturation: a.sat / n, texture: a.tex / Math.max(1, a.texN), colours };
}

/** Statistics of one frame; samples about `samples` pixels on a regular grid. */
export function colourStats(frame: Frame, samples = 16_000): ColourStats {
  const { width: w, height: h, data } = frame;
  const step = Math.max(1, Math.round(Math.sqrt((w * h) / samples)));
  const all = newAcc();
  const regions = [newAcc(), newAcc(), newAcc()];
  let lumaSq = 0;
  let rg = 0;
  let rgSq = 0;
  let yb = 0;
  let ybSq = 0;
  let highlights = 0;
  let shadows = 0;
  let warmth = 0;
  for (let y = 0; y < h; y += step) {
    const region = regions[Math.min(2, Math.floor((3 * y) / h))];
    for (let x = 0; x < w; x += step) {
      const i = (y * w + x) * 3;
      const r = data[i];
      const g = data[i + 1];
      const b = data[i + 2];
      const l = luma(r, g, b) / 255;
      const max = Math.max(r, g, b);
      const s = max === 0 ? 0 : (max - Math.min(r, g, b)) / max;
      const name = colourName(r, g, b);
      all.n++;
      all.luma += l;
      all.sat += s;
      all.hist[name]++;
      region.n++;
      region.luma += l;
      region.sat += s;
      region.hist[name]++;
      lumaSq += l * l;
      const drg = (r - g) / 255;
      const dyb = (0.5 * (r + g) - b) / 255;
      rg += drg;
      rgSq += drg * drg;
      yb += dyb;
      ybSq += dyb * dyb;
      warmth += (r - b) / 255;
      if (l > 0.85) highlights++;
      if (l < 0.12) shadows++;
      // Texture: luma difference to the next pixel right and below (full resolution).
      if (x + 1 < w && y + 1 < h) {
        const j = i + 3;
        const k = i + w * 3;
        const lr = luma(data[j], data[j + 1], data[j + 2]) / 255;
        const ld = luma(data[k], data[k + 1], data[k + 2]) / 255;
        const t = Math.abs(lr - l) + Math.abs(ld - l);
        all.tex += t;
        all.texN++;
        region.tex += t;
        region.texN++;
      }
    }
  }
  const n = Math.max(1, all.n);
  const meanL = all.luma / n;
  const sdRg = Math.sqrt(Math.max(0, rgSq / n - (rg / n) ** 2));
  const sdYb = Math.sqrt(Math.max(0, ybSq / n - (yb / n) ** 2));
  const colourfulness = Math.sqrt(sdRg ** 2 + sdYb ** 2) + 0.3 * Math.sqrt((rg / n) ** 2 + (yb / n) ** 2);
  const thumb = thumbnail(frame, 32);
  return {
    ...finish(all),
    contrast: Math.sqrt(Math.max(0, lumaSq / n - meanL * meanL)),
    colourfulness: Math.min(1, colourfulness / 0.6),
    highlights: highlights / n,
    shadows: shadows / n,
    warmth: warmth / n,
    top: finish(regions[0]),
    middle: finish(regions[1]),
    bottom: finish(regions[2]),
    ...thumb,
  };
}

/** Box-averaged grey thumbnail, `tw` wide. */
export function thumbnail(frame: Frame, tw: number): { thumb: Uint8Array; thumbW: number; thumbH: number } {
  const { width: w, height: h, data } = frame;
  const th = Math.max(1, Math.round((tw * h) / w));
  const sum = new Float64Array(tw * th);
  const cnt = new Uint32Array(tw * th);
  const step = Math.max(1, Math.floor(Math.min(w / tw, h / th) / 4));
  for (let y = 0; y < h; y += step) {
    const ty = Math.min(th - 1, Math.floor((y * th) / h));
    for (let x = 0; x < w; x += step) {
      const tx = Math.min(tw - 1, Math.floor((x * tw) / w));
      const i = (y * w + x) * 3;
      sum[ty * tw + tx] += luma(data[i], data[i + 1], data[i + 2]);
      cnt[ty * tw + tx]++;
    }
  }
  const thumb = new Uint8Array(tw * th);
  for (let i = 0; i < thumb.length; i++) thumb[i] = cnt[i] ? Math.round(sum[i] / cnt[i]) : 0;
  return { thumb, thumbW: tw, thumbH: th };
}

/** Mean absolute difference of two thumbnails in [0,1] (1 = completely different). */
export function thumbDiff(a: ColourStats, b: ColourStats): number {
  if (a.thumb.length !== b.thumb.length) return 1;
  let s = 0;
  for (let i = 0; i < a.thumb.length; i++) s += Math.abs(a.thumb[i] - b.thumb[i]);
  return s / a.thumb.length / 255;
}

/** Averages region statistics over frames. */
export function meanRegion(list: RegionStats[]): RegionStats {
  const out: RegionStats = { brightness: 0, saturation: 0, texture: 0, colours: emptyHist() };
  if (list.length === 0) return out;
  for (const r of list) {
    out.brightness += r.brightness / list.length;
    out.saturation += r.saturation / list.length;
    out.texture += r.texture / list.length;
    for (const c of COLOUR_NAMES) out.colours[c] += r.colours[c] / list.length;
  }
  return out;
}

/** Averages whole-frame statistics over frames (thumbnail of the middle frame). */
export function meanStats(list: ColourStats[]): ColourStats {
  if (list.length === 0) throw new Error('meanStats: no frames');
  const base = meanRegion(list);
  const avg = (f: (s: ColourStats) => number) => list.reduce((s, x) => s + f(x), 0) / list.length;
  const mid = list[list.length >> 1];
  return {
    ...base,
    contrast: avg((s) => s.contrast),
    colourfulness: avg((s) => s.colourfulness),
    highlights: avg((s) => s.highlights),
    shadows: avg((s) => s.shadows),
    warmth: avg((s) => s.warmth),
    top: meanRegion(list.map((s) => s.top)),
    middle: meanRegion(list.map((s) => s.middle)),
    bottom: meanRegion(list.map((s) => s.bottom)),
    thumb: mid.thumb,
    thumbW: mid.thumbW,
    thumbH: mid.thumbH,
  };
}

/**
 * The colour of an object: the dominant named colour inside the central part of its box
 * (normalised coordinates). Chromatic colours win when they cover at least 25%; otherwise a
 * neutral (black / white / grey) that covers at least half; else undefined.
 */
export function boxColour(frame: Frame, box: { x: number; y: number; w: number; h: number }): ColourName | undefined {
  const { width: w, height: h, data } = frame;
  const x1 = Math.floor((box.x + box.w * 0.2) * w);
  const x2 = Math.ceil((box.x + box.w * 0.8) * w);
  const y1 = Math.floor((box.y + box.h * 0.2) * h);
  const y2 = Math.ceil((box.y + box.h * 0.8) * h);
  const area = Math.max(1, (x2 - x1) * (y2 - y1));
  const step = Math.max(1, Math.round(Math.sqrt(area / 2000)));
  const hist = emptyHist();
  let n = 0;
  for (let y = Math.max(0, y1); y < Math.min(h, y2); y += step) {
    for (let x = Math.max(0, x1); x < Math.min(w, x2); x += step) {
      const i = (y * w + x) * 3;
      hist[colourName(data[i], data[i + 1], data[i + 2])]++;
      n++;
    }
  }
  if (n === 0) return undefined;
  let best: ColourName | undefined;
  let bestFrac = 0;
  for (const c of COLOUR_NAMES) {
    if (c === 'black' || c === 'white' || c === 'grey') continue;
    if (hist[c] / n > bestFrac) {
      bestFrac = hist[c] / n;
      best = c;
    }
  }
  if (best && bestFrac >= 0.25) return best;
  for (const c of ['black', 'white', 'grey'] as const) if (hist[c] / n >= 0.5) return c;
  return undefined;
}

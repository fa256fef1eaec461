/**
 * Camera movement measured from pixels, on clips generated with the real ffmpeg from the eval
 * photos with known motion: pans, tilts, zooms, rolls, still shots (some with sensor-like noise),
 * shaky handheld-like shots and a subject moving over a still background (must stay static).
 * A second, harder set (motion near the decision thresholds, faint shake, flat photos) checks that
 * the confidence means something.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { makeClip, readFrames, photo, tempDir, pool, type Motion } from './tagging-fixtures.js';
import {
  CAMERA_MOVEMENT_LABELS,
  PIXEL_TAGGING_SAMPLING,
  estimatePairMotion,
  prepareMotionFrame,
  tagMotion,
  type CameraMovementTag,
} from '../../src/tagging/index.js';
import type { Frame } from '../../src/media/types.js';

// Textured photos of different kinds (architecture, landscape, faces, objects, wallpapers).
const PHOTOS = [
  'opencv-doc__building.jpg',
  'psychtoolbox-3-common__town.jpg',
  'python3-scipy__face_raccoon.jpg',
  'kphotoalbum__skagen.jpg',
  'opencv-doc__fruits.jpg',
  'plasma-workspace-wallpapers__Path_1920x1080.jpg',
  'lomiri-wallpapers-16.04__life_by_Aitzol_Berasategi.jpg',
  'labelme-examples__0001.jpg',
  'kphotoalbum__donna.jpg',
  'opencv-doc__leuvenA.jpg',
  'python3-skimage__coffee.jpg',
  'kphotoalbum__snow.jpg',
  'mate-backgrounds__Garden.jpg',
  'opencv-doc__messi5.jpg',
  'kphotoalbum__grand_canyon_1__rotated180.jpg',
  'python3-skimage__coins.jpg',
];
const SUBJECTS = ['python3-skimage__astronaut.jpg', 'opencv-doc__chicky_512.jpg', 'kphotoalbum__jesper_2.jpg'];
// Low-texture photos (smooth gradients, dark areas) for the hard set.
const FLAT = ['mate-backgrounds__Aqua.jpg', 'kphotoalbum__grand_canyon_3.jpg', 'mate-backgrounds__YellowFlower.jpg', 'python3-skimage__rocket.jpg'];

interface Case {
  expected: string;
  motion: Motion;
  photo: string;
  hard?: boolean;
}

function mainCases(): Case[] {
  const out: Case[] = [];
  let p = 0;
  const next = (): string => PHOTOS[p++ % PHOTOS.length];
  for (const s of [0.05, 0.1, 0.2, 0.3]) {
    out.push({ expected: 'pan_right', motion: { kind: 'pan', speed: s }, photo: next() });
    out.push({ expected: 'pan_left', motion: { kind: 'pan', speed: -s }, photo: next() });
  }
  for (const s of [0.05, 0.1, 0.15, 0.25]) {
    out.push({ expected: 'tilt_up', motion: { kind: 'tilt', speed: s }, photo: next() });
    out.push({ expected: 'tilt_down', motion: { kind: 'tilt', speed: -s }, photo: next() });
  }
  for (const r of [0.06, 0.1, 0.2]) {
    out.push({ expected: 'zoom_in', motion: { kind: 'zoom', rate: r }, photo: next() });
    out.push({ expected: 'zoom_out', motion: { kind: 'zoom', rate: -r }, photo: next() });
  }
  out.push({ expected: 'roll', motion: { kind: 'roll', rate: 6 }, photo: next() });
  out.push({ expected: 'roll', motion: { kind: 'roll', rate: -8 }, photo: next() });
  for (const noise of [0, 0, 0, 6, 10, 0]) out.push({ expected: 'static', motion: { kind: 'static', noise }, photo: next() });
  [0.006, 0.008, 0.01, 0.015, 0.02, 0.012].forEach((amp, i) =>
    out.push({ expected: 'handheld', motion: { kind: 'shaky', amp, seed: i + 1 }, photo: next() }),
  );
  const subj: Array<[number, number]> = [
    [0.25, 0.15],
    [-0.3, 0.2],
    [0.4, 0.2],
    [-0.2, 0.25],
    [0.3, 0.12],
    [-0.35, 0.18],
  ];
  subj.forEach(([speed, size], i) =>
    out.push({ expected: 'static', motion: { kind: 'subject', speed, size, subject: photo(SUBJECTS[i % SUBJECTS.length]) }, photo: next() }),
  );
  return out;
}

/** Near-threshold motion, faint shake and flat photos: some of these are expected to be missed. */
function hardCases(): Case[] {
  const out: Case[] = [];
  let p = 3;
  const next = (): string => PHOTOS[p++ % PHOTOS.length];
  for (const s of [0.015, 0.022, 0.03, 0.04]) out.push({ expected: s > 0.02 ? 'pan_right' : 'pan_left', motion: { kind: 'pan', speed: s > 0.02 ? s : -s }, photo: next(), hard: true });
  for (const s of [0.018, 0.028]) out.push({ expected: 'tilt_down', motion: { kind: 'tilt', speed: -s }, photo: next(), hard: true });
  for (const r of [0.02, 0.035]) out.push({ expected: 'zoom_in', motion: { kind: 'zoom', rate: r }, photo: next(), hard: true });
  for (const a of [0.003, 0.004]) out.push({ expected: 'handheld', motion: { kind: 'shaky', amp: a, seed: 7 }, photo: next(), hard: true });
  out.push({ expected: 'pan_left', motion: { kind: 'pan', speed: -0.1 }, photo: FLAT[0], hard: true });
  out.push({ expected: 'zoom_out', motion: { kind: 'zoom', rate: -0.08 }, photo: FLAT[1], hard: true });
  out.push({ expected: 'tilt_up', motion: { kind: 'tilt', speed: 0.08 }, photo: FLAT[2], hard: true });
  out.push({ expected: 'static', motion: { kind: 'subject', speed: 0.3, size: 0.35, subject: photo(SUBJECTS[0]) }, photo: FLAT[3], hard: true });
  return out;
}

const { fps: FPS, maxSide: MAX_SIDE } = PIXEL_TAGGING_SAMPLING;

describe('camera movement on generated clips', () => {
  const tmp = tempDir();
  const all = [...mainCases(), ...hardCases()];
  let results: Array<Case & { tag: CameraMovementTag }> = [];
  let sampleFrames: Frame[] = [];

  beforeAll(async () => {
    results = await pool(all, 2, async (c, i) => {
      const file = await makeClip(join(tmp.dir, `m${i}.mp4`), photo(c.photo), c.motion);
      const frames = await readFrames(file, FPS, MAX_SIDE);
      if (i === 0) sampleFrames = frames;
      return { ...c, tag: tagMotion(frames) };
    });
  }, 240_000);
  afterAll(() => tmp.cleanup());

  const report = (rs: typeof results): number => {
    const labels = [...CAMERA_MOVEMENT_LABELS];
    const m = new Map<string, number>();
    let correct = 0;
    for (const r of rs) {
      const k = `${r.expected}|${r.tag.label}`;
      m.set(k, (m.get(k) ?? 0) + 1);
      if (r.tag.label === r.expected) correct++;
    }
    const short = (l: string): string => l.replace('pan_', 'p_').replace('tilt_', 't_').replace('zoom_', 'z_').slice(0, 8);
    const rows = [`${'true\\pred'.padEnd(11)}${labels.map((l) => short(l).padStart(9)).join('')}`];
    for (const e of labels) {
      if (!rs.some((r) => r.expected === e)) continue;
      rows.push(`${e.padEnd(11)}${labels.map((g) => String(m.get(`${e}|${g}`) ?? 0).padStart(9)).join('')}`);
    }
    console.log(`${correct}/${rs.length} = ${((100 * correct) / rs.length).toFixed(1)}%\n${rows.join('\n')}`);
    for (const r of rs.filter((x) => x.tag.label !== x.expected)) {
      console.log(`  miss: ${r.expected} → ${r.tag.label} conf=${r.tag.confidence} ${JSON.stringify(r.motion).slice(0, 60)} ${r.photo} rates=${JSON.stringify(r.tag.rates)}`);
    }
    return correct / rs.length;
  };

  it('classifies ≥ 95% of the ≥ 40 main clips correctly (confusion matrix printed)', () => {
    const main = results.filter((r) => !r.hard);
    expect(main.length).toBeGreaterThanOrEqual(40);
    console.log('camera movement, main set:');
    const acc = report(main);
    expect(acc).toBeGreaterThanOrEqual(0.95);
  });

  it('reports rates with the documented signs and sizes', () => {
    const get = (pred: (c: Case) => boolean): CameraMovementTag[] => results.filter((r) => !r.hard && pred(r)).map((r) => r.tag);
    for (const t of get((c) => c.motion.kind === 'pan' && c.motion.speed === 0.1)) expect(t.rates.pan).toBeCloseTo(0.1, 1);
    for (const t of get((c) => c.motion.kind === 'pan' && c.motion.speed === -0.2)) expect(t.rates.pan).toBeCloseTo(-0.2, 1);
    for (const t of get((c) => c.motion.kind === 'tilt' && c.motion.speed === 0.15)) expect(t.rates.tilt).toBeCloseTo(0.15, 1);
    // zoom rate 0.1 /s (ln scale) ≈ +10.5 %/s
    for (const t of get((c) => c.motion.kind === 'zoom' && c.motion.rate === 0.1)) expect(Math.abs(t.rates.zoom - 10.5)).toBeLessThan(2);
    for (const t of get((c) => c.motion.kind === 'roll' && c.motion.rate === 6)) expect(Math.abs(t.rates.roll - 6)).toBeLessThan(1.5);
    for (const t of get((c) => c.motion.kind === 'roll' && c.motion.rate === -8)) expect(Math.abs(t.rates.roll + 8)).toBeLessThan(1.5);
    for (const t of get((c) => c.motion.kind === 'shaky')) expect(t.rates.jitter).toBeGreaterThan(0.004);
    for (const t of get((c) => c.motion.kind === 'static')) expect(t.rates.jitter).toBeLessThan(0.001);
    for (const r of results) {
      const s = Object.values(r.tag.scores).reduce((a, b) => a + b, 0);
      expect(s).toBeCloseTo(1, 2);
      expect(r.tag.confidence).toBeGreaterThanOrEqual(0);
      expect(r.tag.confidence).toBeLessThanOrEqual(1);
    }
  });

  it('higher confidence goes with higher accuracy (main + hard sets)', () => {
    console.log('camera movement, main + hard sets:');
    report(results);
    const ok = results.filter((r) => r.tag.label === r.expected);
    const bad = results.filter((r) => r.tag.label !== r.expected);
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const sorted = [...results].sort((a, b) => b.tag.confidence - a.tag.confidence);
    const half = Math.floor(sorted.length / 2);
    const accOf = (rs: typeof results): number => rs.filter((r) => r.tag.label === r.expected).length / Math.max(1, rs.length);
    const accHi = accOf(sorted.slice(0, half));
    const accLo = accOf(sorted.slice(half));
    // Rank measure: the chance that a right answer is more confident than a wrong one (ties ½).
    let wins = 0;
    for (const o of ok) for (const b of bad) wins += o.tag.confidence > b.tag.confidence ? 1 : o.tag.confidence === b.tag.confidence ? 0.5 : 0;
    const auc = wins / Math.max(1, ok.length * bad.length);
    console.log(
      `confidence: correct mean ${mean(ok.map((r) => r.tag.confidence)).toFixed(3)} (n=${ok.length}), wrong mean ${mean(bad.map((r) => r.tag.confidence)).toFixed(3)} (n=${bad.length}); accuracy top half ${accHi.toFixed(3)}, bottom half ${accLo.toFixed(3)}; AUC ${auc.toFixed(3)}`,
    );
    // The hard set exists to produce misses; without a few of them this check measures nothing.
    expect(bad.length, 'the hard set no longer produces misses: make it harder').toBeGreaterThanOrEqual(4);
    expect(auc).toBeGreaterThanOrEqual(0.85); // measured 0.982 (48 right, 8 wrong of 56 clips)
    expect(accHi - accLo).toBeGreaterThanOrEqual(0.15); // measured 1.000 − 0.714 = 0.286
  });

  it('a single frame or no frames gives a zero-confidence static', () => {
    const one = tagMotion(sampleFrames.slice(0, 1));
    expect(one.label).toBe('static');
    expect(one.confidence).toBe(0);
    expect(tagMotion([]).confidence).toBe(0);
  });

  // Per-frame cost is reported by `npm run bench -- ingest` (ingest.tagging_ms), not asserted here.
});

describe('global motion on synthetic frames (no ffmpeg)', () => {
  // Smooth random texture, sampled with a sub-pixel shift / scale: exact ground truth.
  function texture(seed: number): (x: number, y: number) => number {
    const waves = Array.from({ length: 24 }, (_, i) => {
      const a = Math.sin(seed * 97.1 + i * 12.9898) * 43758.5453;
      const r = a - Math.floor(a);
      const ang = r * 2 * Math.PI;
      const f = 0.04 + 0.18 * ((r * 7.31) % 1);
      return { kx: f * Math.cos(ang), ky: f * Math.sin(ang), ph: r * 40 };
    });
    return (x, y) => 128 + waves.reduce((s, w) => s + Math.sin(w.kx * x + w.ky * y + w.ph), 0) * 18;
  }
  function frame(t: number, w: number, h: number, tex: (x: number, y: number) => number, ox: number, oy: number, scale = 1): Frame {
    const data = new Uint8Array(w * h * 3);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        // Content moved by (ox, oy) px and magnified by `scale` about the centre.
        const sx = (x - w / 2 - ox) / scale + w / 2;
        const sy = (y - h / 2 - oy) / scale + h / 2;
        data.fill(Math.max(0, Math.min(255, Math.round(tex(sx, sy)))), (y * w + x) * 3, (y * w + x) * 3 + 3);
      }
    }
    return { t, width: w, height: h, data };
  }

  it('measures content translation with the documented signs, landscape and portrait', () => {
    const tex = texture(3);
    for (const [w, h] of [
      [256, 144],
      [144, 256],
    ]) {
      const a = frame(0, w, h, tex, 0, 0);
      const b = frame(0.25, w, h, tex, 5.3, -2.6); // content moves right 5.3 px and up 2.6 px
      const m = estimatePairMotion(prepareMotionFrame(a), prepareMotionFrame(b));
      expect(m.valid).toBe(true);
      expect(m.tx * w).toBeCloseTo(5.3, 0);
      expect(m.ty * w).toBeCloseTo(-2.6, 0);
      expect(m.dx).toBeCloseTo((5.3 / w) / 0.25, 2);
      expect(Math.abs(m.scale - 1)).toBeLessThan(0.005);
      // Content moving right = camera turning left.
      const tag = tagMotion([a, b, frame(0.5, w, h, tex, 10.6, -5.2)]);
      expect(tag.label).toBe('pan_left');
      expect(tag.rates.pan).toBeLessThan(0);
    }
  });

  it('measures magnification', () => {
    const tex = texture(5);
    const a = frame(0, 256, 144, tex, 0, 0);
    const b = frame(0.25, 256, 144, tex, 0, 0, 1.03);
    const m = estimatePairMotion(prepareMotionFrame(a), prepareMotionFrame(b));
    expect(m.scale).toBeCloseTo(1.03, 2);
    expect(tagMotion([a, b, frame(0.5, 256, 144, tex, 0, 0, 1.03 ** 2)]).label).toBe('zoom_in');
  });

  it('survives tiny, flat and mismatched frames', () => {
    const tex = texture(7);
    const tiny = [frame(0, 16, 10, tex, 0, 0), frame(0.25, 16, 10, tex, 1, 0)];
    expect(tagMotion(tiny).confidence).toBe(0);
    const flat = [0, 0.25, 0.5].map((t) => frame(t, 64, 36, () => 77, 0, 0));
    const tf = tagMotion(flat);
    expect(tf.label).toBe('static');
    expect(tf.confidence).toBe(0);
    const m = estimatePairMotion(prepareMotionFrame(frame(0, 64, 36, tex, 0, 0)), prepareMotionFrame(frame(0.25, 80, 36, tex, 0, 0)));
    expect(m.valid).toBe(false);
    // Unsorted and duplicate timestamps are tolerated.
    const a = frame(0, 128, 72, tex, 0, 0);
    const b = frame(0.25, 128, 72, tex, 3, 0);
    expect(tagMotion([b, a, a]).rates.pan).toBeLessThan(0);
  });
});

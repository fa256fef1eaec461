/**
 * Clips with a known camera movement, made with the real ffmpeg from the eval photos (shared with
 * the tagging tests, which import them from here; eval/ cannot import from test/): exact pan / tilt
 * speeds, zoom and roll rates, shake amplitudes, still shots with sensor-like noise, and a subject
 * moving over a still background (the camera is static there). Clips go to a temp directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runFfmpeg } from '../src/media/ffmpeg.js';

export function tempDir(prefix = 'vidembed-eval-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function run(args: string[]): Promise<void> {
  const res = await runFfmpeg(['-loglevel', 'error', ...args], { stdout: false });
  if (res.code !== 0) throw new Error(`ffmpeg exited with ${String(res.code)}: ${res.stderr.slice(-2000)}`);
}

/** Runs async jobs at most `limit` at a time, results in input order. */
export async function pool<T, R>(items: T[], limit: number, fn: (x: T, i: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export const W = 320;
export const H = 180;
export const FPS = 25;
// veryfast keeps B-frames (like real footage), so the sampler's skip-non-reference-frames fast
// path is exercised: sampled frames may be a source frame or two early (timing jitter).
export const ENC = ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-pix_fmt', 'yuv420p', '-an'];

/** Photo → cover-scaled canvas cw×ch, repeated as a 25 fps stream. */
export function canvas(cw: number, ch: number, frames: number): string {
  return `scale=${cw}:${ch}:force_original_aspect_ratio=increase,crop=${cw}:${ch},setsar=1,format=rgb24,loop=loop=${frames - 1}:size=1:start=0,setpts=N/${FPS}/TB`;
}

export type Motion =
  | { kind: 'static'; noise?: number }
  | { kind: 'pan'; speed: number } // camera pan rate, fraction of width / s; + = right
  | { kind: 'tilt'; speed: number } // + = up
  | { kind: 'zoom'; rate: number } // ln(scale) / s; + = in
  | { kind: 'roll'; rate: number } // deg / s; + = camera turns clockwise
  | { kind: 'shaky'; amp: number; seed: number } // fraction of width
  | { kind: 'subject'; subject: string; speed: number; size: number };

/** Writes a 320×180 25 fps clip with a known camera motion; returns its path. */
export async function makeClip(file: string, src: string, m: Motion, seconds = 3): Promise<string> {
  const n = Math.round(seconds * FPS);
  let vf: string;
  let inputs = ['-i', src];
  if (m.kind === 'static') {
    vf = `${canvas(W, H, n)}${m.noise ? `,format=yuv420p,noise=alls=${m.noise}:allf=t` : ''}`;
  } else if (m.kind === 'pan' || m.kind === 'tilt') {
    const cw = 1280;
    const ch = 1080;
    const v = Math.abs(m.speed) * 640;
    const travel = v * seconds;
    let x = String((cw - 640) / 2);
    let y = String((ch - 360) / 2);
    if (m.kind === 'pan') {
      const x0 = (cw - 640) / 2 - (Math.sign(m.speed) * travel) / 2;
      x = `${x0}+${Math.sign(m.speed) * v}*t`;
    } else {
      const y0 = (ch - 360) / 2 + (Math.sign(m.speed) * travel) / 2;
      y = `${y0}-${Math.sign(m.speed) * v}*t`;
    }
    vf = `${canvas(cw, ch, n)},crop=w=640:h=360:x='${x}':y='${y}':exact=1,scale=${W}:${H}`;
  } else if (m.kind === 'zoom') {
    const r = Math.abs(m.rate);
    const z = m.rate > 0 ? `exp(${r}*on/${FPS})` : `exp(${r}*(${seconds}-on/${FPS}))`;
    vf = `${canvas(1280, 720, n)},zoompan=z='${z}':x='iw/2-iw/zoom/2':y='ih/2-ih/zoom/2':d=1:s=${W}x${H}:fps=${FPS}`;
  } else if (m.kind === 'roll') {
    const a = (-m.rate * Math.PI) / 180;
    vf = `${canvas(960, 540, n)},rotate='${a.toFixed(6)}*t':fillcolor=black,crop=560:316,scale=${W}:${H}`;
  } else if (m.kind === 'shaky') {
    const a = m.amp * 640;
    const s = m.seed;
    const fx = [1.3 + 0.37 * s, 2.9 + 0.21 * s, 5.3 + 0.13 * s];
    const fy = [1.7 + 0.29 * s, 3.7 + 0.17 * s, 6.1 + 0.11 * s];
    const wave = (f: number[], ph: number): string =>
      f.map((fr, i) => `${(a * [1, 0.7, 0.5][i]).toFixed(2)}*sin(${(2 * Math.PI * fr).toFixed(4)}*t+${(ph + i * 1.1 + s).toFixed(3)})`).join('+');
    vf = `${canvas(800, 450, n)},crop=w=640:h=360:x='80+${wave(fx, 0)}':y='45+${wave(fy, 2)}':exact=1,scale=${W}:${H}`;
  } else {
    const sw = Math.round(W * m.size);
    const sh = Math.round(sw * 0.75);
    inputs = ['-i', src, '-i', m.subject];
    const v = m.speed * W;
    const x0 = m.speed > 0 ? 10 : W - sw - 10;
    vf = `[0:v]${canvas(W, H, n)}[bg];[1:v]scale=${sw}:${sh}:force_original_aspect_ratio=increase,crop=${sw}:${sh},setsar=1,format=rgb24[fg];[bg][fg]overlay=x='${x0}+${v}*t':y='${Math.round((H - sh) / 2)}+20*sin(2*t)':eval=frame`;
  }
  const filterFlag = m.kind === 'subject' ? '-filter_complex' : '-vf';
  await run(['-y', ...inputs, filterFlag, vf, '-frames:v', String(n), '-r', String(FPS), ...ENC, file]);
  return file;
}

export interface MotionCase {
  expected: string;
  motion: Motion;
  photo: string;
  /** Near-threshold motion, faint shake, flat photos: some are expected to be missed. */
  hard?: boolean;
}

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
  'kphotoalbum__bar55.jpg',
  'lomiri-wallpapers-20.04__Kleiber_by_Lukas_Baubkus.jpg',
];
const SUBJECTS = ['python3-skimage__astronaut.jpg', 'opencv-doc__chicky_512.jpg', 'kphotoalbum__jesper_2.jpg'];
const FLAT = ['mate-backgrounds__Aqua.jpg', 'kphotoalbum__grand_canyon_3.jpg', 'mate-backgrounds__YellowFlower.jpg', 'python3-skimage__rocket.jpg'];

/**
 * The eval's clip set: 44 clearly-moving / clearly-still clips and 17 hard ones. Photo names are
 * resolved by `photo(name)` (a path under the eval photos directory).
 */
export function motionCases(photo: (name: string) => string): MotionCase[] {
  const out: MotionCase[] = [];
  let p = 0;
  const next = (): string => photo(PHOTOS[p++ % PHOTOS.length]);
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
  for (const noise of [0, 0, 0, 0, 6, 10, 0, 4]) out.push({ expected: 'static', motion: { kind: 'static', noise }, photo: next() });
  [0.006, 0.008, 0.01, 0.015, 0.02, 0.012].forEach((amp, i) => out.push({ expected: 'handheld', motion: { kind: 'shaky', amp, seed: i + 1 }, photo: next() }));
  const subj: Array<[number, number]> = [
    [0.25, 0.15],
    [-0.3, 0.2],
    [0.4, 0.2],
    [-0.2, 0.25],
    [0.3, 0.12],
    [-0.35, 0.18],
  ];
  subj.forEach(([speed, size], i) => out.push({ expected: 'static', motion: { kind: 'subject', speed, size, subject: photo(SUBJECTS[i % SUBJECTS.length]) }, photo: next() }));

  let h = 3;
  const nextHard = (): string => photo(PHOTOS[h++ % PHOTOS.length]);
  for (const s of [0.015, 0.022, 0.03, 0.04]) {
    out.push({ expected: s > 0.02 ? 'pan_right' : 'pan_left', motion: { kind: 'pan', speed: s > 0.02 ? s : -s }, photo: nextHard(), hard: true });
  }
  for (const s of [0.018, 0.028]) out.push({ expected: 'tilt_down', motion: { kind: 'tilt', speed: -s }, photo: nextHard(), hard: true });
  for (const r of [0.02, 0.035]) out.push({ expected: 'zoom_in', motion: { kind: 'zoom', rate: r }, photo: nextHard(), hard: true });
  for (const a of [0.003, 0.004]) out.push({ expected: 'handheld', motion: { kind: 'shaky', amp: a, seed: 7 }, photo: nextHard(), hard: true });
  out.push({ expected: 'pan_left', motion: { kind: 'pan', speed: -0.1 }, photo: photo(FLAT[0]), hard: true });
  out.push({ expected: 'zoom_out', motion: { kind: 'zoom', rate: -0.08 }, photo: photo(FLAT[1]), hard: true });
  out.push({ expected: 'tilt_up', motion: { kind: 'tilt', speed: 0.08 }, photo: photo(FLAT[2]), hard: true });
  out.push({ expected: 'static', motion: { kind: 'subject', speed: 0.3, size: 0.35, subject: photo(SUBJECTS[0]) }, photo: photo(FLAT[3]), hard: true });
  out.push({ expected: 'static', motion: { kind: 'static', noise: 14 }, photo: photo(FLAT[0]), hard: true });
  out.push({ expected: 'roll', motion: { kind: 'roll', rate: 3 }, photo: nextHard(), hard: true });
  out.push({ expected: 'pan_right', motion: { kind: 'pan', speed: 0.6 }, photo: nextHard(), hard: true });
  return out;
}

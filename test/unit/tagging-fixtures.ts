/**
 * Test fixtures for the pixel taggers: synthetic clips with known camera motion (exact speeds,
 * zoom rates, roll rates, shake amplitudes) made with the real ffmpeg from the project's eval
 * photos; frames are read back with the engine's own sampler (src/media/frames.ts), so the tests
 * see exactly what the engine feeds the taggers. Nothing is committed as media; clips go to a temp
 * dir.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readAllFrames } from '../../src/media/frames.js';
import type { Frame } from '../../src/media/types.js';

export const FFMPEG: string = createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg').path;
export const PHOTOS = '/work/shared/eval/photos';
export const photo = (name: string): string => join(PHOTOS, name);

export function tempDir(prefix = 'vidembed-tagging-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

function run(args: string[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const p = spawn(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-nostdin', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    p.stdout.on('data', (d: Buffer) => out.push(d));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`ffmpeg ${code}: ${err.slice(0, 2000)}`))));
  });
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

const W = 320;
const H = 180;
const FPS = 25;
// veryfast keeps B-frames (like real footage), so the sampler's skip-non-reference-frames fast
// path is exercised: sampled frames may be a source frame or two early (timing jitter).
const ENC = ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-pix_fmt', 'yuv420p', '-an'];

/** Photo → cover-scaled canvas cw×ch, repeated as a 25 fps stream (scaled once, then looped). */
function canvas(cw: number, ch: number, frames: number): string {
  return `scale=${cw}:${ch}:force_original_aspect_ratio=increase,crop=${cw}:${ch},setsar=1,format=rgb24,loop=loop=${frames - 1}:size=1:start=0,setpts=N/${FPS}/TB`;
}

export type Motion =
  | { kind: 'static'; noise?: number }
  | { kind: 'pan'; speed: number } // camera pan rate, fraction of width / s; + = right
  | { kind: 'tilt'; speed: number } // + = up
  | { kind: 'zoom'; rate: number } // ln(scale) / s; + = in
  | { kind: 'roll'; rate: number } // camera roll, deg / s; + = camera turns clockwise (content counter-clockwise)
  | { kind: 'shaky'; amp: number; seed: number } // RMS-ish amplitude, fraction of width
  | { kind: 'subject'; subject: string; speed: number; size: number };

/** Writes a clip with a known camera motion; returns its path. */
export async function makeClip(file: string, src: string, m: Motion, seconds = 3): Promise<string> {
  const n = Math.round(seconds * FPS);
  let vf: string;
  let inputs = ['-i', src];
  if (m.kind === 'static') {
    vf = `${canvas(W, H, n)}${m.noise ? `,format=yuv420p,noise=alls=${m.noise}:allf=t` : ''}`;
  } else if (m.kind === 'pan' || m.kind === 'tilt') {
    // A 640×360 window moving over a 1280×1080 canvas, scaled down to 320×180.
    const cw = 1280;
    const ch = 1080;
    const v = Math.abs(m.speed) * 640; // canvas px / s
    const travel = v * seconds;
    let x = String((cw - 640) / 2);
    let y = String((ch - 360) / 2);
    if (m.kind === 'pan') {
      // Camera pans right ⇒ window moves right ⇒ content moves left.
      const x0 = (cw - 640) / 2 - (Math.sign(m.speed) * travel) / 2;
      x = `${x0}+${Math.sign(m.speed) * v}*t`;
    } else {
      // Camera tilts up ⇒ window moves up ⇒ content moves down.
      const y0 = (ch - 360) / 2 + (Math.sign(m.speed) * travel) / 2;
      y = `${y0}-${Math.sign(m.speed) * v}*t`;
    }
    vf = `${canvas(cw, ch, n)},crop=w=640:h=360:x='${x}':y='${y}':exact=1,scale=${W}:${H}`;
  } else if (m.kind === 'zoom') {
    const r = Math.abs(m.rate);
    const z = m.rate > 0 ? `exp(${r}*on/${FPS})` : `exp(${r}*(${seconds}-on/${FPS}))`;
    vf = `${canvas(1280, 720, n)},zoompan=z='${z}':x='iw/2-iw/zoom/2':y='ih/2-ih/zoom/2':d=1:s=${W}x${H}:fps=${FPS}`;
  } else if (m.kind === 'roll') {
    // ffmpeg rotate: + = content clockwise. Centre crop keeps the black corners out (≤ 25°).
    const a = (-m.rate * Math.PI) / 180;
    vf = `${canvas(960, 540, n)},rotate='${a.toFixed(6)}*t':fillcolor=black,crop=560:316,scale=${W}:${H}`;
  } else if (m.kind === 'shaky') {
    // Sum of sines at incommensurate frequencies (not multiples of the 4 fps sampling rate).
    const a = m.amp * 640;
    const s = m.seed;
    const fx = [1.3 + 0.37 * s, 2.9 + 0.21 * s, 5.3 + 0.13 * s];
    const fy = [1.7 + 0.29 * s, 3.7 + 0.17 * s, 6.1 + 0.11 * s];
    const wave = (f: number[], ph: number): string =>
      f.map((fr, i) => `${(a * [1, 0.7, 0.5][i]).toFixed(2)}*sin(${(2 * Math.PI * fr).toFixed(4)}*t+${(ph + i * 1.1 + s).toFixed(3)})`).join('+');
    vf = `${canvas(800, 450, n)},crop=w=640:h=360:x='80+${wave(fx, 0)}':y='45+${wave(fy, 2)}':exact=1,scale=${W}:${H}`;
  } else {
    // A subject patch (crop of another photo) moving across a still background.
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

/** Concatenation of still clips of different photos, each `seconds` long, with an optional slow pan. */
export async function makeConcat(file: string, srcs: string[], seconds: number, panSpeed = 0): Promise<string> {
  const n = Math.round(seconds * FPS);
  const parts: string[] = [];
  srcs.forEach((s, i) => {
    const v = panSpeed * 640;
    parts.push(`[${i}:v]${canvas(1280, 720, n)},crop=w=640:h=360:x='${320 - (v * seconds) / 2}+${v}*t':y=180:exact=1,scale=${W}:${H},format=yuv420p[v${i}]`);
  });
  const fc = `${parts.join(';')};${srcs.map((_, i) => `[v${i}]`).join('')}concat=n=${srcs.length}:v=1:a=0[out]`;
  await run(['-y', ...srcs.flatMap((s) => ['-i', s]), '-filter_complex', fc, '-map', '[out]', '-r', String(FPS), ...ENC, file]);
  return file;
}

/** A still photo rotated clockwise by `deg` (ffmpeg `rotate`), centre-cropped to avoid the corners. */
export async function makeRotatedStill(file: string, src: string, deg: number, seconds = 1): Promise<string> {
  const n = Math.round(seconds * FPS);
  const vf = `${canvas(960, 540, n)},rotate=${((deg * Math.PI) / 180).toFixed(6)}:fillcolor=black,crop=560:316,scale=${W}:${H}`;
  await run(['-y', '-i', src, '-vf', vf, '-frames:v', String(n), '-r', String(FPS), ...ENC, file]);
  return file;
}

/** Writes `frames` solid-colour frames (r,g,b) — black frames etc. */
export async function makeSolid(file: string, color: string, seconds: number): Promise<string> {
  await run(['-y', '-f', 'lavfi', '-i', `color=c=${color}:s=${W}x${H}:r=${FPS}:d=${seconds}`, ...ENC, file]);
  return file;
}

/** Frames sampled by the engine's sampler at `fps`, longest side `maxSide`, packed RGB24. */
export function readFrames(file: string, fps: number, maxSide: number): Promise<Frame[]> {
  return readAllFrames(file, { fps, maxSide });
}

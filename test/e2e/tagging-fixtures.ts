/**
 * Test fixtures for the pixel taggers: synthetic clips with known camera motion (exact speeds,
 * zoom rates, roll rates, shake amplitudes) made with the real ffmpeg from the project's eval
 * photos; frames are read back with the engine's own sampler (src/media/frames.ts), so the tests
 * see exactly what the engine feeds the taggers. Nothing is committed as media; clips go to a temp
 * dir.
 */
import { join } from 'node:path';
import { canvas, ENC, FPS, H, run, W } from '../../eval/clips.js';
import { evalPhotosDir } from '../helpers/clips.js';
import { readAllFrames } from '../../src/media/frames.js';
import type { Frame } from '../../src/media/types.js';

export { makeClip, pool, tempDir, type Motion } from '../../eval/clips.js';

export const photo = (name: string): string => join(evalPhotosDir, name);

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

import { MediaError, ValidationError, VidembedError } from '../api/errors.js';
import { lastMeaningfulLine, runFfmpeg } from './ffmpeg.js';
import type { Frame } from './types.js';

export interface ThumbnailOptions {
  /** Thumbnail width in pixels (default 320; rounded down to even). Smaller frames are not upscaled. */
  width?: number;
  /** Size budget of the JPEG in bytes (default 30 KiB). */
  maxBytes?: number;
  signal?: AbortSignal;
}

const DEFAULT_WIDTH = 320;
const DEFAULT_MAX_BYTES = 30 * 1024;
/** ffmpeg's mjpeg quantiser scale: 2 = best … 31 = worst. 4 looks clean at thumbnail size. */
const START_Q = 4;
const MAX_Q = 31;
/** Below this width, a thumbnail is not worth having: give up instead of shrinking further. */
const MIN_WIDTH = 16;

const even = (x: number) => Math.max(2, Math.round(x / 2) * 2);

/** A malformed frame is a bug in the caller (frames come from the decoder), hence not a ValidationError. */
function checkFrame(frame: Frame): void {
  const { width, height, data } = frame ?? ({} as Partial<Frame>);
  if (!(Number.isInteger(width) && width > 0 && Number.isInteger(height) && height > 0)) {
    throw new VidembedError(`thumbnail: frame size must be positive integers, got ${String(width)}x${String(height)}`);
  }
  if (!(data instanceof Uint8Array)) throw new VidembedError('thumbnail: frame.data must be a Uint8Array (packed RGB24)');
  if (data.length !== width * height * 3) {
    throw new VidembedError(`thumbnail: frame data is ${data.length} bytes, expected ${width}x${height}x3 = ${width * height * 3} (packed RGB24)`);
  }
}

function resolveOptions(opts: ThumbnailOptions): { width: number; maxBytes: number } {
  const width = opts.width ?? DEFAULT_WIDTH;
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  if (!(Number.isInteger(width) && width >= 2 && width <= 8192)) {
    throw new ValidationError(`thumbnail width must be an integer in [2, 8192], got ${String(width)}`, ['width']);
  }
  if (!(Number.isInteger(maxBytes) && maxBytes >= 1024)) {
    throw new ValidationError(`thumbnail maxBytes must be an integer >= 1024, got ${String(maxBytes)}`, ['maxBytes']);
  }
  return { width, maxBytes };
}

/**
 * Thumbnail size for a frame: `width` (even) wide, or the frame's own width (rounded down to even)
 * when it is narrower; the height keeps the aspect ratio, rounded to the nearest even number.
 */
export function thumbnailSize(frame: { width: number; height: number }, width = DEFAULT_WIDTH): { width: number; height: number } {
  const w = Math.max(2, Math.min(width, frame.width) - (Math.min(width, frame.width) % 2));
  return { width: w, height: even((frame.height * w) / frame.width) };
}

/** The ffmpeg arguments that encode `count` raw RGB24 frames of `src` size from stdin as JPEGs of `dst` size. */
function encodeArgs(src: { width: number; height: number }, dst: { width: number; height: number }, q: number, count: number): string[] {
  // area averaging for large reductions (no aliasing, and it smooths noise, which JPEG likes);
  // lanczos for mild ones (sharper than bicubic). Same size: no scaling, only the colour conversion.
  const same = dst.width === src.width && dst.height === src.height;
  const flags = Math.max(dst.width, dst.height) * 2 <= Math.max(src.width, src.height) ? 'area' : 'lanczos';
  const scale = same ? '' : `scale=${dst.width}:${dst.height}:flags=${flags},`;
  return [
    '-v', 'error',
    '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-s', `${src.width}x${src.height}`, '-i', 'pipe:0',
    '-frames:v', String(count),
    // yuvj420p: full-range BT.601, what JPEG viewers assume.
    '-vf', `${scale}setsar=1,format=yuvj420p`,
    '-c:v', 'mjpeg', '-q:v', String(q),
    '-f', 'mjpeg', 'pipe:1',
  ];
}

/**
 * Splits a stream of concatenated JPEGs (ffmpeg's `-f mjpeg`) into images by walking the marker
 * segments, so a 0xFFD9 inside a header segment cannot end an image early (in entropy-coded data
 * every 0xFF is followed by 0x00 or a restart marker, so the next other marker there is the EOI).
 */
export function splitJpegStream(buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let i = 0;
  while (i + 1 < buf.length) {
    if (buf[i] !== 0xff || buf[i + 1] !== 0xd8) throw new MediaError(`JPEG stream: no SOI marker at byte ${i}`);
    const start = i;
    let p = i + 2;
    let end = -1;
    while (end < 0) {
      while (p < buf.length && buf[p] === 0xff && buf[p + 1] === 0xff) p++; // fill bytes
      if (p + 1 >= buf.length || buf[p] !== 0xff) throw new MediaError(`JPEG stream: truncated or corrupt image at byte ${start}`);
      const marker = buf[p + 1];
      if (marker === 0xd9) {
        end = p + 2;
        break;
      }
      if (marker >= 0xd0 && marker <= 0xd7) {
        p += 2;
        continue;
      }
      if (p + 3 >= buf.length) throw new MediaError(`JPEG stream: truncated image at byte ${start}`);
      p += 2 + buf.readUInt16BE(p + 2);
      if (marker === 0xda) {
        // Entropy-coded data: skip to the next marker that is neither stuffing (FF00) nor a restart.
        while (p + 1 < buf.length && !(buf[p] === 0xff && buf[p + 1] !== 0x00 && !(buf[p + 1] >= 0xd0 && buf[p + 1] <= 0xd7))) p++;
      }
    }
    out.push(buf.subarray(start, end));
    i = end;
  }
  return out;
}

/** Encodes frames (all of `src` size) in one ffmpeg run at quantiser `q`; one JPEG per frame. */
async function encodeRun(
  frames: Frame[],
  src: { width: number; height: number },
  dst: { width: number; height: number },
  q: number,
  signal?: AbortSignal,
): Promise<Buffer[]> {
  const input = frames.length === 1 ? frames[0].data : Buffer.concat(frames.map((f) => f.data));
  const res = await runFfmpeg(encodeArgs(src, dst, q, frames.length), { input, signal });
  let jpegs: Buffer[] = [];
  let why: string | undefined;
  try {
    jpegs = res.code === 0 ? splitJpegStream(res.stdout) : [];
  } catch (err) {
    why = (err as Error).message;
  }
  if (res.code !== 0 || jpegs.length !== frames.length) {
    why = lastMeaningfulLine(res.stderr) ?? why ?? `ffmpeg exited with code ${String(res.code)}, ${jpegs.length} of ${frames.length} images`;
    throw new MediaError(`could not encode thumbnail (${why})`);
  }
  return jpegs;
}

/**
 * Next quantiser for a frame whose JPEG was `size` bytes at `q`. JPEG size falls as a power of q
 * whose exponent depends on the picture (≈0.4 for noise, whose coefficients survive coarse
 * quantisation, ≈1.5 for smooth scenes, which lose them): it is measured from the last two tries,
 * and taken as 1.5 before there are two, so the first step rather undershoots than throws away
 * quality. Aims at 95% of the budget; always at least one step coarser.
 */
function nextQ(tries: { q: number; size: number }[], maxBytes: number): number {
  const { q, size } = tries[tries.length - 1];
  let alpha = 1.5;
  if (tries.length >= 2) {
    const prev = tries[tries.length - 2];
    if (prev.size > size && q > prev.q) alpha = Math.log(prev.size / size) / Math.log(q / prev.q);
  }
  alpha = Math.min(2, Math.max(0.4, alpha));
  const want = q * Math.pow(size / (0.95 * maxBytes), 1 / alpha);
  return Math.min(MAX_Q, Math.max(q + 1, Math.ceil(want)));
}

interface Attempt {
  dst: { width: number; height: number };
  q: number;
  /** Sizes at `dst` so far (reset when the size changes). */
  tries: { q: number; size: number }[];
}

/**
 * Encodes same-size frames so that each JPEG fits `maxBytes`: all at START_Q in one ffmpeg run,
 * then those over budget again at a coarser quantiser (frames needing the same one share a run),
 * and past q 31 at a smaller size, until all fit. Each frame gets the same bytes as it would alone.
 */
async function encodeFitting(frames: Frame[], width: number, maxBytes: number, signal?: AbortSignal): Promise<Buffer[]> {
  const src = { width: frames[0].width, height: frames[0].height };
  const result: Buffer[] = new Array<Buffer>(frames.length);
  const state = new Map<number, Attempt>(frames.map((_, i) => [i, { dst: thumbnailSize(src, width), q: START_Q, tries: [] }]));
  while (state.size > 0) {
    const groups = new Map<string, number[]>();
    for (const [i, a] of state) {
      const key = `${a.dst.width}x${a.dst.height}@${a.q}`;
      groups.set(key, [...(groups.get(key) ?? []), i]);
    }
    for (const idx of groups.values()) {
      const { dst, q } = state.get(idx[0])!;
      const jpegs = await encodeRun(idx.map((i) => frames[i]), src, dst, q, signal);
      idx.forEach((i, k) => {
        const jpeg = jpegs[k];
        const a = state.get(i)!;
        if (jpeg.length <= maxBytes) {
          result[i] = jpeg;
          state.delete(i);
          return;
        }
        a.tries.push({ q, size: jpeg.length });
        if (q < MAX_Q) {
          a.q = nextQ(a.tries, maxBytes);
          return;
        }
        // Coarsest quantiser and still too big (noise, fine texture): fewer pixels; size ~ area.
        const shrink = Math.min(0.9, Math.sqrt(maxBytes / jpeg.length) * 0.95);
        const w = Math.floor((dst.width * shrink) / 2) * 2;
        if (w < MIN_WIDTH) {
          throw new MediaError(`could not encode a thumbnail within ${maxBytes} bytes (${jpeg.length} bytes at ${dst.width}x${dst.height}, q ${q})`);
        }
        a.dst = thumbnailSize(src, w);
        a.tries = [];
      });
    }
  }
  return result;
}

/**
 * A JPEG of `frame` scaled to `width` px wide (height by aspect, even), at most maxBytes: quality
 * steps down until it fits (then the size, for pathological frames such as pure noise).
 */
export async function encodeThumbnail(frame: Frame, opts: ThumbnailOptions = {}): Promise<Buffer> {
  checkFrame(frame);
  const { width, maxBytes } = resolveOptions(opts);
  const [jpeg] = await encodeFitting([frame], width, maxBytes, opts.signal);
  return jpeg;
}

/** Raw input per ffmpeg run in encodeThumbnails (frames are concatenated on its stdin). */
const BATCH_BYTES = 32 * 1024 * 1024;

/**
 * Thumbnails of many frames of one size (e.g. one video's segment keyframes), the same bytes as
 * encodeThumbnail gives for each, with one ffmpeg run per batch instead of one per frame (~5x
 * faster per thumbnail for 512x288 frames: ffmpeg's start-up dominates a single small JPEG).
 */
export async function encodeThumbnails(frames: Frame[], opts: ThumbnailOptions = {}): Promise<Buffer[]> {
  if (!Array.isArray(frames)) throw new VidembedError('thumbnails: frames must be an array');
  frames.forEach(checkFrame);
  const { width, maxBytes } = resolveOptions(opts);
  if (frames.length === 0) return [];
  const { width: w, height: h } = frames[0];
  const odd = frames.findIndex((f) => f.width !== w || f.height !== h);
  if (odd >= 0) throw new VidembedError(`thumbnails: frame ${odd} is ${frames[odd].width}x${frames[odd].height}, the first is ${w}x${h}; all must be the same size`);
  const per = Math.max(1, Math.floor(BATCH_BYTES / (w * h * 3)));
  const out: Buffer[] = [];
  for (let i = 0; i < frames.length; i += per) out.push(...(await encodeFitting(frames.slice(i, i + per), width, maxBytes, opts.signal)));
  return out;
}

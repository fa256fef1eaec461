/**
 * Test-clip generators shared by every suite. Each makes a small, real video with ffmpeg from one of
 * the evaluation photos, with a known camera motion, so tests can assert on what the engine should
 * measure. All are deterministic (same inputs → same pixels) and take well under a second at the
 * default 320x180, 25 fps.
 *
 * Conventions
 * - `out`'s extension picks the container; the video codec defaults by container (mp4/mov/mkv →
 *   H.264 yuv420p with B-frames, webm → VP9, avi → MPEG-4 part 2, ogv → Theora) and can be forced
 *   with `codec`. `audio: true` adds a 440 Hz sine track (AAC, Opus in webm, Vorbis in ogv, MP3 in avi).
 * - Camera directions are those of the *camera*: `pan right` = the view window slides right over
 *   the scene, so the picture content moves LEFT in the frame by `pxPerSec` output pixels per
 *   second; `tilt up` (direction 'up') = window slides up, content moves DOWN.
 * - Every generator resolves to the path it wrote.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync, existsSync, readFileSync, statSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runFfmpeg, lastMeaningfulLine } from '../../src/media/ffmpeg.js';
import { probeDetails } from '../../src/media/probe.js';

/**
 * The repository root: two levels above test/helpers, or, when this file runs compiled (e.g.
 * dist/test/helpers), the nearest ancestor holding package.json.
 */
export const repoRoot = findRepoRoot(path.dirname(fileURLToPath(import.meta.url)));

function findRepoRoot(here: string): string {
  for (let dir = path.resolve(here, '../..'); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(here, '../..');
  }
}
/** Shared read-only evaluation media (`../shared/eval` from the repository root). */
export const evalDir = path.resolve(repoRoot, '../shared/eval');
export const evalPhotosDir = path.join(evalDir, 'photos');
export const evalVideosDir = path.join(evalDir, 'videos');
/** Shared read-only model files no npm package ships (`../shared/models` from the repository root). */
export const sharedModelsDir = path.resolve(repoRoot, '../shared/models');

/** Running under CI (`CI=true` or `CI=1`): shared data is required there. */
export const isCI = process.env.CI === 'true' || process.env.CI === '1';

/**
 * Whether the shared data a suite needs (`paths`, absolute: use {@link evalDir},
 * {@link sharedModelsDir}…) is present. Missing under CI: throws, so the suite FAILS instead of
 * skipping silently. Missing on a developer machine: prints one loud line and returns false, and the
 * caller skips (`describe.skipIf(!have)`).
 */
export function requireSharedData(paths: string[], what = 'shared eval data'): boolean {
  const missing = paths.filter((p) => !existsSync(p));
  if (missing.length === 0) return true;
  const msg = `${what} not found: ${missing.join(', ')} (expected beside the repository ${repoRoot})`;
  if (isCI) throw new Error(`${msg}; it is required under CI`);
  process.stderr.write(`\n!!! SKIPPING TESTS: ${msg} !!!\n\n`);
  return false;
}

/** Absolute path of an evaluation photo by file name (`.jpg` may be left off). Throws if absent. */
export function evalPhoto(name: string): string {
  const p = path.join(evalPhotosDir, name);
  if (existsSync(p)) return p;
  if (existsSync(p + '.jpg')) return p + '.jpg';
  throw new Error(`evaluation photo not found: ${p} (expected under ${evalPhotosDir})`);
}

/** Absolute path of an evaluation video by file name. Throws if absent. */
export function evalVideo(name: string): string {
  const p = path.join(evalVideosDir, name);
  if (!existsSync(p)) throw new Error(`evaluation video not found: ${p}`);
  return p;
}

/** Every evaluation video (absolute paths, sorted). */
export function evalVideos(): string[] {
  return readdirSync(evalVideosDir)
    .filter((f) => !f.startsWith('.'))
    .sort()
    .map((f) => path.join(evalVideosDir, f));
}

/** Every evaluation photo (absolute paths, sorted). */
export function evalPhotos(): string[] {
  return readdirSync(evalPhotosDir)
    .filter((f) => /\.jpe?g$/i.test(f))
    .sort()
    .map((f) => path.join(evalPhotosDir, f));
}

/** A fresh directory under the OS temp dir (`prefix` + random suffix). */
export function tempDir(prefix = 'vidembed-test-'): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Removes a directory made by tempDir (ignores errors). */
export function removeDir(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    /* ignore */
  }
}

/** Runs ffmpeg (`-y -v error` prepended); rejects with ffmpeg's last error line on failure. */
export async function ffmpeg(args: string[]): Promise<void> {
  const res = await runFfmpeg(['-y', '-v', 'error', ...args], { stdout: false });
  if (res.code !== 0) {
    throw new Error(`ffmpeg failed (code ${String(res.code)}): ${lastMeaningfulLine(res.stderr) ?? res.stderr.slice(-500)}\n  args: ${args.join(' ')}`);
  }
}

export type VideoCodec = 'h264' | 'hevc' | 'vp9' | 'vp8' | 'mpeg4' | 'mjpeg' | 'theora';

export interface ClipOptions {
  /** Length in seconds (default 4). */
  seconds?: number;
  /** Frame size (default 320x180); both must be even. */
  width?: number;
  height?: number;
  /** Frame rate (default 25). */
  fps?: number;
  /** Video codec (default from the container, see the file header). */
  codec?: VideoCodec;
  /** Pixel format (default yuv420p; 'yuv444p' with h264 makes the High 4:4:4 case). */
  pixFmt?: string;
  /** Add a 440 Hz sine audio track (default false). */
  audio?: boolean;
  /** Temporal sensor-like noise strength 0..100 (default 0 = none). */
  noise?: number;
  /** Keyframe interval in frames (default 2 s worth). Phone cameras typically use 1 s. */
  gop?: number;
  /** H.264/HEVC/MPEG-4 B-frames (default: the encoder's, 3 for x264; phones use 0). */
  bframes?: number;
}

interface Resolved {
  seconds: number;
  width: number;
  height: number;
  fps: number;
  frames: number;
  codec: VideoCodec;
  pixFmt: string;
  audio: boolean;
  noise: number;
  gop: number;
  bframes?: number;
}

function resolve(out: string, o: ClipOptions = {}): Resolved {
  const seconds = o.seconds ?? 4;
  const width = o.width ?? 320;
  const height = o.height ?? 180;
  const fps = o.fps ?? 25;
  if (width % 2 || height % 2) throw new Error(`clip size must be even, got ${width}x${height}`);
  if (!(seconds > 0)) throw new Error(`seconds must be > 0, got ${seconds}`);
  const ext = path.extname(out).toLowerCase();
  const codec: VideoCodec = o.codec ?? (ext === '.webm' ? 'vp9' : ext === '.avi' ? 'mpeg4' : ext === '.ogv' ? 'theora' : 'h264');
  return {
    seconds,
    width,
    height,
    fps,
    frames: Math.max(1, Math.round(seconds * fps)),
    codec,
    pixFmt: o.pixFmt ?? (codec === 'mjpeg' ? 'yuvj420p' : 'yuv420p'),
    audio: o.audio ?? false,
    noise: o.noise ?? 0,
    gop: o.gop ?? Math.max(1, Math.round(fps * 2)),
    ...(o.bframes !== undefined ? { bframes: o.bframes } : {}),
  };
}

function videoCodecArgs(r: Resolved): string[] {
  const bf = r.bframes !== undefined ? ['-bf', String(r.bframes)] : [];
  return [...codecArgs(r), ...(r.codec === 'h264' || r.codec === 'mpeg4' ? bf : [])];
}

function codecArgs(r: Resolved): string[] {
  switch (r.codec) {
    case 'h264':
      return ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-g', String(r.gop), '-pix_fmt', r.pixFmt];
    case 'hevc':
      return ['-c:v', 'libx265', '-preset', 'ultrafast', '-crf', '28', '-x265-params', `log-level=error:keyint=${r.gop}${r.bframes !== undefined ? `:bframes=${r.bframes}` : ''}`, '-pix_fmt', r.pixFmt, '-tag:v', 'hvc1'];
    case 'vp9':
      return ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-b:v', '0', '-crf', '35', '-g', String(r.gop), '-pix_fmt', r.pixFmt];
    case 'vp8':
      return ['-c:v', 'libvpx', '-deadline', 'realtime', '-cpu-used', '8', '-b:v', '800k', '-g', String(r.gop), '-pix_fmt', r.pixFmt];
    case 'mpeg4':
      return ['-c:v', 'mpeg4', '-q:v', '4', '-g', String(r.gop), ...(r.bframes === undefined ? ['-bf', '2'] : []), '-pix_fmt', r.pixFmt];
    case 'mjpeg':
      return ['-c:v', 'mjpeg', '-q:v', '4', '-pix_fmt', r.pixFmt];
    case 'theora':
      return ['-c:v', 'libtheora', '-q:v', '6', '-g', String(r.gop), '-pix_fmt', r.pixFmt];
  }
}

function audioCodecArgs(out: string): string[] {
  const ext = path.extname(out).toLowerCase();
  if (ext === '.webm') return ['-c:a', 'libopus', '-b:a', '48k'];
  if (ext === '.ogv' || ext === '.ogg') return ['-c:a', 'libvorbis', '-q:a', '2'];
  if (ext === '.avi' || ext === '.mp3') return ['-c:a', 'libmp3lame', '-b:a', '64k'];
  if (ext === '.wav') return ['-c:a', 'pcm_s16le'];
  return ['-c:a', 'aac', '-b:a', '64k'];
}

function containerArgs(out: string): string[] {
  const ext = path.extname(out).toLowerCase();
  return ext === '.mp4' || ext === '.mov' || ext === '.m4v' ? ['-movflags', '+faststart'] : [];
}

/**
 * Encodes a filter graph whose output pad is `[v]` (frames stamped N/fps) with optional sine audio.
 * `inputs` are ffmpeg input arguments (e.g. ['-i', photo]).
 */
async function render(out: string, r: Resolved, inputs: string[], graph: string): Promise<string> {
  mkdirSync(path.dirname(out), { recursive: true });
  const nInputs = inputs.filter((a) => a === '-i').length;
  const tail = r.noise > 0 ? `[pre];[pre]noise=alls=${Math.round(r.noise)}:allf=t,format=${r.pixFmt}[v]` : `[pre];[pre]format=${r.pixFmt}[v]`;
  const args = [...inputs];
  if (r.audio) args.push('-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=48000:duration=${r.seconds}`);
  args.push('-filter_complex', graph.replace(/\[v\]$/, '') + tail, '-map', '[v]');
  if (r.audio) args.push('-map', `${nInputs}:a`, ...audioCodecArgs(out));
  // -t rather than -frames:v: a frame limit would also cut the audio short.
  args.push('-t', String(r.frames / r.fps), '-r', String(r.fps), ...videoCodecArgs(r), ...containerArgs(out));
  args.push(out);
  await ffmpeg(args);
  return out;
}

/** `[0:v]` → the photo scaled to cover w×h and centre-cropped, RGB, as `[label]`. */
function cover(input: string, w: number, h: number, label: string): string {
  return `${input}scale=${w}:${h}:force_original_aspect_ratio=increase:flags=bicubic,crop=${w}:${h},setsar=1,format=rgb24[${label}]`;
}

/** Repeats a single image forever at `fps` (pts = N/fps). */
function forever(label: string, fps: number, outLabel: string): string {
  return `[${label}]loop=loop=-1:size=1:start=0,setpts=N/${fps}/TB[${outLabel}]`;
}

/** A static shot of the photo (camera locked off, nothing moves). */
export async function makeStillClip(photo: string, out: string, opts: ClipOptions = {}): Promise<string> {
  const r = resolve(out, opts);
  const g = `${cover('[0:v]', r.width, r.height, 'c')};${forever('c', r.fps, 'v')}`;
  return render(out, r, ['-i', photo], g);
}

export type PanDirection = 'left' | 'right' | 'up' | 'down';

export interface PanOptions extends ClipOptions {
  direction: PanDirection;
  /**
   * Speed of the view window in output pixels per second (default 15% of the frame width for
   * left/right, of the height for up/down). Content moves by exactly this much per second, in
   * whole pixels: at t seconds the window is offset by floor(pxPerSec * t).
   */
  pxPerSec?: number;
}

/** Default pan speed in px/s for a clip size and direction (what makePanClip uses). */
export function defaultPanSpeed(direction: PanDirection, width = 320, height = 180): number {
  return Math.round(0.15 * (direction === 'left' || direction === 'right' ? width : height));
}

/**
 * A pan (left/right) or tilt (up/down) at constant speed over the photo: a window of the output size
 * slides over the photo scaled to (size + travel). Pure translation, no zoom, no rotation.
 */
export async function makePanClip(photo: string, out: string, opts: PanOptions): Promise<string> {
  const r = resolve(out, opts);
  const horizontal = opts.direction === 'left' || opts.direction === 'right';
  const speed = opts.pxPerSec ?? defaultPanSpeed(opts.direction, r.width, r.height);
  const travel = Math.ceil(speed * r.seconds) + 2;
  const cw = r.width + (horizontal ? travel : 0);
  const ch = r.height + (horizontal ? 0 : travel);
  const pos = (forward: boolean) => (forward ? `${speed}*t+0.001` : `${travel - 1}-${speed}*t+0.001`);
  const x = horizontal ? pos(opts.direction === 'right') : '0';
  const y = horizontal ? '0' : pos(opts.direction === 'down');
  const g = `${cover('[0:v]', cw, ch, 'c')};${forever('c', r.fps, 'l')};[l]crop=${r.width}:${r.height}:x='${x}':y='${y}'[v]`;
  return render(out, r, ['-i', photo], g);
}

export interface ZoomOptions extends ClipOptions {
  direction: 'in' | 'out';
  /** Magnification factor per second (default 1.1: the view narrows 10% each second when zooming in). */
  ratePerSec?: number;
}

/**
 * A centred zoom: magnification z(t) = rate^t (in) or rate^(T - t) (out), relative to the photo
 * covering the frame. Rendered with zoompan on a 4x canvas so the centre stays put to within
 * ±0.25 px.
 */
export async function makeZoomClip(photo: string, out: string, opts: ZoomOptions): Promise<string> {
  const r = resolve(out, opts);
  const rate = opts.ratePerSec ?? 1.1;
  const last = r.frames - 1;
  const z = opts.direction === 'in' ? `pow(${rate},on/${r.fps})` : `pow(${rate},(${last}-on)/${r.fps})`;
  const g =
    `${cover('[0:v]', r.width * 4, r.height * 4, 'c')};` +
    `[c]zoompan=z='${z}':x='iw/2-(iw/zoom/2)':y='ih/2-(ih/zoom/2)':d=${r.frames}:s=${r.width}x${r.height}:fps=${r.fps},setsar=1[v]`;
  return render(out, r, ['-i', photo], g);
}

export interface ShakyOptions extends ClipOptions {
  /** Peak jitter in output pixels (default 3% of the width). */
  amplitude?: number;
  /** Changes the jitter pattern (default 1). */
  seed?: number;
}

/**
 * Handheld camera: the view jitters around a fixed point with no net drift: x and y offsets are
 * sums of three sinusoids (≈0.7, 1.9, 4.3 Hz, seed-dependent phases) of peak `amplitude` pixels.
 */
export async function makeShakyClip(photo: string, out: string, opts: ShakyOptions = {}): Promise<string> {
  const r = resolve(out, opts);
  const a = opts.amplitude ?? Math.max(2, Math.round(0.03 * r.width));
  const seed = opts.seed ?? 1;
  const ph = (k: number) => ((Math.sin(seed * 12.9898 + k * 78.233) * 43758.5453) % 1 + 1) % 1 * 2 * Math.PI;
  const wave = (k: number) =>
    `${a}+${a}*(0.55*sin(2*PI*0.7*t+${ph(k).toFixed(4)})+0.3*sin(2*PI*1.9*t+${ph(k + 1).toFixed(4)})+0.15*sin(2*PI*4.3*t+${ph(k + 2).toFixed(4)}))`;
  const cw = r.width + 2 * a;
  const ch = r.height + 2 * a;
  const g = `${cover('[0:v]', cw, ch, 'c')};${forever('c', r.fps, 'l')};[l]crop=${r.width}:${r.height}:x='${wave(0)}':y='${wave(3)}'[v]`;
  return render(out, r, ['-i', photo], g);
}

export interface MovingSubjectOptions extends ClipOptions {
  /** Photo used as the moving subject (default: a red square with a white border). */
  subjectPhoto?: string;
  /** Subject height as a fraction of the frame height (default 0.3). */
  subjectSize?: number;
  /** Which way the subject crosses (default 'right': enters left, exits right). */
  direction?: 'left' | 'right';
}

/**
 * Camera locked off on the photo while a small subject crosses the frame at constant speed, so
 * frame differences are local: a camera-motion estimator must say `static`.
 */
export async function makeMovingSubjectClip(photo: string, out: string, opts: MovingSubjectOptions = {}): Promise<string> {
  const r = resolve(out, opts);
  const sh = Math.max(8, Math.round((r.height * (opts.subjectSize ?? 0.3)) / 2) * 2);
  const sw = sh; // square subject
  const inputs = ['-i', photo];
  let subject: string;
  if (opts.subjectPhoto) {
    inputs.push('-i', opts.subjectPhoto);
    subject = `${cover('[1:v]', sw, sh, 's0')};${forever('s0', r.fps, 's')}`;
  } else {
    const b = Math.max(2, Math.round(sh / 10));
    inputs.push('-f', 'lavfi', '-i', `color=c=white:s=${sw}x${sh}:r=${r.fps}`);
    subject = `[1:v]drawbox=x=${b}:y=${b}:w=${sw - 2 * b}:h=${sh - 2 * b}:color=0xD02020:t=fill,format=rgb24,setpts=N/${r.fps}/TB[s]`;
  }
  const span = r.width - sw;
  const x = (opts.direction ?? 'right') === 'right' ? `${span}*t/${r.seconds}` : `${span}-${span}*t/${r.seconds}`;
  const y = `${Math.round((r.height - sh) / 2)}+${Math.round(r.height / 10)}*sin(2*PI*t/${r.seconds})`;
  const g = `${cover('[0:v]', r.width, r.height, 'c')};${forever('c', r.fps, 'bg')};${subject};[bg][s]overlay=x='${x}':y='${y}':eval=frame:shortest=1[v]`;
  return render(out, r, inputs, g);
}

export interface ConcatOptions {
  /** Output size and rate (default: the first clip's size, 25 fps). */
  width?: number;
  height?: number;
  fps?: number;
  codec?: VideoCodec;
}

/**
 * Joins clips with hard cuts (each is scaled/cropped to the output size). The cut times are the
 * cumulative durations of the inputs, rounded to whole frames.
 */
export async function makeConcatClip(clips: string[], out: string, opts: ConcatOptions = {}): Promise<string> {
  if (clips.length === 0) throw new Error('makeConcatClip needs at least one clip');
  let { width, height } = opts;
  if (width === undefined || height === undefined) {
    const p = await probeDetails(clips[0]);
    const rot = p.rotation === 90 || p.rotation === 270;
    width = width ?? (rot ? p.height : p.width) - ((rot ? p.height : p.width) % 2);
    height = height ?? (rot ? p.width : p.height) - ((rot ? p.width : p.height) % 2);
  }
  const fps = opts.fps ?? 25;
  const parts = clips.map(
    (_, i) => `[${i}:v]fps=fps=${fps}:round=up:start_time=0,scale=${width}:${height}:force_original_aspect_ratio=increase,crop=${width}:${height},setsar=1,format=yuv420p,setpts=PTS-STARTPTS[p${i}]`,
  );
  const graph = `${parts.join(';')};${clips.map((_, i) => `[p${i}]`).join('')}concat=n=${clips.length}:v=1:a=0[v]`;
  const r: Resolved = { ...resolve(out, { width, height, fps, codec: opts.codec }), frames: Number.MAX_SAFE_INTEGER };
  const args = [...clips.flatMap((c) => ['-i', c]), '-filter_complex', graph, '-map', '[v]', ...videoCodecArgs(r), ...containerArgs(out), out];
  mkdirSync(path.dirname(out), { recursive: true });
  await ffmpeg(args);
  return out;
}

/** Named container/codec/audio combinations for format-coverage tests. */
export const FORMAT_VARIANTS = {
  'mp4-h264': { ext: 'mp4', codec: 'h264', audio: false },
  'mp4-h264-audio': { ext: 'mp4', codec: 'h264', audio: true },
  'mp4-h264-yuv444p': { ext: 'mp4', codec: 'h264', audio: false, pixFmt: 'yuv444p' },
  'mp4-hevc': { ext: 'mp4', codec: 'hevc', audio: false },
  'mov-h264': { ext: 'mov', codec: 'h264', audio: false },
  'mov-h264-audio': { ext: 'mov', codec: 'h264', audio: true },
  'mkv-h264': { ext: 'mkv', codec: 'h264', audio: false },
  'mkv-h264-audio': { ext: 'mkv', codec: 'h264', audio: true },
  'webm-vp9': { ext: 'webm', codec: 'vp9', audio: false },
  'webm-vp9-audio': { ext: 'webm', codec: 'vp9', audio: true },
  'webm-vp8': { ext: 'webm', codec: 'vp8', audio: false },
  'avi-mpeg4': { ext: 'avi', codec: 'mpeg4', audio: false },
  'avi-mjpeg-audio': { ext: 'avi', codec: 'mjpeg', audio: true },
  'ogv-theora': { ext: 'ogv', codec: 'theora', audio: false },
} as const satisfies Record<string, { ext: string; codec: VideoCodec; audio: boolean; pixFmt?: string }>;

export type FormatVariant = keyof typeof FORMAT_VARIANTS;

/**
 * A gentle rightward pan (so frames differ) in the given container/codec, written to
 * `dir/<variant>.<ext>`.
 */
export async function makeFormatVariant(photo: string, dir: string, variant: FormatVariant, opts: ClipOptions = {}): Promise<string> {
  const v: { ext: string; codec: VideoCodec; audio: boolean; pixFmt?: string } = FORMAT_VARIANTS[variant];
  const out = path.join(dir, `${variant}.${v.ext}`);
  return makePanClip(photo, out, {
    direction: 'right',
    seconds: 3,
    ...opts,
    codec: v.codec,
    audio: v.audio,
    ...(v.pixFmt ? { pixFmt: v.pixFmt } : {}),
  });
}

/** Convenience wrappers for the common variants. */
export const makeWebmClip = (photo: string, out: string, opts: ClipOptions = {}) => makePanClip(photo, out, { direction: 'right', ...opts, codec: opts.codec ?? 'vp9' });
export const makeMovClip = (photo: string, out: string, opts: ClipOptions = {}) => makePanClip(photo, out, { direction: 'right', ...opts });
export const makeMkvClip = (photo: string, out: string, opts: ClipOptions = {}) => makePanClip(photo, out, { direction: 'right', ...opts });
export const makeMp4Clip = (photo: string, out: string, opts: ClipOptions = {}) => makePanClip(photo, out, { direction: 'right', ...opts });

/**
 * Re-muxes `src` to `out` with a display rotation that `probe()` reports as `rotation` (players
 * and ffmpeg show the picture turned by that much clockwise).
 */
export async function makeRotatedClip(src: string, out: string, rotation: 90 | 180 | 270): Promise<string> {
  // This ffmpeg's mov muxer stores `rotate=R` as a display matrix that reads back as 360 - R.
  await ffmpeg(['-i', src, '-c', 'copy', '-map', '0', '-metadata:s:v:0', `rotate=${(360 - rotation) % 360}`, out]);
  return out;
}

/**
 * A WebM written to a pipe, as browsers' MediaRecorder and live streams produce it: no duration
 * and no cues in the header (probe must count the duration itself).
 */
export async function makeNoDurationWebm(photo: string, out: string, opts: ClipOptions = {}): Promise<string> {
  const dir = tempDir('vidembed-nodur-');
  try {
    const src = await makePanClip(photo, path.join(dir, 'src.webm'), { direction: 'right', seconds: 3, ...opts, codec: 'vp9' });
    mkdirSync(path.dirname(out), { recursive: true });
    // -live 1: the muxer writes neither duration nor cues, as when writing to a pipe.
    await ffmpeg(['-i', src, '-c', 'copy', '-live', '1', '-f', 'webm', out]);
    return out;
  } finally {
    removeDir(dir);
  }
}

/**
 * A small real clip needing no shared data: `seconds` of ffmpeg's test pattern at `size` (clips of
 * different lengths or sizes have different bytes). H.264 in whatever container the name says.
 */
export async function makeTestPatternClip(out: string, seconds: number, size = '160x90'): Promise<string> {
  mkdirSync(path.dirname(out), { recursive: true });
  await ffmpeg(['-f', 'lavfi', '-i', `testsrc=size=${size}:rate=10:duration=${seconds}`, '-pix_fmt', 'yuv420p', '-c:v', 'libx264', '-preset', 'ultrafast', out]);
  return out;
}

/** Bad input: a text file with a video extension. */
export function makeTextFileAsMp4(out: string): string {
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, 'This is not a video, just some text pretending to be one.\n'.repeat(200));
  return out;
}

/** Bad input: a zero-byte file. */
export function makeEmptyFile(out: string): string {
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, '');
  return out;
}

/**
 * Bad input: a valid H.264 mp4 cut in half. With `faststart` (default true) the index sits at the
 * front, so roughly the first half still decodes; with `faststart: false` the index (moov) is in
 * the lost half and nothing decodes ("moov atom not found").
 */
export async function makeTruncatedMp4(photo: string, out: string, opts: { seconds?: number; faststart?: boolean; keepFraction?: number } = {}): Promise<string> {
  const dir = tempDir('vidembed-trunc-');
  try {
    const full = path.join(dir, 'full.mp4');
    const r = resolve(full, { seconds: opts.seconds ?? 4 });
    const g = `${cover('[0:v]', r.width + 200, r.height, 'c')};${forever('c', r.fps, 'l')};[l]crop=${r.width}:${r.height}:x='40*t':y=0[v]`;
    const tail = `[pre];[pre]format=yuv420p[v]`;
    await ffmpeg([
      '-i', photo, '-filter_complex', g.replace(/\[v\]$/, '') + tail, '-map', '[v]', '-frames:v', String(r.frames), '-r', String(r.fps),
      ...videoCodecArgs(r), ...(opts.faststart === false ? [] : ['-movflags', '+faststart']), full,
    ]);
    const buf = readFileSync(full);
    const keep = Math.floor(buf.length * (opts.keepFraction ?? 0.5));
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(out, buf.subarray(0, keep));
    return out;
  } finally {
    removeDir(dir);
  }
}

/** Bad input for a video tool: audio only (a sine). Codec from the extension (.m4a/.mp4 AAC, .mp3, .wav, .ogg). */
export async function makeAudioOnlyFile(out: string, opts: { seconds?: number; frequency?: number } = {}): Promise<string> {
  const s = opts.seconds ?? 2;
  mkdirSync(path.dirname(out), { recursive: true });
  await ffmpeg(['-f', 'lavfi', '-i', `sine=frequency=${opts.frequency ?? 440}:sample_rate=44100:duration=${s}`, ...audioCodecArgs(out), out]);
  return out;
}

/**
 * A 1920x1080 30 fps H.264 (High, veryfast, CRF 21) clip for benchmarks: a slow diagonal pan over
 * the photo (scaled to 2880x1620) plus blocky grain, so it costs a decoder what real footage does
 * (~5 Mbit/s). Default GOP 4 s with B-frames (an x264 export); `{ gop: 30, bframes: 0 }` is
 * phone-camera-like. Slow to make (≈ real time on 2 idle cores); cache it.
 */
export async function make1080pClip(photo: string, out: string, seconds: number, opts: { gop?: number; bframes?: number; crf?: number } = {}): Promise<string> {
  const fps = 30;
  mkdirSync(path.dirname(out), { recursive: true });
  const g =
    `[0:v]scale=2880:1620:force_original_aspect_ratio=increase,crop=2880:1620,setsar=1,format=yuv420p,loop=loop=-1:size=1:start=0,setpts=N/${fps}/TB,` +
    `crop=1920:1080:x='480+480*sin(t*0.3)':y='270+270*sin(t*0.2)'[bg];` +
    `[1:v]scale=1920:1080:flags=neighbor,format=yuv420p[n];[bg][n]blend=all_mode=overlay:all_opacity=0.06,format=yuv420p[v]`;
  await ffmpeg([
    '-i', photo,
    '-f', 'lavfi', '-i', `nullsrc=s=480x270:r=${fps},geq=lum='random(1)*255':cb=128:cr=128`,
    '-filter_complex', g, '-map', '[v]', '-frames:v', String(Math.round(seconds * fps)), '-r', String(fps),
    '-c:v', 'libx264', '-preset', 'veryfast', '-crf', String(opts.crf ?? 21), '-g', String(opts.gop ?? fps * 4),
    ...(opts.bframes !== undefined ? ['-bf', String(opts.bframes)] : []),
    '-pix_fmt', 'yuv420p', '-movflags', '+faststart', out,
  ]);
  return out;
}

/** Size in bytes (handy in assertions about generated files). */
export function fileSize(p: string): number {
  return statSync(p).size;
}

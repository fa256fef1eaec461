import { MediaError, ValidationError, VidembedError } from '../api/errors.js';
import { abortReason, decoderThreads, lastMeaningfulLine, runFfmpeg, spawnFfmpeg, StderrTail } from './ffmpeg.js';
import { probeDetails, type ProbeDetails } from './probe.js';
import type { Frame, SampleOptions } from './types.js';

/** Knobs beyond the SampleOptions contract; the defaults are what the engine should use. */
export interface DecodeTuning {
  /** Decoder threads (default `VIDEMBED_FFMPEG_THREADS` or 1; 0 = ffmpeg decides). */
  threads?: number;
  /**
   * Skip decoding non-reference frames (`-skip_frame noref`) when sampling at most a quarter of
   * the source frame rate (H.264/HEVC/MPEG-2/MPEG-4 only). Saves ~30-40% decode CPU on streams
   * with B-frames (x264 exports; phone footage rarely has any, so gains nothing there). Cost: a
   * tick that lands on a skipped frame gets the previous reference frame instead, i.e. up to 2-3
   * source frames (≤ ~100 ms) early, so timestamps are that much less exact. Default off here;
   * ingest and signatures ask for it unless `VIDEMBED_FFMPEG_FAST=0` (src/env.ts `ffmpegFastDecode`).
   */
  fastDecode?: boolean;
  /** Frames decoded ahead of the consumer, so ffmpeg keeps working while models run (default 4). */
  readAhead?: number;
  /** Probe result, when the caller already has it (saves one ffmpeg run). */
  probe?: ProbeDetails;
  /** 'auto' (default) picks per file, see planStrategy; 'seek'/'decode' force one. */
  strategy?: 'auto' | 'seek' | 'decode';
}

/** Codecs whose decoders honour `-skip_frame noref` without breaking later frames. */
const SKIP_NOREF_CODECS = new Set(['h264', 'hevc', 'mpeg4', 'mpeg2video', 'mpeg1video']);

/**
 * Output frame size for a source: the longest *display* side (after sample aspect ratio and
 * rotation) becomes exactly `maxSide` (rounded down to even), the other side keeps the aspect
 * ratio, rounded to the nearest even number (≥ 2). Small sources are upscaled, so every frame of a
 * given video has a predictable size whatever the input.
 */
export function outputSize(
  src: { width: number; height: number; sar?: number; rotation?: number },
  maxSide: number,
): { width: number; height: number } {
  let dw = src.width * (src.sar && src.sar > 0 ? src.sar : 1);
  let dh = src.height;
  if (src.rotation === 90 || src.rotation === 270) [dw, dh] = [dh, dw];
  const m = Math.max(2, maxSide - (maxSide % 2));
  const even = (x: number) => Math.max(2, Math.round(x / 2) * 2);
  return dw >= dh ? { width: m, height: Math.min(m, even((dh * m) / dw)) } : { width: Math.min(m, even((dw * m) / dh)), height: m };
}

function validate(file: string, opts: SampleOptions): void {
  if (typeof file !== 'string' || file.length === 0) throw new ValidationError('a file path is required', ['file']);
  if (!(Number.isFinite(opts.fps) && opts.fps > 0 && opts.fps <= 60)) {
    throw new ValidationError(`fps must be a number in (0, 60], got ${String(opts.fps)}`, ['fps']);
  }
  if (!(Number.isInteger(opts.maxSide) && opts.maxSide >= 2 && opts.maxSide <= 8192)) {
    throw new ValidationError(`maxSide must be an integer in [2, 8192], got ${String(opts.maxSide)}`, ['maxSide']);
  }
  if (opts.start !== undefined && !(Number.isFinite(opts.start) && opts.start >= 0)) {
    throw new ValidationError(`start must be a number >= 0, got ${String(opts.start)}`, ['start']);
  }
  if (opts.end !== undefined && !(Number.isFinite(opts.end) && opts.end > (opts.start ?? 0))) {
    throw new ValidationError(`end must be a number greater than start, got ${String(opts.end)}`, ['end']);
  }
}

/** Formats a rate/seconds for ffmpeg's argument parser (no exponent notation). */
function num(x: number): string {
  return Number(x.toFixed(6)).toString();
}

/**
 * H.264 4:4:4 (and RGB) streams can give corrupt frames after a fast input seek (`-ss` before `-i`)
 * with this ffmpeg: for those, decode from the start and trim in the filter graph.
 */
export function needsDecodeFromStart(p: Pick<ProbeDetails, 'videoCodec' | 'pixFmt'>): boolean {
  return p.videoCodec === 'h264' && /444|gbr|rgb/.test(p.pixFmt ?? '');
}

export interface FfmpegSamplePlan {
  args: string[];
  width: number;
  height: number;
  /** Time of the first frame; frame k is at `start + k / fps`. */
  start: number;
  end?: number;
}

/** Seconds between source frames (1/25 when the rate is unknown or absurd). */
function framePeriod(p: Pick<ProbeDetails, 'fps'>): number {
  return p.fps > 0 && p.fps <= 1000 ? 1 / p.fps : 1 / 25;
}

/** How far past a frame's timestamp a seek may land and still keep that frame. */
function seekSlack(p: Pick<ProbeDetails, 'fps'>): number {
  return Math.min(0.0005, framePeriod(p) / 4);
}

function scaleFilter(p: Pick<ProbeDetails, 'width' | 'height'>, width: number, height: number): string {
  const flags = Math.max(width, height) * 2 <= Math.max(p.width, p.height) ? 'area' : 'bicubic';
  return `scale=${width}:${height}:flags=${flags},setsar=1,format=rgb24`;
}

/** Builds the ffmpeg command for sampleFrames (exported for tests and the benchmark). */
export function planSample(file: string, p: ProbeDetails, opts: SampleOptions & DecodeTuning): FfmpegSamplePlan {
  const vs = p.videoStream;
  if (!vs) throw new MediaError(`${file}: no video stream`);
  const { width, height } = outputSize({ width: p.width, height: p.height, sar: vs.sar, rotation: p.rotation }, opts.maxSide);
  const start = opts.start ?? 0;
  const end = opts.end;
  const threads = opts.threads ?? decoderThreads();
  const fast = (opts.fastDecode ?? false) && SKIP_NOREF_CODECS.has(p.videoCodec ?? '') && p.fps >= opts.fps * 4;

  const args: string[] = ['-v', 'error', '-threads', String(threads)];
  if (fast) args.push('-skip_frame', 'noref');
  const filters: string[] = [];
  // Seek to just after the frame before `start`, so the frame shown at `start` (the last one at or
  // before it) is the first one kept, then shift the timeline so that `start` is 0.
  const seekTo = start > 0 ? Math.max(0, start - framePeriod(p) + seekSlack(p)) : 0;
  const slowSeek = seekTo > 0 && needsDecodeFromStart(p);
  if (seekTo > 0 && !slowSeek) args.push('-ss', num(seekTo));
  args.push('-i', file, '-map', `0:${vs.index}`, '-an', '-sn', '-dn');
  if (slowSeek) filters.push(`trim=start=${num(seekTo)}`, `setpts=PTS-${num(start)}/TB`);
  else if (start - seekTo > 0) filters.push(`setpts=PTS-${num(start - seekTo)}/TB`);
  // round=up: tick k takes the last frame at or before k/fps; start_time=0 makes tick 0 the first
  // tick (padded with the first frame when the video starts a little late).
  filters.push(`fps=fps=${num(opts.fps)}:round=up:start_time=0`);
  filters.push(scaleFilter(p, width, height));
  args.push('-vf', filters.join(','));
  if (end !== undefined) args.push('-t', num(end - start));
  args.push('-vsync', 'passthrough', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1');
  return { args, width, height, start, ...(end !== undefined ? { end } : {}) };
}

/**
 * Yields frames sampled at `opts.fps`: frame k is at `t = start + k / fps` seconds and shows the
 * last source frame at or before t (ticks run while there is a frame at or before them, and stop
 * before `end`). Frames are scaled so the longest side is `opts.maxSide` (see outputSize), packed
 * RGB24. ffmpeg processes are killed when the consumer stops early or `opts.signal` aborts (the
 * generator then throws the signal's reason). A damaged file yields what decodes; MediaError when
 * nothing does.
 *
 * Two strategies, same frames (see planStrategy): `decode` runs one ffmpeg that decodes every
 * frame and keeps one per tick (fps filter); `seek` (MP4/MOV whose keyframes sit close to the
 * ticks, e.g. phone footage with 1 s GOPs, or intra-only codecs) seeks to each sampled frame
 * and decodes only from the keyframe before it, 8 ticks per ffmpeg process.
 */
export async function* sampleFrames(file: string, opts: SampleOptions & DecodeTuning): AsyncGenerator<Frame> {
  validate(file, opts);
  const { signal } = opts;
  if (signal?.aborted) throw abortReason(signal);
  const info = opts.probe ?? (await probeDetails(file, { signal }));
  if (!info.hasVideo) {
    throw new MediaError(`${file}: no video stream${info.hasAudio ? ' (audio only)' : ''}`);
  }
  if (signal?.aborted) throw abortReason(signal);
  const strategy = await planStrategy(file, info, opts);
  if (strategy.kind === 'seek') yield* seekSample(file, info, opts, strategy);
  else yield* decodeSample(file, info, opts);
}

// ---------------------------------------------------------------------------------------------
// Seek strategy

/** Presentation timestamps (seconds, ascending) of every video packet, and which are keyframes. */
export interface FrameIndex {
  pts: number[];
  key: boolean[];
}

/**
 * Lists the video packets of `file` without decoding (`-c copy -f framecrc`): cheap (reads the
 * file once, ~0.1 s for a 40 MB 1080p clip). Null when timestamps are missing.
 */
export async function scanFrameIndex(file: string, streamIndex: number, signal?: AbortSignal): Promise<FrameIndex | null> {
  const res = await runFfmpeg(['-v', 'error', '-i', file, '-map', `0:${streamIndex}`, '-c', 'copy', '-f', 'framecrc', 'pipe:1'], { signal });
  const text = res.stdout.toString('latin1');
  const tb = /^#tb 0: (\d+)\/(\d+)$/m.exec(text);
  if (!tb) return null;
  const unit = Number(tb[1]) / Number(tb[2]);
  const rows: { pts: number; key: boolean }[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const c = line.split(',');
    if (c.length < 6) continue;
    const pts = Number(c[2]);
    if (!Number.isFinite(pts) || Math.abs(pts) > 9e15) return null;
    const flags = /F=0x([0-9A-Fa-f]+)/.exec(line);
    rows.push({ pts: pts * unit, key: flags ? (parseInt(flags[1], 16) & 1) === 1 : true });
  }
  rows.sort((x, y) => x.pts - y.pts);
  return { pts: rows.map((r) => r.pts), key: rows.map((r) => r.key) };
}

export interface SeekStrategy {
  kind: 'seek';
  /** Tick times (labels) and the pts of the source frame each one shows. */
  ticks: number[];
  targets: number[];
  /** Estimated frames decoded: seeking vs decoding everything. */
  seekCost: number;
  decodeCost: number;
}
export type Strategy = SeekStrategy | { kind: 'decode'; reason: string; seekCost?: number; decodeCost?: number };

const SEEK_BATCH = 8;
const SEEKABLE_CONTAINER = /(^|,)(mov|mp4)(,|$)/;

/** Last index i with a[i] <= x (binary search), -1 when none. */
function lastAtOrBefore(a: number[], x: number): number {
  let lo = 0;
  let hi = a.length - 1;
  let ans = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] <= x) {
      ans = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return ans;
}

/**
 * Picks `seek` when it decodes under 70% of what a full decode would (counting ~3 frames of
 * overhead per seek and 15 per ffmpeg process), for MP4/MOV only (exact, indexed seeking). H.264
 * 4:4:4 always decodes (fast seeking can corrupt it). `opts.strategy` forces a choice.
 */
export async function planStrategy(file: string, info: ProbeDetails, opts: SampleOptions & DecodeTuning): Promise<Strategy> {
  const forced = opts.strategy ?? 'auto';
  if (forced === 'decode') return { kind: 'decode', reason: 'forced' };
  if (needsDecodeFromStart(info)) return { kind: 'decode', reason: 'H.264 4:4:4 is not seeked' };
  if (forced === 'auto' && !SEEKABLE_CONTAINER.test(info.container ?? '')) return { kind: 'decode', reason: `container ${info.container ?? '?'}` };
  const vs = info.videoStream;
  if (!vs) return { kind: 'decode', reason: 'no video stream' };
  const index = await scanFrameIndex(file, vs.index, opts.signal);
  if (!index || index.pts.length === 0) return { kind: 'decode', reason: 'no packet index' };
  const { pts, key } = index;
  const keyPos: number[] = [];
  key.forEach((k, i) => k && keyPos.push(i));
  if (keyPos.length === 0) return { kind: 'decode', reason: 'no keyframes' };
  const start = opts.start ?? 0;
  const end = opts.end ?? Infinity;
  const last = pts[pts.length - 1];
  const ticks: number[] = [];
  const targets: number[] = [];
  let seekCost = 0;
  let first = -1;
  let lastTarget = -1;
  for (let k = 0; ; k++) {
    const t = start + k / opts.fps;
    if (t >= end - 1e-9 || t > last + 1e-6) break;
    const i = Math.max(0, lastAtOrBefore(pts, t + 1e-6));
    const kp = keyPos[Math.max(0, lastAtOrBefore(keyPos, i))];
    seekCost += Math.max(0, i - kp) + 1 + 3;
    if (first < 0) first = kp;
    lastTarget = i;
    ticks.push(Number(t.toFixed(6)));
    targets.push(pts[i]);
  }
  if (ticks.length === 0) return { kind: 'decode', reason: 'no ticks' };
  seekCost += 15 * Math.ceil(ticks.length / SEEK_BATCH);
  const decodeCost = lastTarget - first + 1;
  if (forced === 'seek' || seekCost < 0.7 * decodeCost) return { kind: 'seek', ticks, targets, seekCost, decodeCost };
  return { kind: 'decode', reason: 'keyframes too sparse', seekCost, decodeCost };
}

/**
 * One ffmpeg, one input per target, first matching frame of each, concatenated. Each input seeks
 * (`-noaccurate_seek`) to just *after* its target, so the demuxer lands on the keyframe at or
 * before the target (an exact seek to the target itself would round to the previous GOP), and
 * `select` then keeps the first frame at or after the target.
 */
function seekBatchArgs(file: string, info: ProbeDetails, targets: number[], width: number, height: number, threads: number): string[] {
  const vs = info.videoStream!;
  const args = ['-v', 'error'];
  const slack = seekSlack(info);
  for (const pts of targets) {
    args.push('-threads', String(threads), '-noaccurate_seek');
    if (pts + slack > 0) args.push('-ss', num(pts + slack));
    args.push('-i', file);
  }
  const scale = scaleFilter(info, width, height);
  const parts = targets.map((pts, k) => {
    // Timestamps are relative to the seek point: the target sits at -slack (or at pts when not seeking).
    const from = pts + slack > 0 ? -2 * slack : pts - slack;
    return `[${k}:${vs.index}]select='gte(t,${num(from)})',trim=end_frame=1,setpts=PTS-STARTPTS,${scale}[v${k}]`;
  });
  const graph = `${parts.join(';')};${targets.map((_, k) => `[v${k}]`).join('')}concat=n=${targets.length}:v=1:a=0[out]`;
  args.push('-filter_complex', graph, '-map', '[out]', '-an', '-sn', '-dn', '-vsync', 'passthrough', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1');
  return args;
}

type BatchResult = { frames: Uint8Array[]; stderr: string } | { error: unknown };

async function* seekSample(file: string, info: ProbeDetails, opts: SampleOptions & DecodeTuning, s: SeekStrategy): AsyncGenerator<Frame> {
  const { width, height } = outputSize({ ...info, sar: info.videoStream?.sar }, opts.maxSide);
  const frameBytes = width * height * 3;
  const threads = opts.threads ?? decoderThreads();
  const batches: { ticks: number[]; targets: number[] }[] = [];
  for (let i = 0; i < s.ticks.length; i += SEEK_BATCH) {
    batches.push({ ticks: s.ticks.slice(i, i + SEEK_BATCH), targets: s.targets.slice(i, i + SEEK_BATCH) });
  }
  const ac = new AbortController();
  const onAbort = () => ac.abort(opts.signal?.reason);
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const run = (b: { targets: number[] }): Promise<BatchResult> =>
    runFfmpeg(seekBatchArgs(file, info, b.targets, width, height, threads), { signal: ac.signal }).then(
      (r) => {
        const frames: Uint8Array[] = [];
        for (let off = 0; off + frameBytes <= r.stdout.length; off += frameBytes) frames.push(new Uint8Array(r.stdout.subarray(off, off + frameBytes)));
        return { frames, stderr: r.stderr };
      },
      (error: unknown) => ({ error }),
    );
  let yielded = 0;
  let lastError: string | undefined;
  let pending: Promise<BatchResult> | undefined = batches.length ? run(batches[0]) : undefined;
  try {
    for (let i = 0; i < batches.length; i++) {
      const res: BatchResult = await pending!;
      // Decode the next batch while the consumer works on this one.
      pending = i + 1 < batches.length ? run(batches[i + 1]) : undefined;
      if (opts.signal?.aborted) throw abortReason(opts.signal);
      if ('error' in res) throw res.error;
      const b = batches[i];
      if (res.frames.length === b.ticks.length) {
        for (let j = 0; j < b.ticks.length; j++) {
          yielded++;
          yield { t: b.ticks[j], width, height, data: res.frames[j] };
        }
        continue;
      }
      // Some seek came back empty (damaged file, odd index): decode this stretch instead.
      lastError = lastMeaningfulLine(res.stderr);
      let got = 0;
      try {
        const window = { ...opts, start: b.ticks[0], end: b.ticks[b.ticks.length - 1] + 0.5 / opts.fps };
        for await (const f of decodeSample(file, info, window)) {
          got++;
          yielded++;
          yield f;
        }
      } catch (err) {
        if (!(err instanceof MediaError)) throw err;
        lastError = err.message;
      }
      if (got === 0) break; // nothing decodes from here on
    }
    if (yielded === 0) {
      throw new MediaError(`${file}: no video frames could be decoded (${lastError ?? 'ffmpeg produced no frames'})`);
    }
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    ac.abort();
    if (pending) await pending; // settles quickly once killed; never rejects
  }
}

// ---------------------------------------------------------------------------------------------
// Decode strategy

async function* decodeSample(file: string, info: ProbeDetails, opts: SampleOptions & DecodeTuning): AsyncGenerator<Frame> {
  const { signal } = opts;
  const plan = planSample(file, info, opts);
  const frameBytes = plan.width * plan.height * 3;
  const readAhead = Math.max(1, opts.readAhead ?? 4);

  const child = spawnFfmpeg(plan.args);
  child.stdin.end();
  const stderr = new StderrTail(32 * 1024);
  const queue: Uint8Array[] = [];
  let cur = new Uint8Array(frameBytes);
  let filled = 0;
  let closed = false;
  let exitCode: number | null = null;
  let spawnError: Error | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };

  child.stdout.on('data', (chunk: Buffer) => {
    let off = 0;
    while (off < chunk.length) {
      const n = Math.min(frameBytes - filled, chunk.length - off);
      cur.set(chunk.subarray(off, off + n), filled);
      filled += n;
      off += n;
      if (filled === frameBytes) {
        queue.push(cur);
        cur = new Uint8Array(frameBytes);
        filled = 0;
      }
    }
    if (queue.length >= readAhead) child.stdout.pause();
    notify();
  });
  child.stderr.on('data', (b: Buffer) => stderr.push(b));
  child.on('error', (e) => {
    spawnError = e;
    closed = true;
    notify();
  });
  child.on('close', (code) => {
    exitCode = code;
    closed = true;
    notify();
  });
  const onAbort = () => {
    child.kill('SIGKILL');
    notify();
  };
  signal?.addEventListener('abort', onAbort, { once: true });

  let k = 0;
  try {
    for (;;) {
      if (signal?.aborted) throw abortReason(signal);
      const data = queue.shift();
      if (data) {
        if (queue.length < readAhead && child.stdout.isPaused()) child.stdout.resume();
        const t = plan.start + k / opts.fps;
        if (plan.end !== undefined && t >= plan.end - 1e-9) break;
        k++;
        yield { t: Number(t.toFixed(6)), width: plan.width, height: plan.height, data };
        continue;
      }
      if (closed) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
    if (signal?.aborted) throw abortReason(signal);
    if (spawnError) throw new VidembedError(`cannot run ffmpeg: ${spawnError.message}`, { cause: spawnError });
    if (k === 0 && closed) {
      const pastEnd = plan.start > 0 && info.durationSec > 0 && plan.start >= info.durationSec - 1e-3;
      if (!pastEnd) {
        const why = lastMeaningfulLine(stderr.text()) ?? `ffmpeg exited with code ${String(exitCode)}`;
        throw new MediaError(`${file}: no video frames could be decoded (${why})`);
      }
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    if (!closed) {
      child.kill('SIGKILL');
    }
    child.stdout.destroy();
    child.stderr.destroy();
  }
}

/** All sampled frames in memory (mind the size: `width * height * 3` bytes each). */
export async function readAllFrames(file: string, opts: SampleOptions & DecodeTuning): Promise<Frame[]> {
  const out: Frame[] = [];
  for await (const f of sampleFrames(file, opts)) out.push(f);
  return out;
}

/**
 * Decodes a still image (JPEG, PNG, … or the first frame of a video) to RGB24 with its longest
 * side `maxSide` (same sizing rule as sampleFrames; 0 keeps the native size). EXIF orientation is
 * not applied (ffmpeg 4.1 ignores it).
 */
export async function decodeImage(file: string, maxSide: number, opts: { signal?: AbortSignal } = {}): Promise<Frame> {
  if (!(Number.isInteger(maxSide) && maxSide >= 0 && maxSide <= 8192)) {
    throw new ValidationError(`maxSide must be an integer in [0, 8192], got ${String(maxSide)}`, ['maxSide']);
  }
  const info = await probeDetails(file, opts);
  const vs = info.videoStream;
  if (!vs) throw new MediaError(`${file}: not an image (no picture stream)`);
  const size = maxSide === 0 ? { width: info.width, height: info.height } : outputSize({ ...info, sar: vs.sar }, maxSide);
  const srcLong = Math.max(info.width, info.height);
  const flags = Math.max(size.width, size.height) * 2 <= srcLong ? 'area' : 'bicubic';
  const res = await runFfmpeg(
    [
      '-v', 'error', '-i', file, '-map', `0:${vs.index}`, '-frames:v', '1',
      '-vf', `scale=${size.width}:${size.height}:flags=${flags},setsar=1,format=rgb24`,
      '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1',
    ],
    opts,
  );
  const bytes = size.width * size.height * 3;
  if (res.stdout.length < bytes) {
    const why = lastMeaningfulLine(res.stderr) ?? `ffmpeg exited with code ${String(res.code)}`;
    throw new MediaError(`${file}: could not decode image (${why})`);
  }
  const data = new Uint8Array(bytes);
  data.set(res.stdout.subarray(0, bytes));
  return { t: 0, width: size.width, height: size.height, data };
}

import { MediaError } from '../api/errors.js';
import type { TagValue } from '../api/types.js';
import { probe, sampleFrames } from '../media/index.js';
import { resizeFrame } from '../media/resize.js';
import type { Frame, ProbeResult } from '../media/types.js';
import type { Embedder, SegmentEmbedding } from '../models/embedder.js';

export interface AnalyzeOptions {
  segmentSeconds: number;
  fps: number;
  signal?: AbortSignal;
  /** Called with a fraction in [0, 1] as segments complete. */
  onProgress?: (fraction: number) => void;
  /** Measures tags of a segment from its frames before it is embedded (tagging issue). */
  tagger?: SegmentTagger;
}

export interface SegmentTagger {
  tagSegment(frames: Frame[], segment: { start: number; end: number }): Promise<Record<string, TagValue>>;
}

export interface AnalyzedSegment extends SegmentEmbedding {
  idx: number;
  start: number;
  end: number;
  tags?: Record<string, TagValue>;
}

export interface AnalyzedVideo {
  media: ProbeResult;
  segments: AnalyzedSegment[];
  /** Mean of the segment vectors, re-normalised. */
  videoVector: Float32Array;
  timings: { decodeAndModelMs: number };
}

/** A trailing segment shorter than this joins the one before it rather than standing alone. */
const MIN_TAIL_SECONDS = 0.5;

/**
 * Decodes a video once, as a stream, cutting it into fixed windows and embedding each window as
 * soon as its frames are in: memory holds one segment's frames, whatever the video's length.
 */
export async function analyzeVideo(file: string, embedder: Embedder, opts: AnalyzeOptions): Promise<AnalyzedVideo> {
  const media = await probe(file);
  if (!media.hasVideo) throw new MediaError(`${basename(file)} has no video stream`);
  await embedder.load();
  const frames = sampleFrames(file, { fps: opts.fps, maxSide: embedder.frameMaxSide, signal: opts.signal });
  return embedFrameStream(frames, media.durationSec > 0 ? media.durationSec : undefined, media, embedder, opts, basename(file));
}

/** The same analysis over frames that arrive already decoded (tensor uploads). */
export async function analyzeFrames(frames: Frame[], embedder: Embedder, opts: AnalyzeOptions): Promise<AnalyzedVideo> {
  if (frames.length === 0) throw new MediaError('the video tensor holds no frames');
  await embedder.load();
  const resized = frames.map((f) => resizeFrame(f, embedder.frameMaxSide));
  const last = frames[frames.length - 1].t;
  const step = frames.length > 1 ? (last - frames[0].t) / (frames.length - 1) : 1 / opts.fps;
  const duration = last + (step > 0 ? step : 1 / opts.fps);
  const media: ProbeResult = {
    durationSec: duration,
    width: frames[0].width,
    height: frames[0].height,
    fps: step > 0 ? 1 / step : opts.fps,
    hasVideo: true,
    hasAudio: false,
    rotation: 0,
  };
  return embedFrameStream(toAsync(resized), duration, media, embedder, opts, 'tensor');
}

async function* toAsync<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

async function embedFrameStream(
  frames: AsyncIterable<Frame>,
  knownDuration: number | undefined,
  media: ProbeResult,
  embedder: Embedder,
  opts: AnalyzeOptions,
  name: string,
): Promise<AnalyzedVideo> {
  const started = Date.now();
  const duration = knownDuration ?? Number.POSITIVE_INFINITY;
  const segLen = opts.segmentSeconds;
  // With a known duration, a trailing window shorter than MIN_TAIL_SECONDS joins the one before it.
  const lastIdx = Number.isFinite(duration)
    ? Math.max(0, Math.ceil(duration / segLen - MIN_TAIL_SECONDS / segLen) - 1)
    : Number.POSITIVE_INFINITY;
  const segmentOf = (t: number) => Math.min(Math.floor(t / segLen), lastIdx);
  const endOf = (idx: number) => (idx >= lastIdx ? duration : Math.min((idx + 1) * segLen, duration));

  const segments: AnalyzedSegment[] = [];
  let pending: Frame[] = [];
  let pendingIdx = 0;
  let lastT = 0;

  const flush = async (idx: number, group: Frame[], end: number) => {
    if (opts.signal?.aborted) throw opts.signal.reason ?? new Error('aborted');
    const start = idx * segLen;
    const ctx = { start, end };
    const tags = opts.tagger ? await opts.tagger.tagSegment(group, ctx) : undefined;
    const emb = await embedder.embedSegment(group, { ...ctx, tags });
    segments.push({ idx: segments.length, start, end, ...emb, tags });
    if (Number.isFinite(duration)) opts.onProgress?.(Math.min(1, end / duration));
  };

  for await (const frame of frames) {
    lastT = frame.t;
    const idx = segmentOf(frame.t);
    if (idx !== pendingIdx && pending.length > 0) {
      await flush(pendingIdx, pending, endOf(pendingIdx));
      pending = [];
    }
    pendingIdx = idx;
    pending.push(frame);
  }
  if (pending.length === 0 && segments.length === 0) {
    throw new MediaError(`${name}: no frame could be decoded`);
  }
  if (pending.length > 0) {
    const end = Number.isFinite(duration) ? Math.max(duration, lastT) : lastT + 1 / opts.fps;
    await flush(pendingIdx, pending, end);
  }
  opts.onProgress?.(1);
  return {
    media,
    segments,
    videoVector: meanVector(segments.map((s) => s.vector)),
    timings: { decodeAndModelMs: Date.now() - started },
  };
}

export function meanVector(vectors: Float32Array[]): Float32Array {
  if (vectors.length === 0) return new Float32Array(0);
  const out = new Float32Array(vectors[0].length);
  for (const v of vectors) for (let i = 0; i < v.length; i++) out[i] += v[i];
  return normalize(out);
}

export function normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i] * v[i];
  n = Math.sqrt(n);
  if (n > 0) for (let i = 0; i < v.length; i++) v[i] /= n;
  return v;
}

function basename(file: string): string {
  return file.split(/[\\/]/).pop() ?? file;
}

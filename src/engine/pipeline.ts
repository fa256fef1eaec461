import { MediaError } from '../api/errors.js';
import type { TagValue } from '../api/types.js';
import { probe, sampleFrames } from '../media/index.js';
import type { PHash } from '../media/phash.js';
import { resizeFrame } from '../media/resize.js';
import { encodeThumbnail, encodeThumbnails } from '../media/thumbnail.js';
import type { Frame, ProbeResult } from '../media/types.js';
import { analysisDescription } from '../analysis/describe.js';
import type { Analyzer, SegmentAnalysis } from '../analysis/types.js';
import type { Embedder, SegmentEmbedding } from '../models/embedder.js';
import { meanVector } from '../models/vectors.js';
import { CUT_CONTEXT_S, PIXEL_TAGGING_SAMPLING, PixelTagger, type PixelSegmentTags, type PixelTags } from '../tagging/index.js';
import { SignatureBuilder, type VideoSignature } from './duplicates.js';

export interface AnalyzeOptions {
  /** Longest segment, seconds; segments also end at detected cuts. */
  segmentSeconds: number;
  /** Frames per second given to the embedder. */
  fps: number;
  signal?: AbortSignal;
  /** Called with a fraction in [0, 1] as segments complete. */
  onProgress?: (fraction: number) => void;
  /** Analyzers run on every segment before the embedder (their tags go to every collection). */
  analyzers?: Analyzer[];
  /** Keep a JPEG thumbnail of each segment's keyframe (ingest; not for one-off encode/tag calls). */
  thumbnails?: boolean;
  /** Keep the visual signature (pHash of a frame every 1/4 s, and of each segment's keyframe) for near-duplicate detection (ingest). */
  signature?: boolean;
}

export interface AnalyzedSegment extends SegmentEmbedding {
  idx: number;
  start: number;
  end: number;
  tags: Record<string, TagValue>;
  /** What each analyzer found (facts by analyzer name). */
  analysis: SegmentAnalysis;
  /** JPEG of the segment's keyframe (with `thumbnails`). */
  thumbnail?: Buffer;
  /** pHash of the segment's keyframe, the frame its thumbnail shows (with `signature`). */
  phash?: PHash;
}

export interface AnalyzedVideo {
  media: ProbeResult;
  segments: AnalyzedSegment[];
  /** Mean of the segment vectors, re-normalised. */
  videoVector: Float32Array;
  /** Whole-video pixel tags: movement, lighting, horizon, shots and cuts. */
  pixels: PixelTags;
  /** With `signature`: the pHashes of frames every 1/4 s (src/engine/duplicates.ts). */
  signature?: VideoSignature;
  timings: { analyzeMs: number; taggingCpuMs: number };
}

/** Thumbnails encoded per ffmpeg run during ingest. */
const THUMB_BATCH = 8;

/** A trailing segment shorter than this joins the one before it rather than standing alone. */
const MIN_TAIL_SECONDS = 0.5;
/** No segment shorter than this is cut off by a detected cut near its start. */
const MIN_SHOT_SECONDS = 0.5;

/**
 * Decodes a video once, as a stream, at the pixel taggers' rate (4 fps); every frame goes to the
 * pixel tagger, a 1-fps subset to the embedder. Segments end at the segment length or at a hard
 * cut, whichever comes first, so they follow real shots. Memory holds about one segment's frames
 * (plus the cut detector's 1.5 s of look-ahead), whatever the video's length.
 */
export async function analyzeVideo(file: string, embedder: Embedder, opts: AnalyzeOptions): Promise<AnalyzedVideo> {
  const media = await probe(file);
  if (!media.hasVideo) throw new MediaError(`${basename(file)} has no video stream`);
  await embedder.load();
  const sampleFps = Math.max(opts.fps, PIXEL_TAGGING_SAMPLING.fps);
  const maxSide = Math.max(embedder.frameMaxSide, ...(opts.analyzers ?? []).map((a) => a.frameMaxSide));
  // fastDecode skips non-reference frames: 35-40% less decode CPU on B-frame streams, for frames up
  // to ~100 ms early, which neither the segment moments nor the motion tagger notice.
  const frames = sampleFrames(file, { fps: sampleFps, maxSide, signal: opts.signal, fastDecode: process.env.VIDEMBED_FFMPEG_FAST !== '0' });
  return analyzeFrameStream(frames, media.durationSec > 0 ? media.durationSec : undefined, media, embedder, opts, basename(file));
}

/** The same analysis over frames that arrive already decoded (tensor uploads). */
export async function analyzeFrames(frames: Frame[], embedder: Embedder, opts: AnalyzeOptions): Promise<AnalyzedVideo> {
  if (frames.length === 0) throw new MediaError('the video tensor holds no frames');
  await embedder.load();
  const maxSide = Math.max(embedder.frameMaxSide, ...(opts.analyzers ?? []).map((a) => a.frameMaxSide));
  const resized = frames.map((f) => resizeFrame(f, maxSide));
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
  return analyzeFrameStream(toAsync(resized), duration, media, embedder, opts, 'tensor');
}

async function* toAsync<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

/** Frames for the embedder: about `fps` per second, spread over the segment; at least one. */
export function embedderFrames(frames: Frame[], fps: number, start: number, end: number): Frame[] {
  if (frames.length <= 1) return frames;
  const n = Math.max(1, Math.round((end - start) * fps));
  if (n >= frames.length) return frames;
  const picked: Frame[] = [];
  for (let k = 0; k < n; k++) {
    const target = start + (k + 0.5) / fps;
    let best = frames[0];
    for (const f of frames) if (Math.abs(f.t - target) < Math.abs(best.t - target)) best = f;
    if (picked[picked.length - 1] !== best) picked.push(best);
  }
  return picked;
}

function pixelTagValues(p: PixelSegmentTags): Record<string, TagValue> {
  const { camera_movement, lighting, horizon } = p;
  const tags: Record<string, TagValue> = { camera_movement, lighting };
  tags.horizon = { label: horizon.dutch ? 'tilted' : 'level', confidence: horizon.confidence, scores: {}, angle: horizon.angle, dutch: horizon.dutch };
  return tags;
}

async function analyzeFrameStream(
  frames: AsyncIterable<Frame>,
  knownDuration: number | undefined,
  media: ProbeResult,
  embedder: Embedder,
  opts: AnalyzeOptions,
  name: string,
): Promise<AnalyzedVideo> {
  const started = Date.now();
  const segLen = opts.segmentSeconds;
  const pixel = new PixelTagger();
  const signature = opts.signature ? new SignatureBuilder() : undefined;
  const segments: AnalyzedSegment[] = [];
  let buffer: Frame[] = [];
  let segStart = 0;
  let lastT = -1;

  // Keyframe thumbnails are encoded a few at a time (one ffmpeg per batch): memory holds at most a batch of frames.
  const pendingThumbs: { seg: AnalyzedSegment; frame: Frame }[] = [];
  const encodePending = async () => {
    const batch = pendingThumbs.splice(0);
    // One batch per frame size (a stream keeps its size; tensors may not).
    const jpegs = await encodeThumbnails(batch.map((b) => b.frame), { signal: opts.signal }).catch(async () =>
      Promise.all(batch.map((b) => encodeThumbnail(b.frame, { signal: opts.signal }))),
    );
    batch.forEach((b, i) => (b.seg.thumbnail = jpegs[i]));
  };

  const flush = async (start: number, end: number) => {
    if (opts.signal?.aborted) throw opts.signal.reason ?? new Error('aborted');
    const own = buffer.filter((f) => f.t >= start && f.t < end);
    buffer = buffer.filter((f) => f.t >= end);
    if (own.length === 0) return; // a stretch with no frame (a gap in the stream) has nothing to say
    const pixTags = pixelTagValues(pixel.tagRange(start, end));
    const picked = embedderFrames(own, opts.fps, start, end);
    const analysis: SegmentAnalysis = {};
    for (const a of opts.analyzers ?? []) analysis[a.name] = await a.analyzeSegment(picked, { start, end, tags: pixTags });
    const emb = await embedder.embedSegment(picked, { start, end, tags: pixTags, analysis });
    const analyzerTags = Object.assign({}, ...Object.values(analysis).map((a) => a.tags ?? {})) as Record<string, TagValue>;
    const tags = { ...pixTags, ...analyzerTags, ...(emb.tags ?? {}) };
    // What a person reads comes from analysis whatever the embedder (CLIP has no words of its own).
    const description = analysis.perception ? analysisDescription(analysis) : emb.description;
    const details = emb.details ?? analysis.perception?.details;
    const keyframe = picked[picked.length >> 1];
    segments.push({ idx: segments.length, start: round3(start), end: round3(end), vector: emb.vector, description, details, tags, analysis });
    if (signature) segments[segments.length - 1].phash = signature.hashOf(keyframe);
    if (opts.thumbnails) {
      pendingThumbs.push({ seg: segments[segments.length - 1], frame: keyframe });
      if (pendingThumbs.length >= THUMB_BATCH) await encodePending();
    }
    if (knownDuration) opts.onProgress?.(Math.min(1, end / knownDuration));
  };

  /** Where the segment starting at `from` ends: the first cut after a minimal shot, else `from + segLen`. */
  const nextBoundary = (from: number, limit: number) => {
    const cut = pixel.cutsIn(from + MIN_SHOT_SECONDS, Math.min(limit, from + segLen)).find(() => true);
    return cut ? cut.t : Math.min(limit, from + segLen);
  };

  for await (const frame of frames) {
    if (frame.t <= lastT) continue;
    lastT = frame.t;
    pixel.push(frame);
    signature?.push(frame);
    buffer.push(frame);
    // Close segments once the cut detector has seen enough frames past their end.
    while (frame.t >= segStart + segLen + CUT_CONTEXT_S) {
      const end = nextBoundary(segStart, Number.POSITIVE_INFINITY);
      await flush(segStart, end);
      segStart = end;
    }
  }
  if (lastT < 0 && segments.length === 0) throw new MediaError(`${name}: no frame could be decoded`);

  const sampleStep = pixel.frameCount > 1 ? Math.min(1, lastT / (pixel.frameCount - 1)) : 1 / opts.fps;
  const duration = Math.max(knownDuration ?? 0, lastT + sampleStep);
  while (buffer.length > 0) {
    let end = nextBoundary(segStart, duration);
    if (duration - end < MIN_TAIL_SECONDS) end = duration; // a short tail joins this segment
    await flush(segStart, end);
    segStart = end;
    if (end >= duration) break;
  }
  if (segments.length === 0) throw new MediaError(`${name}: no frame could be decoded`);
  if (pendingThumbs.length) await encodePending();
  const pixels = pixel.finish({ duration, segments: segments.map(({ start, end }) => ({ start, end })) });
  opts.onProgress?.(1);
  return {
    media: { ...media, durationSec: media.durationSec > 0 ? media.durationSec : duration },
    segments,
    videoVector: meanVector(segments.map((s) => s.vector)),
    pixels,
    ...(signature ? { signature: signature.finish() } : {}),
    timings: { analyzeMs: Date.now() - started, taggingCpuMs: pixels.cpuMs },
  };
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

function basename(file: string): string {
  return file.split(/[\\/]/).pop() ?? file;
}

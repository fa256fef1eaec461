import { ffmpegFastDecode } from '../env.js';
import { errorMessage, MediaError } from '../api/errors.js';
import type { TagValue } from '../api/types.js';
import { phashFrame, type PHash } from '../media/phash.js';
import type { MediaPort } from '../media/port.js';
import { ffmpegMedia } from '../media/ffmpeg-media.js';
import { resizeFrame } from '../media/resize.js';
import type { Frame, ProbeResult } from '../media/types.js';
import { analysisDescription } from '../analysis/describe.js';
import type { Analyzer, SegmentAnalysis } from '../analysis/types.js';
import type { Embedder, SegmentEmbedding } from '../embedders/types.js';
import { meanVector } from '../models/vectors.js';
import { CUT_CONTEXT_S, PIXEL_TAGGING_SAMPLING, type PixelSegmentTags, type PixelTags } from '../tagging/index.js';
import { keyframeReuse, pixelThread } from '../config.js';
import type { VideoSignature } from '../duplicates/duplicates.js';
import { KEYFRAME_REUSE, keyframeDiff, keyframeThumb, type KeyframeThumb } from './keyframe-reuse.js';
import { inThreadEvents, workerThreadEvents, type PixelEvent, type PixelEventSource } from './pixel-thread.js';
import { round3, type SegmenterOptions, type SegmentRange } from './segmenter.js';

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
  /**
   * Where frames, thumbnails and the probe come from (src/media/port.ts): the Library's (ffmpeg,
   * or a fake in unit tests); tools that call the pipeline directly get ffmpeg.
   */
  media?: MediaPort;
  /** The file's probe, when the caller has it already (one ffmpeg run less). */
  probe?: ProbeResult;
  /**
   * Called with each segment's keyframe (the frame the per-keyframe analyzers read, as they read
   * it) and the segment whose keyframe's facts it reused, if any: the engine keeps them so that a
   * keyframe analyzer can run again later without a decode (src/pipeline/keyframes.ts).
   */
  onKeyframe?: (k: { idx: number; start: number; end: number; frame: Frame; reuseFrom?: number }) => void | Promise<void>;
  /** Keep a JPEG thumbnail of each segment's keyframe (ingest; not for one-off encode/tag calls). */
  thumbnails?: boolean;
  /** Keep the visual signature (pHash of a frame every 1/4 s, and of each segment's keyframe) for near-duplicate detection (ingest). */
  signature?: boolean;
  /**
   * Decode and run the pixel taggers in a worker thread while this thread runs the models (video
   * files only; default: `pixelThread()` of src/config.ts, on unless VIDEMBED_PIXEL_THREAD=0).
   * Both ways give the same segments, tags and vectors.
   */
  pixelThread?: boolean;
  /**
   * Reuse the per-keyframe models' facts on a keyframe nearly identical to the last analysed one
   * of the same video (src/pipeline/keyframe-reuse.ts; default `keyframeReuse()` of config.ts, on
   * unless VIDEMBED_KEYFRAME_REUSE=0).
   */
  keyframeReuse?: boolean;
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
  /** With `signature`: the pHashes of frames every 1/4 s (src/duplicates/duplicates.ts). */
  signature?: VideoSignature;
  timings: { analyzeMs: number; taggingCpuMs: number };
  /**
   * Analyzers that failed (by name, with the message): their output is in no segment, and the
   * vectors were made without it. The others' output stands.
   */
  failed: Map<string, string>;
}

/** Thumbnails encoded per batch (one ffmpeg run) during ingest. */
const THUMB_BATCH = 8;

/**
 * Frames a worker thread may hand over before the pipeline releases any: the segment being
 * gathered, the cut detector's look-ahead, and up to one more segment (at most 4 s) decoded ahead
 * while the models work.
 */
export function maxFramesInFlight(segmentSeconds: number, sampleFps: number): number {
  return Math.ceil((segmentSeconds + CUT_CONTEXT_S + Math.min(segmentSeconds, 4)) * sampleFps) + 2;
}

/**
 * Decodes a video once, as a stream, at the pixel taggers' rate (4 fps); every frame goes to the
 * pixel tagger, a 1-fps subset to the analyzers and the embedder. Segments end at the segment
 * length or at a hard cut, whichever comes first, so they follow real shots. By default the decode
 * and the pixel taggers run in a worker thread while this thread runs the models (pixel-thread.ts;
 * `pixelThread: false` keeps them here, with the same results). Memory holds about one segment's
 * frames (plus the cut detector's 1.5 s of look-ahead, and with the worker up to 4 s more decoded
 * ahead), whatever the video's length.
 */
export async function analyzeVideo(file: string, embedder: Embedder, opts: AnalyzeOptions): Promise<AnalyzedVideo> {
  const media = opts.media ?? ffmpegMedia;
  const probed = opts.probe ?? (await media.probe(file, { signal: opts.signal }));
  if (!probed.hasVideo) throw new MediaError(`${basename(file)} has no video stream`);
  await embedder.load();
  const sampleFps = Math.max(opts.fps, PIXEL_TAGGING_SAMPLING.fps);
  const maxSide = Math.max(embedder.frameMaxSide, ...(opts.analyzers ?? []).map((a) => a.frameMaxSide));
  // fastDecode skips non-reference frames: 35-40% less decode CPU on B-frame streams, for frames up
  // to ~100 ms early, which neither the segment moments nor the motion tagger notice.
  const sample = { fps: sampleFps, maxSide, fastDecode: ffmpegFastDecode() };
  const knownDuration = probed.durationSec > 0 ? probed.durationSec : undefined;
  const segmenter: SegmenterOptions = { segmentSeconds: opts.segmentSeconds, fps: opts.fps, knownDuration, signature: opts.signature };
  const source =
    media.decodesOnThreads && (opts.pixelThread ?? pixelThread())
      ? workerThreadEvents({ file, sample, segmenter, maxInFlight: maxFramesInFlight(opts.segmentSeconds, sampleFps) }, opts.signal)
      : inThreadEvents(media.frames(file, { ...sample, signal: opts.signal }), segmenter);
  return analyzeFrameStream(source, knownDuration, probed, embedder, opts, basename(file));
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
  // Frames already in memory: nothing to decode, so the segmenter runs on this thread.
  const source = inThreadEvents(toAsync(resized), { segmentSeconds: opts.segmentSeconds, fps: opts.fps, knownDuration: duration, signature: opts.signature });
  return analyzeFrameStream(source, duration, media, embedder, opts, 'tensor');
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

/**
 * What a segment is made of, from its analysis and its embedding: the one rule for its tags (the
 * pixel taggers' and the analyzers', never the embedder's), the text a person reads (from
 * analysis when an analyzer describes, whatever the embedder: CLIP has no words of its own) and
 * its details. Ingest and a keyframe re-run (src/pipeline/rerun.ts) both make segments here.
 */
export function composeSegment(
  base: { idx: number; start: number; end: number; pixelTags: Record<string, TagValue> },
  analysis: SegmentAnalysis,
  emb: SegmentEmbedding,
): AnalyzedSegment {
  const analyzerTags = Object.assign({}, ...Object.values(analysis).map((a) => a.tags ?? {})) as Record<string, TagValue>;
  const tags = { ...base.pixelTags, ...analyzerTags };
  const describer = Object.values(analysis).find((a) => a.description);
  const description = describer ? analysisDescription(analysis) : emb.description;
  let details = emb.details ?? describer?.details;
  const reusedFrom = Object.values(analysis).find((a) => a.details?.reused_from !== undefined)?.details?.reused_from;
  if (reusedFrom !== undefined && details?.reused_from === undefined) details = { ...details, reused_from: reusedFrom };
  return { idx: base.idx, start: round3(base.start), end: round3(base.end), vector: emb.vector, description, details, tags, analysis };
}

/**
 * Runs each analyzer on a segment. One that throws is failed for the rest of the video (`failed`,
 * with its message) and left out from then on: the others' output stands.
 */
export async function runAnalyzers(analyzers: Analyzer[], failed: Map<string, string>, frames: Frame[], ctx: Parameters<Analyzer['analyzeSegment']>[1], signal?: AbortSignal): Promise<SegmentAnalysis> {
  const analysis: SegmentAnalysis = {};
  for (const a of analyzers) {
    if (failed.has(a.name)) continue;
    try {
      analysis[a.name] = await a.analyzeSegment(frames, ctx);
    } catch (err) {
      if (signal?.aborted) throw err;
      failed.set(a.name, errorMessage(err));
    }
  }
  return analysis;
}

async function analyzeFrameStream(
  source: PixelEventSource,
  knownDuration: number | undefined,
  media: ProbeResult,
  embedder: Embedder,
  opts: AnalyzeOptions,
  name: string,
): Promise<AnalyzedVideo> {
  const started = Date.now();
  const segments: AnalyzedSegment[] = [];
  /** Signature hashes of the frames that took one (a keyframe's pHash is the one its frame got). */
  const hashes = new WeakMap<Frame, PHash>();
  let buffer: Frame[] = [];
  const reuseOn = opts.keyframeReuse ?? keyframeReuse();
  const analyzers = opts.analyzers ?? [];
  const failed = new Map<string, string>();
  /** The last segment whose keyframe the models analysed (what a later keyframe may reuse). */
  let anchor: { idx: number; thumb: KeyframeThumb; analysis: SegmentAnalysis } | undefined;
  let previous: SegmentAnalysis | undefined;

  // Keyframe thumbnails are encoded a few at a time (one ffmpeg per batch): memory holds at most a batch of frames.
  const pendingThumbs: { seg: AnalyzedSegment; frame: Frame }[] = [];
  const encodePending = async () => {
    const batch = pendingThumbs.splice(0);
    const jpegs = await (opts.media ?? ffmpegMedia).thumbnails(batch.map((b) => b.frame), { signal: opts.signal });
    batch.forEach((b, i) => (b.seg.thumbnail = jpegs[i]));
  };

  const flush = async ({ start, end, pixels }: SegmentRange) => {
    if (opts.signal?.aborted) throw opts.signal.reason ?? new Error('aborted');
    const own = buffer.filter((f) => f.t >= start && f.t < end);
    const kept = buffer.filter((f) => f.t >= end);
    const released = buffer.length - kept.length;
    buffer = kept;
    const pixelTags = pixelTagValues(pixels);
    const picked = embedderFrames(own, opts.fps, start, end);
    const keyframe = picked[picked.length >> 1];
    const idx = segments.length;
    // A keyframe nearly identical to the last analysed one: the per-keyframe models may reuse its facts.
    const thumb = reuseOn && analyzers.length ? keyframeThumb(keyframe) : undefined;
    const reuse = thumb && anchor && keyframeDiff(anchor.thumb, thumb) <= KEYFRAME_REUSE.maxDiff ? { from: anchor.idx, analysis: anchor.analysis } : undefined;
    const ctx = { start, end, tags: pixelTags, ...(reuse ? { reuse } : {}), ...(previous ? { previous } : {}), ...(source.pixelWork ? { pixelWork: source.pixelWork } : {}) };
    const analysis = await runAnalyzers(analyzers, failed, picked, ctx, opts.signal);
    previous = analysis;
    if (thumb && !reuse) anchor = { idx, thumb, analysis };
    await opts.onKeyframe?.({ idx, start, end, frame: keyframe, ...(reuse ? { reuseFrom: reuse.from } : {}) });
    const emb = await embedder.embedSegment(picked, { start, end, tags: pixelTags, analysis });
    const seg = composeSegment({ idx, start, end, pixelTags }, analysis, emb);
    segments.push(seg);
    if (opts.signature) seg.phash = hashes.get(keyframe) ?? phashFrame(keyframe);
    if (opts.thumbnails) {
      pendingThumbs.push({ seg, frame: keyframe });
      if (pendingThumbs.length >= THUMB_BATCH) await encodePending();
    }
    // The segment's frames are done with (a thumbnail batch holds its keyframes until encoded).
    source.release(released);
    if (knownDuration) opts.onProgress?.(Math.min(1, end / knownDuration));
  };

  let last: Extract<PixelEvent, { kind: 'end' }> | undefined;
  for await (const ev of source.events) {
    if (ev.kind === 'frame') {
      buffer.push(ev.frame);
      if (ev.hash) hashes.set(ev.frame, ev.hash);
    } else if (ev.kind === 'segment') {
      await flush(ev.segment);
    } else {
      last = ev;
    }
  }
  if (!last?.pixels || segments.length === 0) throw new MediaError(`${name}: no frame could be decoded`);
  if (pendingThumbs.length) await encodePending();
  if (failed.size) await withoutFailed(segments, failed, embedder);
  const { pixels, duration } = last;
  opts.onProgress?.(1);
  return {
    media: { ...media, durationSec: media.durationSec > 0 ? media.durationSec : duration },
    segments,
    videoVector: meanVector(segments.map((s) => s.vector)),
    pixels,
    ...(opts.signature && last.signature ? { signature: last.signature } : {}),
    timings: { analyzeMs: Date.now() - started, taggingCpuMs: pixels.cpuMs },
    failed,
  };
}

/**
 * An analyzer failed part way: its output goes from every segment, and a vector made from it
 * (an embedder that pools its facts) is made again without it, from the facts (no frames).
 */
async function withoutFailed(segments: AnalyzedSegment[], failed: Map<string, string>, embedder: Embedder): Promise<void> {
  const pooled = new Set(embedder.consumes ?? []);
  for (const [i, s] of segments.entries()) {
    const had = [...failed.keys()].filter((n) => s.analysis[n]);
    if (!had.length) continue;
    const analysis = Object.fromEntries(Object.entries(s.analysis).filter(([n]) => !failed.has(n)));
    const pixelTags = Object.fromEntries(Object.entries(s.tags).filter(([k]) => !had.some((n) => s.analysis[n].tags?.[k] !== undefined)));
    const emb = had.some((n) => pooled.has(n)) ? await embedder.embedSegment([], { start: s.start, end: s.end, tags: pixelTags, analysis }) : { vector: s.vector, description: s.description, details: s.details };
    segments[i] = { ...composeSegment({ idx: s.idx, start: s.start, end: s.end, pixelTags }, analysis, emb), ...(s.phash ? { phash: s.phash } : {}), ...(s.thumbnail ? { thumbnail: s.thumbnail } : {}) };
  }
}

function basename(file: string): string {
  return file.split(/[\\/]/).pop() ?? file;
}

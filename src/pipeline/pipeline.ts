import { ffmpegFastDecode } from '../env.js';
import { MediaError } from '../api/errors.js';
import type { TagValue } from '../api/types.js';
import { probe, sampleFrames } from '../media/index.js';
import { phashFrame, type PHash } from '../media/phash.js';
import { resizeFrame } from '../media/resize.js';
import { encodeThumbnail, encodeThumbnails } from '../media/thumbnail.js';
import type { Frame, ProbeResult } from '../media/types.js';
import { analysisDescription } from '../analysis/describe.js';
import type { Analyzer, SegmentAnalysis } from '../analysis/types.js';
import type { Embedder, SegmentEmbedding } from '../models/embedder.js';
import { meanVector } from '../models/vectors.js';
import { CUT_CONTEXT_S, PIXEL_TAGGING_SAMPLING, type PixelSegmentTags, type PixelTags } from '../tagging/index.js';
import { keyframeReuse, pixelThread } from '../config.js';
import type { VideoSignature } from '../duplicates/duplicates.js';
import { KEYFRAME_REUSE, keyframeDiff, keyframeThumb, type KeyframeThumb } from './keyframe-reuse.js';
import { inThreadEvents, workerThreadEvents, type PixelEvent, type PixelEventSource } from './pixel-thread.js';
import { round3, type SegmenterOptions, type SegmentRange } from './segmenter.js';
import { streamPcm } from '../media/audio.js';
import type { SpeechAnalyzer } from '../speech/analyzer.js';
import { attachSoundtrack, pcmFromFloat } from '../speech/attach.js';
import type { PcmChunks, Transcript } from '../speech/types.js';

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
  /**
   * Listens to the soundtrack alongside the picture (its own processes: ffmpeg and the
   * recognizer) and joins what it heard to the segments (src/speech/attach.ts).
   */
  speech?: SpeechAnalyzer;
  /** Tensor input only: the audio as float32 mono 16 kHz samples (`audio_input`). */
  audio?: Float32Array;
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
  /** With `speech`: the transcript, or why there is none. */
  transcript?: Transcript;
  noTranscript?: string;
}

/** Thumbnails encoded per ffmpeg run during ingest. */
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
  const media = await probe(file);
  if (!media.hasVideo) throw new MediaError(`${basename(file)} has no video stream`);
  await embedder.load();
  const sampleFps = Math.max(opts.fps, PIXEL_TAGGING_SAMPLING.fps);
  const maxSide = Math.max(embedder.frameMaxSide, ...(opts.analyzers ?? []).map((a) => a.frameMaxSide));
  // fastDecode skips non-reference frames: 35-40% less decode CPU on B-frame streams, for frames up
  // to ~100 ms early, which neither the segment moments nor the motion tagger notice.
  const sample = { fps: sampleFps, maxSide, fastDecode: ffmpegFastDecode() };
  const knownDuration = media.durationSec > 0 ? media.durationSec : undefined;
  const segmenter: SegmenterOptions = { segmentSeconds: opts.segmentSeconds, fps: opts.fps, knownDuration, signature: opts.signature };
  return withSoundtrack(opts, media.hasAudio ? (signal) => streamPcm(file, { signal }) : undefined, (signal) => {
    const source =
      (opts.pixelThread ?? pixelThread())
        ? workerThreadEvents({ file, sample, segmenter, maxInFlight: maxFramesInFlight(opts.segmentSeconds, sampleFps) }, signal)
        : inThreadEvents(sampleFrames(file, { ...sample, signal }), segmenter);
    return analyzeFrameStream(source, knownDuration, media, embedder, { ...opts, signal }, basename(file));
  });
}

/**
 * Runs the picture analysis with the speech analyzer listening alongside (when the options ask
 * for it), then joins the two. A failure of either stops the other.
 */
async function withSoundtrack(
  opts: AnalyzeOptions,
  pcm: ((signal: AbortSignal) => PcmChunks) | undefined,
  picture: (signal: AbortSignal | undefined) => Promise<AnalyzedVideo>,
): Promise<AnalyzedVideo> {
  if (!opts.speech) return picture(opts.signal);
  const stop = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal;
  const hearing = opts.speech.listen(pcm?.(signal), { signal });
  hearing.catch(() => {}); // awaited below; a picture failure must not leave it unhandled
  let analyzed: AnalyzedVideo;
  try {
    analyzed = await picture(signal);
  } catch (err) {
    stop.abort(err);
    throw err;
  }
  const heard = await hearing;
  attachSoundtrack(analyzed.segments, heard); // tags and facts only: the vectors are the picture's
  if (heard.transcript) analyzed.transcript = heard.transcript;
  else analyzed.noTranscript = heard.reason;
  return analyzed;
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
  const audio = opts.audio?.length ? opts.audio : undefined;
  return withSoundtrack(opts, audio ? () => pcmFromFloat(audio) : undefined, (signal) => {
    const source = inThreadEvents(toAsync(resized), { segmentSeconds: opts.segmentSeconds, fps: opts.fps, knownDuration: duration, signature: opts.signature });
    return analyzeFrameStream(source, duration, { ...media, hasAudio: Boolean(audio) }, embedder, { ...opts, signal }, 'tensor');
  });
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
  /** The last segment whose keyframe the models analysed (what a later keyframe may reuse). */
  let anchor: { idx: number; thumb: KeyframeThumb; analysis: SegmentAnalysis } | undefined;
  let previous: SegmentAnalysis | undefined;

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

  const flush = async ({ start, end, pixels }: SegmentRange) => {
    if (opts.signal?.aborted) throw opts.signal.reason ?? new Error('aborted');
    const own = buffer.filter((f) => f.t >= start && f.t < end);
    const kept = buffer.filter((f) => f.t >= end);
    const released = buffer.length - kept.length;
    buffer = kept;
    const pixTags = pixelTagValues(pixels);
    const picked = embedderFrames(own, opts.fps, start, end);
    const keyframe = picked[picked.length >> 1];
    const idx = segments.length;
    // A keyframe nearly identical to the last analysed one: the per-keyframe models may reuse its facts.
    const thumb = reuseOn && opts.analyzers?.length ? keyframeThumb(keyframe) : undefined;
    const reuse = thumb && anchor && keyframeDiff(anchor.thumb, thumb) <= KEYFRAME_REUSE.maxDiff ? { from: anchor.idx, analysis: anchor.analysis } : undefined;
    const analysis: SegmentAnalysis = {};
    const ctx = { start, end, tags: pixTags, ...(reuse ? { reuse } : {}), ...(previous ? { previous } : {}), ...(source.pixelWork ? { pixelWork: source.pixelWork } : {}) };
    for (const a of opts.analyzers ?? []) analysis[a.name] = await a.analyzeSegment(picked, ctx);
    previous = analysis;
    if (thumb && !reuse) anchor = { idx, thumb, analysis };
    const emb = await embedder.embedSegment(picked, { start, end, tags: pixTags, analysis });
    // Tags come from the pixel taggers and the analyzers only (src/tags/registry.ts), never the embedder.
    const analyzerTags = Object.assign({}, ...Object.values(analysis).map((a) => a.tags ?? {})) as Record<string, TagValue>;
    const tags = { ...pixTags, ...analyzerTags };
    // What a person reads comes from analysis whatever the embedder (CLIP has no words of its own).
    const description = analysis.perception ? analysisDescription(analysis) : emb.description;
    let details = emb.details ?? analysis.perception?.details;
    const reusedFrom = Object.values(analysis).find((a) => a.details?.reused_from !== undefined)?.details?.reused_from;
    if (reusedFrom !== undefined && details?.reused_from === undefined) details = { ...details, reused_from: reusedFrom };
    segments.push({ idx, start: round3(start), end: round3(end), vector: emb.vector, description, details, tags, analysis });
    if (opts.signature) segments[segments.length - 1].phash = hashes.get(keyframe) ?? phashFrame(keyframe);
    if (opts.thumbnails) {
      pendingThumbs.push({ seg: segments[segments.length - 1], frame: keyframe });
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
  const { pixels, duration } = last;
  opts.onProgress?.(1);
  return {
    media: { ...media, durationSec: media.durationSec > 0 ? media.durationSec : duration },
    segments,
    videoVector: meanVector(segments.map((s) => s.vector)),
    pixels,
    ...(opts.signature && last.signature ? { signature: last.signature } : {}),
    timings: { analyzeMs: Date.now() - started, taggingCpuMs: pixels.cpuMs },
  };
}

function basename(file: string): string {
  return file.split(/[\\/]/).pop() ?? file;
}

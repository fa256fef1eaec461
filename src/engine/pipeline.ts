import { MediaError } from '../api/errors.js';
import type { TagValue } from '../api/types.js';
import { probe, sampleFrames } from '../media/index.js';
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
  const started = Date.now();
  const media = await probe(file);
  if (!media.hasVideo) throw new MediaError(`${basename(file)} has no video stream`);
  await embedder.load();
  const duration = media.durationSec > 0 ? media.durationSec : Number.POSITIVE_INFINITY;
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

  const flush = async (idx: number, frames: Frame[], end: number) => {
    const start = idx * segLen;
    const ctx = { start, end };
    const tags = opts.tagger ? await opts.tagger.tagSegment(frames, ctx) : undefined;
    const emb = await embedder.embedSegment(frames, { ...ctx, tags });
    segments.push({ idx: segments.length, start, end, ...emb, tags });
    if (Number.isFinite(duration)) opts.onProgress?.(Math.min(1, end / duration));
  };

  for await (const frame of sampleFrames(file, { fps: opts.fps, maxSide: embedder.frameMaxSide, signal: opts.signal })) {
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
    throw new MediaError(`${basename(file)}: no frame could be decoded`);
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

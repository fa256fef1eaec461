/**
 * The part of ingest that needs every sampled frame but no model: the pixel taggers (camera
 * movement, cuts, lighting, horizon; src/tagging), where segments begin and end, and the visual
 * signature (a pHash every 1/4 s). It keeps only small per-frame summaries and the times of the
 * frames not yet in a closed segment, never the frames themselves.
 *
 * The pipeline drives it either on its own thread or in a worker thread (src/pipeline/pixel-thread.ts);
 * both run this same code on the same frames in the same order, so they give identical segments
 * and tags.
 */
import { round3 } from '../media/kernels/index.js';
import type { PHash } from '../media/phash.js';
import type { Frame } from '../media/types.js';
import { CUT_CONTEXT_S, PixelTagger, type PixelSegmentTags, type PixelTags } from '../tagging/index.js';
import { SignatureBuilder, type VideoSignature } from '../duplicates/duplicates.js';

/** A trailing segment shorter than this joins the one before it rather than standing alone. */
export const MIN_TAIL_SECONDS = 0.5;
/** No segment shorter than this is cut off by a detected cut near its start. */
export const MIN_SHOT_SECONDS = 0.5;

export interface SegmenterOptions {
  /** Longest segment, seconds. */
  segmentSeconds: number;
  /** Frames per second given to the embedder (the sampling step of a one-frame video). */
  fps: number;
  /** Duration the container states, when it states one (s). */
  knownDuration?: number;
  /** Hash a frame every 1/4 s for the visual signature. */
  signature?: boolean;
}

/** A closed segment: a time range that holds at least one frame, and its pixel tags. */
export interface SegmentRange {
  start: number;
  end: number;
  pixels: PixelSegmentTags;
}

export interface SegmenterEnd {
  /** The segments the end of the stream closed. */
  segments: SegmentRange[];
  /** Whole-video pixel tags (null when no segment was closed: nothing was decoded). */
  pixels: PixelTags | null;
  signature?: VideoSignature;
  /** Video duration (s): the container's, or past the last frame when that is later. */
  duration: number;
}

export class Segmenter {
  private readonly pixel = new PixelTagger();
  private readonly signature?: SignatureBuilder;
  /** Times of the frames not yet in a closed segment (the frames the pipeline still holds). */
  private pending: number[] = [];
  private segStart = 0;
  private lastT = -1;
  /** The closed segments, as the pipeline stores them (rounded to the millisecond). */
  private readonly closed: Array<{ start: number; end: number }> = [];

  constructor(private readonly opts: SegmenterOptions) {
    if (opts.signature) this.signature = new SignatureBuilder();
  }

  /**
   * Takes the next decoded frame. Null when it is not later than the previous one (it is dropped:
   * the pipeline must drop it too); else its signature hash, if it took one, and the segments this
   * frame lets the cut detector close (it needs {@link CUT_CONTEXT_S} of frames past a segment's end).
   */
  push(frame: Frame): { hash?: PHash; segments: SegmentRange[] } | null {
    if (frame.t <= this.lastT) return null;
    this.lastT = frame.t;
    this.pixel.push(frame);
    const hash = this.signature?.push(frame);
    this.pending.push(frame.t);
    const segments: SegmentRange[] = [];
    while (frame.t >= this.segStart + this.opts.segmentSeconds + CUT_CONTEXT_S) {
      const end = this.nextBoundary(this.segStart, Number.POSITIVE_INFINITY);
      this.close(this.segStart, end, segments);
      this.segStart = end;
    }
    return { hash, segments };
  }

  /** Closes what is left once the stream has ended. */
  finish(): SegmenterEnd {
    const frameCount = this.pixel.frameCount;
    const sampleStep = frameCount > 1 ? Math.min(1, this.lastT / (frameCount - 1)) : 1 / this.opts.fps;
    const duration = Math.max(this.opts.knownDuration ?? 0, this.lastT + sampleStep);
    const segments: SegmentRange[] = [];
    while (this.pending.length > 0) {
      let end = this.nextBoundary(this.segStart, duration);
      if (duration - end < MIN_TAIL_SECONDS) end = duration; // a short tail joins this segment
      this.close(this.segStart, end, segments);
      this.segStart = end;
      if (end >= duration) break;
    }
    if (this.closed.length === 0) return { segments, pixels: null, duration };
    const pixels = this.pixel.finish({ duration, segments: this.closed });
    return { segments, pixels, duration, ...(this.signature ? { signature: this.signature.finish() } : {}) };
  }

  /** Where the segment starting at `from` ends: the first cut after a minimal shot, else `from + segmentSeconds`. */
  private nextBoundary(from: number, limit: number): number {
    const segLen = this.opts.segmentSeconds;
    const cut = this.pixel.cutsIn(from + MIN_SHOT_SECONDS, Math.min(limit, from + segLen)).find(() => true);
    return cut ? cut.t : Math.min(limit, from + segLen);
  }

  private close(start: number, end: number, out: SegmentRange[]): void {
    const own = this.pending.some((t) => t >= start && t < end);
    this.pending = this.pending.filter((t) => t >= end);
    if (!own) return; // a stretch with no frame (a gap in the stream) has nothing to say
    out.push({ start, end, pixels: this.pixel.tagRange(start, end) });
    this.closed.push({ start: round3(start), end: round3(end) });
  }
}

export { round3 };

import type { Frame } from '../media/types.js';

/** What an embedder needs to know about a segment besides its pixels. */
export interface SegmentContext {
  start: number;
  end: number;
  /** Tags measured for this segment by the tagger, when one ran (shot size, movement, angle...). */
  tags?: Record<string, { label: string; confidence: number }>;
}

export interface SegmentEmbedding {
  /** L2-normalised, length `dim`. */
  vector: Float32Array;
  /** Human-readable account of what the model saw; indexed for keyword search and shown by --explain. */
  description: string;
  /** Structured evidence behind the description (detections, colour stats...), stored as JSON. */
  details?: Record<string, unknown>;
  /** Tags the embedder measured itself (e.g. shot size from face and pose geometry). */
  tags?: Record<string, { label: string; confidence: number; scores: Record<string, number>; [extra: string]: unknown }>;
}

export interface TextEmbedding {
  vector: Float32Array;
  /** True when the text was longer than the model's context and was cut. */
  truncated: boolean;
}

/**
 * The seam between the engine and any model tier (perception now, CLIP later). A collection
 * records `id` and `dim`; vectors of different embedders never mix.
 */
export interface Embedder {
  readonly id: string;
  readonly dim: number;
  /** Longest side of the frames this embedder wants from the decoder. */
  readonly frameMaxSide: number;
  /** Loads weights; idempotent, so callers may call it before every use. */
  load(): Promise<void>;
  embedText(text: string): Promise<TextEmbedding>;
  embedSegment(frames: Frame[], ctx: SegmentContext): Promise<SegmentEmbedding>;
  dispose(): Promise<void>;
}

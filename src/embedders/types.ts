import type { SegmentAnalysis } from '../analysis/types.js';
import type { Frame } from '../media/types.js';

/** What an embedder needs to know about a segment besides its pixels. */
export interface SegmentContext {
  start: number;
  end: number;
  /** Tags measured for this segment by the tagger, when one ran (shot size, movement, angle...). */
  tags?: Record<string, { label: string; confidence: number }>;
  /** What the analyzers found in this segment, by analyzer name (the pipeline runs them first). */
  analysis?: SegmentAnalysis;
}

export interface SegmentEmbedding {
  /** L2-normalised, length `dim`. */
  vector: Float32Array;
  /** Human-readable account of what the model saw; indexed for keyword search and shown by --explain. */
  description: string;
  /**
   * Structured evidence behind the description (detections, colour stats...), stored as JSON.
   * Embedders make no tags: tags come from the analyzers and the pixel taggers (src/tags/registry.ts).
   */
  details?: Record<string, unknown>;
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
  /**
   * The analyzers whose facts make this embedder's vectors (perception reads facts; CLIP reads
   * pixels and declares none). Their versions are the vectors' recipe.
   */
  readonly consumes?: readonly string[];
  /** What a query may be: `text` now; `image` where the embedder can embed a picture. */
  readonly queryKinds?: readonly string[];
  /** Loads weights; idempotent, so callers may call it before every use. */
  load(): Promise<void>;
  /** Loads what text needs itself (callers need not call `load()` first: the text encoders never do). */
  embedText(text: string): Promise<TextEmbedding>;
  embedSegment(frames: Frame[], ctx: SegmentContext): Promise<SegmentEmbedding>;
  dispose(): Promise<void>;
}

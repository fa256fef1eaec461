import type { TagValue } from '../api/types.js';
import type { Frame } from '../media/types.js';
import type { FramingPixelCues } from '../tagging/framing.js';
import type { HorizonEstimate } from '../tagging/pixels.js';

/**
 * What analysis found in a segment, one thing at a time, with how sure it is. Analyzers produce
 * facts; embedders turn facts (perception) or frames (CLIP) into vectors; the keyword index holds
 * fact words; nothing downstream needs to know which analyzer said what to use a fact.
 */
export interface Fact {
  /**
   * What kind of evidence: `object` (COCO detector), `thing` (ImageNet class), `text` (words on
   * screen), `people`, `face`, `person` (woman/man, from the face), `expression` (smiling),
   * `setting`, `colour`, `scene`, `speech` (what was said in the segment, from the soundtrack).
   */
  kind: string;
  /** The words for it: "dog", "fox squirrel", "EXIT", "outdoor daylight scene". */
  label: string;
  /** In [0, 1]: the model's own score (calibrated where the analyzer says so). */
  confidence: number;
  /** Share of the frame it covers, where it has a place. */
  area?: number;
  count?: number;
  /** Close calls: other names the same thing may have (a dog that may be a cat). */
  alternatives?: Array<{ label: string; confidence: number }>;
}

/** A phrase an embedder may pool into a vector, weighted by its kind and how sure the analyzer was. */
export interface WeightedPart {
  kind: string;
  text: string;
  weight: number;
}

export interface AnalyzerOutput {
  facts: Fact[];
  /**
   * What it saw in English, when it says so (perception): the text a person reads and the weighted
   * parts a text embedder pools. Published output: embedders read this, never `details`.
   */
  description?: { text: string; parts: WeightedPart[] };
  /** Tags this analyzer measures (shot size, angle...): stored with the segment, filterable. */
  tags?: Record<string, TagValue>;
  /** Analyzer-specific evidence, stored as JSON (`video show`, `--explain`, re-description). */
  details?: Record<string, unknown>;
  /** Further terms for the keyword index that are not facts (the sound keys of spoken words). */
  terms?: string[];
}

/** Facts of one segment, keyed by analyzer name. */
export type SegmentAnalysis = Record<string, AnalyzerOutput>;

export interface AnalyzerContext {
  start: number;
  end: number;
  /** Pixel tags of the segment (camera movement, lighting, horizon). */
  tags?: Record<string, { label: string; confidence: number }>;
  /**
   * Set by the pipeline when this segment's keyframe (`frames[frames.length >> 1]`) is nearly
   * identical to the keyframe of segment `from` of the same video, the last keyframe the models
   * analysed (src/pipeline/keyframe-reuse.ts): per-keyframe models may reuse what they found there
   * (`analysis`, that segment's outputs, as they returned them) and then say `reused_from: from`
   * in their details. Analyzers that cannot safely reuse ignore it.
   */
  reuse?: { from: number; analysis: SegmentAnalysis };
  /**
   * The previous segment of the same video as its analyzers returned it (continuity: the same
   * person a moment later). Absent on a video's first segment.
   */
  previous?: SegmentAnalysis;
  /** Pixel work the pipeline can run on another thread (ingest's worker thread), same results. */
  pixelWork?: PixelWork;
}

/**
 * Pure-TypeScript pixel measurements an analyzer may hand off while its models run. Each gives
 * exactly what the same function gives on the caller's thread.
 */
export interface PixelWork {
  /** `estimateHorizon(frame)` and `framingPixelCues(frame)` of src/tagging. */
  framing(frame: Frame): Promise<{ horizon: HorizonEstimate; cues: FramingPixelCues }>;
}

/**
 * One capability that looks at a segment's frames. `version` changes whenever its output for the
 * same frames can change: it is part of the recipe of every vector made from its facts.
 */
export interface Analyzer {
  readonly name: string;
  readonly version: string;
  /** Longest side of the frames it wants (the decoder serves the largest any analyzer or embedder wants). */
  readonly frameMaxSide: number;
  load(): Promise<void>;
  analyzeSegment(frames: Frame[], ctx: AnalyzerContext): Promise<AnalyzerOutput>;
  dispose(): Promise<void>;
}

/** Every fact of a segment, whichever analyzer found it. */
export function allFacts(analysis: SegmentAnalysis | undefined): Fact[] {
  return analysis ? Object.values(analysis).flatMap((a) => a.facts) : [];
}

/**
 * Runs some keyframe analyzers again on a video's stored keyframes (src/pipeline/keyframes.ts),
 * without a decode: after `models pull imagenet-mobilenet-v2`, ImageNet runs on the keyframes it
 * would have read at ingest, with the same reuse of a nearly identical keyframe's facts, and the
 * vector is made again from the stored facts of the others plus the new ones. The segments come
 * out as a fresh ingest would have made them (src/pipeline/pipeline.ts composeSegment).
 */
import type { TagValue } from '../api/types.js';
import type { Analyzer, SegmentAnalysis } from '../analysis/types.js';
import type { Embedder } from '../embedders/types.js';
import type { AnalyzedSegment } from './pipeline.js';
import { composeSegment, runAnalyzers } from './pipeline.js';
import type { KeyframeReader } from './keyframes.js';

/** A segment as stored: its analysis by capability (src/analysis/keywords.ts analysisOf), tags, details, vector. */
export interface StoredSegment {
  idx: number;
  start: number;
  end: number;
  analysis: SegmentAnalysis;
  tags: Record<string, TagValue>;
  details?: Record<string, unknown>;
  description: string;
  vector: Float32Array;
  phash?: string;
}

export interface RerunOptions {
  /** The analyzers to run again (each replaces its output). */
  analyzers: Analyzer[];
  /** Makes the vectors again from the analysis (when the embedding depends on what re-ran). */
  embedder?: Embedder;
  /** Capability names in the order a fresh ingest adds their output (the registry's). */
  order: string[];
  /** The capabilities that are frame analyzers (what the embedder reads; the track ones' output is joined after). */
  frameCapabilities: ReadonlySet<string>;
  signal?: AbortSignal;
  onProgress?: (fraction: number) => void;
}

/** In `order`, then any other names as they came. */
function ordered(analysis: SegmentAnalysis, order: string[]): SegmentAnalysis {
  const out: SegmentAnalysis = {};
  for (const n of order) if (analysis[n]) out[n] = analysis[n];
  for (const [n, a] of Object.entries(analysis)) if (!out[n]) out[n] = a;
  return out;
}

/**
 * The segments again, with the analyzers' new output (and new vectors when `embedder` is given).
 * `failed` collects analyzers that threw (their output is then left as it was stored).
 */
export async function rerunOnKeyframes(reader: KeyframeReader, stored: StoredSegment[], opts: RerunOptions, failed: Map<string, string>): Promise<AnalyzedSegment[]> {
  const byIdx = new Map(reader.entries.map((e) => [e.idx, e]));
  const fresh = new Map<number, SegmentAnalysis>();
  const out: AnalyzedSegment[] = [];
  for (const [n, s] of stored.entries()) {
    if (opts.signal?.aborted) throw opts.signal.reason ?? new Error('aborted');
    const entry = byIdx.get(s.idx);
    if (!entry || entry.start !== s.start || entry.end !== s.end) throw new Error(`no stored keyframe for segment ${s.idx} (${s.start}–${s.end} s)`);
    const frame = await reader.frame(entry);
    const reuse = entry.reuseFrom !== undefined && fresh.has(entry.reuseFrom) ? { from: entry.reuseFrom, analysis: fresh.get(entry.reuseFrom)! } : undefined;
    const own = await runAnalyzers(opts.analyzers, failed, [frame], { start: s.start, end: s.end, ...(reuse ? { reuse } : {}) }, opts.signal);
    fresh.set(s.idx, own);
    const all = ordered({ ...s.analysis, ...own }, opts.order);
    const frameAnalysis = Object.fromEntries(Object.entries(all).filter(([name]) => opts.frameCapabilities.has(name)));
    const emb = opts.embedder
      ? await opts.embedder.embedSegment([frame], { start: s.start, end: s.end, tags: s.tags, analysis: frameAnalysis })
      : { vector: s.vector, description: s.description, details: s.details };
    const seg = composeSegment({ idx: s.idx, start: s.start, end: s.end, pixelTags: s.tags }, frameAnalysis, emb);
    // Details are the describer's and the reuse's, which did not run again.
    out.push({ ...seg, details: s.details, analysis: all });
    opts.onProgress?.((n + 1) / stored.length);
  }
  return out;
}

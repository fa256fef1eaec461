/**
 * Joins what the speech analyzer heard to the segments the picture analysis made: each segment
 * gets its `speech` analysis (what was said, the `audio` tag, sound keys for the keyword index),
 * and a segment where someone speaks gets the sentence embedding of its words fused into its
 * vector, so a search for what is said finds it in the vector space as well as in the words.
 */
import type { TagValue } from '../api/types.js';
import type { AnalyzerOutput, SegmentAnalysis } from '../analysis/types.js';
import type { Embedder } from '../embedders/types.js';
import { l2normalize } from '../models/vectors.js';
import { soundtrackSegment, type HeardSoundtrack } from './analyzer.js';

/**
 * Weight of the transcript's sentence embedding in a speaking segment's vector (the picture keeps
 * the rest). Not tuned: the eval has no footage with speech and a visual truth (docs/speech.md).
 */
export const SPEECH_FUSION = 0.35;

/** A segment's transcript counts for the vector when its words are this sure on average. */
const FUSE_MIN_CONFIDENCE = 0.3;

interface SegmentLike {
  start: number;
  end: number;
  vector: Float32Array;
  tags: Record<string, TagValue>;
  analysis: SegmentAnalysis;
}

export async function attachSoundtrack(segments: SegmentLike[], heard: HeardSoundtrack, embedder: Embedder): Promise<void> {
  for (const s of segments) {
    const out: AnalyzerOutput = soundtrackSegment(heard, s.start, s.end);
    s.analysis = { ...s.analysis, speech: out };
    s.tags = { ...s.tags, ...out.tags };
    const said = out.facts.find((f) => f.kind === 'speech');
    if (said && out.tags?.audio?.label === 'speech' && said.confidence >= FUSE_MIN_CONFIDENCE) {
      const text = await embedder.embedText(said.label);
      s.vector = fuse(s.vector, text.vector, SPEECH_FUSION);
    }
  }
}

/** (1 − w)·a + w·b, re-normalised (both unit vectors of one space). */
export function fuse(a: Float32Array, b: Float32Array, w: number): Float32Array {
  if (a.length !== b.length) return a;
  const out = new Float32Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = (1 - w) * a[i] + w * b[i];
  return l2normalize(out);
}

/** Float32 mono samples (an `audio_input` tensor) as 16-bit PCM chunks of one second. */
export async function* pcmFromFloat(samples: Float32Array): AsyncGenerator<Buffer> {
  const step = 16000;
  for (let at = 0; at < samples.length; at += step) {
    const part = samples.subarray(at, Math.min(samples.length, at + step));
    const buf = Buffer.allocUnsafe(part.length * 2);
    for (let i = 0; i < part.length; i++) buf.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(part[i] * 32767))), i * 2);
    yield buf;
  }
}

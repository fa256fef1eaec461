/**
 * Joins what the speech analyzer heard to the segments the picture analysis made: each segment
 * gets its `speech` analysis (what was said, the `audio` tag, sound keys for the keyword index).
 * A segment's vector is the picture's alone and never changes here: what is said is its own
 * evidence (the transcript and its words, src/search), never part of what is *seen*.
 */
import type { TagValue } from '../api/types.js';
import type { AnalyzerOutput, SegmentAnalysis } from '../analysis/types.js';
import { soundtrackSegment, type HeardSoundtrack } from './analyzer.js';

interface SegmentLike {
  start: number;
  end: number;
  tags: Record<string, TagValue>;
  analysis: SegmentAnalysis;
}

export function attachSoundtrack(segments: SegmentLike[], heard: HeardSoundtrack): void {
  for (const s of segments) {
    const out: AnalyzerOutput = soundtrackSegment(heard, s.start, s.end);
    s.analysis = { ...s.analysis, speech: out };
    s.tags = { ...s.tags, ...out.tags };
  }
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

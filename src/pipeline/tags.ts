import type { Tags } from '../api/types.js';
import { round3 } from '../media/kernels/index.js';
import type { TagValue } from '../api/types.js';
import { segmentTagEntry, wholeVideoTags } from '../tags/registry.js';
import type { AnalyzedVideo } from './pipeline.js';

/**
 * SPEC §3 Tags of an analysed video: the whole-video value of every tag kind (by the registry's
 * rule for it: src/tags/registry.ts), one entry per segment (shot-aligned), shots and cuts.
 */
export function buildTags(analyzed: AnalyzedVideo, model: string): Tags {
  // The pixel taggers measure their kinds over the whole video themselves.
  const produced = analyzed.pixels as unknown as Record<string, unknown>;
  return {
    ...wholeVideoTags(analyzed.segments, produced),
    segments: analyzed.segments.map((s) => ({ start: s.start, end: s.end, ...segmentTagEntry(s.tags) })),
    shots: analyzed.pixels.shots,
    cuts: analyzed.pixels.cuts.map((c) => ({ t: c.t, confidence: round3(c.confidence) })),
    duration: analyzed.media.durationSec,
    model: `${model}+pixels-v1`,
  };
}

/**
 * A video's Tags again after a lane changed its segments' tags (speech landed: the `audio` tag):
 * every kind aggregated from the segments anew, the kinds the pixel taggers measure over the whole
 * video, the shots and the cuts kept as they were.
 */
export function retagVideo(stored: Tags, segments: Array<{ start: number; end: number; tags: Record<string, TagValue> }>): Tags {
  const produced = stored as unknown as Record<string, unknown>;
  return {
    ...stored,
    ...wholeVideoTags(segments, produced),
    segments: segments.map((s) => ({ start: s.start, end: s.end, ...segmentTagEntry(s.tags) })),
  };
}

import type { Tags } from '../api/types.js';
import { round3 } from '../media/kernels/index.js';
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

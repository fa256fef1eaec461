import type { TagValue, Tags } from '../api/types.js';
import { round3, round4 } from '../media/kernels/index.js';
import type { AnalyzedVideo } from './pipeline.js';

type Weighted = { start: number; end: number; tag?: TagValue };

/**
 * Whole-video label from per-segment tags: duration-weighted mean of the scores; the confidence is
 * the duration-weighted confidence of the segments that carry the winning label.
 */
export function aggregateTag(items: Weighted[]): TagValue | undefined {
  const present = items.filter((i) => i.tag && i.end > i.start);
  const total = present.reduce((a, i) => a + (i.end - i.start), 0);
  if (!present.length || total <= 0) return undefined;
  const scores: Record<string, number> = {};
  for (const i of present) {
    const w = (i.end - i.start) / total;
    const s = Object.keys(i.tag!.scores ?? {}).length ? i.tag!.scores : { [i.tag!.label]: 1 };
    for (const [label, p] of Object.entries(s)) scores[label] = (scores[label] ?? 0) + w * p;
  }
  const label = Object.entries(scores).sort((a, b) => b[1] - a[1])[0][0];
  const confidence = present.filter((i) => i.tag!.label === label).reduce((a, i) => a + ((i.end - i.start) / total) * i.tag!.confidence, 0);
  return { label, confidence: round4(confidence), scores: Object.fromEntries(Object.entries(scores).map(([k, v]) => [k, round4(v)])) };
}

/** SPEC §3 Tags of an analysed video: whole-video labels plus one entry per segment (shot-aligned). */
export function buildTags(analyzed: AnalyzedVideo, model: string): Tags {
  const segs = analyzed.segments.map((s) => ({
    start: s.start,
    end: s.end,
    ...(s.tags.shot_size ? { shot_size: s.tags.shot_size } : {}),
    ...(s.tags.shooting_angle ? { shooting_angle: s.tags.shooting_angle } : {}),
    camera_movement: s.tags.camera_movement,
    ...(s.tags.lighting ? { lighting: s.tags.lighting } : {}),
    ...(s.tags.audio ? { audio: s.tags.audio } : {}),
  }));
  const tags: Tags = {
    camera_movement: analyzed.pixels.camera_movement,
    lighting: analyzed.pixels.lighting,
    horizon: analyzed.pixels.horizon,
    segments: segs,
    shots: analyzed.pixels.shots,
    cuts: analyzed.pixels.cuts.map((c) => ({ t: c.t, confidence: round3(c.confidence) })),
    duration: analyzed.media.durationSec,
    model: `${model}+pixels-v1`,
  };
  const shot = aggregateTag(analyzed.segments.map((s) => ({ start: s.start, end: s.end, tag: s.tags.shot_size })));
  const angle = aggregateTag(analyzed.segments.map((s) => ({ start: s.start, end: s.end, tag: s.tags.shooting_angle })));
  if (shot) tags.shot_size = shot;
  if (angle) tags.shooting_angle = angle;
  const audio = aggregateTag(analyzed.segments.map((s) => ({ start: s.start, end: s.end, tag: s.tags.audio })));
  if (audio) tags.audio = audio;
  return tags;
}

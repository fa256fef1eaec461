/**
 * The one rule that turns several tags of a kind into one (a whole video from its segments, a
 * segment from its keyframes): the weighted mean of the scores picks the label (the first label in
 * order wins a tie); the confidence is the weighted confidence of the parts that carry that label.
 * Weights are normalised (durations, or 1 each). Scores and confidence are rounded to 4 places.
 *
 * The taggers (src/tagging) and the registry both use it.
 */
import { clamp01, round4 } from '../util/numeric.js';

/** A tag as the API shows it: the label, how sure, the score of every label (plus tagger extras). */
export interface TagValue {
  label: string;
  confidence: number;
  scores: Record<string, number>;
  [extra: string]: unknown;
}

export interface WeightedTag {
  weight: number;
  tag?: TagValue;
}

/**
 * `labels` fixes the order (and gives absent labels a 0 score); without it, labels come in the
 * order the parts name them. A part without scores counts as all of its weight on its label.
 * Undefined when no part has a tag and a positive weight.
 */
export function aggregateTags(parts: WeightedTag[], labels?: readonly string[]): TagValue | undefined {
  const present = parts.filter((p) => p.tag && p.weight > 0);
  const total = present.reduce((a, p) => a + p.weight, 0);
  if (!present.length || total <= 0) return undefined;
  const scores: Record<string, number> = {};
  for (const l of labels ?? []) scores[l] = 0;
  for (const p of present) {
    const w = p.weight / total;
    const s = Object.keys(p.tag!.scores ?? {}).length ? p.tag!.scores : { [p.tag!.label]: 1 };
    for (const [label, v] of Object.entries(s)) if (!labels || label in scores) scores[label] = (scores[label] ?? 0) + w * v;
  }
  let label = Object.keys(scores)[0];
  for (const l of Object.keys(scores)) if (scores[l] > scores[label]) label = l;
  const confidence = present.filter((p) => p.tag!.label === label).reduce((a, p) => a + (p.weight / total) * p.tag!.confidence, 0);
  return { label, confidence: round4(clamp01(confidence)), scores: Object.fromEntries(Object.entries(scores).map(([k, v]) => [k, round4(v)])) };
}

/** Duration-weighted: a whole video's tag from its segments' (`{start, end, tag}`). */
export function aggregateOverTime(items: Array<{ start: number; end: number; tag?: TagValue }>, labels?: readonly string[]): TagValue | undefined {
  return aggregateTags(items.map((i) => ({ weight: i.end - i.start, tag: i.tag })), labels);
}

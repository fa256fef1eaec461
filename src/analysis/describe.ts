/**
 * A segment's analysis in words: the weighted English parts the perception embedder pools into a
 * vector, and the description a person reads (`search --explain`, `video show`), whatever the
 * collection's embedder.
 */
import { allFacts, type SegmentAnalysis, type WeightedPart } from './types.js';
import { PERCEPTION_WEIGHTS, type PerceptionWeights } from '../models/perception/weights.js';

const pct = (p: number): string => `${Math.round(p * 100)}%`;

/** Mostly Latin letters (what the English sentence encoder can read). */
export function readsAsEnglish(text: string): boolean {
  const letters = text.match(/\p{L}/gu) ?? [];
  return letters.length > 0 && letters.filter((c) => /\p{Script=Latin}/u.test(c)).length / letters.length >= 0.5;
}

export type { WeightedPart };

/** The sentence an ImageNet class becomes for the sentence encoder: "A photo of a tabby cat." */
export const thingSentence = (label: string): string => `A photo of ${/^[aeiou]/i.test(label) ? 'an' : 'a'} ${label}.`;

/** The descriptions the analyzers published, in analyzer order. */
function descriptions(analysis: SegmentAnalysis): NonNullable<SegmentAnalysis[string]['description']>[] {
  return Object.values(analysis).flatMap((a) => (a.description ? [a.description] : []));
}

/**
 * The weighted English parts a segment's vector pools, from every analyzer's output: the published
 * description parts (perception's) as they are, then soft evidence the other analyzers found.
 */
export function analysisParts(analysis: SegmentAnalysis, w: PerceptionWeights = PERCEPTION_WEIGHTS): WeightedPart[] {
  const parts: WeightedPart[] = [];
  for (const p of descriptions(analysis).flatMap((d) => d.parts)) {
    const base = (PERCEPTION_WEIGHTS as Record<string, number>)[p.kind] ?? 1;
    // A part's stored weight may carry a confidence factor (weak detections): keep it, rescaled.
    const factor = base > 0 ? p.weight / base : 1;
    parts.push({ kind: p.kind, text: p.text, weight: (w[p.kind as keyof PerceptionWeights] ?? base) * factor ** w.confidencePower });
  }
  for (const f of allFacts(analysis)) {
    if (f.kind === 'thing') {
      parts.push({ kind: 'thing', text: thingSentence(f.label), weight: w.thing * f.confidence ** w.confidencePower });
    } else if (f.kind === 'text' && readsAsEnglish(f.label)) {
      // The sentence encoder reads English: words in other scripts go to the keyword index only.
      parts.push({ kind: 'text', text: `The words "${f.label}" on screen.`, weight: w.text * f.confidence ** w.confidencePower });
    }
  }
  return parts.filter((p) => p.weight > 0);
}

/** What a person reads for a segment: the perception description, then how sure the rest is. */
export function analysisDescription(analysis: SegmentAnalysis): string {
  const bits = descriptions(analysis).map((d) => d.text);
  const things = allFacts(analysis).filter((f) => f.kind === 'thing').slice(0, 3);
  if (things.length) bits.push(`Looks like ${things.map((t) => `${t.confidence >= 0.6 ? '' : 'probably '}${/^[aeiou]/i.test(t.label) ? 'an' : 'a'} ${t.label} (${pct(t.confidence)})`).join(', ')}.`);
  const words = allFacts(analysis).filter((f) => f.kind === 'text');
  if (words.length) bits.push(`Text on screen: ${words.map((t) => `"${t.label}"`).join(', ')}.`);
  return bits.filter(Boolean).join(' ');
}


/**
 * How sure a search result is, from the result's own evidence: its segment's cosine similarity to
 * the query, and the query words analysis found in it — each word counted by how sure analysis was
 * of the fact that names it. Neither the page nor a filter enters: the same moment for the same
 * query in the same collection gets the same confidence whatever else is asked for. One feature
 * reads other results — the seen margin over the best moment of another video of the whole
 * collection (src/search/evidence.ts seenWithStanding) — and it can lift a result out of "low",
 * never into "high". A found word counts as much as analysis was sure of it, and a weak classifier
 * guess ("probably a monkey", 7 %) not at all, so it cannot make a result high.
 */
import type { ConfidenceLabel } from '../api/types.js';
import type { Fact } from '../analysis/types.js';
import { SEARCH_WEIGHTS } from '../models/perception/weights.js';
import { combineKinds, seenProbability } from './evidence.js';
import { tokens } from '../store/memory/words.js';

/** A result's evidence, as the confidence curve reads it. */
export interface ConfidenceEvidence {
  /** Cosine similarity of the result's segment to the query vector. */
  similarity: number;
  /**
   * IDF-weighted share of the query's content words found among the segment's analysis words,
   * each found word counted by how sure analysis was of it (0..1; `wordEvidence`).
   */
  sureWords: number;
  /**
   * The moment was named by the ImageNet classifier (facts of kind `thing`): its description is
   * richer, so the same match means more than in a moment described by the detector alone.
   */
  classified: boolean;
  /** How many content words the query has (src/search/evidence.ts queryWordsTerm); 0 when not given. */
  words?: number;
}

/** Whether a moment's facts include ImageNet classes (ConfidenceEvidence.classified). */
export function isClassified(facts: Fact[] | undefined): boolean {
  return (facts ?? []).some((f) => f.kind === 'thing');
}

/** How sure analysis was of a query word, and which fact named it. */
export interface WordEvidence {
  strength: number;
  /** The fact's label, or the alternative's ("dog"). */
  label?: string;
  /** For an alternative or broader name: the fact it belongs to ("Pekinese"). */
  via?: string;
}

/**
 * How sure analysis was of each query word found in a segment: the best fact (or alternative)
 * naming it. With `unnamed` false, a word no fact names is left out (facts of one kind of evidence).
 */
export function wordEvidence(terms: string[], facts: Fact[] | undefined, unnamed = true): Map<string, WordEvidence> {
  const out = new Map<string, WordEvidence>();
  const named: Array<{ stems: Set<string>; label: string; via?: string; confidence: number }> = [];
  for (const f of facts ?? []) {
    if (f.kind === 'scene') continue; // layout sentences are not in the keyword index
    named.push({ stems: new Set(tokens(f.label)), label: f.label, confidence: f.confidence });
    for (const a of f.alternatives ?? []) named.push({ stems: new Set(tokens(a.label)), label: a.label, via: f.label, confidence: a.confidence });
  }
  for (const t of terms) {
    const stems = tokens(t);
    let best: (WordEvidence & { size: number }) | undefined;
    for (const n of named) {
      if (!stems.every((s) => n.stems.has(s))) continue;
      const strength = Math.max(0, Math.min(1, n.confidence));
      // The surest name; of equally sure ones, the closest ("dog" rather than "toy dog").
      if (!best || strength > best.strength || (strength === best.strength && n.stems.size < best.size)) {
        best = { strength, label: n.label, ...(n.via ? { via: n.via } : {}), size: n.stems.size };
      }
    }
    // A keyword stored without a fact behind it (words given with a tensor, a transcript's sound
    // keys) is taken as said.
    if (best) {
      const { size: _size, ...evidence } = best;
      out.set(t, evidence);
    } else if (unnamed) out.set(t, { strength: 1 });
  }
  return out;
}

/** Below this, what analysis found is a guess: its words add nothing to a result's confidence. */
export const WEAK_GUESS = 0.3;

/**
 * The share of the query's words a segment holds, IDF-weighted, each found word times how sure
 * analysis was of it (a weak guess, under WEAK_GUESS, counts nothing). `idf` holds every query
 * term (found or not).
 */
export function sureWordShare(idf: Map<string, number>, found: Map<string, { strength: number }>): number {
  let sum = 0;
  let got = 0;
  for (const [t, w] of idf) {
    sum += w;
    const strength = found.get(t)?.strength ?? 0;
    got += strength >= WEAK_GUESS ? w * strength : 0;
  }
  return sum > 0 ? got / sum : 0;
}

/**
 * The confidence of a hit whose only evidence is what is seen (a text query): the seen curve,
 * through the combination of kinds (src/search/evidence.ts).
 */
export function confidenceOf(e: ConfidenceEvidence): number {
  return combineKinds({ seen: seenProbability(e) });
}

export function confidenceLabel(c: number): ConfidenceLabel {
  return c >= SEARCH_WEIGHTS.highConfidence ? 'high' : c >= SEARCH_WEIGHTS.mediumConfidence ? 'medium' : 'low';
}

/** The warning of an answer whose results are all weak (low confidence). */
export const NO_STRONG_MATCH = 'no strong match: every result has low confidence';

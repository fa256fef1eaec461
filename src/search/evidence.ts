/**
 * Seen, said, written: each kind of evidence a search hit has answers for itself.
 *
 * - *seen*: the picture — its facts (objects, ImageNet classes, people, faces, setting, colour,
 *   scene words and their broader names) and the picture embedding (the segment's vector);
 * - *said*: the transcript — the query's sounds aligned against what was said (src/speech/match.ts);
 * - *written*: text on screen (facts of kind `text`).
 *
 * Each kind present in a hit gets its own probability that the moment is what the query asks for,
 * from a logistic curve of that kind's evidence alone; the hit's confidence combines them by a
 * logistic model over the kinds' log-odds. Every number is in EVIDENCE_WEIGHTS
 * (src/search/evidence-weights.ts), fitted on the tuning half with whole sources held out
 * (eval/fit-evidence.ts, docs/eval.md).
 *
 * Other results: one feature reads them — the seen *margin*, how far the hit's pre-rank stands
 * above the best moment of a different video (src/search/hit-evidence.ts rivalsOf, the one place it
 * is measured; with a filter it is measured against the whole collection, src/search/hybrid.ts). It
 * enters only through the *standing* (seenWithStanding): it may lift a picture match out of "low",
 * never into "high", and never lowers one — "high" rests on the moment's own evidence and the query
 * alone. Weighed as a plain feature of the seen curve it made "high" less pure held out (docs/eval.md).
 * The ranking never reads the margin.
 *
 * The query itself: the seen curve reads how many content words it has (queryWordsTerm), since a
 * person's sentence meets its right answer at a different similarity than a two-word query does.
 */
import type { Fact } from '../analysis/types.js';
import type { SaidFeatures } from '../speech/search.js';
import { SEARCH_WEIGHTS } from '../models/perception/weights.js';
import { EVIDENCE_WEIGHTS } from './evidence-weights.js';

export const EVIDENCE_KINDS = ['seen', 'said', 'written'] as const;
export type EvidenceKind = (typeof EVIDENCE_KINDS)[number];

/** The kind of evidence a fact is: `speech` is said, `text` is written, every other kind is seen. */
export function kindOfFact(kind: string): EvidenceKind {
  return kind === 'speech' ? 'said' : kind === 'text' ? 'written' : 'seen';
}

/** A segment's facts of one kind. */
export function factsOfKind(facts: Fact[], kind: EvidenceKind): Fact[] {
  return facts.filter((f) => kindOfFact(f.kind) === kind);
}

/** What the seen curve reads (text queries). */
export interface SeenFeatures {
  /** Cosine similarity of the segment's (picture) vector to the query. */
  similarity: number;
  /** IDF-weighted share of the query's words named by picture facts, each as sure as its fact (guesses count nothing). */
  sureWords: number;
  /** ImageNet named the moment (richer facts: the same match means more). */
  classified: boolean;
  /**
   * How far the hit's pre-rank stands above the best moment of a different video in the same
   * result list (negative below it; 0 alone): src/search/hit-evidence.ts seenMargins.
   */
  margin?: number;
  /** Agreement: the smaller of the sure shares of the query's words named by ImageNet and by perception. */
  agree?: number;
  /** How many content words the query has (src/search/hybrid.ts queryTerms), read through queryWordsTerm. */
  words?: number;
}

/** What the written curve reads. */
export interface WrittenFeatures {
  /** IDF-weighted share of the query's words read on screen, each as sure as the reader was. */
  sureWords: number;
}

export type { SaidFeatures };

const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z));
const logit = (p: number): number => {
  const q = Math.min(1 - 1e-6, Math.max(1e-6, p));
  return Math.log(q / (1 - q));
};

/**
 * What the seen curve reads of the margin: tenths of pre-rank, clipped to ±1 (a lead of 0.1 or
 * more counts no more than 0.1; being far below the first no worse than 0.1 below it).
 */
export function marginTerm(margin: number): number {
  return Math.max(-1, Math.min(1, 10 * margin));
}

/**
 * What the seen curve reads of the query's length: log(1 + content words) over log(17), 16 words
 * or more counting as 16 (0 for no words, 0.39 for two, 0.78 for eight, 1 from sixteen). A
 * person's sentence and a two-word query meet the same right answer at different similarities.
 */
export function queryWordsTerm(words: number): number {
  return Math.log(1 + Math.min(16, Math.max(0, words))) / Math.log(17);
}

type SeenCurve = { similarity: number; sureWords: number; classified: number; margin: number; agree: number; words: number; intercept: number };

function seenCurve(w: SeenCurve, f: SeenFeatures): number {
  return sigmoid(
    w.similarity * f.similarity +
      w.sureWords * f.sureWords +
      w.classified * (f.classified ? 1 : 0) +
      w.margin * marginTerm(f.margin ?? 0) +
      w.agree * (f.agree ?? 0) +
      w.words * queryWordsTerm(f.words ?? 0) +
      w.intercept,
  );
}

/** The highest probability the standing alone can give: just under "high" (src/models/perception/weights.ts). */
export const STANDING_CEILING = SEARCH_WEIGHTS.highConfidence - 0.001;

/**
 * The seen probability from the moment's own evidence (`own`) and from its standing among the
 * other videos of the result list (`standing`, the curve that also reads the margin): standing clear
 * of every other video lifts a picture match out of "low", but never into "high" — "high" needs the
 * moment's own evidence — and standing behind never lowers it (the one place this rule lives; the
 * fit, eval/fit-seen.ts, judges it through this function).
 */
export function seenWithStanding(own: number, standing: number): number {
  return Math.max(own, Math.min(standing, STANDING_CEILING));
}

/** The moment's own seen curve (no margin: what it holds, whatever else the list holds). */
export function ownSeenProbability(f: SeenFeatures): number {
  return seenCurve(EVIDENCE_WEIGHTS.seen, f);
}

export function seenProbability(f: SeenFeatures): number {
  return seenWithStanding(ownSeenProbability(f), seenCurve(EVIDENCE_WEIGHTS.standing, f));
}

/**
 * The seen side as the ranking reads it: a logistic curve of the pre-rank (similarity + keyword
 * bonus, the ranking the picture weights were tuned for), so pictures keep their order among
 * themselves and meet what is said on one scale.
 */
export function preRankProbability(preRank: number): number {
  const w = EVIDENCE_WEIGHTS.rank;
  return sigmoid(w.preRank * preRank + w.intercept);
}

/** A picture or a moment as the query, unchecked (a moment; a picture with the check off): how close the moment's picture is, alone. */
export function exampleProbability(similarity: number): number {
  const w = EVIDENCE_WEIGHTS.example;
  return sigmoid(w.similarity * similarity + w.intercept);
}

/**
 * A picture as the query, its geometric check run (src/search/picture-check.ts): the similarity and
 * how many keypoints of the query agree on one crop and zoom of the moment's keyframe (log-scaled:
 * the first dozen tell most; 0 for a moment not checked).
 */
export function pictureProbability(similarity: number, inliers: number): number {
  const w = EVIDENCE_WEIGHTS.picture;
  return sigmoid(w.similarity * similarity + w.inliers * Math.log1p(inliers) + w.intercept);
}

export function writtenProbability(f: WrittenFeatures): number {
  const w = EVIDENCE_WEIGHTS.written;
  return sigmoid(w.sureWords * f.sureWords + w.intercept);
}

/** The alignment score stretched so that the weakest match counted is 0 and a verbatim one 1. */
export function stretchScore(score: number): number {
  const floor = EVIDENCE_WEIGHTS.saidRule.minScore;
  return Math.max(0, Math.min(1, (score - floor) / (1 - floor)));
}

export function saidProbability(f: SaidFeatures): number {
  const w = EVIDENCE_WEIGHTS.said;
  return sigmoid(w.score * stretchScore(f.score) + w.exact * f.exact + w.content * Math.min(f.content, 4) + w.rarity * f.rarity + w.intercept);
}

/**
 * The sound-alike rule of a plain search (docs/speech.md): a spoken match counts as evidence only
 * when it is strong for the query's length and for how common its words are. A query of few
 * content words counts only when every one of them was heard as itself (not as a sound-alike) and
 * they are rare words (names, things), never common ones ("have been", "can"); a longer one when
 * its sounds match well. `said` searches (`search --said`) are not bound by it.
 */
export function spokenCounts(f: SaidFeatures): boolean {
  const r = EVIDENCE_WEIGHTS.saidRule;
  if (f.score < r.minScore) return false;
  if (f.content >= r.longQuery) return f.score >= r.longMinScore;
  return f.exact >= 1 && f.rarity >= r.shortMinRarity && f.score >= r.shortMinScore;
}

/**
 * A one-word query's spoken match in a plain search: a single word of the transcript, one decision
 * of the recognizer that no neighbouring word corroborates (a phrase's match is several recognized
 * words agreeing in order) — and the recognizer makes up rare words (a phone prompt heard as "you
 * have these *mountains* down"). Without the recognizer's own confidence in the word (the fast
 * search, src/speech/pocketsphinx.ts SEARCH_ARGS, gives none), such a match still counts and can be
 * found, but says no more than the low label promises (docs/speech.md) — unless the hit's picture or
 * on-screen text names the query's words too.
 */
export function singleHeardWord(f: SaidFeatures): boolean {
  return f.words === 1;
}

/** The said probability of a plain search's spoken match (the one-word ceiling applied when nothing else names the word). */
export function plainSaidProbability(f: SaidFeatures, corroborated: boolean): number {
  const p = saidProbability(f);
  return singleHeardWord(f) && !corroborated ? Math.min(p, EVIDENCE_WEIGHTS.saidRule.oneWordCeiling) : p;
}

/** Each present kind's probability. */
export type KindProbabilities = Partial<Record<EvidenceKind, number>>;

/**
 * The hit's confidence: a logistic model over the present kinds' log-odds (each kind's weight,
 * and an intercept), fitted on the tuning half. A kind that is absent adds nothing.
 */
export function combineKinds(p: KindProbabilities): number {
  const w = EVIDENCE_WEIGHTS.combine;
  let z = w.intercept;
  let any = false;
  for (const k of EVIDENCE_KINDS) {
    const pk = p[k];
    if (pk === undefined) continue;
    z += w[k] * logit(pk);
    any = true;
  }
  return any ? sigmoid(z) : 0;
}

/**
 * A hit's window: every matched spoken word inside it (start ≤ the first word's start, end ≥ the
 * last word's end), a little air around the words that never crosses a cut (a shot boundary),
 * never outside the video.
 */
export function spokenWindow(words: { start: number; end: number }, cuts: number[], duration?: number): { start: number; end: number } {
  const pad = EVIDENCE_WEIGHTS.window.pad;
  // The shot the first word starts in, and the one the last word ends in.
  const before = Math.max(0, ...cuts.filter((c) => c <= words.start));
  const after = Math.min(duration ?? Infinity, ...cuts.filter((c) => c >= words.end));
  const start = Math.max(before, words.start - pad, 0);
  let end = Math.min(after, words.end + pad);
  if (duration !== undefined) end = Math.min(end, Math.max(duration, words.end));
  return { start: Math.min(start, words.start), end: Math.max(end, words.end) };
}

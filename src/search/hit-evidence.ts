/**
 * One search hit's evidence, kind by kind (src/search/evidence.ts): which of the query's words its
 * picture facts name and how sure analysis was of them (*seen*), which ones its on-screen text
 * holds (*written*), its spoken match (*said*); each present kind's probability, the hit's
 * combined confidence, and what the API, the CLI and the page show of it.
 */
import type { SearchResult } from '../api/types.js';
import type { Fact } from '../analysis/types.js';
import type { SaidContext } from '../speech/match.js';
import type { SaidFeatures, SpokenHit } from '../speech/search.js';
import { isClassified, sureWordShare, WEAK_GUESS, wordEvidence, type WordEvidence } from './confidence.js';
import {
  combineKinds,
  EVIDENCE_KINDS,
  exampleProbability,
  pictureProbability,
  plainSaidProbability,
  singleHeardWord,
  factsOfKind,
  preRankProbability,
  saidProbability,
  seenProbability,
  stretchScore,
  writtenProbability,
  type EvidenceKind,
  type KindProbabilities,
} from './evidence.js';

export interface EvidenceMode {
  /** A picture or a moment and no words: the seen curve of examples. */
  example: boolean;
  /** `search --seen`: the picture alone. */
  seenOnly: boolean;
  /** A picture alone whose geometric check ran: the picture curve (similarity and inliers). */
  pictureChecked?: boolean;
}

export interface HitEvidence {
  similarity: number;
  /** The kinds combined (src/search/evidence.ts combineKinds). */
  confidence: number;
  /** What results are ordered by (0–1): the same combination, the seen side read from the pre-rank. */
  rank: number;
  kinds: EvidenceKind[];
  p: KindProbabilities;
  /** The raw numbers each kind's curve read (`explain`). */
  parts: Partial<Record<EvidenceKind, Record<string, number>>>;
  matched: Partial<Record<EvidenceKind, string[]>>;
  snippet: Partial<Record<EvidenceKind, string>>;
  /** The spoken match, when what is said counts. */
  heard?: { said: SaidContext; score: number };
  /** Every query word the hit's analysis holds (seen or written). */
  matchedWords: string[];
  /** In words, what drove the confidence (`explain`). */
  reason: string;
}

export interface HitInput {
  similarity: number;
  /** The pre-rank (similarity + keyword bonus) that orders pictures (text queries). */
  preRank?: number;
  facts: Fact[];
  /** The query's terms the keyword index found in the segment. */
  matched: string[];
  /** Every query term's IDF (found or not). */
  idf: Map<string, number>;
  said?: { hit: SpokenHit; features: SaidFeatures };
  description?: string;
  /** A picture query's geometric check on this moment's keyframe: matches in one geometry (src/search/picture-check.ts). */
  inliers?: number;
  /** The best other video of the same result list (rivalsOf): what the margin is measured against. */
  rival?: Rival;
  /** How many content words the query has (src/search/hybrid.ts queryTerms): the seen curve reads its length. */
  queryWords?: number;
}

/** A video's best moment in a result list, as the margin reads it. */
export interface Rival {
  similarity: number;
  preRank: number;
}

/**
 * For each video (its best moment by pre-rank in a result list), the best moment of a *different*
 * video: for the first video the second, for every other one the first. The one place where other
 * results enter a hit's evidence (the seen margin, src/search/evidence.ts).
 */
export function rivalsOf(best: Map<string, Rival>): { get(videoId: string): Rival | undefined } {
  let first: [string, Rival] | undefined;
  let second: Rival | undefined;
  for (const [v, r] of best) {
    if (!first || r.preRank > first[1].preRank) {
      second = first?.[1];
      first = [v, r];
    } else if (!second || r.preRank > second.preRank) second = r;
  }
  // Any video (listed or not, e.g. one a filter keeps and the whole list does not reach): the first, or for the first the second.
  return { get: (v: string) => (first && v !== first[0] ? first[1] : second) };
}

/**
 * The seen margin: how far the hit's pre-rank stands above the best other video's (negative below
 * it); 0 when the list holds no other video. Similarity margin likewise.
 */
export function seenMargins(similarity: number, preRank: number, rival: Rival | undefined): { margin: number; simMargin: number } {
  if (!rival) return { margin: 0, simMargin: 0 };
  return { margin: preRank - rival.preRank, simMargin: similarity - rival.similarity };
}

const pct = (x: number): string => `${Math.round(x * 100)}%`;
const sure = (words: Map<string, WordEvidence>): Array<[string, WordEvidence]> => [...words].filter(([, w]) => w.strength >= WEAK_GUESS);

/** What a person reads of the seen words: the facts that name them, how sure. */
function seenSnippet(words: Map<string, WordEvidence>): string {
  return sure(words)
    .map(([t, w]) => (w.label === undefined ? t : `${w.label}${w.via ? ` (${w.via})` : ''} ${pct(w.strength)}`))
    .join(', ');
}

export function hitEvidence(h: HitInput, mode: EvidenceMode): HitEvidence {
  const seenFacts = factsOfKind(h.facts, 'seen');
  const seenWords = wordEvidence(h.matched, seenFacts, false);
  const writtenWords = mode.seenOnly ? new Map<string, WordEvidence>() : wordEvidence(h.matched, factsOfKind(h.facts, 'written'), false);
  // A keyword no fact names (words given with a tensor) is taken as seen.
  for (const t of h.matched) if (!seenWords.has(t) && !writtenWords.has(t)) seenWords.set(t, { strength: 1 });
  const p: KindProbabilities = {};
  const parts: HitEvidence['parts'] = {};
  const matched: HitEvidence['matched'] = {};
  const snippet: HitEvidence['snippet'] = {};
  // The reason in words is built only when read (`explain`): most hits weighed are never shown with it.
  const reasons: Array<() => string> = [];

  const sureSeen = sureWordShare(h.idf, seenWords);
  // Which picture analyses name the query's words: ImageNet (facts of kind `thing`) and perception (the rest of seen).
  const sureImagenet = sureWordShare(h.idf, wordEvidence(h.matched, seenFacts.filter((f) => f.kind === 'thing'), false));
  const surePerception = sureWordShare(h.idf, wordEvidence(h.matched, seenFacts.filter((f) => f.kind !== 'thing'), false));
  const { margin, simMargin } = seenMargins(h.similarity, h.preRank ?? h.similarity, h.rival);
  const classified = isClassified(seenFacts);
  const seenSure = sure(seenWords);
  const writtenSure = sure(writtenWords);
  const said = mode.seenOnly ? undefined : h.said;
  const seenMatched = mode.example || seenSure.length > 0 || (writtenSure.length === 0 && !said);
  if (seenMatched) {
    p.seen = mode.pictureChecked
      ? pictureProbability(h.similarity, h.inliers ?? 0)
      : mode.example
        ? exampleProbability(h.similarity)
        : seenProbability({ similarity: h.similarity, sureWords: sureSeen, classified, margin, agree: Math.min(sureImagenet, surePerception), words: h.queryWords ?? 0 });
    parts.seen = mode.pictureChecked
      ? { similarity: h.similarity, inliers: h.inliers ?? 0 }
      : mode.example
        ? { similarity: h.similarity }
        : { similarity: h.similarity, sure_words: sureSeen, classified: classified ? 1 : 0, pre_rank: h.preRank ?? h.similarity, margin, sim_margin: simMargin, sure_imagenet: sureImagenet, sure_perception: surePerception, query_words: h.queryWords ?? 0 };
    if (seenSure.length) matched.seen = seenSure.map(([t]) => t);
    const words = seenSnippet(seenWords);
    if (words) snippet.seen = words;
    else if (h.description) snippet.seen = h.description.split(/(?<=\.)\s/)[0];
    const seenP = p.seen;
    reasons.push(() => {
      const named = [...seenWords].filter(([, w]) => w.strength > 0);
      const saw = named.map(([t, w]) => (w.label === undefined ? `"${t}"` : `"${t}" (${w.label}${w.via ? `, from ${w.via}` : ''}, ${pct(w.strength)}${w.strength < WEAK_GUESS ? ': a weak guess, not counted' : ''})`));
      const held = h.inliers ? `; the query picture is in its keyframe (${h.inliers} keypoints agree on one crop and zoom)` : '';
      return `seen ${pct(seenP)}: the picture matches at ${h.similarity.toFixed(2)}${held}${saw.length ? `; analysis saw ${saw.join(', ')}` : mode.example ? '' : '; no query word was seen'}`;
    });
  }
  if (writtenSure.length) {
    const sureWritten = sureWordShare(h.idf, writtenWords);
    p.written = writtenProbability({ sureWords: sureWritten });
    parts.written = { sure_words: sureWritten };
    matched.written = writtenSure.map(([t]) => t);
    snippet.written = [...new Set(writtenSure.map(([, w]) => w.label ?? ''))].filter(Boolean).join(' · ');
    const writtenP = p.written;
    reasons.push(() => `written ${pct(writtenP)}: on screen ${writtenSure.map(([t, w]) => `"${w.label ?? t}" (${pct(w.strength)})`).join(', ')}`);
  }
  let heard: HitEvidence['heard'];
  if (said) {
    // One heard word that neither the picture nor the screen names says no more than "low".
    const alone = singleHeardWord(said.features) && !seenSure.length && !writtenSure.length;
    p.said = plainSaidProbability(said.features, !alone);
    parts.said = saidParts(said.features);
    matched.said = said.hit.said.matched;
    snippet.said = said.hit.said.text;
    heard = { said: said.hit.said, score: said.hit.score };
    const saidP = p.said;
    reasons.push(
      () =>
        `said ${pct(saidP)}: "${said.hit.said.text}" (sounds match ${pct(said.hit.score)}, ${pct(said.features.exact)} of the words heard as themselves${alone ? '; one word heard, nothing seen or written names it: at most low' : ''})`,
    );
  }
  const kinds = EVIDENCE_KINDS.filter((k) => p[k] !== undefined);
  // The order: the seen side by the pre-rank's own curve (monotone in it: pictures keep their tuned order).
  const ranking = p.seen === undefined || mode.example ? p : { ...p, seen: preRankProbability(h.preRank ?? h.similarity) };
  return {
    similarity: h.similarity,
    confidence: combineKinds(p),
    rank: combineKinds(ranking),
    kinds,
    p,
    parts,
    matched,
    snippet,
    heard,
    matchedWords: [...new Set([...seenWords.keys(), ...writtenWords.keys()])],
    get reason() {
      return reasons.map((r) => r()).join('; ');
    },
  };
}

function saidParts(f: SaidFeatures): Record<string, number> {
  return { score: f.score, stretched: stretchScore(f.score), content_words: f.content, exact: f.exact, rarity: f.rarity, ...(f.words === undefined ? {} : { words: f.words }) };
}

/** A hit of `search --said`: what is said alone. */
export function saidOnlyEvidence(similarity: number, said: { hit: SpokenHit; features: SaidFeatures }): HitEvidence {
  const p = saidProbability(said.features);
  return {
    similarity,
    confidence: p,
    rank: p,
    kinds: ['said'],
    p: { said: p },
    parts: { said: saidParts(said.features) },
    matched: { said: said.hit.said.matched },
    snippet: { said: said.hit.said.text },
    heard: { said: said.hit.said, score: said.hit.score },
    matchedWords: [],
    reason: `said ${pct(p)}: "${said.hit.said.text}" (sounds match ${pct(said.hit.score)})`,
  };
}

const r3 = (x: number): number => Math.round(x * 1000) / 1000;

/** The API's `evidence`: per present kind its probability, matched words and snippet; raw parts with explain. */
export function publicEvidence(ev: HitEvidence, explain: boolean): SearchResult['evidence'] {
  const out: SearchResult['evidence'] = {};
  for (const k of ev.kinds) {
    const e: NonNullable<SearchResult['evidence'][EvidenceKind]> = { probability: r3(ev.p[k]!) };
    if (ev.matched[k]?.length) e.matched = ev.matched[k];
    if (ev.snippet[k]) e.snippet = ev.snippet[k];
    if (explain && ev.parts[k]) e.parts = Object.fromEntries(Object.entries(ev.parts[k]!).map(([n, v]) => [n, r3(v)]));
    out[k] = e;
  }
  return out;
}

/**
 * The spoken side of search. The keyword index holds every segment's spoken words and their sound
 * keys (src/speech/analyzer.ts), so the segments where a query may have been said are found like
 * any keyword match — by a word, or by a word that sounds alike; then each is scored by aligning
 * the query's sounds against the transcript's words around it (src/speech/match.ts). A hit points
 * at the moment the matched words start and carries the words around them.
 */
import type { SegmentsCatalog, TagFilter } from '../store/catalog/types.js';
import { wordLog10p } from './commonness.js';
import { matchSpoken, saidContext, wordRange, type SaidContext, type SpokenQuery } from './match.js';
import type { SpokenWord } from './types.js';

/**
 * How spoken matches are found (docs/speech.md). `minScore`: a match below it is no match.
 * `candidates`: at most this many segments are aligned. How much a match counts is the said
 * curve's business (src/search/evidence.ts), not a bonus.
 */
export const SPOKEN_WEIGHTS = { minScore: 0.6, candidates: 300 } as const;

export interface SpokenHit {
  score: number;
  /** When the matched words start (the moment a result points at). */
  start: number;
  said: SaidContext;
}

/** A video's recognized words (undefined: none) — a transcript loader, cached by the caller. */
export type WordsOf = (videoId: string) => Promise<SpokenWord[] | undefined>;

/**
 * The segments of a collection where `query` may have been said, each with its best spoken
 * match that starts inside it. At most `SPOKEN_WEIGHTS.candidates` segments are aligned: those
 * holding the most of the query's words and sound keys.
 */
export async function spokenHits(
  segments: SegmentsCatalog,
  collectionId: string,
  query: SpokenQuery,
  wordsOf: WordsOf,
  filter?: TagFilter,
): Promise<Map<number, SpokenHit>> {
  const out = new Map<number, SpokenHit>();
  const terms = await segments.selectiveTerms(query.terms);
  if (!terms.length) return out;
  const matches = await segments.termMatches(collectionId, terms, 2000, filter);
  const weight = new Map<number, number>();
  for (const [t, ids] of matches) for (const id of ids) weight.set(id, (weight.get(id) ?? 0) + (t.startsWith('zk') ? 0.2 : t.startsWith('zq') ? 0.7 : 1));
  const ids = [...weight.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, SPOKEN_WEIGHTS.candidates).map(([id]) => id);
  if (!ids.length) return out;
  const rows = await segments.byIds(ids);
  const byVideo = new Map<string, { id: number; start: number; end: number }[]>();
  for (const r of rows.values()) {
    const list = byVideo.get(r.video_id) ?? [];
    list.push({ id: r.id, start: r.start, end: r.end });
    byVideo.set(r.video_id, list);
  }
  await Promise.all(
    [...byVideo].map(async ([videoId, segs]) => {
      const words = await wordsOf(videoId);
      if (!words?.length) return;
      for (const s of segs) {
        // The words of the segment and a little on each side: a phrase may run over a boundary.
        const [lo, hi] = wordRange(words, s.start, s.end, 3);
        const m = matchSpoken(query, words, lo, hi);
        if (!m || m.score < SPOKEN_WEIGHTS.minScore) continue;
        // A phrase may run over a segment boundary: every segment it is said in holds it (the
        // result still points at its first word). One said wholly in a neighbour belongs to it.
        if (m.end <= s.start || m.start >= s.end) continue;
        out.set(s.id, { score: m.score, start: m.start, said: saidContext(words, m) });
      }
    }),
  );
  return out;
}

/** What the said curve reads of a spoken match (src/search/evidence.ts). */
export interface SaidFeatures {
  /** Alignment score of the query's sounds in the transcript, in [0, 1] (1: verbatim). */
  score: number;
  /** The query's content words (light words out). */
  content: number;
  /** Share of the content words heard as those very words (not only as sound-alikes). */
  exact: number;
  /** How rare the content words are: mean of −log10 p(word) in English (src/speech/commonness.ts). */
  rarity: number;
  /**
   * The query's words, light ones included: a one-word query's match is one word of the
   * transcript, one decision of the recognizer that nothing around it corroborates
   * (src/search/evidence.ts singleHeardWord).
   */
  words?: number;
}

/**
 * What the said curve and the sound-alike rule read of a match: its score, the query's content
 * words, the share of them heard as themselves, and how rare they are in English.
 */
export function saidFeatures(hit: Pick<SpokenHit, 'score' | 'said'>, query: SpokenQuery): SaidFeatures {
  const heard = new Set(hit.said.matched.map((w) => w.toLowerCase()));
  const content = query.content.length ? query.content : query.words;
  const exact = content.filter((w) => heard.has(w)).length / Math.max(1, content.length);
  const rarity = content.reduce((s, w) => s - wordLog10p(w), 0) / Math.max(1, content.length);
  return { score: hit.score, content: content.length, exact, rarity, words: query.words.length };
}

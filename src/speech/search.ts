/**
 * The spoken side of search. The keyword index holds every segment's spoken words and their sound
 * keys (src/speech/analyzer.ts), so the segments where a query may have been said are found like
 * any keyword match — by a word, or by a word that sounds alike; then each is scored by aligning
 * the query's sounds against the transcript's words around it (src/speech/match.ts). A hit points
 * at the moment the matched words start and carries the words around them.
 */
import type { SegmentsCatalog, TagFilter } from '../store/catalog/types.js';
import { matchSpoken, saidContext, wordRange, type SaidContext, type SpokenQuery } from './match.js';
import type { SpokenWord } from './types.js';

/**
 * How spoken matches count (chosen on the tuning half of the eval's recordings, docs/speech.md).
 * `minScore`: a match below it is no match. `bonus`: what a perfect match adds to a result's
 * relevance in a plain search, so a phrase said verbatim outranks a visual near-miss (cosine
 * similarities of near-misses stay below ~0.5). `minPhones`: shorter queries are too easy to find
 * by sound alone in a plain search (a `said` search still matches them).
 */
export const SPOKEN_WEIGHTS = { minScore: 0.6, bonus: 0.6, minPhones: 6, candidates: 300 } as const;

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

/** What a spoken match adds to a result's relevance in a plain search. */
export function spokenBonus(hit: SpokenHit | undefined, query: SpokenQuery): number {
  if (!hit || query.phones.length < SPOKEN_WEIGHTS.minPhones) return 0;
  return SPOKEN_WEIGHTS.bonus * Math.max(0, (hit.score - SPOKEN_WEIGHTS.minScore) / (1 - SPOKEN_WEIGHTS.minScore));
}

/**
 * How sure a spoken-only result is, in [0, 1]: the match's score, stretched so that a match at
 * the threshold is unsure and a verbatim one is sure.
 */
export function spokenConfidence(score: number): number {
  return Math.max(0, Math.min(1, (score - SPOKEN_WEIGHTS.minScore) / (1 - SPOKEN_WEIGHTS.minScore)));
}

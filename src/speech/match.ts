/**
 * Finding what a user says was said: a query's words aligned, by sound, against a transcript's
 * words (src/speech/phonetic.ts), giving how well it matches, the moment the matched words start,
 * and the words around them for display.
 */
import { round } from '../media/kernels/index.js';
import { alignPhones, phonesOf, soundGrams, soundKey, spokenTerm, spokenWords } from './phonetic.js';
import type { SpokenWord } from './types.js';

/** Words a spoken query may leave out: they carry little sound and less meaning. */
const LIGHT = new Set('a an the of to and or in on at is it uh um'.split(' '));

export interface SpokenQuery {
  words: string[];
  /** The words that carry meaning (light words out): what the sound-alike rule weighs. */
  content: string[];
  phones: string[];
  /** Terms for the keyword index: the content words as spoken terms, their sound keys, runs of sounds. */
  terms: string[];
}

/** A query as spoken words and phones; undefined when it has nothing to hear. */
export function spokenQuery(text: string): SpokenQuery | undefined {
  const words = spokenWords(text).slice(0, 24);
  const content = words.filter((w) => !LIGHT.has(w));
  if (!content.length) return undefined;
  const phones = words.flatMap((w) => phonesOf(w));
  const terms: string[] = [];
  for (const w of content) {
    for (const t of [spokenTerm(w), soundKey(w)]) if (t && !terms.includes(t)) terms.push(t);
  }
  terms.push(...soundGrams(words));
  return { words, content, phones, terms };
}

export interface SpokenMatch {
  /** In [0, 1]: 1 when the query's sounds stand in the transcript exactly. */
  score: number;
  /** Index in the transcript's words of the first and last matched word. */
  first: number;
  last: number;
  /** When the first matched word starts and the last ends, seconds. */
  start: number;
  end: number;
}

/**
 * The best place of `query` among `words[from..to)` (the whole transcript by default). Exact
 * words score 1; each misheard sound costs by how alike the sounds are.
 */
export function matchSpoken(query: SpokenQuery, words: SpokenWord[], from = 0, to = words.length): SpokenMatch | undefined {
  if (to <= from) return undefined;
  const slice = words.slice(from, to);
  const a = alignPhones(
    query.phones,
    slice.map((w) => phonesOf(w.variant ? `${w.w}(${w.variant})` : w.w)),
  );
  if (!a) return undefined;
  // Trim light words at the edges of the match that the query does not start or end with.
  let first = a.first;
  let last = a.last;
  while (first < last && LIGHT.has(slice[first].w) && slice[first].w !== query.words[0]) first++;
  while (last > first && LIGHT.has(slice[last].w) && slice[last].w !== query.words[query.words.length - 1]) last--;
  return { score: a.score, first: from + first, last: from + last, start: slice[first].start, end: slice[last].end };
}

/** Index range of the words that overlap [start, end] seconds, widened by `pad` seconds. */
export function wordRange(words: SpokenWord[], start: number, end: number, pad = 3): [number, number] {
  let lo = 0;
  while (lo < words.length && words[lo].end < start - pad) lo++;
  let hi = lo;
  while (hi < words.length && words[hi].start <= end + pad) hi++;
  return [lo, hi];
}

export interface SaidContext {
  /** The words around the match, the matched ones included, as one line. */
  text: string;
  /** The matched words as they were heard. */
  matched: string[];
  /** When the matched words start and end, seconds. */
  start: number;
  end: number;
  /** In [0, 1], how well the query's sounds match. */
  score: number;
}

/** What a result shows of a spoken match: up to `around` words on each side. */
export function saidContext(words: SpokenWord[], m: SpokenMatch, around = 8): SaidContext {
  const lo = Math.max(0, m.first - around);
  const hi = Math.min(words.length, m.last + 1 + around);
  const parts: string[] = [];
  if (lo > 0) parts.push('…');
  for (let i = lo; i < hi; i++) parts.push(i >= m.first && i <= m.last ? `*${words[i].w}*` : words[i].w);
  if (hi < words.length) parts.push('…');
  return {
    text: parts.join(' ').replace(/\* \*/g, ' '),
    matched: words.slice(m.first, m.last + 1).map((w) => w.w),
    start: round(m.start, 2),
    end: round(m.end, 2),
    score: round(m.score, 3),
  };
}

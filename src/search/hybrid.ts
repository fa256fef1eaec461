import { thumbnailUrl } from '../api/paths.js';
import type { SearchResult } from '../api/types.js';
import { SEARCH_WEIGHTS } from '../models/perception/weights.js';
import type { Fact } from '../analysis/types.js';
import { confidenceLabel, confidenceOf, confidenceReason, isClassified, sureWordShare, wordEvidence } from './confidence.js';
import type { SegmentsCatalog, VideosCatalog } from '../store/catalog/types.js';
import { FILTER_NAMES } from '../tags/registry.js';
import { LIMITS } from '../api/defaults.js';
import type { SpokenQuery } from '../speech/match.js';
import { spokenBonus, spokenConfidence, spokenHits, type SpokenHit, type WordsOf } from '../speech/search.js';

/** Words that carry no content for keyword matching; the vector side still sees them. */
const STOPWORDS = new Set(
  'a an the of on in at to and or with for from by is are was were be this that these those it its into over under some any shot video clip footage scene showing shows'.split(
    ' ',
  ),
);

/**
 * Phrases whose words mean something else apart: "black and white" footage is monochrome, and a
 * colour picture holding black and white things must not match it word by word.
 */
const PHRASES: Array<[RegExp, string]> = [[/\bblack[\s-]*(?:and|&|n)[\s-]*white\b|\bb\s*&\s*w\b|\bb\/w\b/g, ' monochrome ']];

/** The content words of a query: lower-cased, de-duplicated, stopwords out, phrases folded. */
export function queryTerms(text: string): string[] {
  const folded = PHRASES.reduce((t, [re, to]) => t.replace(re, to), text.toLowerCase());
  const words = (folded.match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 1 && !STOPWORDS.has(w));
  return [...new Set(words)].slice(0, 32);
}

/** Terms as a safe FTS5 OR-query (each quoted, so no syntax leaks in). */
export function termsToFts(terms: string[]): string | undefined {
  return terms.length ? terms.map((w) => `"${w}"`).join(' OR ') : undefined;
}

export function ftsQuery(text: string): string | undefined {
  return termsToFts(queryTerms(text));
}

export interface HybridSearchInput {
  collectionId: string;
  dim: number;
  queryVector: Float32Array;
  text: string;
  topK: number;
  /** Kind → label a segment must carry (filterable kinds of src/tags/registry.ts). */
  filter: Record<string, string>;
  explain: boolean;
  /** Results below this confidence are left out. */
  minConfidence?: number;
  /** Videos never returned (the query's own video, with `like`). */
  excludeVideoIds?: ReadonlySet<string>;
  /**
   * What is said counts too (src/speech/search.ts): `query` heard in transcripts adds to a
   * segment's relevance; with `only`, results are the spoken matches alone (`search --said`).
   */
  spoken?: { query: SpokenQuery; wordsOf: WordsOf; only: boolean };
}

/** The deepest a search pages: offset + top_k. */
export const MAX_SEARCH_HITS = LIMITS.maxSearchHits;

/**
 * Hybrid search. A segment's `relevance` = its cosine similarity to the query + a keyword bonus:
 * the IDF-weighted share of the query's content words found among the words analysis found in it
 * (object and class names, text on screen; stemmed). Results are ordered by relevance — the number
 * shown — one per video (its best segment); `similarity` is the cosine alone.
 */
export async function hybridSearch(catalog: SegmentsCatalog, videos: Pick<VideosCatalog, 'byId'>, input: HybridSearchInput): Promise<SearchResult[]> {
  const segments = catalog.forSearch?.() ?? catalog; // one catch-up with other writers per search
  const heard = input.spoken ? await spokenHits(segments, input.collectionId, input.spoken.query, input.spoken.wordsOf, input.filter) : new Map<number, SpokenHit>();
  if (input.spoken?.only) return spokenSearch(segments, videos, input, heard);
  // Enough candidates that top_k distinct videos survive the per-video grouping.
  const k = Math.min(4096, Math.max(200, input.topK * 20 + (input.excludeVideoIds?.size ? 50 : 0)));

  // Keyword side: which of the query's (selective) words each segment's analysis words hold.
  const terms = await segments.selectiveTerms(queryTerms(input.text));
  const matches = await segments.termMatches(input.collectionId, terms, 2000, input.filter);
  // How rare a word is in the collection, whatever the filter: a filter keeps results out, it does
  // not change what a word is worth to the ones it keeps.
  const unfiltered = Object.keys(input.filter).length ? await segments.termMatches(input.collectionId, terms, 2000) : matches;
  const total = Math.max(1, await segments.countForCollection(input.collectionId));
  const idf = new Map(terms.map((t) => [t, Math.log(1 + total / (1 + (unfiltered.get(t)?.length ?? 0)))]));
  const idfSum = [...idf.values()].reduce((a, b) => a + b, 0);
  const keyword = new Map<number, number>();
  for (const [t, ids] of matches) for (const id of ids) keyword.set(id, (keyword.get(id) ?? 0) + (idf.get(t) ?? 0) / (idfSum || 1));

  // Vector side: the k nearest segments and the keyword hits, with their similarities — exact, or
  // approximate within a margin (the in-memory index), re-scored below where they can matter.
  const scored = await segments.candidates(input.collectionId, input.dim, input.queryVector, k, input.filter, [...new Set([...keyword.keys(), ...heard.keys()])]);
  const videoOf = await segments.videosOf(input.collectionId, [...scored.keys()]);
  const videoOfKept = (id: number): string | undefined => {
    const v = videoOf.get(id);
    return v === undefined || input.excludeVideoIds?.has(v) ? undefined : v;
  };
  const spoken = input.spoken;
  const spokenOf = (id: number) => (spoken ? spokenBonus(heard.get(id), spoken.query) : 0);
  const bonus = (id: number) => SEARCH_WEIGHTS.keyword * (keyword.get(id) ?? 0) + spokenOf(id);
  await exactWhereItMatters(segments, input, scored, videoOfKept, bonus);

  const similarity = new Map<number, number>();
  const relevance = new Map<number, number>();
  for (const [id, s] of scored) {
    similarity.set(id, s.similarity);
    relevance.set(id, s.similarity + bonus(id));
  }
  const bestPerVideo = new Map<string, { segmentId: number; relevance: number }>();
  for (const [segmentId, r] of relevance) {
    const videoId = videoOfKept(segmentId);
    if (videoId === undefined) continue;
    const best = bestPerVideo.get(videoId);
    if (!best || r > best.relevance || (r === best.relevance && segmentId < best.segmentId)) bestPerVideo.set(videoId, { segmentId, relevance: r });
  }

  const ranked = [...bestPerVideo.entries()].sort((a, b) => b[1].relevance - a[1].relevance || a[1].segmentId - b[1].segmentId);
  // Whole rows only for what can be shown (min_confidence may pass over some).
  const shown = input.minConfidence === undefined ? ranked.slice(0, input.topK) : ranked;
  const rows = await segments.byIds(shown.map(([, best]) => best.segmentId));
  // The page's videos in parallel (one round trip's time on a database server); further ones as needed.
  const videoRows = new Map(await Promise.all(shown.slice(0, input.topK).map(async ([id]) => [id, await videos.byId(id)] as const)));
  const out: SearchResult[] = [];
  for (const [videoId, best] of ranked) {
    if (out.length >= input.topK) break;
    const row = rows.get(best.segmentId);
    if (!row) continue; // deleted since the candidates were read
    // The result's own evidence only (src/search/confidence.ts): its similarity, the query words
    // analysis saw in it (each as sure as the fact that names it), whether ImageNet classified it.
    const facts = factsOf(row.facts_json);
    const found = wordEvidence(terms.filter((t) => matches.get(t)?.includes(best.segmentId)), facts);
    const evidence = { similarity: similarity.get(best.segmentId) ?? 0, sureWords: sureWordShare(idf, found), classified: isClassified(facts) };
    // A phrase heard in the transcript is its own evidence: as sure as the match is, at least.
    const heardHit = spokenOf(best.segmentId) > 0 ? heard.get(best.segmentId) : undefined;
    const confidence = Math.max(confidenceOf(evidence), heardHit ? spokenConfidence(heardHit.score) : 0);
    if (input.minConfidence !== undefined && confidence < input.minConfidence) continue;
    const video = videoRows.has(videoId) ? videoRows.get(videoId) : await videos.byId(videoId);
    // A moment never runs past the end of its video.
    const end = video?.duration ? Math.min(row.end, video.duration) : row.end;
    // A result found by what is said points at the moment the words start.
    const hit = heardHit;
    const start = hit ? Math.min(hit.start, end) : row.start;
    const result: SearchResult = {
      video_id: videoId,
      similarity: round(similarity.get(best.segmentId) ?? 0),
      relevance: round(best.relevance),
      confidence: round(confidence, 3),
      confidence_label: confidenceLabel(confidence),
      start: round(start),
      end: round(Math.max(start, end)),
      filename: video?.filename ?? '',
      thumbnail_url: thumbnailUrl(videoId, row.start),
    };
    if (hit) result.said = hit.said;
    const tags = momentTags(row.tags_json);
    if (tags) result.tags = tags;
    if (input.explain) {
      result.description = row.description;
      const matched = [...found.keys()];
      if (matched.length) result.matched_words = matched;
      result.confidence_reason = confidenceReason(evidence, found, heardHit !== undefined);
    }
    out.push(result);
  }
  return out;
}

/**
 * `search --said`: the spoken matches alone, best first, one per video (its best match), each
 * pointing at the moment its words start; the confidence is the match's (spokenConfidence).
 */
async function spokenSearch(segments: SegmentsCatalog, videos: Pick<VideosCatalog, 'byId'>, input: HybridSearchInput, heard: Map<number, SpokenHit>): Promise<SearchResult[]> {
  const videoOf = await segments.videosOf(input.collectionId, [...heard.keys()]);
  const best = new Map<string, { id: number; hit: SpokenHit }>();
  for (const [id, hit] of heard) {
    const v = videoOf.get(id);
    if (v === undefined || input.excludeVideoIds?.has(v)) continue;
    const b = best.get(v);
    if (!b || hit.score > b.hit.score || (hit.score === b.hit.score && id < b.id)) best.set(v, { id, hit });
  }
  const ranked = [...best.entries()]
    .filter(([, b]) => input.minConfidence === undefined || spokenConfidence(b.hit.score) >= input.minConfidence)
    .sort((a, b) => b[1].hit.score - a[1].hit.score || a[1].id - b[1].id)
    .slice(0, input.topK);
  const ids = ranked.map(([, b]) => b.id);
  const [rows, sims] = await Promise.all([segments.byIds(ids), segments.similarities(input.dim, ids, input.queryVector)]);
  const out: SearchResult[] = [];
  for (const [videoId, { id, hit }] of ranked) {
    const row = rows.get(id);
    if (!row) continue;
    const video = await videos.byId(videoId);
    const end = video?.duration ? Math.min(row.end, video.duration) : row.end;
    const confidence = spokenConfidence(hit.score);
    const result: SearchResult = {
      video_id: videoId,
      similarity: round(sims.get(id) ?? 0),
      relevance: round(hit.score),
      confidence: round(confidence, 3),
      confidence_label: confidenceLabel(confidence),
      start: round(hit.start),
      end: round(Math.max(hit.start, end)),
      filename: video?.filename ?? '',
      thumbnail_url: thumbnailUrl(videoId, row.start),
      said: hit.said,
    };
    const tags = momentTags(row.tags_json);
    if (tags) result.tags = tags;
    if (input.explain) result.description = row.description;
    out.push(result);
  }
  return out;
}

/**
 * Re-scores exactly every approximate candidate that could reach the page: with L the top_k-th
 * largest per-video lower bound (approximation minus margin, plus keyword bonus), at least top_k
 * videos score L or more, so a segment whose upper bound stays below L can be neither on the page
 * nor the best segment of a video that is. What is left approximate (within its margin, ~0.002)
 * never reaches the page. With `min_confidence` the page may reach further
 * down, so everything is re-scored.
 */
async function exactWhereItMatters(
  segments: SegmentsCatalog,
  input: HybridSearchInput,
  scored: Map<number, { similarity: number; margin: number }>,
  videoOf: (id: number) => string | undefined,
  bonus: (id: number) => number,
): Promise<void> {
  let approximate = 0;
  for (const s of scored.values()) if (s.margin > 0) approximate++;
  if (approximate === 0) return;
  let threshold = -Infinity;
  if (input.minConfidence === undefined) {
    const lower = new Map<string, number>();
    for (const [id, s] of scored) {
      const v = videoOf(id);
      if (v === undefined) continue;
      const lo = s.similarity - s.margin + bonus(id);
      if (lo > (lower.get(v) ?? -Infinity)) lower.set(v, lo);
    }
    const sorted = [...lower.values()].sort((a, b) => b - a);
    if (sorted.length >= input.topK) threshold = sorted[input.topK - 1];
  }
  const redo = [...scored].filter(([id, s]) => s.margin > 0 && s.similarity + s.margin + bonus(id) >= threshold).map(([id]) => id);
  const exact = await segments.similarities(input.dim, redo, input.queryVector);
  for (const id of redo) {
    const sim = exact.get(id);
    if (sim === undefined) scored.delete(id); // deleted since the index last synced
    else scored.set(id, { similarity: sim, margin: 0 });
  }
}

/** The moment's filterable tags (label and confidence of each: src/tags/registry.ts), from its segment. */
function momentTags(json: string | null): SearchResult['tags'] {
  if (!json) return undefined;
  const all = JSON.parse(json) as Record<string, { label?: unknown; confidence?: unknown }>;
  const out: NonNullable<SearchResult['tags']> = {};
  for (const k of FILTER_NAMES) {
    const t = all[k];
    if (t && typeof t.label === 'string') out[k] = { label: t.label, confidence: typeof t.confidence === 'number' ? round(t.confidence, 3) : 0 };
  }
  return Object.keys(out).length ? out : undefined;
}

/** Every fact stored with a segment (`facts_json`: analyzer → { version, facts }). */
function factsOf(json: string | null | undefined): Fact[] {
  if (!json) return [];
  const stored = JSON.parse(json) as Record<string, { facts?: Fact[] }>;
  return Object.values(stored).flatMap((a) => a.facts ?? []);
}

function round(n: number, digits = 6): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

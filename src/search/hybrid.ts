import { thumbnailUrl } from '../api/paths.js';
import type { SearchResult } from '../api/types.js';
import { SEARCH_WEIGHTS } from '../models/perception/weights.js';
import type { Fact } from '../analysis/types.js';
import { confidenceLabel } from './confidence.js';
import { hitEvidence, publicEvidence, rivalsOf, saidOnlyEvidence, type EvidenceMode, type HitEvidence, type Rival } from './hit-evidence.js';
import { saidProbability, spokenCounts, spokenWindow } from './evidence.js';
import type { SegmentsCatalog, VideosCatalog } from '../store/catalog/types.js';
import type { SegmentRow } from '../store/segments.js';
import type { VideoRow } from '../store/videos.js';
import { FILTER_NAMES } from '../tags/registry.js';
import { LIMITS } from '../api/defaults.js';
import type { SpokenQuery } from '../speech/match.js';
import { PICTURE_CHECK, type PictureVerifier } from './picture-check.js';
import { saidFeatures, spokenHits, type SaidFeatures, type SpokenHit, type WordsOf } from '../speech/search.js';

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
   * Those videos' segments, left out inside the vector search (SegmentsCatalog.candidates
   * `exclude`), so that the k candidates are other videos' moments however long the left-out video.
   */
  excludeSegmentIds?: number[];
  /** The query holds a picture or a moment (the seen curve of examples reads its similarity). */
  example?: boolean;
  /** `seen`: the picture alone counts (its facts and embedding; never what is said or written). */
  only?: 'seen';
  /**
   * What is said (src/speech/search.ts): `query` heard in transcripts is *said* evidence, counted
   * in a plain search by the sound-alike rule; with `only`, results are the spoken matches alone
   * (`search --said`).
   */
  spoken?: { query: SpokenQuery; wordsOf: WordsOf; only: boolean };
  /**
   * A picture query's geometric check (src/search/picture-check.ts): the best pre-ranked videos'
   * most similar segments, matched against the picture; a segment whose keyframe holds it (its
   * inliers) is weighed with them. Only for a picture alone (no words).
   */
  verify?: PictureVerifier;
}

/** The deepest a search pages: offset + top_k. */
export const MAX_SEARCH_HITS = LIMITS.maxSearchHits;

/** Videos whose evidence is weighed in full: the best by the cheap pre-ranking, and every spoken match. */
const SHORTLIST = { min: 50, perResult: 3 };

/** How many videos a page of `topK` weighs in full (the best by pre-rank). */
const shortlistDepth = (topK: number) => Math.max(SHORTLIST.min, SHORTLIST.perResult * topK);

/**
 * Hybrid search. Candidates come from the vector index (the picture), the keyword index (words
 * analysis saw or read) and the transcripts (what is said). A segment's pre-rank is its cosine
 * similarity + a keyword bonus (the IDF-weighted share of the query's words among its analysis
 * words); the best-placed videos and every video where the query is said (and counts, by the
 * sound-alike rule) are then weighed in full (src/search/evidence.ts): each kind of evidence gets
 * its own probability and the hit's confidence combines them. Results are ordered by `relevance`
 * (0–1): the same combination, where the seen side is read from the pre-rank (so pictures keep
 * the order their tuned ranking gives them) — one per video (its best moment).
 */
export async function hybridSearch(catalog: SegmentsCatalog, videos: Pick<VideosCatalog, 'byIds'>, input: HybridSearchInput): Promise<SearchResult[]> {
  return (await hybridRun(catalog, videos, input, false)) as SearchResult[];
}

/**
 * A word held by more of the collection's segments than this is too common to list: its matches
 * are not ranked and added to the candidates (ranking all ~72,700 of a common word's matches took
 * ~100 ms at 1M segments, and the 2,000 it kept were the oldest when they tied); it is looked up
 * among the candidates the picture side, the rarer words and what is said found, and weighs as a
 * word held by this many (docs/engine.md, "The keyword side").
 */
export const KEYWORD_LIST_LIMIT = 2000;

/**
 * The search, or (`bestOnly`) each video's best moment by pre-rank, what the seen margin is measured
 * against. With a filter, the margin is measured against the whole collection (the same run without
 * the filter): a filter keeps results out, it does not change how clear of every other video a
 * moment stands — so a moment's confidence is the same with and without a filter.
 */
async function hybridRun(catalog: SegmentsCatalog, videos: Pick<VideosCatalog, 'byIds'>, input: HybridSearchInput, bestOnly: boolean): Promise<SearchResult[] | Map<string, Rival>> {
  const segments = catalog.forSearch?.() ?? catalog; // one catch-up with other writers per search
  const spoken = input.only === 'seen' ? undefined : input.spoken;
  const heard = spoken ? await spokenHits(segments, input.collectionId, spoken.query, spoken.wordsOf, input.filter) : new Map<number, SpokenHit>();
  if (spoken?.only) return spokenSearch(segments, videos, input, heard, spoken.query);
  // Enough candidates that top_k distinct videos survive the per-video grouping (a left-out video's
  // segments are left out inside the search, not counted here).
  const k = Math.min(4096, Math.max(200, input.topK * 20));

  // Keyword side: which of the query's (selective) words each segment's analysis words hold. A word
  // held by at most KEYWORD_LIST_LIMIT segments of the collection is listed whole (its matches join
  // the candidates); a commoner one is looked up among the candidates only (below).
  const words = queryTerms(input.text);
  const queryWords = words.length;
  const terms = await segments.selectiveTerms(words);
  const lists = await segments.termLists(input.collectionId, terms, KEYWORD_LIST_LIMIT, input.filter);
  const common = terms.filter((t) => lists.get(t) == null);
  const matches = new Map<string, number[]>();
  for (const t of terms) matches.set(t, lists.get(t)?.ids ?? []);
  // How rare a word is in the collection, whatever the filter: a filter keeps results out, it does
  // not change what a word is worth to the ones it keeps. A common word counts as held by the limit.
  const total = Math.max(1, await segments.countForCollection(input.collectionId));
  const idf = new Map(terms.map((t) => [t, Math.log(1 + total / (1 + (lists.get(t)?.total ?? KEYWORD_LIST_LIMIT)))]));
  const idfSum = [...idf.values()].reduce((a, b) => a + b, 0);
  const keyword = new Map<number, number>();
  const addMatches = (t: string, ids: number[]) => {
    for (const id of ids) keyword.set(id, (keyword.get(id) ?? 0) + (idf.get(t) ?? 0) / (idfSum || 1));
  };
  for (const [t, ids] of matches) addMatches(t, ids);

  // What is said, where it counts: the sound-alike rule (src/search/evidence.ts spokenCounts).
  const said = new Map<number, { hit: SpokenHit; features: SaidFeatures }>();
  if (spoken) {
    for (const [id, hit] of heard) {
      const features = saidFeatures(hit, spoken.query);
      if (spokenCounts(features)) said.set(id, { hit, features });
    }
  }

  // Vector side: the k nearest segments, the keyword hits and the spoken ones, with their
  // similarities — exact, or approximate within a margin (the in-memory index), re-scored below
  // where they can matter.
  //
  // Only the videos the shortlist weighs can be results: once the nearest hold that many videos, a
  // segment further down can place no other video among them (its pre-rank is its similarity,
  // below theirs; keyword and spoken matches come as `also` whatever k). So the catalog may stop
  // reading there (`videos`; pgvector reads about half the rows at 1M) — except where more of the
  // candidates count: every video is weighed (min_confidence), a common word is looked up among
  // them, or the picture check reads their frames. The left-out videos are counted on top, in
  // case a catalog sees their segments.
  const enough = input.minConfidence === undefined && !input.verify && common.length === 0 ? shortlistDepth(input.topK) + (input.excludeVideoIds?.size ?? 0) : undefined;
  const scored = await segments.candidates(input.collectionId, input.dim, input.queryVector, k, input.filter, [...new Set([...keyword.keys(), ...said.keys()])], input.excludeSegmentIds, enough);
  if (common.length) {
    const among = await segments.termsAmong(input.collectionId, common, [...scored.keys()], input.filter);
    for (const [t, ids] of among) {
      matches.set(t, ids);
      addMatches(t, ids);
    }
  }
  const videoOf = await segments.videosOf(input.collectionId, [...scored.keys()]);
  const videoOfKept = (id: number): string | undefined => {
    const v = videoOf.get(id);
    return v === undefined || input.excludeVideoIds?.has(v) ? undefined : v;
  };
  const bonus = (id: number) => SEARCH_WEIGHTS.keyword * (keyword.get(id) ?? 0);
  await exactWhereItMatters(segments, input, scored, videoOfKept, bonus);

  // Pre-rank: each video's best segment by similarity + keyword bonus.
  const bestPerVideo = new Map<string, { segmentId: number; relevance: number }>();
  for (const [segmentId, s] of scored) {
    const videoId = videoOfKept(segmentId);
    if (videoId === undefined) continue;
    const r = s.similarity + bonus(segmentId);
    const best = bestPerVideo.get(videoId);
    if (!best || r > best.relevance || (r === best.relevance && segmentId < best.segmentId)) bestPerVideo.set(videoId, { segmentId, relevance: r });
  }
  // Weighed in full: the best by pre-rank (all of them with min_confidence), and each video's
  // segments where the query is said (and counts). Only as many videos are put in order as are used.
  const depth = input.minConfidence === undefined ? shortlistDepth(input.topK) : bestPerVideo.size;
  const preRanked = bestFirst([...bestPerVideo.entries()], Math.max(depth, PICTURE_CHECK.videos), (a, b) => b[1].relevance - a[1].relevance || a[1].segmentId - b[1].segmentId);
  const weigh = new Map<string, Set<number>>();
  for (const [videoId, best] of preRanked.slice(0, depth)) weigh.set(videoId, new Set([best.segmentId]));
  for (const id of said.keys()) {
    const videoId = videoOfKept(id);
    if (videoId === undefined || !scored.has(id)) continue;
    const set = weigh.get(videoId) ?? new Set<number>();
    set.add(id);
    weigh.set(videoId, set);
  }
  const example = input.example === true && !input.text.trim();
  const mode: EvidenceMode = { example, seenOnly: input.only === 'seen', pictureChecked: example && input.verify !== undefined };
  const inliers = mode.pictureChecked && input.verify ? await checkPictures(segments, input.verify, preRanked, scored, videoOfKept) : new Map<number, number>();
  for (const [id] of inliers) weigh.get(videoOfKept(id)!)?.add(id);
  // Everything weighed is scored exactly (the pre-rank may have read an approximation).
  const weighedIds = [...weigh.values()].flatMap((ids) => [...ids]);
  const inexact = weighedIds.filter((id) => (scored.get(id)?.margin ?? 0) > 0);
  if (inexact.length) {
    const exact = await segments.similarities(input.dim, inexact, input.queryVector);
    for (const id of inexact) {
      const sim = exact.get(id);
      if (sim === undefined) scored.delete(id);
      else scored.set(id, { similarity: sim, margin: 0 });
    }
  }
  const rows = await segments.byIds(weighedIds.filter((id) => scored.has(id)));
  // Each video's best moment after exact re-scoring, and for each the best of another video (the seen margin).
  const bestMoment = new Map<string, Rival>();
  for (const [segmentId, s] of scored) {
    const videoId = videoOfKept(segmentId);
    if (videoId === undefined) continue;
    const r = { similarity: s.similarity, preRank: s.similarity + bonus(segmentId) };
    const b = bestMoment.get(videoId);
    if (!b || r.preRank > b.preRank) bestMoment.set(videoId, r);
  }
  if (bestOnly) return bestMoment;
  const filtered = Object.keys(input.filter).length > 0 && !example;
  const rivals = rivalsOf(filtered ? ((await hybridRun(catalog, videos, { ...input, filter: {} }, true)) as Map<string, Rival>) : bestMoment);
  const weighed: Array<{ videoId: string; row: SegmentRow; ev: HitEvidence; relevance: number }> = [];
  for (const [videoId, ids] of weigh) {
    let best: { row: SegmentRow; ev: HitEvidence; relevance: number } | undefined;
    for (const id of ids) {
      const row = rows.get(id);
      if (!row) continue; // deleted since the candidates were read
      const matched = terms.filter((t) => matches.get(t)?.includes(id));
      const relevance = (scored.get(id)?.similarity ?? 0) + bonus(id);
      const ev = hitEvidence({ similarity: scored.get(id)?.similarity ?? 0, preRank: relevance, facts: factsOf(row.facts_json), matched, idf, said: said.get(id), description: row.description, inliers: inliers.get(id), rival: rivals.get(videoId), queryWords }, mode);
      if (!best || ev.rank > best.ev.rank || (ev.rank === best.ev.rank && row.id < best.row.id)) best = { row, ev, relevance };
    }
    if (best) weighed.push({ videoId, ...best });
  }
  weighed.sort((a, b) => b.ev.rank - a.ev.rank || b.relevance - a.relevance || a.row.id - b.row.id);

  const shown = weighed.filter((w) => input.minConfidence === undefined || w.ev.confidence >= input.minConfidence).slice(0, input.topK);
  // The page's videos in one lookup (one statement on a database server, not one per result).
  const videoRows = await videos.byIds(shown.map((w) => w.videoId));
  const out: SearchResult[] = [];
  for (const { videoId, row, ev } of shown) {
    const video = videoRows.get(videoId);
    out.push(resultOf(videoId, row, video, ev, input.explain));
  }
  return out;
}

/**
 * The first `n` of `items` in the order of `cmp` (a total order: the same as sorting them all and
 * keeping `n`), without sorting the rest: a best-first list of at most `n`, which most items
 * leave at its last place.
 */
export function bestFirst<T>(items: T[], n: number, cmp: (a: T, b: T) => number): T[] {
  if (n >= items.length) return items.sort(cmp);
  const top: T[] = [];
  if (n <= 0) return top;
  for (const item of items) {
    if (top.length === n && cmp(item, top[n - 1]) >= 0) continue;
    let lo = 0;
    let hi = top.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cmp(top[mid], item) <= 0) lo = mid + 1;
      else hi = mid;
    }
    top.splice(lo, 0, item);
    if (top.length > n) top.pop();
  }
  return top;
}

/**
 * The picture check's candidates: the best {@link PICTURE_CHECK}.videos videos by pre-rank, each
 * with its {@link PICTURE_CHECK}.framesPerVideo most similar segments; segment id → inliers.
 */
async function checkPictures(
  segments: SegmentsCatalog,
  verify: PictureVerifier,
  preRanked: Array<[string, { segmentId: number }]>,
  scored: Map<number, { similarity: number }>,
  videoOfKept: (id: number) => string | undefined,
): Promise<Map<number, number>> {
  const top = new Set(preRanked.slice(0, PICTURE_CHECK.videos).map(([v]) => v));
  const byVideo = new Map<string, Array<{ id: number; similarity: number }>>();
  for (const [id, s] of scored) {
    const v = videoOfKept(id);
    if (v === undefined || !top.has(v)) continue;
    const list = byVideo.get(v) ?? [];
    list.push({ id, similarity: s.similarity });
    byVideo.set(v, list);
  }
  const chosen = new Map<string, number[]>();
  for (const [v] of preRanked.slice(0, PICTURE_CHECK.videos)) {
    const list = (byVideo.get(v) ?? []).sort((a, b) => b.similarity - a.similarity || a.id - b.id);
    chosen.set(v, list.slice(0, PICTURE_CHECK.framesPerVideo).map((x) => x.id));
  }
  const rows = await segments.byIds([...chosen.values()].flat());
  return verify(
    [...chosen].map(([videoId, ids]) => ({
      videoId,
      segments: ids.flatMap((id) => {
        const row = rows.get(id);
        return row ? [{ id, idx: row.idx }] : [];
      }),
    })),
  );
}

/** A result as the API gives it: its moment (a spoken match's words inside it), evidence by kind. */
function resultOf(videoId: string, row: SegmentRow, video: VideoRow | undefined, ev: HitEvidence, explain: boolean): SearchResult {
  // A moment never runs past the end of its video.
  const duration = video?.duration ?? undefined;
  let start = row.start;
  let end = duration ? Math.min(row.end, duration) : row.end;
  const heard = ev.heard;
  if (heard) {
    // Every matched word inside the window, a little air that never crosses a cut.
    const w = spokenWindow({ start: heard.said.start, end: heard.said.end }, cutsOf(video?.tags_json), duration);
    start = w.start;
    end = w.end;
  }
  const result: SearchResult = {
    video_id: videoId,
    similarity: round(ev.similarity),
    relevance: round(ev.rank),
    confidence: round(ev.confidence, 3),
    confidence_label: confidenceLabel(ev.confidence),
    start: round(start),
    end: round(Math.max(start, end)),
    filename: video?.filename ?? '',
    thumbnail_url: thumbnailUrl(videoId, row.start),
    kinds: ev.kinds,
    evidence: publicEvidence(ev, explain),
  };
  if (heard) result.said = heard.said;
  const tags = momentTags(row.tags_json);
  if (tags) result.tags = tags;
  if (explain) {
    result.description = row.description;
    if (ev.matchedWords.length) result.matched_words = ev.matchedWords;
    result.confidence_reason = ev.reason;
  }
  return result;
}

/**
 * `search --said`: the spoken matches alone, best first, one per video (its best match), each
 * window holding its words; the confidence is the said curve's (no sound-alike rule: the user
 * asked for what is said).
 */
async function spokenSearch(segments: SegmentsCatalog, videos: Pick<VideosCatalog, 'byIds'>, input: HybridSearchInput, heard: Map<number, SpokenHit>, query: SpokenQuery): Promise<SearchResult[]> {
  const videoOf = await segments.videosOf(input.collectionId, [...heard.keys()]);
  const best = new Map<string, { id: number; hit: SpokenHit }>();
  for (const [id, hit] of heard) {
    const v = videoOf.get(id);
    if (v === undefined || input.excludeVideoIds?.has(v)) continue;
    const b = best.get(v);
    if (!b || hit.score > b.hit.score || (hit.score === b.hit.score && id < b.id)) best.set(v, { id, hit });
  }
  const ranked = [...best.entries()]
    .map(([videoId, b]) => ({ videoId, ...b, features: saidFeatures(b.hit, query) }))
    .map((x) => ({ ...x, p: saidProbability(x.features) }))
    .filter((x) => input.minConfidence === undefined || x.p >= input.minConfidence)
    .sort((a, b) => b.hit.score - a.hit.score || a.id - b.id)
    .slice(0, input.topK);
  const ids = ranked.map((x) => x.id);
  const [rows, sims] = await Promise.all([segments.byIds(ids), segments.similarities(input.dim, ids, input.queryVector)]);
  const videoRows = await videos.byIds(ranked.map((x) => x.videoId));
  const out: SearchResult[] = [];
  for (const { videoId, id, hit, features } of ranked) {
    const row = rows.get(id);
    if (!row) continue;
    const ev = saidOnlyEvidence(sims.get(id) ?? 0, { hit, features });
    out.push(resultOf(videoId, row, videoRows.get(videoId), ev, input.explain));
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
    // The topK-th largest (a numeric sort of a typed array: the same number, a fraction of the work).
    const sorted = Float64Array.from(lower.values()).sort();
    if (sorted.length >= input.topK) threshold = sorted[sorted.length - input.topK];
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

/** The times of a video's cuts (its tags' `cuts`), for windows that respect shot boundaries. */
function cutsOf(json: string | null | undefined): number[] {
  if (!json) return [];
  const tags = JSON.parse(json) as { cuts?: Array<{ t?: unknown }> };
  return (tags.cuts ?? []).map((c) => c.t).filter((t): t is number => typeof t === 'number');
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

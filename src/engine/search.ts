import type { SearchResult } from '../api/types.js';
import type { SegmentsRepo, TagFilter } from '../store/segments.js';
import type { VideosRepo } from '../store/videos.js';

/** Reciprocal-rank-fusion constant (Cormack et al. 2009); 60 is the customary value. */
const RRF_K = 60;

/** Words that carry no content for keyword matching; the vector side still sees them. */
const STOPWORDS = new Set(
  'a an the of on in at to and or with for from by is are was were be this that these those it its into over under some any shot video clip footage scene showing shows'.split(
    ' ',
  ),
);

/** The content words of a query: lower-cased, de-duplicated, stopwords out. */
export function queryTerms(text: string): string[] {
  const words = (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 1 && !STOPWORDS.has(w));
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
  filter: TagFilter;
  explain: boolean;
}

/**
 * Hybrid search: vector KNN over the collection's segments fused with FTS5 keyword ranks by
 * reciprocal rank fusion, then the best segment per video. `similarity` is the cosine similarity
 * of that segment (a number with a meaning of its own); the order follows the fused score.
 */
export function hybridSearch(segments: SegmentsRepo, videos: VideosRepo, input: HybridSearchInput): SearchResult[] {
  // Enough candidates that top_k distinct videos survive the per-video grouping.
  const k = Math.min(4096, Math.max(200, input.topK * 20));
  const vectorHits = segments.nearest(input.collectionId, input.dim, input.queryVector, k, input.filter);
  const match = termsToFts(segments.selectiveTerms(queryTerms(input.text)));
  const keywordHits = match ? segments.keyword(input.collectionId, match, 200, input.filter) : [];

  const fused = new Map<number, { score: number; similarity?: number }>();
  vectorHits.forEach((h, i) => fused.set(h.segmentId, { score: 1 / (RRF_K + i + 1), similarity: h.similarity }));
  for (const h of keywordHits) {
    const entry = fused.get(h.segmentId) ?? { score: 0 };
    entry.score += 1 / (RRF_K + h.rank);
    fused.set(h.segmentId, entry);
  }

  const rows = segments.byIds([...fused.keys()]);
  const bestPerVideo = new Map<string, { segmentId: number; score: number }>();
  for (const [segmentId, { score }] of fused) {
    const row = rows.get(segmentId);
    if (!row) continue;
    const best = bestPerVideo.get(row.video_id);
    if (!best || score > best.score) bestPerVideo.set(row.video_id, { segmentId, score });
  }

  const ranked = [...bestPerVideo.entries()].sort((a, b) => b[1].score - a[1].score).slice(0, input.topK);
  const missing = ranked.map(([, b]) => b.segmentId).filter((id) => fused.get(id)?.similarity === undefined);
  const exact = segments.similarities(input.dim, missing, input.queryVector);

  return ranked.map(([videoId, best]) => {
    const row = rows.get(best.segmentId)!;
    const video = videos.byId(videoId);
    const similarity = fused.get(best.segmentId)?.similarity ?? exact?.get(best.segmentId) ?? 0;
    const result: SearchResult = {
      video_id: videoId,
      similarity: round(similarity),
      start: round(row.start),
      end: round(row.end),
      filename: video?.filename ?? '',
    };
    if (input.explain) result.description = row.description;
    return result;
  });
}

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

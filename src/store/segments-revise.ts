/**
 * `reviseForVideo` (src/store/catalog/types.ts SegmentsCatalog), the same on every backend: the
 * video's segments and vectors as stored, each revision applied, written back with the backend's
 * own `replaceForVideo` (one transaction of its own; inside the caller's, the read and the write
 * are one).
 */
import type { NewSegment, SegmentRevision, SegmentRow } from './segments.js';

interface Segments {
  listForVideo(videoId: string): Promise<SegmentRow[]>;
  vectors(dim: number, ids: number[]): Promise<Map<number, Float32Array>>;
  replaceForVideo(videoId: string, collectionId: string, dim: number, segments: NewSegment[]): Promise<void>;
}

const parsed = (json: string | null): Record<string, unknown> | undefined => (json ? (JSON.parse(json) as Record<string, unknown>) : undefined);

export async function reviseSegments(segments: Segments, videoId: string, collectionId: string, dim: number, revisions: SegmentRevision[]): Promise<void> {
  const rows = await segments.listForVideo(videoId);
  const byIdx = new Map(revisions.map((r) => [r.idx, r]));
  const missing = rows.find((r) => !byIdx.has(r.idx));
  if (missing) throw new Error(`reviseForVideo: no revision for segment ${missing.idx} of ${videoId}`);
  const extra = revisions.find((r) => !rows.some((row) => row.idx === r.idx));
  if (extra) throw new Error(`reviseForVideo: ${videoId} has no segment ${extra.idx}`);
  const vectors = await segments.vectors(dim, rows.map((r) => r.id));
  const next = rows.map((row): NewSegment => {
    const r = byIdx.get(row.idx)!;
    const vector = r.vector ?? vectors.get(row.id);
    if (!vector) throw new Error(`reviseForVideo: segment ${row.idx} of ${videoId} has no vector of ${dim} dimensions`);
    const details = r.details ?? parsed(row.details_json);
    const facts = r.facts ?? parsed(row.facts_json);
    const tags = r.tags ?? parsed(row.tags_json);
    return {
      idx: row.idx,
      start: row.start,
      end: row.end,
      description: r.description ?? row.description,
      keywords: r.keywords,
      ...(details ? { details } : {}),
      ...(facts ? { facts } : {}),
      ...(tags ? { tags } : {}),
      ...(row.phash ? { phash: row.phash } : {}),
      vector,
    };
  });
  await segments.replaceForVideo(videoId, collectionId, dim, next);
}

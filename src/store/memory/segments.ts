import { insertBest } from '../vector-index.js';
import { filterEntries, labelsOf, matches as labelsMatch } from '../labels.js';
import type { NewSegment, SegmentKeyRow, SegmentRevision, SegmentRow, SegmentsCatalog, SignatureRow, SignaturesCatalog, TagFilter, TermList } from '../catalog/types.js';
import { nowIso } from '../db.js';
import type { MemoryStore, SegmentRecord } from './state.js';
import { tokens } from './words.js';
import { reviseSegments } from '../segments-revise.js';

/*
 * Segments and signatures of an in-memory store (rules: src/store/catalog/types.ts).
 *
 * Vector search is exact: every segment of the collection that matches the filter is scored by
 * cosine similarity (float32 vectors, float64 sums) and the best k kept with memory-index's
 * `insertBest` (ties to the smaller id), so margins are always 0. Keyword search follows the rules
 * of SQLite's FTS5 index (src/store/memory/words.ts), ranked by BM25 as FTS5 ranks.
 */

/** A filter as (kind, label) pairs: every given label must match (src/store/labels.ts, the rule of every backend). */
const filterPairs = filterEntries;

const matches = (s: SegmentRecord, pairs: Array<[string, string]>) => labelsMatch(s.labels, pairs);

function cosine(v: Float32Array, q: Float32Array): number {
  let dot = 0;
  let vv = 0;
  let qq = 0;
  for (let j = 0; j < q.length; j++) {
    dot += v[j] * q[j];
    vv += v[j] * v[j];
    qq += q[j] * q[j];
  }
  const norms = Math.sqrt(vv) * Math.sqrt(qq);
  return norms > 0 ? dot / norms : 0;
}

function checkDim(dim: number): void {
  if (!Number.isInteger(dim) || dim <= 0 || dim > 8192) throw new Error(`bad vector dimension ${dim}`);
}

/** How often the phrase `term` (its tokens in a row) occurs in `doc`. */
function occurrences(doc: string[], term: string[]): number {
  if (term.length === 0) return 0;
  let n = 0;
  for (let i = 0; i + term.length <= doc.length; i++) if (term.every((t, j) => doc[i + j] === t)) n++;
  return n;
}

export class MemorySegmentsCatalog implements SegmentsCatalog {
  constructor(private readonly store: MemoryStore) {}

  private get segments(): Map<number, SegmentRecord> {
    return this.store.state.segments;
  }

  private inCollection(collectionId: string): SegmentRecord[] {
    return [...this.segments.values()].filter((s) => s.row.collection_id === collectionId);
  }

  async reviseForVideo(videoId: string, collectionId: string, dim: number, revisions: SegmentRevision[]): Promise<void> {
    await reviseSegments(this, videoId, collectionId, dim, revisions);
  }

  async replaceForVideo(videoId: string, collectionId: string, dim: number, segments: NewSegment[]): Promise<void> {
    checkDim(dim);
    for (const s of segments) if (s.vector.length !== dim) throw new Error(`segment vector has ${s.vector.length} dims, expected ${dim}`);
    const state = this.store.state;
    this.deleteOf(videoId);
    const json = (v: Record<string, unknown> | undefined) => (v ? JSON.stringify(v) : null);
    for (const s of segments) {
      const id = ++state.lastSegmentId;
      const row: SegmentRow = {
        id,
        video_id: videoId,
        collection_id: collectionId,
        idx: s.idx,
        start: s.start,
        end: s.end,
        description: s.description,
        details_json: json(s.details),
        facts_json: json(s.facts),
        tags_json: json(s.tags),
        labels: labelsOf(s.tags),
        phash: s.phash ?? null,
      };
      state.segments.set(id, { row, vector: Float32Array.from(s.vector), labels: row.labels, tokens: tokens(s.keywords ?? s.description) });
    }
  }

  private deleteOf(videoId: string): void {
    for (const [id, s] of this.segments) if (s.row.video_id === videoId) this.segments.delete(id);
  }

  async deleteForVideo(videoId: string, dim: number): Promise<void> {
    checkDim(dim);
    this.deleteOf(videoId);
  }

  async byIds(ids: number[]): Promise<Map<number, SegmentRow>> {
    const out = new Map<number, SegmentRow>();
    for (const id of ids) {
      const s = this.segments.get(id);
      if (s) out.set(id, { ...s.row });
    }
    return out;
  }

  async listForVideo(videoId: string): Promise<SegmentRow[]> {
    return [...this.segments.values()]
      .filter((s) => s.row.video_id === videoId)
      .sort((a, b) => a.row.idx - b.row.idx || a.row.id - b.row.id)
      .map((s) => ({ ...s.row }));
  }

  async countForCollection(collectionId: string): Promise<number> {
    return this.inCollection(collectionId).length;
  }

  async vectors(dim: number, ids: number[]): Promise<Map<number, Float32Array>> {
    checkDim(dim);
    const out = new Map<number, Float32Array>();
    for (const id of ids) {
      const s = this.segments.get(id);
      if (s && s.vector.length === dim) out.set(id, Float32Array.from(s.vector));
    }
    return out;
  }

  async candidates(collectionId: string, dim: number, query: Float32Array, k: number, filter: TagFilter, also: number[], exclude: number[] = []): Promise<Map<number, { similarity: number; margin: number }>> {
    checkDim(dim);
    const pairs = filterPairs(filter);
    const left = new Set(exclude);
    const best: Array<{ segmentId: number; similarity: number }> = [];
    if (k > 0) {
      for (const s of this.inCollection(collectionId)) {
        if (s.vector.length === dim && matches(s, pairs) && !left.has(s.row.id)) insertBest(best, { segmentId: s.row.id, similarity: cosine(s.vector, query) }, k);
      }
    }
    const out = new Map<number, { similarity: number; margin: number }>();
    for (const h of best) out.set(h.segmentId, { similarity: h.similarity, margin: 0 });
    for (const [id, similarity] of await this.similarities(dim, also.filter((id) => !out.has(id) && !left.has(id)), query)) out.set(id, { similarity, margin: 0 });
    return out;
  }

  async similarities(dim: number, ids: number[], query: Float32Array): Promise<Map<number, number>> {
    checkDim(dim);
    const out = new Map<number, number>();
    for (const id of ids) {
      const s = this.segments.get(id);
      if (s && s.vector.length === dim) out.set(id, cosine(s.vector, query));
    }
    return out;
  }

  async videosOf(collectionId: string, ids: number[]): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    for (const id of ids) {
      const s = this.segments.get(id);
      if (s) out.set(id, s.row.video_id);
    }
    return out;
  }

  async selectiveTerms(terms: string[], maxShare = 0.1, floor = 500): Promise<string[]> {
    const all = [...this.segments.values()];
    const limit = Math.max(floor, all.length * maxShare);
    if (all.length <= limit) return terms;
    return terms.filter((t) => {
      const term = tokens(t);
      return all.filter((s) => occurrences(s.tokens, term) > 0).length <= limit;
    });
  }

  /** Per term, BM25 (k1 1.2, b 0.75, as FTS5) over every segment of the store; best first, then by id. */
  async termMatches(collectionId: string, terms: string[], limit: number, filter: TagFilter = {}): Promise<Map<string, number[]>> {
    const all = [...this.segments.values()];
    const avgLength = all.reduce((n, s) => n + s.tokens.length, 0) / Math.max(1, all.length);
    const pairs = filterPairs(filter);
    const mine = all.filter((s) => s.row.collection_id === collectionId && matches(s, pairs));
    const out = new Map<string, number[]>();
    for (const t of terms) {
      const term = tokens(t);
      const hits: Array<{ id: number; score: number }> = [];
      for (const s of mine) {
        const tf = occurrences(s.tokens, term);
        if (tf > 0) hits.push({ id: s.row.id, score: (tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * s.tokens.length) / (avgLength || 1))) });
      }
      hits.sort((a, b) => b.score - a.score || a.id - b.id);
      out.set(t, hits.slice(0, Math.max(0, limit)).map((h) => h.id));
    }
    return out;
  }

  async termLists(collectionId: string, terms: string[], limit: number, filter: TagFilter = {}): Promise<Map<string, TermList | null>> {
    const out = new Map<string, TermList | null>();
    for (const t of terms) {
      const term = tokens(t);
      let total = 0;
      for (const s of this.segments.values()) if (s.row.collection_id === collectionId && occurrences(s.tokens, term) > 0) total++;
      out.set(t, total > limit ? null : { total, ids: (await this.termMatches(collectionId, [t], limit, filter)).get(t)! });
    }
    return out;
  }

  async termsAmong(collectionId: string, terms: string[], ids: number[], filter: TagFilter = {}): Promise<Map<string, number[]>> {
    const pairs = filterPairs(filter);
    const mine = [...new Set(ids)].map((id) => this.segments.get(id)).filter((s): s is SegmentRecord => s !== undefined && s.row.collection_id === collectionId && matches(s, pairs));
    return new Map(terms.map((t) => [t, mine.filter((s) => occurrences(s.tokens, tokens(t)) > 0).map((s) => s.row.id)]));
  }
}

export class MemorySignaturesCatalog implements SignaturesCatalog {
  constructor(private readonly store: MemoryStore) {}

  async put(videoId: string, version: number, frames: number, data: Buffer): Promise<void> {
    this.store.state.signatures.set(videoId, { video_id: videoId, version, frames, data: Buffer.from(data), updated_at: nowIso() });
  }

  async delete(videoId: string): Promise<void> {
    this.store.state.signatures.delete(videoId);
  }

  async forCollection(collectionId: string): Promise<SignatureRow[]> {
    const state = this.store.state;
    return [...state.videos.values()]
      .filter((v) => v.collection_id === collectionId && state.signatures.has(v.id))
      .sort((a, b) => a.seq - b.seq)
      .map((v) => {
        const s = state.signatures.get(v.id)!;
        return { video_id: s.video_id, version: s.version, frames: s.frames, data: Buffer.from(s.data) };
      });
  }

  /** By video id in byte order (as SQLite's BINARY collation), then idx. */
  async segmentKeys(collectionId: string): Promise<SegmentKeyRow[]> {
    return [...this.store.state.segments.values()]
      .filter((s) => s.row.collection_id === collectionId)
      .map(({ row }) => ({ video_id: row.video_id, idx: row.idx, start: row.start, end: row.end, phash: row.phash }))
      .sort((a, b) => Buffer.compare(Buffer.from(a.video_id), Buffer.from(b.video_id)) || a.idx - b.idx);
  }
}

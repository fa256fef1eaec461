/** Search (by text, picture, moment or a mix) and text embeddings. */
import { ConflictError, ValidationError } from '../api/errors.js';
import type { Principal } from '../api/principal.js';
import type { EncodeTextRequest, EncodeTextResponse, SearchRequest, SearchResponse } from '../api/types.js';
import { LIMITS } from '../api/defaults.js';
import { readsAsEnglish } from '../analysis/describe.js';
import { DEFAULT_EMBEDDER_ID } from '../embedders/registry.js';
import { SEARCH_WEIGHTS } from '../models/perception/weights.js';
import { NO_STRONG_MATCH } from '../search/confidence.js';
import type { CollectionRow } from '../store/collections.js';
import { tagFilterOf } from '../tags/registry.js';
import { combineQueryVectors, embedImageQuery, hasImage } from '../search/examples.js';
import { hybridSearch, MAX_SEARCH_HITS, type HybridSearchInput } from '../search/hybrid.js';
import { spokenQuery } from '../speech/match.js';
import { pictureVerifier } from '../search/picture-check.js';
import { storedKeyframes } from './keyframe-source.js';
import { loadTranscript } from '../speech/store.js';
import type { SpokenWord } from '../speech/types.js';
import { requireText } from '../api/require-text.js';
import type { Library } from './library.js';

/**
 * Text longer than this is cut before any tokenizer sees it: far more than any embedder's context
 * holds (USE lite reads 128 tokens, CLIP 77), so the cut changes no vector, and a megabyte-long
 * query costs no more than a short one. The answer says `truncated: true` (docs/api.md).
 */
export const MAX_TEXT_CHARS = 16_384;

export function boundText(text: string): { text: string; cut: boolean } {
  if (text.length <= MAX_TEXT_CHARS) return { text, cut: false };
  // Never split a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(text[MAX_TEXT_CHARS - 1]) ? MAX_TEXT_CHARS - 1 : MAX_TEXT_CHARS;
  return { text: text.slice(0, end), cut: true };
}

export interface SearchOptions {
  explain?: boolean;
  signal?: AbortSignal;
  /**
   * A picture query's geometric check of the top candidates' keyframes (src/search/picture-check.ts);
   * on unless false (the eval and the e2e measure the embedding alone with false).
   */
  pictureCheck?: boolean;
}

/**
 * What the API and the CLI need of search: a search, and a text's embedding. SearchService runs
 * them here; SearchThreads (src/runtime/search-threads.ts) runs searches on threads of their own.
 */
export interface SearchPort {
  search(p: Principal, collectionIdOrName: string, req: SearchRequest, opts?: SearchOptions): Promise<SearchResponse>;
  encodeText(req: EncodeTextRequest & { model?: string }): Promise<EncodeTextResponse>;
}

export class SearchService implements SearchPort {
  constructor(private readonly lib: Library) {}

  /**
   * Search by text, by example (a picture: `image_base64`/`image_url`, or locally `image_path`; a
   * moment: `like {video_id, t?}`), or both: each given part becomes a unit vector in the
   * collection's space and the query is their normalised mean (each counts the same). The keyword
   * bonus comes from the text alone. `like` leaves its own video out. Pages: `offset` + `top_k`
   * reach at most MAX_SEARCH_HITS. The request has passed its schema (src/api/schemas.ts).
   */
  async search(p: Principal, collectionIdOrName: string, req: SearchRequest, opts: SearchOptions = {}): Promise<SearchResponse> {
    const { lib } = this;
    const collection = await lib.collection(p, collectionIdOrName);
    const saidGiven = req.said !== undefined && req.said !== null;
    const seenGiven = req.seen !== undefined && req.seen !== null;
    const textGiven = (req.text !== undefined && req.text !== null) || saidGiven || seenGiven;
    const imageGiven = hasImage(req);
    if (saidGiven && (req.text != null || seenGiven || imageGiven || req.like)) {
      throw new ValidationError([{ loc: ['body', 'said'], msg: 'said searches the transcripts alone: give it without text, seen words, a picture or a moment (text already matches what is said)', type: 'value_error' }]);
    }
    if (seenGiven && req.text != null) {
      throw new ValidationError([{ loc: ['body', 'seen'], msg: 'seen words are the text of a picture-only search: give them instead of text', type: 'value_error' }]);
    }
    const text = saidGiven
      ? requireText(req.said, ['body', 'said'])
      : seenGiven
        ? requireText(req.seen, ['body', 'seen'])
        : textGiven
          ? requireText(req.text, ['body', 'text'])
          : '';
    const topK = req.top_k ?? LIMITS.topK.default;
    const offset = req.offset ?? 0;
    if (offset + topK > MAX_SEARCH_HITS) {
      throw new ValidationError([{ loc: ['body', 'offset'], msg: `offset + top_k may reach at most ${MAX_SEARCH_HITS} results`, type: 'value_error.number.not_le' }]);
    }
    const embedder = lib.embedder(collection.model);
    const parts: Float32Array[] = [];
    const exclude = new Set<string>();
    let excludeSegmentIds: number[] | undefined;
    // The moment first: a wrong video id fails before any model loads.
    if (req.like) {
      const { vector, videoId, segmentIds } = await this.likeVector(p, collection, req.like);
      parts.push(vector);
      exclude.add(videoId);
      excludeSegmentIds = segmentIds;
    }
    const bounded = boundText(text);
    let truncated = false;
    if (textGiven) {
      const t = await lib.textEncoder.embedText(embedder.id, bounded.text);
      parts.push(t.vector);
      truncated = t.truncated;
    }
    let verify: HybridSearchInput['verify'];
    if (imageGiven) {
      await embedder.load();
      const { vector, frame } = await embedImageQuery(req, embedder, await lib.analyzersFor(embedder), { allowPath: true, fetchPolicy: lib.fetchPolicy, signal: opts.signal });
      parts.push(vector);
      if (opts.pictureCheck !== false) verify = pictureVerifier(frame, storedKeyframes(lib.blobs));
    }
    const all = await hybridSearch(lib.catalog.segments, lib.catalog.videos, {
      collectionId: collection.id,
      dim: collection.dim,
      queryVector: parts.length === 1 ? parts[0] : combineQueryVectors(parts),
      text: bounded.text,
      topK: offset + topK,
      // Kind → label of the filterable tag kinds given (src/tags/registry.ts).
      filter: tagFilterOf(req),
      explain: opts.explain ?? false,
      minConfidence: req.min_confidence ? req.min_confidence : undefined,
      excludeVideoIds: exclude,
      excludeSegmentIds,
      example: imageGiven || Boolean(req.like),
      only: seenGiven ? 'seen' : undefined,
      spoken: seenGiven ? undefined : this.spokenInput(textGiven ? bounded.text : '', saidGiven),
      verify,
    });
    const results = all.slice(offset);
    const warnings: string[] = [];
    // On what the model reads: the whole of a 60 MB query held the event loop for 40 s.
    const script = textGiven ? uncoveredScript(bounded.text) : undefined;
    if (script) warnings.push(`the ${collection.model} text model reads English: a query in ${script} script matches poorly; try English words`);
    if (bounded.cut || truncated) warnings.push(`the query was cut to what the model reads (${bounded.cut ? `${MAX_TEXT_CHARS} characters` : 'its context'})`);
    // Every search asks whether videos still wait (cheap: the waiting ones only); the full counts only when some do.
    if ((await lib.catalog.videos.countWaiting(collection.id)) > 0) {
      const counts = await lib.catalog.videos.countsByStatus(collection.id);
      const waiting = counts.uploaded + counts.processing;
      if (waiting > 0) warnings.push(`${waiting} video${waiting === 1 ? ' is' : 's are'} still processing: results cover the ${counts.processed} processed`);
    }
    if (results.length > 0 && results.every((r) => (r.confidence ?? 0) < SEARCH_WEIGHTS.mediumConfidence)) {
      warnings.push(NO_STRONG_MATCH);
    }
    const out: SearchResponse = { results, model: collection.model };
    if (offset > 0) out.offset = offset;
    // Another page exists when this one is full and the cap is not reached.
    if (all.length === offset + topK && offset + topK < MAX_SEARCH_HITS) out.next_offset = offset + topK;
    if (bounded.cut || truncated) out.truncated = true;
    if (warnings.length) out.warnings = warnings;
    return out;
  }

  /** What is said counts in a text search (and alone with `said`): the query as sounds, and the transcripts by video. */
  private spokenInput(text: string, only: boolean): HybridSearchInput['spoken'] {
    const query = text ? spokenQuery(text) : undefined;
    if (!query) return undefined;
    const memo = new Map<string, Promise<SpokenWord[] | undefined>>();
    const wordsOf = (videoId: string) => {
      let got = memo.get(videoId);
      if (!got) memo.set(videoId, (got = loadTranscript(this.lib.blobs, videoId).then((t) => t?.words)));
      return got;
    };
    return { query, wordsOf, only };
  }

  /** A moment as a query: the stored vector of the segment at `t`, or the video's mean vector. */
  private async likeVector(p: Principal, collection: CollectionRow, like: { video_id: string; t?: number }): Promise<{ vector: Float32Array; videoId: string; segmentIds: number[] }> {
    const { lib } = this;
    const t = like.t ?? undefined;
    const v = await lib.video(p, like.video_id);
    const from = v.collection_id === collection.id ? collection : (await lib.catalog.collections.byId(v.collection_id))!;
    if (from.model !== collection.model || from.dim !== collection.dim) {
      throw new ValidationError([{ loc: ['body', 'like', 'video_id'], msg: `is in a collection made with ${from.model}; this one uses ${collection.model}`, type: 'value_error.model' }]);
    }
    const segs = await lib.catalog.segments.listForVideo(v.id);
    if (segs.length === 0) throw new ConflictError(`video ${v.id} has no segments to search with yet (status ${v.status})`);
    const chosen = t === undefined ? segs : [segs.find((s) => t >= s.start && t < s.end) ?? segs.reduce((best, s) => (Math.abs(s.start - t) < Math.abs(best.start - t) ? s : best))];
    const vectors = [...(await lib.catalog.segments.vectors(from.dim, chosen.map((s) => s.id))).values()];
    if (vectors.length === 0) throw new ConflictError(`video ${v.id} has no stored vectors`);
    return { vector: vectors.length === 1 ? vectors[0] : combineQueryVectors(vectors), videoId: v.id, segmentIds: segs.map((s) => s.id) };
  }

  async encodeText(req: EncodeTextRequest & { model?: string }): Promise<EncodeTextResponse> {
    const text = requireText(req.text, ['body', 'text']);
    const embedder = this.lib.embedder(req.model ?? DEFAULT_EMBEDDER_ID, ['body', 'model']);
    const bounded = boundText(text);
    const { vector, truncated } = await this.lib.textEncoder.embedText(embedder.id, bounded.text);
    return { embedding: Array.from(vector), model: embedder.id, dim: embedder.dim, truncated: truncated || bounded.cut };
  }
}

/**
 * The name of the script most of a query's letters are in, when it is not one the text models
 * read (they read English: Latin script); undefined when the query is mostly Latin letters.
 */
export function uncoveredScript(text: string): string | undefined {
  const letters = text.match(/\p{L}/gu) ?? [];
  if (letters.length === 0 || readsAsEnglish(text)) return undefined;
  const scripts = ['Han', 'Hiragana', 'Katakana', 'Hangul', 'Cyrillic', 'Greek', 'Arabic', 'Hebrew', 'Devanagari', 'Thai'];
  let best = 'a non-Latin';
  let most = 0;
  for (const name of scripts) {
    const n = letters.filter((c) => new RegExp(`\\p{Script=${name}}`, 'u').test(c)).length;
    if (n > most) {
      most = n;
      best = name === 'Hiragana' || name === 'Katakana' ? 'Japanese' : name === 'Han' ? 'Chinese/Japanese (Han)' : name;
    }
  }
  return best;
}

/**
 * Query text → vector, by embedder id: the seam the engine's `search` and `encodeText` use.
 *
 * - `InProcessTextEncoder` runs the embedder on the calling thread (the one-shot CLI: a thread
 *   pool would only add start-up).
 * - `TextEncoderPool` (text-encoder-pool.ts) runs it on worker threads (the server).
 * - `CachedTextEncoder` puts an LRU cache of query embeddings in front of either.
 *
 * The Embedder interface stays as it is: these wrap it.
 */
import type { Embedder, TextEmbedding } from './types.js';

export interface QueryTextEncoder {
  /** The embedding of `text` by the embedder registered as `embedderId`. */
  embedText(embedderId: string, text: string): Promise<TextEmbedding>;
  /** Frees what it holds (threads, caches); later calls fail. */
  close(): Promise<void>;
}

/**
 * The form a query is encoded (and cached) in: trimmed, every run of whitespace (spaces, tabs,
 * newlines) one space. Not lower-cased: Universal Sentence Encoder's tokenizer keeps case (its
 * vocabulary has "Dog" and "dog"); CLIP's lower-cases anyway.
 */
export function normalizeQueryText(text: string): string {
  return text.trim().replace(/\s+/gu, ' ');
}

/**
 * Embeds on this thread through `embedderFor` (the registry by default). Only `embedText` is called,
 * as on the pool's threads: it loads what text needs (for the perception tier the text model alone,
 * not the image analyzers and tfjs a one-shot `vidembed search` would otherwise load for nothing).
 */
export class InProcessTextEncoder implements QueryTextEncoder {
  constructor(private readonly embedderFor: (id: string) => Embedder) {}

  async embedText(embedderId: string, text: string): Promise<TextEmbedding> {
    return this.embedderFor(embedderId).embedText(text);
  }

  async close(): Promise<void> {}
}

export interface TextCacheStats {
  entries: number;
  hits: number;
  misses: number;
}

/**
 * An LRU cache of query embeddings in front of another encoder, keyed by embedder id and the
 * normalised text, bounded by entries. The inner encoder is given the normalised text too, so a
 * query's vector does not depend on whether it was cached. `truncated` is kept with the vector.
 * Concurrent misses of one key share one encoding. Texts longer than `maxKeyChars` are encoded
 * but not kept (a query that long rarely repeats, and 10,000 of them would hold 300 MB of keys).
 * Errors are not cached.
 */
export class CachedTextEncoder implements QueryTextEncoder {
  private readonly lru = new Map<string, TextEmbedding>();
  private readonly inflight = new Map<string, Promise<TextEmbedding>>();
  private hits = 0;
  private misses = 0;

  constructor(
    readonly inner: QueryTextEncoder,
    readonly maxEntries: number,
    readonly maxKeyChars = 1024,
  ) {
    if (!Number.isInteger(maxEntries) || maxEntries < 0) throw new Error(`CachedTextEncoder: maxEntries must be an integer >= 0, got ${maxEntries}`);
  }

  async embedText(embedderId: string, text: string): Promise<TextEmbedding> {
    const normalized = normalizeQueryText(text);
    if (this.maxEntries === 0 || normalized.length > this.maxKeyChars) {
      this.misses++;
      return this.inner.embedText(embedderId, normalized);
    }
    const key = `${embedderId}\u0000${normalized}`;
    const hit = this.lru.get(key);
    if (hit) {
      this.hits++;
      this.lru.delete(key); // Map order is insertion order: re-inserting makes it the most recent
      this.lru.set(key, hit);
      return copy(hit);
    }
    let pending = this.inflight.get(key);
    if (pending) {
      this.hits++;
      return copy(await pending);
    }
    this.misses++;
    pending = this.inner.embedText(embedderId, normalized).then((e) => {
      const kept = copy(e);
      this.lru.set(key, kept);
      while (this.lru.size > this.maxEntries) this.lru.delete(this.lru.keys().next().value!);
      return kept;
    });
    this.inflight.set(key, pending);
    try {
      return copy(await pending);
    } finally {
      this.inflight.delete(key);
    }
  }

  stats(): TextCacheStats {
    return { entries: this.lru.size, hits: this.hits, misses: this.misses };
  }

  async close(): Promise<void> {
    this.lru.clear();
    await this.inner.close();
  }
}

/** Callers own what they get (they may scale it in place); the cache keeps its own copy. */
function copy(e: TextEmbedding): TextEmbedding {
  return { vector: e.vector.slice(), truncated: e.truncated };
}

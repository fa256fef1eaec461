import type { SearchOptions, SearchPort } from '../services/search.js';

/**
 * At most `limit` searches at once through `inner`; the others wait, oldest first. A search given
 * up while it waits (its client left, its time budget ended: `opts.signal`) leaves the queue with
 * the signal's reason; one that fails frees its place like one that answers.
 *
 * Why (docs/scale.md "Connections"): on a pgvector library a search is statements in the database,
 * and 32 searches at once on 2 cores made PostgreSQL spend three times the CPU on each (1M
 * segments, a virtual machine without huge pages: 23–29 rps unlimited, 51–60 rps two or three at
 * a time, the same build) — its processes taking turns on the cores, each finding its memory cold.
 */
export class SearchGate implements SearchPort {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly inner: SearchPort,
    readonly limit: number,
  ) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`SearchGate: limit must be an integer >= 1, got ${limit}`);
  }

  encodeText(...args: Parameters<SearchPort['encodeText']>): ReturnType<SearchPort['encodeText']> {
    return this.inner.encodeText(...args);
  }

  async search(...args: Parameters<SearchPort['search']>): ReturnType<SearchPort['search']> {
    await this.enter(args[3]?.signal);
    try {
      return await this.inner.search(...args);
    } finally {
      this.leave();
    }
  }

  /** Searches running and waiting now. */
  stats(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  private enter(signal: SearchOptions['signal']): Promise<void> {
    signal?.throwIfAborted();
    if (this.running < this.limit) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const at = this.waiting.indexOf(go);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal!.reason);
      };
      // Its turn: the place of the search that left is handed over (running stays the same).
      const go = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(go);
    });
  }

  private leave(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}

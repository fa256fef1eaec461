/**
 * Searches on threads of their own (`serve --search-threads`), so the server's event loop only reads
 * requests, checks keys and writes answers while searches run on every core.
 *
 * - `threads` workers (node:worker_threads), started by `start()` or the first search. Each opens the library itself
 *   (its own database connection and, on SQLite or PostgreSQL without pgvector, its own in-memory
 *   index of the collections it searches: that memory once per thread, docs/engine.md) and runs
 *   the same SearchService the event loop would, for the principal the request carries.
 * - A search goes to the thread with the fewest searches in flight. Each thread encodes its queries'
 *   text itself (the text model loads there, on first use, with its own cache): the search that
 *   needs a vector waits for no other thread, and concurrent queries of a thread share one model call.
 * - Errors come back as the same classes (ValidationError, NotFoundError...). A search whose caller
 *   gives up (the time budget, the client gone) is told to stop (`abort`).
 * - A thread that dies fails the searches it held (UnavailableError: retry) and is replaced; one
 *   that cannot start is retried with a growing delay (0.25 s doubling to 30 s) while searches wait
 *   for a thread that is up (none up: they fail at once with the reason).
 * - `close()` ends every thread and fails what is in flight. Idle threads never keep a process alive.
 */
import { Worker } from 'node:worker_threads';
import * as errors from '../api/errors.js';
import { errorFromWire, type WireError } from '../api/errors.js';
import type { Principal } from '../api/principal.js';
import type { SearchRequest, SearchResponse } from '../api/types.js';
import type { SearchOptions, SearchPort } from '../services/search.js';
import { restartAfter, restartDelayMs, watchWorker } from '../threads/watch.js';
import { workerScript } from '../threads/worker-script.js';

// ---- the wire between the pool and its threads -----------------------------------------------------

/** What a thread is opened with: the library and the settings of the server's engine that searches read. */
export interface SearchThreadData {
  home: string;
  fetchPolicy: { allowPrivate: boolean };
  libraryRoots: string[];
  /** Modules each thread imports before it opens the library (tests register fake embedders that way). */
  preload?: string[];
}

export type ToSearchThread =
  | { type: 'search'; id: number; principal: Principal; collection: string; req: SearchRequest; opts: { explain?: boolean; pictureCheck?: boolean } }
  | { type: 'abort'; id: number };

export type FromSearchThread =
  | { type: 'ready' }
  | { type: 'result'; id: number; ok: true; value: SearchResponse }
  | { type: 'result'; id: number; ok: false; error: WireError };

// ---- the pool ----------------------------------------------------------------------------------------

export interface SearchThreadsOptions {
  threads: number;
  data: SearchThreadData;
  /** The search the event loop would run: `encodeText` stays there (and searches, when `useThreads` says no). */
  local: SearchPort;
  /** Whether to run threads at all, asked once at start (default yes). */
  useThreads?: () => Promise<boolean>;
  /**
   * Searches one thread runs at once (default 8); the rest wait here, oldest first, for the first
   * thread with room. A few at once let a thread's queries share one text-model call; many would
   * make every search of a busy thread wait for all of them (and leave another thread idle).
   */
  perThread?: number;
  /** The worker script. Default: the compiled search-thread.js. */
  workerUrl?: URL;
}

/** A search waiting for a thread. */
interface Queued {
  msg: Extract<ToSearchThread, { type: 'search' }>;
  resolve: (r: SearchResponse) => void;
  reject: (err: unknown) => void;
  onAbort?: () => void;
  signal?: AbortSignal;
}

/** A search a thread runs. */
interface Call extends Queued {
  slot: Slot;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  exited: boolean;
  inFlight: Set<number>;
}

/**
 * A search thread's young generation (V8's default is 16 MB of semi-space): a search's garbage is
 * short-lived (candidate maps, rows, the answer), so fewer, larger scavenges cost less. Measured on
 * the goals bench (32 clients, 10k segments, three alternating rounds): 5.6–5.8 ms of server CPU a
 * search and 323–337 rps against 5.8–6.4 ms and 293–321 rps at the default; 128 MB gained nothing
 * more and held ~150 MB more, with longer pauses (p99 213–216 ms).
 */
const YOUNG_GENERATION_MB = 64;

function defaultWorkerUrl(): URL {
  return workerScript(import.meta.url, 'src/runtime/search-thread.js', (m) => new errors.UnavailableError(`the search thread's script: ${m}`, 60));
}

export class SearchThreads implements SearchPort {
  readonly threads: number;
  private readonly slots = new Set<Slot>();
  private readonly calls = new Map<number, Call>();
  /** Searches waiting for a thread with room, oldest first. */
  private readonly queue: Queued[] = [];
  private readonly perThread: number;
  private readonly workerUrl: URL;
  private closed = false;
  private choice: Promise<boolean> | undefined;
  private nextId = 1;
  private startFailures = 0;
  private readonly restartTimers = new Set<NodeJS.Timeout>();
  private readonly exits = new Set<Promise<void>>();
  private counts = { started: 0, crashed: 0, searches: 0 };

  constructor(private readonly opts: SearchThreadsOptions) {
    if (!Number.isInteger(opts.threads) || opts.threads < 1) throw new Error(`SearchThreads: threads must be an integer >= 1, got ${opts.threads}`);
    this.threads = opts.threads;
    this.perThread = Math.max(1, opts.perThread ?? 8);
    this.workerUrl = opts.workerUrl ?? defaultWorkerUrl();
  }

  /**
   * Starts the threads (they open the library and say ready meanwhile), unless `useThreads` says
   * the searches stay local; the first search does it otherwise. Resolves to whether threads run.
   */
  start(): Promise<boolean> {
    this.choice ??= (this.opts.useThreads?.() ?? Promise.resolve(true))
      .catch(() => true)
      .then((threaded) => {
        if (threaded && !this.closed) for (let i = 0; i < this.threads; i++) this.spawn();
        return threaded;
      });
    return this.choice;
  }

  encodeText(...args: Parameters<SearchPort['encodeText']>): ReturnType<SearchPort['encodeText']> {
    return this.opts.local.encodeText(...args);
  }

  async search(p: Principal, collectionIdOrName: string, req: SearchRequest, opts: SearchOptions = {}): Promise<SearchResponse> {
    if (!(await this.start())) return this.opts.local.search(p, collectionIdOrName, req, opts);
    if (this.closed) throw new errors.UnavailableError('the server is stopping', 5);
    opts.signal?.throwIfAborted();
    if (this.upOrStarting() === 0) throw this.noThread();
    return new Promise<SearchResponse>((resolve, reject) => {
      const msg: ToSearchThread = { type: 'search', id: this.nextId++, principal: { ...p }, collection: collectionIdOrName, req, opts: { explain: opts.explain, pictureCheck: opts.pictureCheck } };
      const queued: Queued = { msg, resolve, reject, signal: opts.signal };
      if (opts.signal) {
        // Given up while it waits: it leaves the queue; while it runs: the thread is told to stop.
        queued.onAbort = () => {
          const at = this.queue.indexOf(queued);
          if (at >= 0) {
            this.queue.splice(at, 1);
            reject(opts.signal!.reason);
          } else this.calls.get(msg.id)?.slot.worker.postMessage({ type: 'abort', id: msg.id } satisfies ToSearchThread);
        };
        opts.signal.addEventListener('abort', queued.onAbort, { once: true });
      }
      this.queue.push(queued);
      this.counts.searches++;
      this.pump();
    });
  }

  /** Hands waiting searches, oldest first, to threads with room (at most `perThread` each, the least busy first). */
  private pump(): void {
    while (this.queue.length && !this.closed) {
      const slot = this.pick();
      if (!slot) return;
      const q = this.queue.shift()!;
      this.calls.set(q.msg.id, { ...q, slot });
      slot.inFlight.add(q.msg.id);
      slot.worker.ref();
      slot.worker.postMessage(q.msg);
    }
  }

  private noThread(): errors.UnavailableError {
    return new errors.UnavailableError(`no search thread could start (${this.lastFailure ?? 'unknown reason'})`, 5);
  }

  stats(): { threads: number; started: number; crashed: number; searches: number; inFlight: number; queued: number } {
    return { threads: this.threads, ...this.counts, inFlight: this.calls.size, queued: this.queue.length };
  }

  /** Threads that are up and take searches now. */
  get readyThreads(): number {
    let n = 0;
    for (const s of this.slots) if (s.ready && !s.exited) n++;
    return n;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.restartTimers) clearTimeout(t);
    this.restartTimers.clear();
    const gone = new errors.UnavailableError('the server is stopping', 5);
    for (const q of this.queue.splice(0)) this.drop(q, gone);
    for (const id of [...this.calls.keys()]) this.settle(id, (c) => c.reject(gone));
    for (const slot of this.slots) void slot.worker.terminate();
    await Promise.all(this.exits);
  }

  private lastFailure: string | undefined;

  private upOrStarting(): number {
    return this.slots.size + this.restartTimers.size;
  }

  /** The ready thread with room and the fewest searches in flight. */
  private pick(): Slot | undefined {
    let best: Slot | undefined;
    for (const s of this.slots) if (s.ready && !s.exited && s.inFlight.size < this.perThread && (!best || s.inFlight.size < best.inFlight.size)) best = s;
    return best;
  }

  private drop(q: Queued, err: unknown): void {
    if (q.onAbort) q.signal?.removeEventListener('abort', q.onAbort);
    q.reject(err);
  }

  private settle(id: number, how: (c: Call) => void): void {
    const call = this.calls.get(id);
    if (!call) return;
    this.calls.delete(id);
    call.slot.inFlight.delete(id);
    if (call.onAbort) call.signal?.removeEventListener('abort', call.onAbort);
    if (call.slot.inFlight.size === 0) call.slot.worker.unref();
    how(call);
    this.pump();
  }

  private spawn(): void {
    const slot: Slot = { worker: new Worker(this.workerUrl, { workerData: this.opts.data, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } }), ready: false, exited: false, inFlight: new Set() };
    this.counts.started++;
    this.slots.add(slot);
    slot.worker.unref();
    watchWorker<FromSearchThread>(slot.worker, this.exits, { message: (msg) => this.onMessage(slot, msg), exit: (why) => this.onExit(slot, why) });
  }

  private onMessage(slot: Slot, msg: FromSearchThread): void {
    if (msg.type === 'ready') {
      slot.ready = true;
      this.startFailures = 0;
      this.pump();
      return;
    }
    if (msg.type === 'result') {
      if (msg.ok) this.settle(msg.id, (c) => c.resolve(msg.value));
      else this.settle(msg.id, (c) => c.reject(errorFromWire(msg.error)));
    }
  }

  private onExit(slot: Slot, why: string): void {
    slot.exited = true;
    this.slots.delete(slot);
    if (this.closed) return;
    this.counts.crashed++;
    this.lastFailure = why;
    for (const id of [...slot.inFlight]) this.settle(id, (c) => c.reject(new errors.UnavailableError(`the search thread stopped while searching (${why}); it was replaced: retry`, 1)));
    let delay = 0;
    if (!slot.ready) {
      // It never came up: nothing suggests the next one will, unless another one is up already.
      this.startFailures++;
      delay = restartDelayMs(this.startFailures);
    }
    restartAfter(delay, this.restartTimers, () => this.closed, () => this.spawn());
    // Searches waiting for a thread when none is up and none comes soon: fail them now with the reason.
    if (delay > 0 && ![...this.slots].some((s) => s.ready)) for (const q of this.queue.splice(0)) this.drop(q, this.noThread());
  }
}

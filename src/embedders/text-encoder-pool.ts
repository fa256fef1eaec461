/**
 * Query text encoding on worker threads (node:worker_threads), so a server's event loop is free
 * to read requests and run searches while the text model runs, on every core.
 *
 * - `threads` workers (default: VIDEMBED_ENCODER_THREADS, else one per core; src/config.ts),
 *   started on first use. Each loads embedders by id through its own registry, once per thread.
 * - One shared queue. A worker has at most one batch in flight; calls that arrive while the
 *   workers are busy wait in the queue, and the next free worker takes them as one batch (at most
 *   `maxBatch`). While one worker is busy, another takes work only once `spill` calls wait: on two
 *   cores a second encoding thread takes CPU from the event loop that runs the searches, so short
 *   queues ride the next batch instead. Calls of one event-loop turn are sent together too
 *   (dispatch waits one setImmediate). Results come back to each caller in its order.
 * - Errors thrown by an embedder come back as the same classes (ModelError, ValidationError...).
 * - A worker that dies (an uncaught error, `process.exit` in the thread, out of memory) fails the
 *   calls it held with a ModelError and is replaced; the queue keeps being served. A worker that
 *   cannot even start fails the waiting calls when no other worker is up, and is retried with a
 *   growing delay (0.25 s doubling to 30 s).
 * - `close()` terminates every thread and fails whatever is waiting. Idle workers are unref'd, so a
 *   pool never keeps a process alive by itself.
 */
import { onnxThreadsSetting } from '../env.js';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import * as errors from '../api/errors.js';
import { errorFromWire, type WireError } from '../api/errors.js';
import type { TextEmbedding } from './types.js';
import { restartAfter, restartDelayMs, watchWorker } from '../threads/watch.js';
import { workerScript } from '../threads/worker-script.js';
import type { QueryTextEncoder } from './text-encoder.js';

// ---- the wire between the pool and its workers ---------------------------------------------------

export interface BatchMessage {
  type: 'batch';
  id: number;
  items: { embedderId: string; text: string }[];
}

export type ItemResult = { ok: true; vector: Float32Array; truncated: boolean } | { ok: false; error: WireError };

export type WorkerReply = { type: 'ready' } | { type: 'result'; id: number; results: ItemResult[] };

// ---- the pool ------------------------------------------------------------------------------------

export interface TextEncoderPoolOptions {
  /** Worker threads (≥ 1). Default: one per core. */
  threads?: number;
  /**
   * Most texts sent to a worker at once. Default 16: USE's cost grows nearly linearly past a few
   * texts (1: ~10 ms, 4: 21 ms, 16: 62 ms, 32: 122 ms), so bigger batches only make waits longer.
   */
  maxBatch?: number;
  /** Calls that must be waiting before a second (third...) worker takes a batch. Default 3. */
  spill?: number;
  /** Modules each worker imports before it serves (e.g. to register embedders). */
  preload?: string[];
  /** The worker script. Default: the compiled text-encoder-worker.js. */
  workerUrl?: URL;
}

export interface TextEncoderPoolStats {
  threads: number;
  /** Workers started so far (threads + replacements). */
  started: number;
  /** Workers that died and were replaced. */
  crashed: number;
  batches: number;
  texts: number;
  /** Calls waiting for a free worker now. */
  queued: number;
}

interface Job {
  embedderId: string;
  text: string;
  resolve: (e: TextEmbedding) => void;
  reject: (err: unknown) => void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  exited: boolean;
  /** The batch in flight (at most one). */
  batch?: { id: number; jobs: Job[] };
}


export function cores(): number {
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
}

function defaultWorkerUrl(): URL {
  return workerScript(import.meta.url, 'src/embedders/text-encoder-worker.js', (m) => new errors.ModelError(`the text encoder's worker script: ${m}`));
}

export class TextEncoderPool implements QueryTextEncoder {
  private threadCount: number;
  readonly maxBatch: number;
  readonly spill: number;
  private readonly preload: string[];
  private readonly workerUrl: URL;
  private readonly slots = new Set<Slot>();
  private readonly queue: Job[] = [];
  private started = false;
  private closed = false;
  private dispatchQueued = false;
  private nextBatchId = 1;
  private startFailures = 0;
  private readonly restartTimers = new Set<NodeJS.Timeout>();
  private readonly exits = new Set<Promise<void>>();
  private counts = { started: 0, crashed: 0, batches: 0, texts: 0 };

  constructor(opts: TextEncoderPoolOptions = {}) {
    const threads = opts.threads ?? cores();
    if (!Number.isInteger(threads) || threads < 1) throw new Error(`TextEncoderPool: threads must be an integer >= 1, got ${threads}`);
    this.threadCount = threads;
    this.maxBatch = Math.max(1, opts.maxBatch ?? 16);
    this.spill = Math.max(1, opts.spill ?? 3);
    this.preload = opts.preload ?? [];
    this.workerUrl = opts.workerUrl ?? defaultWorkerUrl();
  }

  get threads(): number {
    return this.threadCount;
  }

  /** Sets how many threads start, before the first call starts them (false once they run). */
  setThreads(threads: number): boolean {
    if (this.started || !Number.isInteger(threads) || threads < 1) return false;
    this.threadCount = threads;
    return true;
  }

  embedText(embedderId: string, text: string): Promise<TextEmbedding> {
    if (this.closed) return Promise.reject(new errors.ModelError('the text encoder pool is closed'));
    if (!this.started) {
      this.started = true;
      for (let i = 0; i < this.threads; i++) this.spawn();
    }
    return new Promise<TextEmbedding>((resolve, reject) => {
      this.queue.push({ embedderId, text, resolve, reject });
      this.updateRefs();
      this.scheduleDispatch();
    });
  }

  /** Threads alive now (0 before first use and after close). */
  get liveThreads(): number {
    let n = 0;
    for (const s of this.slots) if (!s.exited) n++;
    return n;
  }

  /** Threads that have loaded and can take a batch now. */
  get readyThreads(): number {
    let n = 0;
    for (const s of this.slots) if (s.ready && !s.exited) n++;
    return n;
  }

  stats(): TextEncoderPoolStats {
    return { threads: this.threads, ...this.counts, queued: this.queue.length };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.restartTimers) clearTimeout(t);
    this.restartTimers.clear();
    const gone = new errors.ModelError('the text encoder pool is closed');
    for (const job of this.queue.splice(0)) job.reject(gone);
    for (const slot of this.slots) {
      for (const job of slot.batch?.jobs ?? []) job.reject(gone);
      slot.batch = undefined;
      void slot.worker.terminate();
    }
    await Promise.all(this.exits);
  }

  private spawn(): void {
    const slot: Slot = {
      worker: new Worker(this.workerUrl, {
        workerData: { preload: this.preload },
        // onnxruntime's intra-op threads: the cores shared among the workers, unless set.
        env: { ...process.env, VIDEMBED_ONNX_THREADS: String(onnxThreadsSetting() ?? Math.max(1, Math.floor(cores() / this.threads))) },
      }),
      ready: false,
      exited: false,
    };
    this.counts.started++;
    this.slots.add(slot);
    this.updateRefs();
    watchWorker<WorkerReply>(slot.worker, this.exits, { message: (msg) => this.onMessage(slot, msg), exit: (why) => this.onExit(slot, why) });
  }

  /**
   * A worker keeps the process alive only while there is work for the pool (calls waiting, or a
   * batch in flight), so an idle pool never holds a process open by itself.
   */
  private updateRefs(): void {
    const waiting = this.queue.length > 0;
    for (const s of this.slots) {
      if (s.batch || waiting) s.worker.ref();
      else s.worker.unref();
    }
  }

  private onMessage(slot: Slot, msg: WorkerReply): void {
    if (msg.type === 'ready') {
      slot.ready = true;
      this.startFailures = 0;
      this.scheduleDispatch();
      return;
    }
    const batch = slot.batch;
    if (msg.type !== 'result' || !batch || batch.id !== msg.id) return;
    slot.batch = undefined;
    batch.jobs.forEach((job, i) => {
      const r = msg.results[i];
      if (!r) job.reject(new errors.ModelError('the text encoder thread gave no result'));
      else if (r.ok) job.resolve({ vector: r.vector, truncated: r.truncated });
      else job.reject(errorFromWire(r.error));
    });
    this.updateRefs();
    this.scheduleDispatch();
  }

  private onExit(slot: Slot, why: string): void {
    slot.exited = true;
    this.slots.delete(slot);
    if (this.closed) return;
    this.counts.crashed++;
    for (const job of slot.batch?.jobs ?? []) job.reject(new errors.ModelError(`the text encoder thread stopped while encoding (${why}); it was replaced`));
    slot.batch = undefined;
    let delay = 0;
    if (!slot.ready) {
      // It never came up: nothing suggests the next one will, unless another one is up already.
      this.startFailures++;
      delay = restartDelayMs(this.startFailures);
      if (![...this.slots].some((s) => s.ready)) {
        for (const job of this.queue.splice(0)) job.reject(new errors.ModelError(`the text encoder thread could not start (${why})`));
      }
    }
    this.updateRefs();
    restartAfter(delay, this.restartTimers, () => this.closed, () => this.spawn());
  }

  private scheduleDispatch(): void {
    if (this.dispatchQueued || this.queue.length === 0) return;
    this.dispatchQueued = true;
    // Calls made in this turn of the event loop (and requests read in its I/O phase) ride together.
    setImmediate(() => {
      this.dispatchQueued = false;
      this.dispatch();
    });
  }

  private dispatch(): void {
    if (this.closed) return;
    const live = [...this.slots].filter((s) => s.ready && !s.exited);
    let busy = live.filter((s) => s.batch).length;
    for (const slot of live) {
      if (slot.batch || this.queue.length === 0) continue;
      // One batch at a time while the queue is short: a bigger batch costs little more than a small
      // one, and a second thread would take CPU from the event loop. More threads join once `spill`
      // calls wait.
      if (busy > 0 && this.queue.length < this.spill) break;
      const jobs = this.queue.splice(0, this.maxBatch);
      busy++;
      const id = this.nextBatchId++;
      slot.batch = { id, jobs };
      this.counts.batches++;
      this.counts.texts += jobs.length;
      slot.worker.postMessage({ type: 'batch', id, items: jobs.map((j) => ({ embedderId: j.embedderId, text: j.text })) } satisfies BatchMessage);
    }
    this.updateRefs();
  }
}

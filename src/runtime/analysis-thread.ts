/**
 * Synchronous analyses off the event loop (issue 21: heavy work never runs on the event loop;
 * /healthz stays fast under load). The server's `encodeVideo` and `tagVideo` run the whole
 * analysis of one request — ffmpeg's decode, the pixel taggers, the analyzers' and the embedder's
 * models — on a worker thread (node:worker_threads) of this pool, and get back the response.
 *
 * - `threads` workers (the server's cap on synchronous analyses), each started when a job first
 *   needs it and kept for the next one; each loads the models it uses once (its own registry),
 *   on the library's defaults (the registry's embedders, src/analysis's analyzers, speech).
 * - One job per thread at a time; jobs beyond the threads wait in order.
 * - The caller's signal (its time budget, its client going away) stops the job: a waiting job is
 *   dropped, a running one is told to stop and the call settles once the thread has stopped,
 *   rejected with the signal's reason.
 * - Errors come back as the same classes with the same messages (src/api/errors.ts wire errors;
 *   the caller redacts paths as before). A thread that dies fails its job with a ModelError and is
 *   replaced on the next job; one that dies before it ever answered fails the waiting jobs too.
 * - Idle threads are unref'd: the pool never keeps a process alive. `close()` ends them all.
 */
import { Worker } from 'node:worker_threads';
import { errorFromWire, ModelError, type WireError } from '../api/errors.js';
import { watchWorker } from '../threads/watch.js';
import { workerScript } from '../threads/worker-script.js';
import type { AnalysisJob, AnalysisKind, AnalysisRunner, AnswerOf } from '../services/analysis.js';

export type { AnalysisJob, AnalysisKind, AnswerOf };
import { abortReason } from '../media/ffmpeg.js';

// ---- the wire -------------------------------------------------------------------------------------

export type ToAnalysisThread = { type: 'run'; id: number; job: AnalysisJob } | { type: 'abort'; id: number };
export type FromAnalysisThread = { type: 'done'; id: number; ok: true; value: AnswerOf<AnalysisKind> } | { type: 'done'; id: number; ok: false; error: WireError };

// ---- the pool -------------------------------------------------------------------------------------

interface Pending {
  id: number;
  job: AnalysisJob;
  signal?: AbortSignal;
  resolve: (v: AnswerOf<AnalysisKind>) => void;
  reject: (err: unknown) => void;
  onAbort?: () => void;
}

interface Thread {
  worker: Worker;
  job?: Pending;
  /** It has answered a job (a thread that dies before that may never start). */
  served: boolean;
}

function defaultWorkerUrl(): URL {
  return workerScript(import.meta.url, 'src/runtime/analysis-worker.js', (m) => new ModelError(`the analysis worker script: ${m}`));
}

export class AnalysisThreads implements AnalysisRunner {
  readonly threads: number;
  private readonly workerUrl: URL;
  private readonly live = new Set<Thread>();
  private readonly queue: Pending[] = [];
  private readonly exits = new Set<Promise<void>>();
  private nextId = 1;
  private closed = false;
  private answered = 0;

  constructor(opts: { threads: number; workerUrl?: URL }) {
    if (!Number.isInteger(opts.threads) || opts.threads < 1) throw new Error(`AnalysisThreads: threads must be an integer >= 1, got ${opts.threads}`);
    this.threads = opts.threads;
    this.workerUrl = opts.workerUrl ?? defaultWorkerUrl();
  }

  /** Runs one analysis on a thread; settles with its answer or its error (see the file header). */
  run<K extends AnalysisKind>(job: AnalysisJob<K>, signal?: AbortSignal): Promise<AnswerOf<K>> {
    if (this.closed) return Promise.reject(new ModelError('the analysis threads are closed'));
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<AnswerOf<K>>((resolve, reject) => {
      const p: Pending = { id: this.nextId++, job, signal, resolve: resolve as Pending['resolve'], reject };
      p.onAbort = () => this.abort(p);
      signal?.addEventListener('abort', p.onAbort, { once: true });
      this.queue.push(p);
      this.dispatch();
    });
  }

  /** Threads alive now. */
  get liveThreads(): number {
    return this.live.size;
  }

  /** Threads running a job now. */
  get busyThreads(): number {
    return [...this.live].filter((t) => t.job).length;
  }

  /** Jobs a thread has answered (with a result or an error). */
  get jobsAnswered(): number {
    return this.answered;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const gone = new ModelError('the analysis threads are closed');
    for (const p of this.queue.splice(0)) this.settle(p, () => p.reject(gone));
    for (const t of this.live) {
      if (t.job) this.settle(t.job, () => t.job!.reject(gone));
      t.job = undefined;
      void t.worker.terminate();
    }
    await Promise.all(this.exits);
  }

  private settle(p: Pending, how: () => void): void {
    if (p.onAbort) p.signal?.removeEventListener('abort', p.onAbort);
    how();
  }

  private abort(p: Pending): void {
    const waiting = this.queue.indexOf(p);
    if (waiting >= 0) {
      this.queue.splice(waiting, 1);
      this.settle(p, () => p.reject(abortReason(p.signal!)));
      return;
    }
    // Running: the thread stops it and answers; the call settles then (the thread is free again).
    for (const t of this.live) if (t.job === p) t.worker.postMessage({ type: 'abort', id: p.id } satisfies ToAnalysisThread);
  }

  private dispatch(): void {
    if (this.closed) return;
    while (this.queue.length) {
      let free = [...this.live].find((t) => !t.job);
      if (!free && this.live.size < this.threads) free = this.spawn();
      if (!free) break;
      const p = this.queue.shift()!;
      free.job = p;
      free.worker.ref();
      free.worker.postMessage({ type: 'run', id: p.id, job: p.job } satisfies ToAnalysisThread);
    }
  }

  private spawn(): Thread {
    const t: Thread = { worker: new Worker(this.workerUrl), served: false };
    this.live.add(t);
    t.worker.unref();
    watchWorker<FromAnalysisThread>(t.worker, this.exits, { message: (m) => this.onDone(t, m), exit: (why) => this.onExit(t, why) });
    return t;
  }

  private onDone(t: Thread, m: FromAnalysisThread): void {
    const p = t.job;
    if (m?.type !== 'done' || !p || p.id !== m.id) return;
    t.job = undefined;
    t.served = true;
    this.answered++;
    t.worker.unref();
    if (p.signal?.aborted) this.settle(p, () => p.reject(abortReason(p.signal!)));
    else if (m.ok) this.settle(p, () => p.resolve(m.value));
    else this.settle(p, () => p.reject(errorFromWire(m.error)));
    this.dispatch();
  }

  private onExit(t: Thread, why: string): void {
    this.live.delete(t);
    if (this.closed) return;
    const p = t.job;
    t.job = undefined;
    if (p) this.settle(p, () => p.reject(new ModelError(`the analysis thread stopped while analysing (${why}); it is replaced for the next request`)));
    if (!t.served && ![...this.live].some((o) => o.served)) {
      // It never answered and no other thread has: nothing suggests the next one would start.
      for (const q of this.queue.splice(0)) this.settle(q, () => q.reject(new ModelError(`the analysis thread could not start (${why})`)));
    }
    this.dispatch();
  }
}

import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage } from '../api/errors.js';
import { newId } from '../store/ids.js';
import type { ClaimedJob, ClaimOptions, JobKind } from '../store/queue/types.js';
import { fairLaneMs as fairLaneSetting } from '../env.js';
import { DEFAULTS } from './config.js';
import { reapStoppedWorkers } from './processes.js';
import type { WorkerInfo } from '../store/queue/types.js';
import type { QueuedJob } from '../store/queue/types.js';
import type { Catalog } from '../store/catalog/types.js';
import type { JobContext } from '../services/jobs.js';

/** What a worker runs jobs on: the queue and registry, and the job handlers (the engine facade has them). */
export interface JobHost {
  readonly catalog: Pick<Catalog, 'queue' | 'registry'>;
  runJob(job: Pick<QueuedJob, 'kind' | 'refId'>, ctx: JobContext): Promise<'done' | 'failed'>;
  failJobSubject(job: Pick<QueuedJob, 'kind' | 'refId'>, message: string): Promise<void>;
  failStranded(): Promise<number>;
}

/** How often an idle worker looks for videos and tasks that no job will finish. */
const STRANDED_SWEEP_MS = 30_000;

export interface WorkerOptions {
  /** Exit after this long without work; undefined = run until the signal aborts. */
  idleExitMs?: number;
  kinds?: JobKind[];
  leaseMs?: number;
  heartbeatMs?: number;
  pollMs?: number;
  log?: (line: string) => void;
  /**
   * Other work this process does (answering the warm CLI): the worker does not retire while it
   * returns a time within `busyGraceMs` of now.
   */
  lastActiveAt?: () => number;
  busyGraceMs?: number;
  /**
   * Once a job has run this long, the worker takes — beside it, one at a time — jobs of owners that
   * have nothing running (so one owner's hours of video never hold up another owner's clip);
   * default VIDEMBED_FAIR_LANE_S (src/env.ts); 0: one job at a time.
   */
  fairLaneMs?: number;
}

/**
 * Takes jobs from the durable queue one at a time (the machine's cores go to ffmpeg and the
 * models of that one job), renewing its lease while it works, and settles each only under its
 * claim's fencing token. The queue hands owners their turns (src/store/queue/types.ts); a job that
 * runs long opens a second lane for owners with nothing running (`fairLaneMs`). It says it is alive by heartbeat (the worker registry), not by pid. Killed mid-job, it leaves the lease
 * to expire and the next worker to redo the job; stopped through the signal, it hands the job back.
 */
export class Worker {
  readonly id = newId('wrk');

  constructor(
    private readonly engine: JobHost,
    private readonly opts: WorkerOptions = {},
  ) {}

  /**
   * Deregisters unless work is waiting. Without a transaction spanning the queue and the registry
   * (they may be two services), the order does it: leave first, then look at the queue, and come
   * back if a job is there. An upload commits its job before it looks for a live worker: either it
   * looks after we left (sees nobody, starts a worker) or before (then its job was committed before
   * our second look, which sees it and stays).
   */
  private async retire(info: WorkerInfo): Promise<boolean> {
    const store = this.engine.catalog;
    await store.registry.remove(this.id);
    if ((await store.queue.pendingCount()) === 0) return true;
    await store.registry.heartbeat(this.id, info);
    return false;
  }

  async run(signal: AbortSignal): Promise<void> {
    const leaseMs = this.opts.leaseMs ?? DEFAULTS.leaseMs;
    const heartbeatMs = this.opts.heartbeatMs ?? DEFAULTS.heartbeatMs;
    const pollMs = this.opts.pollMs ?? 500;
    const fairLaneMs = this.opts.fairLaneMs ?? fairLaneSetting();
    const claimOpts = { leaseMs, heartbeatMs, log: (line: string) => this.opts.log?.(line) };
    const store = this.engine.catalog;
    const { queue, registry } = store;
    const info: WorkerInfo = { pid: process.pid, host: os.hostname(), ...(this.opts.kinds ? { kinds: this.opts.kinds } : {}) };
    const log = (line: string) => this.opts.log?.(line);
    const beat = () => registry.heartbeat(this.id, info).catch((err: unknown) => log(`heartbeat failed: ${errorMessage(err)}`));
    await beat();
    // The launcher registered this process under a placeholder until it could speak for itself.
    await registry.remove(`spawned_${process.pid}`);
    const reaped = await reapStoppedWorkers(store, this.id);
    if (reaped) log(`took over ${reaped} job(s) of stopped workers`);
    // Rare (a process died between two writes): swept at start, then at most every STRANDED_SWEEP_MS.
    let sweptAt = 0;
    const stranded = async () => {
      if (Date.now() - sweptAt < STRANDED_SWEEP_MS) return;
      sweptAt = Date.now();
      const n = await this.engine.failStranded();
      if (n) log(`failed ${n} video(s) or task(s) whose job had ended without them`);
    };
    await stranded();
    const beatTimer = setInterval(() => void beat(), heartbeatMs);
    beatTimer.unref();
    let idleSince = Date.now();
    try {
      while (!signal.aborted) {
        const job = await this.claim(leaseMs);
        if (!job) {
          await reapStoppedWorkers(store, this.id);
          await stranded();
          const busy = this.opts.lastActiveAt !== undefined && Date.now() - this.opts.lastActiveAt() < (this.opts.busyGraceMs ?? 0);
          if (this.opts.idleExitMs !== undefined && !busy && Date.now() - idleSince >= this.opts.idleExitMs && (await this.retire(info))) return;
          await sleep(pollMs, undefined, { signal }).catch(() => {});
          continue;
        }
        const done = new AbortController();
        const side = fairLaneMs > 0 ? this.fairLane(signal, done.signal, fairLaneMs, pollMs, claimOpts) : undefined;
        try {
          await this.runClaimed(job, signal, claimOpts);
        } finally {
          done.abort();
          await side;
        }
        idleSince = Date.now();
      }
    } finally {
      clearInterval(beatTimer);
      await registry.remove(this.id).catch(() => {}); // the store may be closed already
    }
  }

  private claim(leaseMs: number, opts?: ClaimOptions) {
    return this.engine.catalog.queue.claim(
      this.id,
      leaseMs,
      this.opts.kinds,
      (gaveUp) => this.engine.failJobSubject(gaveUp, gaveUp.lastError ?? `processing stopped ${gaveUp.attempts} times without finishing; giving up`),
      opts,
    );
  }

  /**
   * The second lane: from `afterMs` into the main job until it ends, runs jobs of owners that have
   * nothing running, one at a time. A job it started is finished even if the main one ends first.
   */
  private async fairLane(stop: AbortSignal, mainDone: AbortSignal, afterMs: number, pollMs: number, o: RunOptions): Promise<void> {
    await sleep(afterMs, undefined, { signal: AbortSignal.any([stop, mainDone]) }).catch(() => {});
    while (!stop.aborted && !mainDone.aborted) {
      const job = await this.claim(o.leaseMs, { idleOwnersOnly: true }).catch((err: unknown) => {
        o.log(`fair lane: claim failed: ${errorMessage(err)}`);
        return undefined;
      });
      if (job) {
        o.log(`fair lane: beside a long job`);
        await this.runClaimed(job, stop, o);
      } else await sleep(pollMs, undefined, { signal: AbortSignal.any([stop, mainDone]) }).catch(() => {});
    }
  }

  /** Runs one claimed job to its end under its lease, renewing it; hands it back when `signal` stops the worker. */
  private async runClaimed(job: ClaimedJob, signal: AbortSignal, o: RunOptions): Promise<void> {
    const { queue } = this.engine.catalog;
    const { leaseMs, heartbeatMs, log } = o;
    log(`job ${job.id} ${job.kind} ${job.refId} attempt ${job.attempts}`);
    const jobAbort = new AbortController();
    const onStop = () => jobAbort.abort();
    signal.addEventListener('abort', onStop, { once: true });
    // Renewal is fenced by the claim's token: false means another claim took the job over.
    const renewTimer = setInterval(() => {
      queue.renew(job.id, job.token, leaseMs).then(
        (held) => {
          if (!held) jobAbort.abort();
        },
        (err: unknown) => log(`lease renewal failed: ${errorMessage(err)}`),
      );
    }, Math.min(heartbeatMs, leaseMs / 3));
    try {
      const ctx: JobContext = { signal: jobAbort.signal, job: { id: job.id, token: job.token } };
      const outcome = await this.engine.runJob(job, ctx);
      const settled =
        outcome === 'done'
          ? ctx.settled || (await queue.complete(job.id, job.token))
          : await queue.fail(job.id, job.token, 'the work failed; see the video or task for the message');
      log(`job ${job.id} ${outcome}${settled ? '' : ' (its lease had passed to another claim)'}`);
    } catch (err) {
      if (signal.aborted) await queue.release(job.id, job.token);
      else if (await queue.fail(job.id, job.token, errorMessage(err))) await this.engine.failJobSubject(job, `internal error: ${errorMessage(err)}`);
      log(`job ${job.id} stopped: ${errorMessage(err)}`);
    } finally {
      clearInterval(renewTimer);
      signal.removeEventListener('abort', onStop);
    }
  }
}

interface RunOptions {
  leaseMs: number;
  heartbeatMs: number;
  log: (line: string) => void;
}

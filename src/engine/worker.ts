import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage } from '../api/errors.js';
import { newId } from '../store/ids.js';
import type { JobKind } from '../store/jobs.js';
import { DEFAULTS } from './config.js';
import { reapDeadWorkers } from './processes.js';
import type { LocalEngine } from './engine.js';

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
}

/**
 * Takes jobs from the durable queue one at a time (the machine's cores go to ffmpeg and the
 * models of that one job), renewing its lease while it works. Killed mid-job, it leaves the lease
 * to expire and the next worker to redo the job; stopped through the signal, it hands the job back.
 */
export class Worker {
  readonly id = newId('wrk');

  constructor(
    private readonly engine: LocalEngine,
    private readonly opts: WorkerOptions = {},
  ) {}

  /**
   * Deregisters if, and only if, nothing is waiting, in one write transaction. An upload commits
   * its job before looking for a live worker, so either this sees the job or the upload sees no
   * worker and starts one: no job is left with nobody to run it.
   */
  private retire(): boolean {
    const { store } = this.engine;
    return store.db
      .transaction(() => {
        const runnable = store.db
          .prepare(`SELECT COUNT(*) FROM jobs WHERE status = 'queued' OR (status = 'running' AND lease_expires_at < ?)`)
          .pluck()
          .get(Date.now()) as number;
        if (runnable > 0) return false;
        store.db.prepare('DELETE FROM workers WHERE id = ?').run(this.id);
        return true;
      })
      .immediate();
  }

  async run(signal: AbortSignal): Promise<void> {
    const leaseMs = this.opts.leaseMs ?? DEFAULTS.leaseMs;
    const heartbeatMs = this.opts.heartbeatMs ?? DEFAULTS.heartbeatMs;
    const pollMs = this.opts.pollMs ?? 500;
    const { store } = this.engine;
    const beat = () => store.db.prepare('INSERT OR REPLACE INTO workers (id, pid, heartbeat_at) VALUES (?, ?, ?)').run(this.id, process.pid, Date.now());
    beat();
    // The launcher registered this process under a placeholder until it could speak for itself.
    store.db.prepare('DELETE FROM workers WHERE id = ?').run(`spawned_${process.pid}`);
    const reaped = reapDeadWorkers(store, this.id);
    if (reaped) this.opts.log?.(`took over ${reaped} job(s) of stopped workers`);
    const beatTimer = setInterval(beat, heartbeatMs);
    beatTimer.unref();
    let idleSince = Date.now();
    try {
      while (!signal.aborted) {
        const job = store.jobs.claim(this.id, leaseMs, this.opts.kinds, (gaveUp) =>
          this.engine.failJobSubject(gaveUp, gaveUp.last_error ?? `processing stopped ${gaveUp.attempts} times without finishing; giving up`),
        );
        if (!job) {
          reapDeadWorkers(store, this.id);
          const busy = this.opts.lastActiveAt !== undefined && Date.now() - this.opts.lastActiveAt() < (this.opts.busyGraceMs ?? 0);
          if (this.opts.idleExitMs !== undefined && !busy && Date.now() - idleSince >= this.opts.idleExitMs && this.retire()) return;
          await sleep(pollMs, undefined, { signal }).catch(() => {});
          continue;
        }
        this.opts.log?.(`job ${job.id} ${job.kind} ${job.ref_id} attempt ${job.attempts}`);
        const jobAbort = new AbortController();
        const onStop = () => jobAbort.abort();
        signal.addEventListener('abort', onStop, { once: true });
        const renewTimer = setInterval(() => {
          if (!store.jobs.renew(job.id, this.id, leaseMs)) jobAbort.abort(); // someone else owns it now
        }, Math.min(heartbeatMs, leaseMs / 3));
        try {
          const outcome = await this.engine.runJob(job, { signal: jobAbort.signal });
          if (outcome === 'done') store.jobs.complete(job.id, this.id);
          else store.jobs.fail(job.id, this.id, 'the work failed; see the video or task for the message');
          this.opts.log?.(`job ${job.id} ${outcome}`);
        } catch (err) {
          if (signal.aborted) store.jobs.release(job.id, this.id);
          else {
            store.jobs.fail(job.id, this.id, errorMessage(err));
            this.engine.failJobSubject(job, `internal error: ${errorMessage(err)}`);
          }
          this.opts.log?.(`job ${job.id} stopped: ${errorMessage(err)}`);
        } finally {
          clearInterval(renewTimer);
          signal.removeEventListener('abort', onStop);
        }
        idleSince = Date.now();
      }
    } finally {
      clearInterval(beatTimer);
      if (store.db.open) store.db.prepare('DELETE FROM workers WHERE id = ?').run(this.id);
    }
  }
}

import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage } from '../api/errors.js';
import { newId } from '../store/ids.js';
import type { ClaimOptions, JobKind } from '../store/queue/types.js';
import { fairLaneMs as fairLaneSetting, sideLaneWaitMs as sideLaneWaitSetting } from '../env.js';
import { DEFAULTS } from '../config.js';
import { reapStoppedWorkers } from './processes.js';
import type { WorkerInfo } from '../store/queue/types.js';
import type { ClaimedJob, QueuedJob } from '../store/queue/types.js';
import { asUnavailable } from '../store/unavailable.js';
import type { Catalog } from '../store/catalog/types.js';
import type { JobContext } from '../services/jobs.js';
import { LANES } from '../capabilities/lanes.js';
import { JOB_KINDS } from '../api/defaults.js';

/** What a worker runs jobs on: the queue and registry, and the job handlers (the engine facade has them). */
export interface JobHost {
  readonly catalog: Pick<Catalog, 'queue' | 'registry'>;
  runJob(job: Pick<QueuedJob, 'kind' | 'refId'>, ctx: JobContext): Promise<'done' | 'failed'>;
  failJobSubject(job: Pick<QueuedJob, 'kind' | 'refId'>, message: string): Promise<void>;
  failStranded(): Promise<number>;
  /** Upkeep while idle (retention, retries after a full disk); answers what it did, as log lines. */
  housekeeping?(): Promise<string[]>;
  /** Work beside the jobs until `signal` aborts, leased as `workerId`: webhook deliveries (src/runtime/deliveries.ts). */
  besideJobs?(workerId: string, signal: AbortSignal, log: (line: string) => void): Promise<void>;
  /** True while such work is due: an idle worker does not retire then. */
  besideJobsDue?(): Promise<boolean>;
}

/** How often an idle worker looks for videos and tasks that no job will finish. */
const STRANDED_SWEEP_MS = 30_000;
/** How often an idle worker does its upkeep (JobHost.housekeeping). */
const HOUSEKEEPING_MS = 60_000;

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
  /** Waits while the job store cannot be reached: the first and the longest (default 0.5 s, doubling to 5 s). */
  backoffMs?: readonly [number, number];
  /**
   * Lanes that run beside the main one, each claiming only its own job kinds, one job at a time
   * (default: the capability lanes other than the picture lane — the speech lane —
   * src/capabilities/lanes.ts). The main loop takes every other kind. A side lane goes after the
   * main lane: it claims only while the main lane has nothing running or claimable (ClaimOptions
   * `after`), so a video's pictures are not slowed by its speech.
   */
  sideLanes?: ReadonlyArray<{ name: string; kinds: readonly JobKind[] }>;
  /**
   * The longest a side lane's job waits for the main lane to drain (from its enqueue) before it is
   * taken beside it anyway: a long queue of picture work never starves speech. Default
   * VIDEMBED_SIDE_LANE_WAIT_S (src/env.ts, 600 s); 0: side lanes run beside the main one at once.
   */
  sideLaneWaitMs?: number;
}

/** The lanes beside the main loop by default: every capability lane whose video does not become searchable with it (speech). */
export const DEFAULT_SIDE_LANES = LANES.filter((l) => !l.searchable).map((l) => ({ name: l.name, kinds: [l.jobKind] as JobKind[] }));

/**
 * Takes jobs from the durable queue one at a time (the machine's cores go to ffmpeg and the
 * models of that one job), renewing its lease while it works, and settles each only under its
 * claim's fencing token. The queue hands owners their turns (src/store/queue/types.ts); a job that
 * runs long opens a second lane for owners with nothing running (`fairLaneMs`). It says it is
 * alive by heartbeat (the worker registry), not by pid. Killed mid-job, it leaves the lease to
 * expire and the next worker to redo the job; stopped through the signal, it hands the job back.
 */
export class Worker {
  readonly id = newId('wrk');
  /** Jobs the side lanes are running now (the worker is not idle while one runs). */
  private sideBusy = 0;
  /** Main-lane jobs running now (the main loop's and the fair lane's): a side lane's job asks it (JobContext.beside). */
  private mainRunning = 0;

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
    const store = this.engine.catalog;
    const { queue, registry } = store;
    const info: WorkerInfo = { pid: process.pid, host: os.hostname(), ...(this.opts.kinds ? { kinds: this.opts.kinds } : {}) };
    const log = (line: string) => this.opts.log?.(line);
    const beat = () => registry.heartbeat(this.id, info).catch((err: unknown) => log(`heartbeat failed: ${errorMessage(err)}`));
    const outage = new Outage(log, 'the job store', this.opts.backoffMs);
    // What a job needs besides the queue (the blob store, the catalog's other tables): a job handed
    // back for its outage is claimed again only after a wait, growing while it lasts.
    const jobDeps = new Outage(log, 'what the job needs', this.opts.backoffMs);
    // Rare (a process died between two writes): swept at start, then at most every STRANDED_SWEEP_MS.
    let sweptAt = 0;
    const stranded = async () => {
      if (Date.now() - sweptAt < STRANDED_SWEEP_MS) return;
      const n = await this.engine.failStranded();
      sweptAt = Date.now();
      if (n) log(`failed ${n} video(s) or task(s) whose job had ended without them`);
    };
    let keptAt = 0;
    const housekeeping = async () => {
      if (!this.engine.housekeeping || Date.now() - keptAt < HOUSEKEEPING_MS) return;
      const done = await this.engine.housekeeping();
      keptAt = Date.now();
      done.forEach(log);
    };
    let started = false;
    const start = async () => {
      await beat();
      // The launcher registered this process under a placeholder until it could speak for itself.
      await registry.remove(`spawned_${process.pid}`);
      const reaped = await reapStoppedWorkers(store, this.id);
      if (reaped) log(`took over ${reaped} job(s) of stopped workers`);
      await stranded();
      // Jobs no handler of this release takes stay in the queue: say so now, not never.
      const unknown = (await store.queue.pending()).filter((j) => !(JOB_KINDS as readonly string[]).includes(j.kind));
      if (unknown.length) log(`${unknown.length} queued job(s) of a kind this release does not run (${[...new Set(unknown.map((j) => j.kind))].join(', ')}): another release queued them; they stay queued`);
      // What a stopped process left behind (temp dirs, staged files) goes first.
      await housekeeping();
      started = true;
    };
    const beatTimer = setInterval(() => void beat(), heartbeatMs);
    beatTimer.unref();
    const besideStop = new AbortController();
    const beside = this.engine.besideJobs?.(this.id, AbortSignal.any([signal, besideStop.signal]), log).catch((err: unknown) => log(`work beside jobs stopped: ${errorMessage(err)}`));
    let idleSince = Date.now();
    // The side lanes (speech), each a loop of its own beside this one.
    const wanted = this.opts.kinds ?? JOB_KINDS;
    const side = (this.opts.sideLanes ?? DEFAULT_SIDE_LANES).map((l) => ({ ...l, kinds: l.kinds.filter((k) => wanted.includes(k)) })).filter((l) => l.kinds.length);
    const sideKinds = new Set(side.flatMap((l) => l.kinds));
    const mainKinds = wanted.filter((k) => !sideKinds.has(k));
    // Speech after pictures: a side lane claims only when the main lane's kinds are drained for this worker (or its job waited `sideLaneWaitMs`).
    const after = { kinds: mainKinds, maxWaitMs: this.opts.sideLaneWaitMs ?? sideLaneWaitSetting() };
    const lanes = side.map((l) => this.sideLane(l, signal, { leaseMs, heartbeatMs, pollMs, log, outage, started: () => started, after }));
    /** Past its idle time (`idleExitMs`) with nothing else to do: no CLI search lately, no work beside the jobs due (a store out of reach: none). */
    const idleLongEnough = async () => {
      // A side lane at work (speech) is not idle time.
      if (this.sideBusy > 0) {
        idleSince = Date.now();
        return false;
      }
      if (this.opts.idleExitMs === undefined || Date.now() - idleSince < this.opts.idleExitMs) return false;
      if (this.opts.lastActiveAt !== undefined && Date.now() - this.opts.lastActiveAt() < (this.opts.busyGraceMs ?? 0)) return false;
      return (await this.engine.besideJobsDue?.().catch(() => false)) !== true;
    };
    try {
      while (!signal.aborted) {
        // Any failure of the queue's own calls (the database went away) is waited out with
        // backoff, never the end of the process; the claim is retried once the store answers.
        let job: ClaimedJob | undefined;
        try {
          if (!started) await start();
          job = mainKinds.length ? await this.claim(leaseMs, undefined, mainKinds) : undefined;
          if (outage.over()) await beat();
          if (!job) {
            await reapStoppedWorkers(store, this.id);
            await stranded();
            await housekeeping();
            if ((await idleLongEnough()) && (await this.retire(info))) return;
            await sleep(pollMs, undefined, { signal }).catch(() => {});
            continue;
          }
        } catch (err) {
          if (signal.aborted) break;
          // Idle time counts whatever the store's state: a store gone for good does not keep an
          // auto-started worker alive (it cannot deregister; its heartbeat goes stale instead).
          if (await idleLongEnough()) {
            log(`idle for ${Math.round((Date.now() - idleSince) / 1000)} s, the job store out of reach: exiting`);
            return;
          }
          await outage.wait(err, signal);
          continue;
        }
        const o = { leaseMs, heartbeatMs, signal, log, outage };
        // Beside a long job, jobs of owners with nothing running (the fair lane).
        const done = new AbortController();
        const fair = fairLaneMs > 0 ? this.fairLane(done.signal, fairLaneMs, pollMs, o, mainKinds) : undefined;
        let interruptedBy: unknown;
        this.mainRunning++;
        try {
          interruptedBy = await this.work(job, o);
        } finally {
          this.mainRunning--;
          done.abort();
          await fair;
          // The main lane may be drained now: the side lanes look at once rather than at their next poll.
          this.wakeSides();
        }
        if (interruptedBy === undefined) jobDeps.over();
        else await jobDeps.wait(interruptedBy, signal);
        idleSince = Date.now();
      }
    } finally {
      // Retiring (idle) or stopping: the side lanes end with the main loop.
      this.stopSides.abort();
      await Promise.all(lanes);
      besideStop.abort();
      await beside;
      clearInterval(beatTimer);
      await registry.remove(this.id).catch(() => {}); // the store may be closed already
    }
  }

  private readonly stopSides = new AbortController();
  /** Aborted (and replaced) when a main-lane job ends: wakes the side lanes from their poll. */
  private sideWake = new AbortController();

  private wakeSides(): void {
    const wake = this.sideWake;
    this.sideWake = new AbortController();
    wake.abort();
  }

  /**
   * A side lane: claims only its kinds, one job at a time, until the worker stops or retires, and
   * only after the main lane (`o.after`: none of the main kinds running on this worker or waiting
   * in the queue, unless its job has waited `maxWaitMs`). A store that fails is waited out here
   * too (the main loop logs the outage).
   */
  private async sideLane(
    lane: { name: string; kinds: readonly JobKind[] },
    signal: AbortSignal,
    o: { leaseMs: number; heartbeatMs: number; pollMs: number; log: (line: string) => void; outage: Outage; started: () => boolean; after: NonNullable<ClaimOptions['after']> },
  ): Promise<void> {
    const until = AbortSignal.any([signal, this.stopSides.signal]);
    while (!until.aborted) {
      let job: ClaimedJob | undefined;
      try {
        job = o.started() ? await this.claim(o.leaseMs, { after: o.after }, lane.kinds) : undefined;
      } catch {
        job = undefined;
      }
      if (!job) {
        await sleep(o.pollMs, undefined, { signal: AbortSignal.any([until, this.sideWake.signal]) }).catch(() => {});
        continue;
      }
      this.sideBusy++;
      try {
        o.log(`${lane.name} lane: job ${job.id}`);
        await this.work(job, { ...o, signal }, { mainRunning: () => this.mainRunning, maxWaitMs: o.after.maxWaitMs ?? sideLaneWaitSetting() });
      } finally {
        this.sideBusy--;
      }
    }
  }

  private claim(leaseMs: number, opts?: ClaimOptions, kinds?: readonly JobKind[]) {
    return this.engine.catalog.queue.claim(
      this.id,
      leaseMs,
      kinds ?? this.opts.kinds,
      (gaveUp) => this.engine.failJobSubject(gaveUp, gaveUp.lastError ?? `processing stopped ${gaveUp.attempts} times without finishing; giving up`),
      opts,
    );
  }

  /**
   * The second lane: from `afterMs` into the main job until it ends, runs jobs of owners that have
   * nothing running, one at a time. A job it started is finished even if the main one ends first;
   * a store that fails is left to the main loop's backoff.
   */
  private async fairLane(mainDone: AbortSignal, afterMs: number, pollMs: number, o: Parameters<Worker['work']>[1], kinds: readonly JobKind[]): Promise<void> {
    const until = AbortSignal.any([o.signal, mainDone]);
    // Its claims fail with the store like the main loop's: waited out with the same growing backoff.
    const outage = new Outage((line) => o.log(`fair lane: ${line}`), 'the job store', this.opts.backoffMs);
    await sleep(afterMs, undefined, { signal: until }).catch(() => {});
    while (!until.aborted) {
      let job: ClaimedJob | undefined;
      try {
        job = await this.claim(o.leaseMs, { idleOwnersOnly: true }, kinds);
        outage.over();
      } catch (err) {
        await outage.wait(err, until);
        continue;
      }
      if (job) {
        o.log('fair lane: a job of another owner beside the long one');
        this.mainRunning++;
        try {
          await this.work(job, o);
        } finally {
          this.mainRunning--;
        }
      } else await sleep(pollMs, undefined, { signal: until }).catch(() => {});
    }
  }

  /**
   * Runs one claimed job and settles it. When the store fails under it (the job's own writes or
   * the settling), the job is neither failed nor lost: once the store answers again it goes back
   * to the queue (its attempt not counted) and is redone; results land only under the claim's
   * token, so a job whose results did commit is not redone. Answers the outage that interrupted
   * the job, if one did.
   */
  private async work(job: ClaimedJob, o: { leaseMs: number; heartbeatMs: number; signal: AbortSignal; log: (line: string) => void; outage: Outage }, beside?: JobContext['beside']): Promise<unknown> {
    const { queue } = this.engine.catalog;
    const { leaseMs, signal, log } = o;
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
    }, Math.min(o.heartbeatMs, leaseMs / 3));
    try {
      try {
        const ctx: JobContext = { signal: jobAbort.signal, job: { id: job.id, token: job.token }, ...(beside ? { beside } : {}) };
        const outcome = await this.engine.runJob(job, ctx);
        const settled =
          outcome === 'done'
            ? ctx.settled || (await queue.complete(job.id, job.token))
            : await queue.fail(job.id, job.token, 'the work failed; see the video or task for the message');
        log(`job ${job.id} ${outcome}${settled ? '' : ' (its lease had passed to another claim)'}`);
      } catch (err) {
        if (signal.aborted) await queue.release(job.id, job.token);
        else if (asUnavailable(err)) throw err;
        else if (await queue.fail(job.id, job.token, errorMessage(err))) await this.engine.failJobSubject(job, `internal error: ${errorMessage(err)}`);
        log(`job ${job.id} stopped: ${errorMessage(err)}`);
      }
    } catch (err) {
      // The store failed under the job (or while settling it): hand it back once it answers again.
      log(`job ${job.id} interrupted: ${errorMessage(asUnavailable(err)?.cause ?? err)}`);
      while (!signal.aborted) {
        try {
          const back = await queue.release(job.id, job.token);
          log(`job ${job.id} ${back ? 'back in the queue' : 'already settled or taken over by another claim'}`);
          break;
        } catch (retryErr) {
          await o.outage.wait(retryErr, signal);
        }
      }
      return err;
    } finally {
      clearInterval(renewTimer);
      signal.removeEventListener('abort', onStop);
    }
  }
}

/**
 * Backoff while `what` (the job store, or what a job needs) cannot be reached: waits grow from
 * `backoffMs[0]` to `backoffMs[1]` (doubling), one log line per wait naming what failed, and
 * `over()` says once that it answered again.
 */
class Outage {
  private failures = 0;
  private readonly first: number;
  private readonly most: number;

  constructor(
    private readonly log: (line: string) => void,
    private readonly what: string,
    backoffMs: readonly [number, number] = [500, 5_000],
  ) {
    [this.first, this.most] = backoffMs;
  }

  async wait(err: unknown, signal: AbortSignal): Promise<void> {
    const ms = Math.min(this.most, this.first * 2 ** Math.min(this.failures, 20));
    this.failures++;
    const down = asUnavailable(err);
    const why = down ? `cannot reach ${down.dependency} (${errorMessage(down.cause ?? down)})` : `${this.what} failed (${errorMessage(err)})`;
    this.log(`${why}; retrying in ${ms / 1000} s`);
    await sleep(ms, undefined, { signal }).catch(() => {});
  }

  /** True once after failures, when a call succeeded again. */
  over(): boolean {
    if (this.failures === 0) return false;
    this.log(`${this.what} answers again after ${this.failures} failed attempt(s)`);
    this.failures = 0;
    return true;
  }
}

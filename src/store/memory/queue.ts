import { newId } from '../ids.js';
import {
  checkLeaseMs,
  checkMaxAttempts,
  DEFAULT_JOB_OWNER,
  DEFAULT_MAX_ATTEMPTS,
  giveUpMessage,
  type ClaimedJob,
  type ClaimOptions,
  type GiveUpHandler,
  type JobKind,
  type JobQueue,
  type LiveWorker,
  type QueuedJob,
  type WorkerInfo,
  type WorkerRegistry,
} from '../queue/types.js';
import type { JobRecord, MemoryStore } from './state.js';

const job = (r: JobRecord): QueuedJob => {
  const { seq: _seq, claimSeq: _claimSeq, ...out } = r;
  return out;
};

/**
 * The job queue of an in-memory store (rules: src/store/queue/types.ts). Each call does its work
 * synchronously, so a claim is atomic; times are this process's clock.
 */
export class MemoryJobQueue implements JobQueue {
  constructor(private readonly store: MemoryStore) {}

  private get jobs(): Map<string, JobRecord> {
    return this.store.state.jobs;
  }

  /** The job while `token` holds it (running under that token). */
  private held(jobId: string, token: number): JobRecord | undefined {
    const j = this.jobs.get(jobId);
    return j && j.status === 'running' && j.token === token ? j : undefined;
  }

  async enqueue(kind: JobKind, refId: string, maxAttempts = DEFAULT_MAX_ATTEMPTS, given?: string): Promise<string> {
    const { state } = this.store;
    const videoCollection = state.videos.get(refId)?.collection_id;
    const owner = given ?? state.tasks.get(refId)?.owner ?? (videoCollection && state.collections.get(videoCollection)?.owner) ?? DEFAULT_JOB_OWNER;
    checkMaxAttempts(maxAttempts);
    const id = newId('job');
    const now = Date.now();
    this.jobs.set(id, {
      id,
      kind,
      refId,
      owner,
      status: 'queued',
      attempts: 0,
      maxAttempts,
      leaseOwner: null,
      token: 0,
      leaseExpiresAt: null,
      lastError: null,
      createdAt: now,
      updatedAt: now,
      seq: this.store.state.nextSeq(),
      claimSeq: null,
    });
    return id;
  }

  async claim(workerId: string, leaseMs: number, kinds?: readonly JobKind[], onGiveUp?: GiveUpHandler, opts: ClaimOptions = {}): Promise<ClaimedJob | undefined> {
    const lease = checkLeaseMs(leaseMs);
    const now = Date.now();
    const gaveUp: QueuedJob[] = [];
    // The fair order (src/store/queue/types.ts): live jobs of the owner, the owner's last claim, age.
    const live = new Map<string, number>();
    const served = new Map<string, number>();
    for (const j of this.jobs.values()) {
      if (j.status === 'running' && j.leaseExpiresAt! >= now) live.set(j.owner, (live.get(j.owner) ?? 0) + 1);
      if (j.claimSeq !== null) served.set(j.owner, Math.max(served.get(j.owner) ?? 0, j.claimSeq));
    }
    // `after`: owners with a job of its kinds claimable, or running under this worker's own lease.
    const afterKinds = opts.after?.kinds ?? [];
    const ahead = new Set(
      [...this.jobs.values()]
        .filter((a) => afterKinds.includes(a.kind) && (a.status === 'queued' || (a.status === 'running' && (a.leaseExpiresAt! < now || a.leaseOwner === workerId))))
        .map((a) => a.owner),
    );
    const runnable = [...this.jobs.values()]
      .filter((j) => (j.status === 'queued' || (j.status === 'running' && j.leaseExpiresAt! < now)) && (!kinds?.length || kinds.includes(j.kind)))
      .filter((j) => !opts.idleOwnersOnly || !live.has(j.owner))
      .filter((j) => !ahead.has(j.owner) || (opts.after?.maxWaitMs !== undefined && j.createdAt <= now - Math.max(0, opts.after.maxWaitMs)))
      .sort(
        (a, b) =>
          (live.get(a.owner) ?? 0) - (live.get(b.owner) ?? 0) ||
          (served.get(a.owner) ?? 0) - (served.get(b.owner) ?? 0) ||
          a.createdAt - b.createdAt ||
          a.seq - b.seq,
      );
    let claimed: JobRecord | undefined;
    for (const j of runnable) {
      if (j.attempts >= j.maxAttempts) {
        // Its worker stopped on each of its attempts: redoing it again would only stop another.
        Object.assign(j, { status: 'failed', leaseOwner: null, leaseExpiresAt: null, lastError: j.lastError ?? giveUpMessage(j.attempts), updatedAt: now });
        gaveUp.push(job(j));
        continue;
      }
      Object.assign(j, { status: 'running', attempts: j.attempts + 1, leaseOwner: workerId, token: j.token + 1, leaseExpiresAt: now + lease, updatedAt: now, claimSeq: this.store.state.nextSeq() });
      claimed = j;
      break;
    }
    const out = claimed && (job(claimed) as ClaimedJob);
    for (const g of gaveUp) await onGiveUp?.(g);
    return out;
  }

  async renew(jobId: string, token: number, leaseMs: number): Promise<boolean> {
    const lease = checkLeaseMs(leaseMs);
    const j = this.held(jobId, token);
    if (!j) return false;
    const now = Date.now();
    Object.assign(j, { leaseExpiresAt: now + lease, updatedAt: now });
    return true;
  }

  async complete(jobId: string, token: number): Promise<boolean> {
    const j = this.held(jobId, token);
    if (!j) return false;
    Object.assign(j, { status: 'done', leaseExpiresAt: null, updatedAt: Date.now() });
    return true;
  }

  async fail(jobId: string, token: number, error: string): Promise<boolean> {
    const j = this.held(jobId, token);
    if (!j) return false;
    Object.assign(j, { status: 'failed', lastError: error, leaseExpiresAt: null, updatedAt: Date.now() });
    return true;
  }

  async release(jobId: string, token: number): Promise<boolean> {
    const j = this.held(jobId, token);
    if (!j) return false;
    Object.assign(j, { status: 'queued', attempts: Math.max(j.attempts - 1, 0), leaseOwner: null, leaseExpiresAt: null, updatedAt: Date.now() });
    return true;
  }

  async expireLeasesOf(workerId: string): Promise<number> {
    let n = 0;
    for (const j of this.jobs.values()) {
      if (j.leaseOwner !== workerId || j.status !== 'running') continue;
      j.leaseExpiresAt = 0;
      n++;
    }
    return n;
  }

  async cancelFor(refId: string): Promise<number> {
    const now = Date.now();
    let n = 0;
    for (const j of [...this.jobs.values()]) {
      if (j.refId !== refId) continue;
      if (j.status === 'queued') {
        this.jobs.delete(j.id);
        n++;
      } else if (j.status === 'running') {
        Object.assign(j, { status: 'failed', leaseOwner: null, leaseExpiresAt: null, lastError: 'cancelled: its subject was deleted', updatedAt: now });
        n++;
      }
    }
    return n;
  }

  async cancel(jobId: string, reason: string): Promise<QueuedJob | undefined> {
    const j = this.jobs.get(jobId);
    if (!j || (j.status !== 'queued' && j.status !== 'running')) return undefined;
    const before = job(j);
    Object.assign(j, { status: 'failed', leaseOwner: null, leaseExpiresAt: null, lastError: reason, updatedAt: Date.now() });
    return before;
  }

  async pending(owner?: string): Promise<QueuedJob[]> {
    return [...this.jobs.values()]
      .filter((j) => (j.status === 'queued' || j.status === 'running') && (owner === undefined || j.owner === owner))
      .sort((a, b) => a.createdAt - b.createdAt || a.seq - b.seq)
      .map(job);
  }

  async holds(jobId: string, token: number): Promise<boolean> {
    return this.held(jobId, token) !== undefined;
  }

  async get(jobId: string): Promise<QueuedJob | undefined> {
    const j = this.jobs.get(jobId);
    return j && job(j);
  }

  async pendingCount(): Promise<number> {
    let n = 0;
    for (const j of this.jobs.values()) if (j.status === 'queued' || j.status === 'running') n++;
    return n;
  }

  async close(): Promise<void> {}
}

/** Workers by heartbeat time, in an in-memory store. */
export class MemoryWorkerRegistry implements WorkerRegistry {
  constructor(private readonly store: MemoryStore) {}

  async heartbeat(workerId: string, info: WorkerInfo): Promise<void> {
    this.store.state.workers.set(workerId, { ...info, kinds: info.kinds && [...info.kinds], id: workerId, heartbeatAt: Date.now() });
  }

  async alive(withinMs: number): Promise<LiveWorker[]> {
    const since = Date.now() - withinMs;
    return [...this.store.state.workers.values()]
      .filter((w) => w.heartbeatAt >= since)
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map((w) => ({ ...w, kinds: w.kinds && [...w.kinds] }));
  }

  async remove(workerId: string): Promise<boolean> {
    return this.store.state.workers.delete(workerId);
  }

  async close(): Promise<void> {}
}

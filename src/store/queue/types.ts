import { JOB_KINDS, type JobKind } from '../../api/defaults.js';

export { JOB_KINDS, type JobKind };
export type JobStatus = 'queued' | 'running' | 'done' | 'failed';

/** A job as the queue holds it. Times are milliseconds since the epoch, of the backend's clock. */
export interface QueuedJob {
  id: string;
  kind: JobKind;
  refId: string;
  /** Whose work it is (the owner of the video or task): claims take owners in turn. */
  owner: string;
  status: JobStatus;
  /** Claims that were not handed back (release) — each started an attempt. */
  attempts: number;
  maxAttempts: number;
  /** The worker that holds (or last held) the lease; null once the job is settled or handed back. */
  leaseOwner: string | null;
  /** The fencing token of the latest claim: 0 before the first one, +1 on every claim. */
  token: number;
  leaseExpiresAt: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

/** What a claim hands its worker: the job, and the token that every later call about it must carry. */
export interface ClaimedJob extends QueuedJob {
  status: 'running';
  leaseOwner: string;
  leaseExpiresAt: number;
}

/**
 * Called for each job a claim gave up on (its worker stopped maxAttempts times), after the claim's
 * transaction committed, so the engine can fail the job's subject (video, task).
 */
export type GiveUpHandler = (job: QueuedJob) => void | Promise<void>;

/**
 * The durable job queue the engine needs, on any backend (SQLite: src/store/queue/sqlite.ts,
 * PostgreSQL: src/store/queue/postgres.ts). One conformance suite (test/conformance/queue.ts)
 * holds both to these rules:
 *
 * - claim takes a runnable job — queued, or running under a lease that has run out — marks it
 *   running under `workerId` for `leaseMs`, counts an attempt and increments its fencing token.
 *   Two claimers never get the same job while its lease runs.
 * - claims are fair across owners: the job taken is one of the owner with the fewest jobs running
 *   (under a live lease), among those the owner served least recently (never served first), and
 *   that owner's oldest runnable job: owners take turns, each in its own order.
 *   `idleOwnersOnly` takes only jobs of owners with nothing running (a worker's second lane).
 * - renew, complete, fail and release take the token of the claim. They are refused (false) once
 *   another claim took the job (the token moved on), or the job was cancelled or settled. A lease
 *   that ran out but that nobody has claimed since is still its holder's: these calls accept it;
 *   what protects the work of a worker that took over is the token.
 * - complete and fail settle the job (done / failed); a failed job is not retried.
 * - release hands the job back (graceful shutdown) without counting the attempt.
 * - a job whose lease ran out after its maxAttempts-th attempt is not claimed again: the claim that
 *   finds it marks it failed ("gave up after N attempts") and reports it to `onGiveUp`.
 * - cancelFor drops the queued jobs of a subject and fails its running ones, so their holders'
 *   complete/fail/renew are refused.
 * - cancel fails one queued or running job with a reason (its holder is refused from then on), and
 *   answers the job as it was; settled or unknown jobs are left alone (undefined).
 * - pending lists queued and running jobs, oldest first (an owner's alone when given).
 */
export interface JobQueue {
  /** `owner`: by default the subject's (the task's, or the video's collection's), else "default". */
  enqueue(kind: JobKind, refId: string, maxAttempts?: number, owner?: string): Promise<string>;
  claim(workerId: string, leaseMs: number, kinds?: readonly JobKind[], onGiveUp?: GiveUpHandler, opts?: ClaimOptions): Promise<ClaimedJob | undefined>;
  /** Extends the lease to `leaseMs` from now; false when this token no longer holds the job. */
  renew(jobId: string, token: number, leaseMs: number): Promise<boolean>;
  complete(jobId: string, token: number): Promise<boolean>;
  fail(jobId: string, token: number, error: string): Promise<boolean>;
  /** Gives the job back to the queue without counting the attempt; false when the token no longer holds it. */
  release(jobId: string, token: number): Promise<boolean>;
  /**
   * Ends the leases a stopped worker holds (its running jobs become claimable now rather than when
   * their leases run out); how many. The attempts stay counted and the tokens unchanged, so the
   * stopped worker, were it alive after all, could still settle a job until another claim takes it.
   */
  expireLeasesOf(workerId: string): Promise<number>;
  /** Drops queued jobs about `refId` and fails the running ones; how many it touched. */
  cancelFor(refId: string): Promise<number>;
  /** Fails a queued or running job with `reason`; the job as it was before, or undefined when it was not pending. */
  cancel(jobId: string, reason: string): Promise<QueuedJob | undefined>;
  /** Queued and running jobs, oldest first; only `owner`'s when given. */
  pending(owner?: string): Promise<QueuedJob[]>;
  /** True while the claim with `token` holds the job (running under that token); in a transaction, the fencing check for the job's results. */
  holds(jobId: string, token: number): Promise<boolean>;
  get(jobId: string): Promise<QueuedJob | undefined>;
  /** Queued or running jobs (what a worker about to retire must look at). */
  pendingCount(): Promise<number>;
  close(): Promise<void>;
}

export interface WorkerInfo {
  /** The process id on its own host: shown to people, never used to judge liveness. */
  pid: number;
  host: string;
  kinds?: JobKind[];
}

export interface LiveWorker extends WorkerInfo {
  id: string;
  heartbeatAt: number;
}

/**
 * Who is working, judged by heartbeat time, not by pid: a pid means nothing on another machine
 * and can be reused on this one. A worker beats every few seconds; `alive(withinMs)` lists those
 * whose last beat is at most `withinMs` old (by the backend's clock).
 */
export interface WorkerRegistry {
  heartbeat(workerId: string, info: WorkerInfo): Promise<void>;
  alive(withinMs: number): Promise<LiveWorker[]>;
  remove(workerId: string): Promise<boolean>;
  close(): Promise<void>;
}

export interface ClaimOptions {
  /** Only jobs of owners that have no job running under a live lease. */
  idleOwnersOnly?: boolean;
}

export const DEFAULT_MAX_ATTEMPTS = 3;
/** The owner of jobs enqueued without one (what existed before owners, the local CLI's). */
export const DEFAULT_JOB_OWNER = 'default';

/**
 * SQL (both dialects) for the owner of the job's subject `ref`: the task's, else the video's
 * collection's, else DEFAULT_JOB_OWNER. What an enqueue without an owner records.
 */
export function subjectOwnerSql(ref: string): string {
  return `COALESCE((SELECT t.owner FROM tasks t WHERE t.id = ${ref}),
    (SELECT c.owner FROM videos v JOIN collections c ON c.id = v.collection_id WHERE v.id = ${ref}), '${DEFAULT_JOB_OWNER}')`;
}

export function giveUpMessage(attempts: number): string {
  return `gave up after ${attempts} attempts (the worker stopped each time)`;
}

export function checkMaxAttempts(maxAttempts: number): number {
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new RangeError(`maxAttempts must be a positive integer, not ${maxAttempts}`);
  return maxAttempts;
}

export function checkLeaseMs(leaseMs: number): number {
  if (!Number.isFinite(leaseMs) || leaseMs <= 0) throw new RangeError(`leaseMs must be positive, not ${leaseMs}`);
  return Math.ceil(leaseMs);
}

/**
 * A `jobs` row as either backend reads it (snake case; PostgreSQL hands bigints over as strings
 * and epoch milliseconds as floats), and the one mapping to a QueuedJob.
 */
export interface JobRecord {
  id: string;
  kind: JobKind;
  ref_id: string;
  owner: string;
  status: QueuedJob['status'];
  attempts: number;
  max_attempts: number;
  lease_owner: string | null;
  lease_token: number | string;
  lease_expires_at: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

export function jobFromRecord(r: JobRecord): QueuedJob {
  return {
    id: r.id,
    kind: r.kind,
    refId: r.ref_id,
    owner: r.owner,
    status: r.status,
    attempts: r.attempts,
    maxAttempts: r.max_attempts,
    leaseOwner: r.lease_owner,
    token: Number(r.lease_token),
    leaseExpiresAt: r.lease_expires_at === null ? null : Math.round(r.lease_expires_at),
    lastError: r.last_error,
    createdAt: Math.round(r.created_at),
    updatedAt: Math.round(r.updated_at),
  };
}

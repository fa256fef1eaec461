import type { Db } from './db.js';
import { newId } from './ids.js';

export type JobKind = 'video.process' | 'task.embedding' | 'task.tagging';

export interface JobRow {
  id: string;
  kind: JobKind;
  ref_id: string;
  status: 'queued' | 'running' | 'done' | 'failed';
  attempts: number;
  max_attempts: number;
  lease_owner: string | null;
  /** Incremented by every claim, here and in src/store/queue (which fences by it, not by owner). */
  lease_token: number;
  lease_expires_at: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

/**
 * Durable job queue in the same database as the data it works on. A worker claims a job with a
 * lease it keeps renewing; a worker that dies stops renewing, and the next claim picks the job up
 * again once the lease has expired. Completion is fenced by the lease owner, so a worker that lost
 * its lease cannot overwrite the work of the one that took over.
 */
export class JobQueue {
  constructor(private readonly db: Db) {}

  /**
   * Drops the queued jobs about `refId`, and takes a running one away from its worker: its lease
   * is cleared and it is marked failed, so the fenced completion of that worker finds nothing.
   */
  cancelFor(refId: string): number {
    const now = Date.now();
    const queued = this.db.prepare(`DELETE FROM jobs WHERE ref_id = ? AND status = 'queued'`).run(refId).changes;
    const running = this.db
      .prepare(`UPDATE jobs SET status = 'failed', lease_owner = NULL, last_error = 'cancelled: its subject was deleted', updated_at = ? WHERE ref_id = ? AND status = 'running'`)
      .run(now, refId).changes;
    return queued + running;
  }

  enqueue(kind: JobKind, refId: string, maxAttempts = 3): string {
    const id = newId('job');
    const now = Date.now();
    this.db
      .prepare(
        `INSERT INTO jobs (id, kind, ref_id, status, attempts, max_attempts, created_at, updated_at)
         VALUES (?, ?, ?, 'queued', 0, ?, ?, ?)`,
      )
      .run(id, kind, refId, maxAttempts, now, now);
    return id;
  }

  /**
   * Claims the oldest runnable job: queued, or running under an expired lease. A job whose lease
   * expired after its last allowed attempt is failed instead (it keeps crashing its worker).
   */
  claim(owner: string, leaseMs: number, kinds?: JobKind[], onGiveUp?: (job: JobRow) => void): JobRow | undefined {
    return this.db
      .transaction((): JobRow | undefined => {
        const now = Date.now();
        const kindFilter = kinds?.length ? `AND kind IN (${kinds.map(() => '?').join(',')})` : '';
        const candidates = this.db
          .prepare(
            `SELECT * FROM jobs WHERE (status = 'queued' OR (status = 'running' AND lease_expires_at < ?)) ${kindFilter}
             ORDER BY created_at LIMIT 16`,
          )
          .all(now, ...(kinds ?? [])) as JobRow[];
        for (const job of candidates) {
          if (job.attempts >= job.max_attempts) {
            this.db
              .prepare(`UPDATE jobs SET status = 'failed', lease_owner = NULL, updated_at = ?, last_error = ? WHERE id = ?`)
              .run(now, job.last_error ?? `gave up after ${job.attempts} attempts (the worker stopped each time)`, job.id);
            onGiveUp?.(job);
            continue;
          }
          this.db
            .prepare(
              `UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_owner = ?, lease_token = lease_token + 1, lease_expires_at = ?, updated_at = ?
               WHERE id = ?`,
            )
            .run(owner, now + leaseMs, now, job.id);
          return this.byId(job.id);
        }
        return undefined;
      })
      .immediate();
  }

  /** Extends a lease; false when this owner no longer holds it. */
  renew(jobId: string, owner: string, leaseMs: number): boolean {
    const now = Date.now();
    const info = this.db
      .prepare(`UPDATE jobs SET lease_expires_at = ?, updated_at = ? WHERE id = ? AND lease_owner = ? AND status = 'running'`)
      .run(now + leaseMs, now, jobId, owner);
    return info.changes === 1;
  }

  complete(jobId: string, owner: string): boolean {
    const info = this.db
      .prepare(
        `UPDATE jobs SET status = 'done', lease_expires_at = NULL, updated_at = ? WHERE id = ? AND lease_owner = ? AND status = 'running'`,
      )
      .run(Date.now(), jobId, owner);
    return info.changes === 1;
  }

  fail(jobId: string, owner: string, error: string): boolean {
    const info = this.db
      .prepare(
        `UPDATE jobs SET status = 'failed', last_error = ?, lease_expires_at = NULL, updated_at = ?
         WHERE id = ? AND lease_owner = ? AND status = 'running'`,
      )
      .run(error, Date.now(), jobId, owner);
    return info.changes === 1;
  }

  /** Gives a job back to the queue (graceful shutdown), without counting the attempt. */
  release(jobId: string, owner: string): void {
    this.db
      .prepare(
        `UPDATE jobs SET status = 'queued', attempts = MAX(attempts - 1, 0), lease_owner = NULL, lease_expires_at = NULL, updated_at = ?
         WHERE id = ? AND lease_owner = ? AND status = 'running'`,
      )
      .run(Date.now(), jobId, owner);
  }

  byId(id: string): JobRow | undefined {
    return this.db.prepare('SELECT * FROM jobs WHERE id = ?').get(id) as JobRow | undefined;
  }

  pendingCount(): number {
    return this.db
      .prepare(`SELECT COUNT(*) FROM jobs WHERE status = 'queued' OR status = 'running'`)
      .pluck()
      .get() as number;
  }
}

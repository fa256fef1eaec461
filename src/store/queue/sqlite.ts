import os from 'node:os';
import { openDatabase, type Db } from '../db.js';
import { newId } from '../ids.js';
import {
  checkLeaseMs,
  checkMaxAttempts,
  DEFAULT_MAX_ATTEMPTS,
  subjectOwnerSql,
  giveUpMessage,
  jobFromRecord,
  type ClaimedJob,
  type ClaimOptions,
  type JobRecord,
  type GiveUpHandler,
  type JobKind,
  type JobQueue,
  type LiveWorker,
  type QueuedJob,
  type WorkerInfo,
  type WorkerRegistry,
} from './types.js';

type Row = JobRecord;

const toJob = jobFromRecord;

/**
 * Subjects (rows of `table`) in one of `waiting` statuses that no job will finish: none of their
 * jobs is queued or running. With the last_error of their job updated last (null when it recorded
 * none, or there is no job).
 */
export function strandedSubjects(db: Db, table: 'videos' | 'tasks', waiting: readonly string[]): Array<{ id: string; last_error: string | null }> {
  return db
    .prepare(
      `SELECT s.id, (SELECT j.last_error FROM jobs j WHERE j.ref_id = s.id ORDER BY j.updated_at DESC LIMIT 1) AS last_error
       FROM ${table} s
       WHERE s.status IN (${waiting.map(() => '?').join(', ')})
         AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.ref_id = s.id AND j.status IN ('queued', 'running'))`,
    )
    .all(...waiting) as Array<{ id: string; last_error: string | null }>;
}

/**
 * The job queue on the `jobs` table of a vidembed SQLite database. better-sqlite3 is synchronous: every call does its work before returning a settled promise. A
 * claim is one IMMEDIATE transaction, so claimers in other connections or processes wait for it
 * (busy_timeout) rather than read the same candidate. Times come from this process's clock, which
 * is the machine's: every process that opens the file runs on this machine.
 */
export class SqliteJobQueue implements JobQueue {
  constructor(
    readonly db: Db,
    private readonly ownsDb = false,
  ) {}

  async enqueue(kind: JobKind, refId: string, maxAttempts = DEFAULT_MAX_ATTEMPTS, owner?: string): Promise<string> {
    checkMaxAttempts(maxAttempts);
    const id = newId('job');
    const now = Date.now();
    this.db
      .prepare(
        `INSERT INTO jobs (id, kind, ref_id, owner, status, attempts, max_attempts, lease_token, created_at, updated_at)
         VALUES (@id, @kind, @ref, COALESCE(@owner, ${subjectOwnerSql('@ref')}), 'queued', 0, @max, 0, @now, @now)`,
      )
      .run({ id, kind, ref: refId, owner: owner ?? null, max: maxAttempts, now });
    return id;
  }

  async claim(workerId: string, leaseMs: number, kinds?: readonly JobKind[], onGiveUp?: GiveUpHandler, opts: ClaimOptions = {}): Promise<ClaimedJob | undefined> {
    const lease = checkLeaseMs(leaseMs);
    const kindFilter = kinds?.length ? `AND kind IN (${kinds.map((_, i) => `@k${i}`).join(',')})` : '';
    // The fair order (src/store/queue/types.ts): owners with fewer live jobs, then served least
    // recently (a NULL claim_seq, never served, sorts first), then the owner's oldest job.
    const running = `(SELECT COUNT(*) FROM jobs r WHERE r.owner = j.owner AND r.status = 'running' AND r.lease_expires_at >= @now)`;
    // `after`: none of its kinds of the job's owner claimable nor running under this worker's lease, or the job waited long enough.
    const afterKinds = opts.after?.kinds ?? [];
    const afterWait = opts.after?.maxWaitMs;
    const afterFilter = afterKinds.length
      ? `AND (NOT EXISTS (SELECT 1 FROM jobs a WHERE a.owner = j.owner AND a.kind IN (${afterKinds.map((_, i) => `@a${i}`).join(',')})
             AND (a.status = 'queued' OR (a.status = 'running' AND (a.lease_expires_at < @now OR a.lease_owner = @worker))))
           ${afterWait !== undefined ? 'OR j.created_at <= @now - @afterWait' : ''})`
      : '';
    const next = this.db.prepare(
      `SELECT * FROM jobs j WHERE (status = 'queued' OR (status = 'running' AND lease_expires_at < @now)) ${kindFilter}
         ${opts.idleOwnersOnly ? `AND ${running} = 0` : ''} ${afterFilter}
       ORDER BY ${running}, (SELECT MAX(s.claim_seq) FROM jobs s WHERE s.owner = j.owner), created_at, rowid LIMIT 1`,
    );
    const kindParams = {
      ...Object.fromEntries((kinds ?? []).map((k, i) => [`k${i}`, k])),
      ...(afterKinds.length ? { worker: workerId, ...Object.fromEntries(afterKinds.map((k, i) => [`a${i}`, k])) } : {}),
      ...(afterKinds.length && afterWait !== undefined ? { afterWait: Math.max(0, afterWait) } : {}),
    };
    const giveUp = this.db.prepare(
      `UPDATE jobs SET status = 'failed', lease_owner = NULL, lease_expires_at = NULL, last_error = ?, updated_at = ? WHERE id = ?`,
    );
    const take = this.db.prepare(
      `UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_owner = ?, lease_token = lease_token + 1,
         lease_expires_at = ?, updated_at = ?, claim_seq = (SELECT COALESCE(MAX(claim_seq), 0) + 1 FROM jobs)
       WHERE id = ? RETURNING *`,
    );
    const gaveUp: QueuedJob[] = [];
    const claimed = this.db
      .transaction((): Row | undefined => {
        const now = Date.now();
        for (;;) {
          const job = next.get({ now, ...kindParams }) as Row | undefined;
          if (!job) return undefined;
          if (job.attempts >= job.max_attempts) {
            // Its worker stopped on each of its attempts: redoing it again would only stop another.
            const lastError = job.last_error ?? giveUpMessage(job.attempts);
            giveUp.run(lastError, now, job.id);
            gaveUp.push(toJob({ ...job, status: 'failed', lease_owner: null, lease_expires_at: null, last_error: lastError, updated_at: now }));
            continue;
          }
          return take.get(workerId, now + lease, now, job.id) as Row;
        }
      })
      .immediate();
    for (const job of gaveUp) await onGiveUp?.(job);
    return claimed ? (toJob(claimed) as ClaimedJob) : undefined;
  }

  async renew(jobId: string, token: number, leaseMs: number): Promise<boolean> {
    const now = Date.now();
    return (
      this.db
        .prepare(`UPDATE jobs SET lease_expires_at = ?, updated_at = ? WHERE id = ? AND lease_token = ? AND status = 'running'`)
        .run(now + checkLeaseMs(leaseMs), now, jobId, token).changes === 1
    );
  }

  async complete(jobId: string, token: number): Promise<boolean> {
    return (
      this.db
        .prepare(`UPDATE jobs SET status = 'done', lease_expires_at = NULL, updated_at = ? WHERE id = ? AND lease_token = ? AND status = 'running'`)
        .run(Date.now(), jobId, token).changes === 1
    );
  }

  async fail(jobId: string, token: number, error: string): Promise<boolean> {
    return (
      this.db
        .prepare(
          `UPDATE jobs SET status = 'failed', last_error = ?, lease_expires_at = NULL, updated_at = ?
           WHERE id = ? AND lease_token = ? AND status = 'running'`,
        )
        .run(error, Date.now(), jobId, token).changes === 1
    );
  }

  async release(jobId: string, token: number): Promise<boolean> {
    return (
      this.db
        .prepare(
          `UPDATE jobs SET status = 'queued', attempts = MAX(attempts - 1, 0), lease_owner = NULL, lease_expires_at = NULL, updated_at = ?
           WHERE id = ? AND lease_token = ? AND status = 'running'`,
        )
        .run(Date.now(), jobId, token).changes === 1
    );
  }

  async expireLeasesOf(workerId: string): Promise<number> {
    return this.db.prepare(`UPDATE jobs SET lease_expires_at = 0 WHERE lease_owner = ? AND status = 'running'`).run(workerId).changes;
  }

  /** Inside a caller's transaction it is a savepoint of it. */
  async cancelFor(refId: string): Promise<number> {
    return this.db
      .transaction(() => {
        const now = Date.now();
        const queued = this.db.prepare(`DELETE FROM jobs WHERE ref_id = ? AND status = 'queued'`).run(refId).changes;
        const running = this.db
          .prepare(
            `UPDATE jobs SET status = 'failed', lease_owner = NULL, lease_expires_at = NULL,
               last_error = 'cancelled: its subject was deleted', updated_at = ?
             WHERE ref_id = ? AND status = 'running'`,
          )
          .run(now, refId).changes;
        return queued + running;
      })
      .immediate();
  }

  async cancel(jobId: string, reason: string): Promise<QueuedJob | undefined> {
    const before = this.db
      .transaction(() => {
        const row = this.db.prepare(`SELECT * FROM jobs WHERE id = ? AND status IN ('queued', 'running')`).get(jobId) as Row | undefined;
        if (row) {
          this.db
            .prepare(`UPDATE jobs SET status = 'failed', lease_owner = NULL, lease_expires_at = NULL, last_error = ?, updated_at = ? WHERE id = ?`)
            .run(reason, Date.now(), jobId);
        }
        return row;
      })
      .immediate();
    return before && toJob(before);
  }

  async pending(owner?: string): Promise<QueuedJob[]> {
    const rows = this.db
      .prepare(`SELECT * FROM jobs WHERE status IN ('queued', 'running') ${owner === undefined ? '' : 'AND owner = ?'} ORDER BY created_at, rowid`)
      .all(...(owner === undefined ? [] : [owner])) as Row[];
    return rows.map(toJob);
  }

  /** True while the claim with `token` holds the job (running under that token): the fencing check for its results. */
  async holds(jobId: string, token: number): Promise<boolean> {
    return this.db.prepare(`SELECT 1 FROM jobs WHERE id = ? AND lease_token = ? AND status = 'running'`).get(jobId, token) !== undefined;
  }

  async get(jobId: string): Promise<QueuedJob | undefined> {
    const row = this.db.prepare('SELECT * FROM jobs WHERE id = ?').get(jobId) as Row | undefined;
    return row && toJob(row);
  }

  async pendingCount(): Promise<number> {
    return this.db.prepare(`SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'running')`).pluck().get() as number;
  }

  async close(): Promise<void> {
    if (this.ownsDb && this.db.open) this.db.close();
  }
}

/**
 * Workers by heartbeat on the `workers` table. The `pid` column is filled from the info; liveness
 * here is the heartbeat time alone.
 */
export class SqliteWorkerRegistry implements WorkerRegistry {
  constructor(
    readonly db: Db,
    private readonly ownsDb = false,
  ) {}

  async heartbeat(workerId: string, info: WorkerInfo): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO workers (id, pid, heartbeat_at, info_json) VALUES (?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET pid = excluded.pid, heartbeat_at = excluded.heartbeat_at, info_json = excluded.info_json`,
      )
      .run(workerId, info.pid, Date.now(), JSON.stringify(info));
  }

  async alive(withinMs: number): Promise<LiveWorker[]> {
    const rows = this.db
      .prepare('SELECT id, pid, heartbeat_at, info_json FROM workers WHERE heartbeat_at >= ? ORDER BY id')
      .all(Date.now() - withinMs) as { id: string; pid: number; heartbeat_at: number; info_json: string | null }[];
    return rows.map((r) => {
      // Rows written before worker info (migration 10) have none: they are this machine's.
      const info = r.info_json ? (JSON.parse(r.info_json) as WorkerInfo) : { pid: r.pid, host: os.hostname() };
      return { ...info, id: r.id, heartbeatAt: r.heartbeat_at };
    });
  }

  async remove(workerId: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM workers WHERE id = ?').run(workerId).changes === 1;
  }

  async close(): Promise<void> {
    if (this.ownsDb && this.db.open) this.db.close();
  }
}

/** Opens (migrating) a vidembed database file and the queue and registry on it, in one connection. */
export function openSqliteQueue(file: string): { db: Db; queue: SqliteJobQueue; registry: SqliteWorkerRegistry; close(): Promise<void> } {
  const db = openDatabase(file);
  return {
    db,
    queue: new SqliteJobQueue(db),
    registry: new SqliteWorkerRegistry(db),
    async close() {
      if (db.open) db.close();
    },
  };
}

import type pg from 'pg';
import { newId } from '../ids.js';
import { inTransaction, openMigratedPool, type Queryable } from '../pg/migrate.js';
import {
  checkLeaseMs,
  checkMaxAttempts,
  DEFAULT_MAX_ATTEMPTS,
  subjectOwnerSql,
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

const ms = (col: string) => `(extract(epoch FROM ${col}) * 1000)::float8`;
const cols = (t = '') =>
  `${t}id, ${t}kind, ${t}ref_id, ${t}owner, ${t}status, ${t}attempts, ${t}max_attempts, ${t}lease_owner, ${t}lease_token,
   ${ms(`${t}lease_expires_at`)} AS lease_expires_at, ${t}last_error, ${ms(`${t}created_at`)} AS created_at, ${ms(`${t}updated_at`)} AS updated_at`;
const interval = (param: string) => `make_interval(secs => ${param}::float8 / 1000)`;

const toJob = jobFromRecord;

/** Live jobs of the candidate's owner (the first key of the fair order, src/store/queue/types.ts). */
const RUNNING_OF_OWNER = `(SELECT count(*) FROM jobs r WHERE r.owner = c.owner AND r.status = 'running' AND r.lease_expires_at >= clock_timestamp())`;

/**
 * One claim is one statement, so one transaction: the CTE picks the next runnable job in the fair
 * order (owners with fewer live jobs, then served least recently, then the owner's oldest job) and
 * locks it (`FOR UPDATE SKIP LOCKED`: a job another claimer is taking is passed over, not waited for),
 * and the UPDATE either takes it (attempt + 1, token + 1, lease from now) or, when its attempts are
 * used up, fails it. READ COMMITTED re-checks the WHERE of a locked row against its latest version,
 * so a job claimed and committed a moment ago is not returned again.
 */
const claimSql = (idleOwnersOnly: boolean, after: boolean) => `
  WITH cand AS (
    SELECT c.id FROM jobs c
    WHERE (c.status = 'queued' OR (c.status = 'running' AND c.lease_expires_at < clock_timestamp()))
      AND ($3::text[] IS NULL OR c.kind = ANY ($3::text[]))
      ${idleOwnersOnly ? `AND ${RUNNING_OF_OWNER} = 0` : ''}
      ${after ? AFTER : ''}
    ORDER BY ${RUNNING_OF_OWNER}, (SELECT max(s.claim_seq) FROM jobs s WHERE s.owner = c.owner) NULLS FIRST, c.seq
    LIMIT 1
    FOR UPDATE OF c SKIP LOCKED
  )
  UPDATE jobs j SET
    status = CASE WHEN j.attempts >= j.max_attempts THEN 'failed' ELSE 'running' END,
    attempts = CASE WHEN j.attempts >= j.max_attempts THEN j.attempts ELSE j.attempts + 1 END,
    lease_owner = CASE WHEN j.attempts >= j.max_attempts THEN NULL ELSE $1::text END,
    lease_token = CASE WHEN j.attempts >= j.max_attempts THEN j.lease_token ELSE j.lease_token + 1 END,
    lease_expires_at = CASE WHEN j.attempts >= j.max_attempts THEN NULL ELSE clock_timestamp() + ${interval('$2')} END,
    claim_seq = CASE WHEN j.attempts >= j.max_attempts THEN j.claim_seq ELSE nextval('jobs_claim_seq') END,
    last_error = CASE WHEN j.attempts >= j.max_attempts
      THEN coalesce(j.last_error, format('gave up after %s attempts (the worker stopped each time)', j.attempts))
      ELSE j.last_error END,
    updated_at = clock_timestamp()
  FROM cand
  WHERE j.id = cand.id
  RETURNING ${cols('j.')}`;
/**
 * ClaimOptions.after ($4: its kinds, $5: its maxWaitMs or NULL): no job of those kinds of the
 * candidate's owner claimable nor running under this worker's ($1) lease, or the candidate enqueued
 * at least $5 ms ago.
 */
const AFTER = `AND (NOT EXISTS (SELECT 1 FROM jobs a WHERE a.owner = c.owner AND a.kind = ANY ($4::text[])
        AND (a.status = 'queued' OR (a.status = 'running' AND (a.lease_expires_at < clock_timestamp() OR a.lease_owner = $1::text))))
      OR ($5::float8 IS NOT NULL AND c.created_at <= clock_timestamp() - ${interval('$5')}))`;
const CLAIMS = new Map([false, true].flatMap((idle) => [false, true].map((after) => [`${idle} ${after}`, claimSql(idle, after)] as const)));

async function enqueueJob(q: Queryable, kind: JobKind, refId: string, maxAttempts: number, owner: string | undefined): Promise<string> {
  checkMaxAttempts(maxAttempts);
  const id = newId('job');
  await q.query(`INSERT INTO jobs (id, kind, ref_id, owner, status, max_attempts) VALUES ($1, $2, $3, COALESCE($4::text, ${subjectOwnerSql('$3')}), 'queued', $5)`, [
    id,
    kind,
    refId,
    owner ?? null,
    maxAttempts,
  ]);
  return id;
}

/** cancelFor in one transaction on `q` (its own on a pool, the caller's on a client). */
async function cancelJobsFor(q: Queryable, refId: string): Promise<number> {
  return inTransaction(q, async (client) => {
    await client.query(`SELECT id FROM jobs WHERE ref_id = $1 AND status IN ('queued', 'running') FOR UPDATE`, [refId]);
    const queued = await client.query(`DELETE FROM jobs WHERE ref_id = $1 AND status = 'queued'`, [refId]);
    const running = await client.query(
      `UPDATE jobs SET status = 'failed', lease_owner = NULL, lease_expires_at = NULL,
         last_error = 'cancelled: its subject was deleted', updated_at = clock_timestamp()
       WHERE ref_id = $1 AND status = 'running'`,
      [refId],
    );
    return (queued.rowCount ?? 0) + (running.rowCount ?? 0);
  });
}

/** Whether `token` holds the job (running under that claim); `lock`: FOR UPDATE, kept until the caller's transaction ends. */
async function holdsJob(q: Queryable, jobId: string, token: number, lock: boolean): Promise<boolean> {
  const { rows } = await q.query<{ status: string; lease_token: string }>(
    `SELECT status, lease_token FROM jobs WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
    [jobId],
  );
  return rows.length === 1 && rows[0].status === 'running' && Number(rows[0].lease_token) === token;
}

/**
 * The queue calls a catalog transaction may make (CatalogTx.queue), on the transaction's client:
 * enqueue and cancelFor as PgJobQueue's, part of that transaction, and `holds`, the fencing check
 * for a job's results.
 */
export class PgTxJobQueue {
  constructor(private readonly client: pg.PoolClient) {}

  enqueue(kind: JobKind, refId: string, maxAttempts = DEFAULT_MAX_ATTEMPTS, owner?: string): Promise<string> {
    return enqueueJob(this.client, kind, refId, maxAttempts, owner);
  }

  cancelFor(refId: string): Promise<number> {
    return cancelJobsFor(this.client, refId);
  }

  /**
   * True while `token` holds the job (running under that claim). The row stays locked (FOR UPDATE)
   * until the transaction ends, so no claim, cancel or settle can take the job between this check
   * and the commit of the results it guards: they wait, then see the committed state.
   */
  holds(jobId: string, token: number): Promise<boolean> {
    return holdsJob(this.client, jobId, token, true);
  }

  /** Settles the job as done while `token` holds it, in this transaction (with the results it commits). */
  complete(jobId: string, token: number): Promise<boolean> {
    return completeJob(this.client, jobId, token);
  }
}

async function completeJob(q: Queryable, jobId: string, token: number): Promise<boolean> {
  const r = await q.query(
    `UPDATE jobs SET status = 'done', lease_expires_at = NULL, updated_at = clock_timestamp()
     WHERE id = $1 AND lease_token = $2 AND status = 'running'`,
    [jobId, token],
  );
  return r.rowCount === 1;
}

/**
 * The job queue on PostgreSQL, for many workers on many machines. Lease times come from the
 * database's clock (clock_timestamp()), so workers with skewed clocks still agree on who holds a
 * job. Every call is a single statement except cancelFor (one transaction).
 */
export class PgJobQueue implements JobQueue {
  constructor(
    readonly pool: pg.Pool,
    private readonly ownsPool = false,
  ) {}

  async enqueue(kind: JobKind, refId: string, maxAttempts = DEFAULT_MAX_ATTEMPTS, owner?: string): Promise<string> {
    return enqueueJob(this.pool, kind, refId, maxAttempts, owner);
  }

  async claim(workerId: string, leaseMs: number, kinds?: readonly JobKind[], onGiveUp?: GiveUpHandler, opts: ClaimOptions = {}): Promise<ClaimedJob | undefined> {
    const lease = checkLeaseMs(leaseMs);
    const after = opts.after?.kinds.length ? opts.after : undefined;
    const params = [workerId, lease, kinds?.length ? [...kinds] : null, ...(after ? [[...after.kinds], after.maxWaitMs === undefined ? null : Math.max(0, after.maxWaitMs)] : [])];
    const sql = CLAIMS.get(`${opts.idleOwnersOnly === true} ${after !== undefined}`)!;
    for (;;) {
      const { rows } = await this.pool.query<Row>(sql, params);
      const row = rows[0];
      if (!row) return undefined;
      const job = toJob(row);
      if (job.status === 'running') return job as ClaimedJob;
      // Given up (committed already): report it and look for the next runnable job.
      await onGiveUp?.(job);
    }
  }

  async renew(jobId: string, token: number, leaseMs: number): Promise<boolean> {
    const r = await this.pool.query(
      `UPDATE jobs SET lease_expires_at = clock_timestamp() + ${interval('$3')}, updated_at = clock_timestamp()
       WHERE id = $1 AND lease_token = $2 AND status = 'running'`,
      [jobId, token, checkLeaseMs(leaseMs)],
    );
    return r.rowCount === 1;
  }

  async complete(jobId: string, token: number): Promise<boolean> {
    return completeJob(this.pool, jobId, token);
  }

  async fail(jobId: string, token: number, error: string): Promise<boolean> {
    const r = await this.pool.query(
      `UPDATE jobs SET status = 'failed', last_error = $3, lease_expires_at = NULL, updated_at = clock_timestamp()
       WHERE id = $1 AND lease_token = $2 AND status = 'running'`,
      [jobId, token, error],
    );
    return r.rowCount === 1;
  }

  async release(jobId: string, token: number): Promise<boolean> {
    const r = await this.pool.query(
      `UPDATE jobs SET status = 'queued', attempts = greatest(attempts - 1, 0), lease_owner = NULL, lease_expires_at = NULL,
         updated_at = clock_timestamp()
       WHERE id = $1 AND lease_token = $2 AND status = 'running'`,
      [jobId, token],
    );
    return r.rowCount === 1;
  }

  async expireLeasesOf(workerId: string): Promise<number> {
    const r = await this.pool.query(`UPDATE jobs SET lease_expires_at = '-infinity' WHERE lease_owner = $1 AND status = 'running'`, [workerId]);
    return r.rowCount ?? 0;
  }

  /**
   * Locks the subject's unsettled jobs first (waiting for a claim that holds one), so a job being
   * claimed at this moment is seen as running, and failed, rather than missed by both statements.
   */
  async cancelFor(refId: string): Promise<number> {
    return cancelJobsFor(this.pool, refId);
  }

  async cancel(jobId: string, reason: string): Promise<QueuedJob | undefined> {
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<Row>(`SELECT ${cols()} FROM jobs WHERE id = $1 AND status IN ('queued', 'running') FOR UPDATE`, [jobId]);
      if (!rows[0]) return undefined;
      await client.query(
        `UPDATE jobs SET status = 'failed', lease_owner = NULL, lease_expires_at = NULL, last_error = $2, updated_at = clock_timestamp() WHERE id = $1`,
        [jobId, reason],
      );
      return toJob(rows[0]);
    });
  }

  async pending(owner?: string): Promise<QueuedJob[]> {
    const { rows } = await this.pool.query<Row>(
      `SELECT ${cols()} FROM jobs WHERE status IN ('queued', 'running') AND ($1::text IS NULL OR owner = $1) ORDER BY seq`,
      [owner ?? null],
    );
    return rows.map(toJob);
  }

  /** True while `token` holds the job (a snapshot: outside a transaction nothing keeps it so; PgTxJobQueue.holds locks). */
  async holds(jobId: string, token: number): Promise<boolean> {
    return holdsJob(this.pool, jobId, token, false);
  }

  async get(jobId: string): Promise<QueuedJob | undefined> {
    const { rows } = await this.pool.query<Row>(`SELECT ${cols()} FROM jobs WHERE id = $1`, [jobId]);
    return rows[0] && toJob(rows[0]);
  }

  async pendingCount(): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE status IN ('queued', 'running')`);
    return rows[0].n;
  }

  async close(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
  }
}

/** Workers by heartbeat, judged by the database's clock. */
export class PgWorkerRegistry implements WorkerRegistry {
  constructor(
    readonly pool: pg.Pool,
    private readonly ownsPool = false,
  ) {}

  async heartbeat(workerId: string, info: WorkerInfo): Promise<void> {
    await this.pool.query(
      `INSERT INTO workers (id, info, heartbeat_at) VALUES ($1, $2, clock_timestamp())
       ON CONFLICT (id) DO UPDATE SET info = excluded.info, heartbeat_at = excluded.heartbeat_at`,
      [workerId, JSON.stringify(info)],
    );
  }

  async alive(withinMs: number): Promise<LiveWorker[]> {
    // "Every worker" comes as a huge window (Number.MAX_SAFE_INTEGER): no timestamp reaches back that far.
    const all = !(withinMs < 1e12);
    const { rows } = await this.pool.query<{ id: string; info: WorkerInfo; heartbeat_at: number }>(
      `SELECT id, info, ${ms('heartbeat_at')} AS heartbeat_at FROM workers
       ${all ? '' : `WHERE heartbeat_at >= clock_timestamp() - ${interval('$1')}`} ORDER BY id`,
      all ? [] : [withinMs],
    );
    return rows.map((r) => ({ ...r.info, id: r.id, heartbeatAt: Math.round(r.heartbeat_at) }));
  }

  async remove(workerId: string): Promise<boolean> {
    const r = await this.pool.query('DELETE FROM workers WHERE id = $1', [workerId]);
    return r.rowCount === 1;
  }

  async close(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
  }
}

/** A pool on `url`, the schema migrated, and the queue and registry on it. */
export async function openPgQueue(
  url: string,
  opts: { max?: number } = {},
): Promise<{ pool: pg.Pool; queue: PgJobQueue; registry: PgWorkerRegistry; close(): Promise<void> }> {
  const pool = await openMigratedPool(url, opts.max ?? 4);
  return {
    pool,
    queue: new PgJobQueue(pool),
    registry: new PgWorkerRegistry(pool),
    close: () => pool.end(),
  };
}

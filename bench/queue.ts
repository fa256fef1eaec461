import { rmSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { findPgBin, startThrowawayCluster, type ThrowawayCluster } from '../src/store/pg/throwaway.js';
import { openPgQueue } from '../src/store/queue/postgres.js';
import { openSqliteQueue } from '../src/store/queue/sqlite.js';
import type { JobQueue } from '../src/store/queue/types.js';
import type { ClaimerInput, ClaimerOutput } from './queue-claimer.js';
import { benchDir, percentile, round } from './util.js';

const WARMUP = 5; // first claims of each claimer (statement preparation, first connection use) are left out

function stats(samples: number[]): { p50: number; p99: number; n: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: round(percentile(sorted, 50), 3), p99: round(percentile(sorted, 99), 3), n: sorted.length };
}

export async function fill(queue: JobQueue, jobs: number): Promise<void> {
  for (let i = 0; i < jobs; i++) await queue.enqueue(i % 2 ? 'video.process' : 'task.embedding', `ref_${i}`);
}

/** `claimers` worker threads claim and complete `jobs` jobs together; per-call latencies and throughput. */
export async function race(backend: ClaimerInput['backend'], target: string, claimers: number, jobs: number): Promise<Record<string, unknown>> {
  const workers = Array.from(
    { length: claimers },
    (_, i) => new Worker(new URL('./queue-claimer.js', import.meta.url), { workerData: { backend, target, id: `bench_${i}` } satisfies ClaimerInput }),
  );
  const ready = workers.map((w) => new Promise<void>((resolve, reject) => {
    w.once('message', () => resolve());
    w.once('error', reject);
  }));
  await Promise.all(ready);
  const results = workers.map((w) => new Promise<ClaimerOutput>((resolve, reject) => {
    w.once('message', (m: ClaimerOutput) => resolve(m));
    w.once('error', reject);
  }));
  const t0 = performance.now();
  for (const w of workers) w.postMessage('go');
  const outs = await Promise.all(results);
  const wallS = (performance.now() - t0) / 1000;
  await Promise.all(workers.map((w) => w.terminate()));
  const claimed = outs.reduce((n, o) => n + o.claimMs.length, 0);
  if (claimed !== jobs) throw new Error(`${backend}: ${claimed} claims for ${jobs} jobs`);
  return {
    claim_ms: stats(outs.flatMap((o) => o.claimMs.slice(WARMUP))),
    complete_ms: stats(outs.flatMap((o) => o.completeMs.slice(WARMUP))),
    jobs_per_s: round(jobs / wallS, 1),
    per_claimer: outs.map((o) => o.claimMs.length),
    empty_claims: outs.reduce((n, o) => n + o.emptyClaims, 0),
  };
}

/**
 * Job-claim latency with 3 concurrent claimers (worker threads, one connection each) on SQLite and
 * on PostgreSQL. PostgreSQL: VIDEMBED_BENCH_DATABASE_URL when set, else a throwaway local cluster
 * with durable settings (fsync and synchronous_commit on), skipped when the server is not installed.
 */
export async function benchQueue(claimers = 3, jobs = Number(process.env.VIDEMBED_BENCH_QUEUE_JOBS) || 1000): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = { claimers, jobs, warmup_claims_left_out_per_claimer: WARMUP };

  const dir = benchDir();
  try {
    const file = path.join(dir, 'vidembed.db');
    const h = openSqliteQueue(file);
    await fill(h.queue, jobs);
    await h.close();
    out.sqlite = { ...(await race('sqlite', file, claimers, jobs)), settings: 'WAL, synchronous=NORMAL (as vidembed opens it)' };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  let cluster: ThrowawayCluster | undefined;
  try {
    let url = process.env.VIDEMBED_BENCH_DATABASE_URL;
    let settings = 'the server at VIDEMBED_BENCH_DATABASE_URL';
    if (!url) {
      if (!findPgBin()) {
        out.postgres = { skipped: 'PostgreSQL server not installed and VIDEMBED_BENCH_DATABASE_URL unset' };
        return out;
      }
      cluster = await startThrowawayCluster({ durable: true });
      url = cluster.url();
      settings = 'local throwaway cluster over TCP 127.0.0.1, fsync and synchronous_commit on';
    }
    const h = await openPgQueue(url, { max: 1 });
    try {
      await h.pool.query('TRUNCATE jobs');
      await fill(h.queue, jobs);
    } finally {
      await h.close();
    }
    out.postgres = { ...(await race('postgres', url, claimers, jobs)), settings };
    if (!cluster) {
      const c = await openPgQueue(url, { max: 1 });
      await c.pool.query(`DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE lease_owner LIKE 'bench_%')`);
      await c.close();
    }
  } finally {
    cluster?.stop();
  }
  return out;
}

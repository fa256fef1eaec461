/**
 * One claimer of `npm run bench -- queue`, in its own worker thread with its own connection
 * (SQLite) or pool (PostgreSQL): claims and completes until the queue is empty, timing each call.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { openPgQueue } from '../src/store/queue/postgres.js';
import { openSqliteQueue } from '../src/store/queue/sqlite.js';
import type { JobQueue } from '../src/store/queue/types.js';

export interface ClaimerInput {
  backend: 'sqlite' | 'postgres';
  /** SQLite file or PostgreSQL URL. */
  target: string;
  id: string;
}

export interface ClaimerOutput {
  claimMs: number[];
  completeMs: number[];
  emptyClaims: number;
}

async function main(): Promise<void> {
  const input = workerData as ClaimerInput;
  const h: { queue: JobQueue; close(): Promise<void> } =
    input.backend === 'sqlite' ? openSqliteQueue(input.target) : await openPgQueue(input.target, { max: 1 });
  const out: ClaimerOutput = { claimMs: [], completeMs: [], emptyClaims: 0 };
  // Every claimer is connected before any starts: the main thread sends 'go' to all at once.
  await new Promise<void>((resolve) => {
    parentPort!.once('message', () => resolve());
    parentPort!.postMessage('ready');
  });
  for (;;) {
    const t0 = performance.now();
    const job = await h.queue.claim(input.id, 60_000);
    const t1 = performance.now();
    if (!job) {
      out.emptyClaims++;
      if ((await h.queue.pendingCount()) === 0) break;
      await sleep(1);
      continue;
    }
    out.claimMs.push(t1 - t0);
    const t2 = performance.now();
    if (!(await h.queue.complete(job.id, job.token))) throw new Error(`complete of ${job.id} refused`);
    out.completeMs.push(performance.now() - t2);
  }
  await h.close();
  parentPort!.postMessage(out);
}

void main();

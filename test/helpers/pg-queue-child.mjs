// A worker process for the multi-process queue test (test/e2e/queue-postgres.test.ts): claims
// jobs from the PostgreSQL queue at QUEUE_URL under WORKER_ID, renews its lease while it "works",
// and records each claim and each accepted completion. With HANG_ON_CLAIM=N it stops working at its
// N-th claim (renewing forever, like a job stuck in ffmpeg) until the test SIGKILLs it.
// Runs the built code (dist/), as the CLI does; `npm test` builds first.
import { setTimeout as sleep } from 'node:timers/promises';
import { openPgQueue } from '../../dist/src/store/queue/postgres.js';

const url = process.env.QUEUE_URL;
const me = process.env.WORKER_ID;
const hangOn = Number(process.env.HANG_ON_CLAIM || 0);
const leaseMs = 1000;

const { pool, queue, registry, close } = await openPgQueue(url, { max: 2 });
const deadline = Date.now() + 90_000;
let claims = 0;
while (Date.now() < deadline) {
  await registry.heartbeat(me, { pid: process.pid, host: 'test' });
  const job = await queue.claim(me, leaseMs);
  if (!job) {
    if ((await queue.pendingCount()) === 0) break;
    await sleep(50); // what is left is held by others, or waits for a dead worker's lease to run out
    continue;
  }
  claims++;
  await pool.query('INSERT INTO test_claims (job_id, worker, token) VALUES ($1, $2, $3)', [job.id, me, job.token]);
  const renew = setInterval(() => void queue.renew(job.id, job.token, leaseMs).catch(() => {}), leaseMs / 4);
  if (claims === hangOn) {
    process.stdout.write(`hung on ${job.id}\n`);
    await new Promise(() => {}); // the interval keeps the process (and the lease) alive until SIGKILL
  }
  await sleep(10 + Math.random() * 30);
  clearInterval(renew);
  if (await queue.complete(job.id, job.token)) {
    await pool.query('INSERT INTO test_completions (job_id, worker, token) VALUES ($1, $2, $3)', [job.id, me, job.token]);
  }
}
await registry.remove(me);
await close();
process.exit(Date.now() < deadline ? 0 : 2);

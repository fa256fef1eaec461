import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { openPgPool, PG_MIGRATIONS } from '../../src/store/pg/migrate.js';
import { openPgQueue } from '../../src/store/queue/postgres.js';
import { conformance } from '../conformance/queue.js';
import { repoRoot } from '../helpers/clips.js';
import { pgTestAvailable, usePgTestDatabase } from '../helpers/postgres.js';

/* The job queue rules (test/conformance/queue.ts) on PostgreSQL (a throwaway cluster), and worker processes SIGKILLed mid-job. */

const pgOk = pgTestAvailable();

describe.skipIf(!pgOk)('job queue conformance: PostgreSQL', () => {
  const db = usePgTestDatabase(['jobs', 'workers']);

  conformance(() => ({ open: () => openPgQueue(db.url, { max: 2 }) }));

  it('applies its migrations once, also when several processes start together', async () => {
    const pools = await Promise.all([openPgQueue(db.url), openPgQueue(db.url), openPgQueue(db.url)]);
    try {
      const { rows } = await pools[0].pool.query('SELECT version FROM vidembed_schema_migrations ORDER BY version');
      expect(rows.map((r) => r.version)).toEqual(PG_MIGRATIONS.map((m) => m.version));
    } finally {
      for (const p of pools) await p.close();
    }
  });

  it('three worker processes, one SIGKILLed mid-job: every job is completed exactly once', async () => {
    const script = path.join(repoRoot, 'test/helpers/pg-queue-child.mjs');
    expect(existsSync(path.join(repoRoot, 'dist/src/store/queue/postgres.js')), 'run npm run build first').toBe(true);
    const admin = openPgPool(db.url, 1);
    const children: ChildProcess[] = [];
    try {
      await admin.query('DROP TABLE IF EXISTS test_claims, test_completions');
      await admin.query('CREATE TABLE test_claims (job_id text NOT NULL, worker text NOT NULL, token bigint NOT NULL)');
      await admin.query('CREATE TABLE test_completions (job_id text NOT NULL, worker text NOT NULL, token bigint NOT NULL)');
      const total = 30;
      const producer = await openPgQueue(db.url, { max: 1 });
      for (let i = 0; i < total; i++) await producer.queue.enqueue('video.process', `v${i}`);
      await producer.close();

      const start = (id: string, env: Record<string, string> = {}) => {
        const child = spawn(process.execPath, [script], {
          env: { ...process.env, QUEUE_URL: db.url, WORKER_ID: id, ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        child.stdout!.on('data', (d: Buffer) => (out += d));
        child.stderr!.on('data', (d: Buffer) => (out += d));
        const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }>((resolve) =>
          child.on('exit', (code, signal) => resolve({ code, signal, out })),
        );
        children.push(child);
        return { child, exited, output: () => out };
      };
      // The victim works one job, then hangs inside its second while renewing the lease.
      const victim = start('victim', { HANG_ON_CLAIM: '2' });
      const workers = [start('w1'), start('w2')];
      for (let i = 0; !victim.output().includes('hung on'); i++) {
        if (i > 600) throw new Error(`the victim never hung:\n${victim.output()}`);
        await sleep(100);
      }
      const hungJob = /hung on (\S+)/.exec(victim.output())![1];
      victim.child.kill('SIGKILL');
      expect((await victim.exited).signal).toBe('SIGKILL');

      const results = await Promise.all(workers.map((w) => w.exited));
      for (const r of results) expect(r.code, r.out).toBe(0);

      const { rows: done } = await admin.query<{ job_id: string; worker: string; token: string }>('SELECT job_id, worker, token FROM test_completions');
      const perJob = new Map<string, number>();
      for (const r of done) perJob.set(r.job_id, (perJob.get(r.job_id) ?? 0) + 1);
      expect(perJob.size).toBe(total);
      expect([...perJob.values()].every((n) => n === 1)).toBe(true);
      const { rows: jobs } = await admin.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM jobs GROUP BY status');
      expect(jobs).toEqual([{ status: 'done', n: total }]);

      // The job the victim died in was taken over by a live worker under a newer token.
      const { rows: hungClaims } = await admin.query<{ worker: string; token: string }>(
        'SELECT worker, token FROM test_claims WHERE job_id = $1 ORDER BY token',
        [hungJob],
      );
      expect(hungClaims[0].worker).toBe('victim');
      const finish = done.find((r) => r.job_id === hungJob)!;
      expect(finish.worker).not.toBe('victim');
      expect(Number(finish.token)).toBeGreaterThan(Number(hungClaims[0].token));
      // Every accepted completion carried the job's latest token.
      const { rows: stale } = await admin.query(
        'SELECT c.job_id FROM test_completions c JOIN jobs j ON j.id = c.job_id WHERE c.token <> j.lease_token',
      );
      expect(stale).toEqual([]);
    } finally {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      await admin.end();
    }
  });
});

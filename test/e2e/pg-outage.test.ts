/**
 * Outages are weather (issue 21), on a real PostgreSQL cluster and real processes: a `serve` (with
 * its worker) and a `vidembed worker`, sharing the database and a storage directory, both holding a
 * job, and a `serve --no-worker` beside them, while PostgreSQL is stopped (`pg_ctl stop -m fast`)
 * for ~20 s and started again:
 *
 * - all three processes stay up and resume by themselves (nobody restarts them);
 * - meanwhile the API answers 503 with Retry-After and a JSON error, never 500; /healthz stays 200
 *   and says the database is down; /readyz answers 503;
 * - every video ends processed, each by one committed result (its job done once, its segments
 *   written once: none ever deleted and replaced), none failed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openAsBlob } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FormData } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPgPool } from '../../src/store/pg/migrate.js';
import { freePort } from '../../src/store/pg/throwaway.js';
import { BIN, runCli } from '../helpers/cli.js';
import { evalPhotos, makeStillClip, removeDir, tempDir } from '../helpers/clips.js';
import { pgTestAvailable, startTestDatabase, type PgTestDatabase } from '../helpers/postgres.js';
import { expectedSegmentDeletions } from '../helpers/pg-exactly-once.js';
import { http, type Reply } from '../helpers/server.js';

const CLIPS = 6;
const OUTAGE_MS = 20_000;

const pgOk = pgTestAvailable();

describe.skipIf(!pgOk)('PostgreSQL stopped for 20 s under a serve and a worker that hold jobs', () => {
  const dir = tempDir('vidembed-pgoutage-');
  const shared = path.join(dir, 'shared');
  const clipsDir = path.join(dir, 'clips');
  let db: PgTestDatabase;
  let env: Record<string, string>;
  const procs: Array<{ name: string; child: ChildProcess; log: string }> = [];

  const start = (name: string, args: string[]) => {
    const child = spawn(process.execPath, [BIN, '--home', path.join(dir, name), ...args], {
      env: { ...process.env, ...env, CI: '1', VIDEMBED_WARM_IDLE_MS: '0' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const p = { name, child, log: '' };
    child.stderr!.on('data', (d: Buffer) => (p.log += d.toString()));
    procs.push(p);
    return p;
  };
  const exited = (c: ChildProcess) => new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r(undefined) : c.once('exit', r)));
  const logs = () => procs.map((p) => `--- ${p.name}\n${p.log}`).join('\n');
  const until = async (ok: () => Promise<boolean>, what: string, ms = 300_000) => {
    const deadline = Date.now() + ms;
    while (!(await ok())) {
      const died = procs.find((p) => p.child.exitCode !== null || p.child.signalCode !== null);
      if (died) throw new Error(`${died.name} exited by itself (code ${died.child.exitCode}, signal ${died.child.signalCode}):\n${logs()}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${logs()}`);
      await sleep(200);
    }
  };

  beforeAll(async () => {
    db = await startTestDatabase({ ownCluster: true });
    env = { VIDEMBED_DATABASE_URL: db.url, VIDEMBED_STORAGE_URL: `file://${shared}`, VIDEMBED_NO_AUTO_WORKER: '1' };
    mkdirSync(clipsDir, { recursive: true });
    for (const [i, photo] of evalPhotos().slice(0, CLIPS).entries()) {
      await makeStillClip(photo, path.join(clipsDir, `clip${i}.mp4`), { seconds: 12, width: 256, height: 144 });
    }
  }, 300_000);

  afterAll(async () => {
    for (const p of procs) {
      if (p.child.exitCode === null && p.child.signalCode === null) {
        p.child.kill('SIGTERM');
        await exited(p.child);
      }
    }
    await db?.teardown();
    removeDir(dir);
  });

  it('both stay up, the API answers 503 (never 500) meanwhile, and every video ends processed exactly once', async () => {
    const cluster = db.cluster!;
    expect(cluster, 'the test runs its own cluster').toBeDefined();
    const made = await runCli(['--home', path.join(dir, 'admin'), '--json', 'keys', 'create', '--name', 'outage', '--owner', 'default', '--qps', '1000'], env);
    expect(made.code, made.stderr).toBe(0);
    const key = made.json.key as string;

    const port = await freePort();
    const serve = start('serve', ['serve', '--port', String(port)]);
    const url = `http://127.0.0.1:${port}`;
    await until(async () => serve.log.includes('vidembed serving on'), 'serve listening', 120_000);
    start('worker', ['worker']);
    const apiPort = await freePort();
    const api = start('serve-no-worker', ['serve', '--no-worker', '--port', String(apiPort)]);
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    await until(async () => api.log.includes('vidembed serving on'), 'serve --no-worker listening', 120_000);

    const created = await http(url, 'POST', '/collections', { key, json: { name: 'outage' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const collection = created.body.collection_id as string;
    const upload = async (file: string): Promise<Reply> => {
      const form = new FormData();
      form.append('file', await openAsBlob(path.join(clipsDir, file)), file);
      return http(url, 'POST', `/collections/${collection}/videos/upload`, { key, form });
    };
    const ids: string[] = [];
    for (let i = 0; i < CLIPS; i++) {
      const r = await upload(`clip${i}.mp4`);
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      ids.push(r.body.video_id as string);
    }

    // Both processes hold a job when the database goes away.
    const pool = openPgPool(db.url, 1);
    const running = async () => Number((await pool.query(`SELECT count(DISTINCT lease_owner) AS n FROM jobs WHERE status = 'running'`)).rows[0].n);
    await until(async () => (await running()) === 2, 'both processes holding a job');
    await pool.end();

    cluster.halt();
    const seen = new Map<string, number[]>();
    const note = (what: string, status: number) => seen.set(what, [...(seen.get(what) ?? []), status]);
    const outageEnds = Date.now() + OUTAGE_MS;
    let healthBody: unknown;
    while (Date.now() < outageEnds) {
      const list = await http(url, 'GET', '/collections', { key });
      note('GET /collections', list.status);
      note('GET /collections (serve --no-worker)', (await http(apiUrl, 'GET', '/collections', { key })).status);
      if (list.status === 503) {
        expect(Number(list.headers['retry-after'])).toBeGreaterThan(0);
        expect(list.body).toMatchObject({ code: 'unavailable' });
      }
      note('GET /videos/{id}/status', (await http(url, 'GET', `/videos/${ids[0]}/status`, { key })).status);
      note('POST /collections', (await http(url, 'POST', '/collections', { key, json: { name: `during-${Date.now()}` } })).status);
      note('GET /readyz', (await http(url, 'GET', '/readyz')).status);
      const health = await http(url, 'GET', '/healthz');
      note('GET /healthz', health.status);
      healthBody = health.body;
      await sleep(250);
    }
    // An upload while the database is down is refused (its video would have no row), not lost silently.
    note('POST upload', (await upload('clip0.mp4')).status);
    cluster.resume();

    for (const [what, statuses] of seen) {
      expect(statuses.filter((s) => s >= 500 && s !== 503), `${what}: ${statuses.join(',')}`).toEqual([]);
    }
    for (const what of ['GET /collections', 'GET /collections (serve --no-worker)', 'GET /videos/{id}/status', 'POST /collections', 'GET /readyz', 'POST upload']) {
      expect(seen.get(what), what).toContain(503);
    }
    expect(new Set(seen.get('GET /healthz'))).toEqual(new Set([200]));
    expect(healthBody).toMatchObject({ status: 'degraded', database: 'down' });

    // Back by themselves: every video processed, nobody restarted anything.
    const status = async (id: string) => (await http(url, 'GET', `/videos/${id}/status`, { key })).body.status as string;
    await until(async () => {
      const all = await Promise.all(ids.map(status));
      if (all.includes('failed')) throw new Error(`a video failed: ${JSON.stringify(all)}\n${logs()}`);
      return all.every((s) => s === 'processed');
    }, 'every video processed');
    expect((await http(url, 'GET', '/readyz')).status).toBe(200);
    const fromApi = await http(apiUrl, 'GET', `/collections/${collection}/videos`, { key });
    expect(fromApi.status).toBe(200);
    expect(fromApi.body.map((v: { status: string }) => v.status)).toEqual(ids.map(() => 'processed'));
    for (const p of procs) expect(p.child.exitCode, `${p.name} still running`).toBeNull();
    expect(logs()).toContain('cannot reach the database');

    // Exactly once: one job of each kind per video (its plan, its picture lane, its speech lane:
    // issue 31), done; each video's segments written once (none deleted but by a later speech revision).
    const check = openPgPool(db.url, 1);
    try {
      const jobs = (await check.query<{ ref_id: string; kind: string; status: string }>(`SELECT ref_id, kind, status FROM jobs ORDER BY ref_id`)).rows;
      const kinds = [...new Set(jobs.map((j) => j.kind))].sort();
      expect(kinds).toEqual(expect.arrayContaining(['video.pictures', 'video.process']));
      for (const k of kinds) expect(jobs.filter((j) => j.kind === k).map((j) => j.ref_id).sort(), k).toEqual([...ids].sort());
      expect(jobs.every((j) => j.status === 'done')).toBe(true);
      const segs = (await check.query<{ video_id: string; n: number; distinct_idx: number }>(
        `SELECT video_id, count(*)::int AS n, count(DISTINCT idx)::int AS distinct_idx FROM segments GROUP BY video_id`,
      )).rows;
      expect(segs.length).toBe(CLIPS);
      for (const s of segs) expect(s.n, s.video_id).toBe(s.distinct_idx);
      // No segment deleted but by a speech lane that landed after its picture lane (its revision).
      const deletions = await expectedSegmentDeletions(check);
      expect(deletions.actual, JSON.stringify(deletions)).toBe(deletions.expected);
    } finally {
      await check.end();
    }
  }, 900_000);
});

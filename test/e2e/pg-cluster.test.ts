/**
 * Many workers, one library (issue 10), on a real PostgreSQL cluster and a shared directory:
 *
 * - an uploader with VIDEMBED_NO_AUTO_WORKER=1 stores 30 clips and processes none of them;
 * - 3 `vidembed worker` processes, each with its own VIDEMBED_HOME, sharing only the database and
 *   storage URLs, process them while one of them is SIGKILLed twice (and started again): every
 *   video is processed, each by one committed result (its segments written once: no segment of
 *   theirs was ever deleted and replaced), none lost, no job failed;
 * - search answers the same page as a SQLite library that ingested the same clips;
 * - two servers on different ports answer for the same library (one key works on both), and a
 *   video uploaded through one and processed by a worker is found by the other at its first search.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FormData } from 'undici';
import { openAsBlob } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEngine } from '../../src/runtime/engine.js';
import { Worker } from '../../src/runtime/worker.js';
import { buildServer } from '../../src/server/app.js';
import { PgCatalog } from '../../src/store/catalog/postgres.js';
import { openPgPool } from '../../src/store/pg/migrate.js';
import { BIN, runCli } from '../helpers/cli.js';
import { evalPhotos, makeStillClip, removeDir, tempDir } from '../helpers/clips.js';
import { pgTestAvailable, startTestDatabase, type PgTestDatabase } from '../helpers/postgres.js';
import { expectedSegmentDeletions } from '../helpers/pg-exactly-once.js';
import { http } from '../helpers/server.js';

const CLIPS = 30;
const QUERIES = ['a dog', 'people smiling', 'a building in a city', 'flowers', 'the sea and the sky', 'a cat', 'food on a plate', 'trees in a forest'];

const pgOk = pgTestAvailable();

describe.skipIf(!pgOk)('one library on PostgreSQL: three workers, two servers', () => {
  const dir = tempDir('vidembed-pgcluster-');
  const shared = path.join(dir, 'shared');
  const clipsDir = path.join(dir, 'clips');
  let db: PgTestDatabase;
  let env: Record<string, string>;
  const workers: Array<{ home: string; child?: ChildProcess; log: string }> = [];

  const startWorker = (w: (typeof workers)[number]) => {
    const child = spawn(process.execPath, [BIN, '--home', w.home, 'worker'], {
      env: { ...process.env, ...env, CI: '1', VIDEMBED_WARM_IDLE_MS: '0' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr!.on('data', (d: Buffer) => (w.log += d.toString()));
    w.child = child;
  };
  const stopped = (c: ChildProcess) => new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r(undefined) : c.once('exit', r)));

  beforeAll(async () => {
    db = await startTestDatabase();
    env = { VIDEMBED_DATABASE_URL: db.url, VIDEMBED_STORAGE_URL: `file://${shared}`, VIDEMBED_NO_AUTO_WORKER: '1' };
    mkdirSync(clipsDir, { recursive: true });
    const photos = evalPhotos().slice(0, CLIPS);
    for (const [i, photo] of photos.entries()) await makeStillClip(photo, path.join(clipsDir, `clip${String(i).padStart(2, '0')}.mp4`), { seconds: 5, width: 256, height: 144 });
  }, 300_000);

  afterAll(async () => {
    for (const w of workers) {
      if (w.child && w.child.exitCode === null && w.child.signalCode === null) {
        w.child.kill('SIGTERM');
        await stopped(w.child);
      }
    }
    await db?.teardown();
    removeDir(dir);
  });

  it('ingests 30 clips with 3 workers, one SIGKILLed twice: each processed once, none lost; search as on SQLite; two servers, one library', async () => {
    // The uploader stores and queues; with VIDEMBED_NO_AUTO_WORKER=1 it starts no worker.
    const up = path.join(dir, 'uploader');
    expect((await runCli(['--home', up, 'collection', 'create', 'shared-lib'], env)).code).toBe(0);
    const uploaded = await runCli(['--home', up, '--json', 'upload', clipsDir, '--collection', 'shared-lib'], env);
    expect(uploaded.code, uploaded.stderr).toBe(0);
    const pg = new PgCatalog(openPgPool(db.url, 2), true);
    try {
      const [collection] = await pg.collections.byName('shared-lib');
      expect(await pg.videos.countsByStatus(collection.id)).toMatchObject({ uploaded: CLIPS, processing: 0, processed: 0 });
      expect(await pg.registry.alive(60_000)).toEqual([]); // nobody was started to process them

      for (let i = 0; i < 3; i++) workers.push({ home: path.join(dir, `worker${i}`), log: '' });
      for (const w of workers) startWorker(w);
      // Progress by the picture lane: with speech after pictures (issue 31) no video is `processed`
      // until an owner's pictures are drained, and then the (silent) clips' speech ends within
      // seconds — nothing would be left for worker 0 to hold when it is killed.
      const picturesDone = async () => Number((await pg.pool.query(`SELECT count(*) AS n FROM jobs WHERE kind = 'video.pictures' AND status = 'done'`)).rows[0].n);
      const until = async (ok: () => Promise<boolean>, what: string) => {
        const deadline = Date.now() + 300_000;
        while (!(await ok())) {
          const died = workers.find((w) => w.child?.exitCode != null);
          if (died) throw new Error(`a worker exited by itself (code ${died.child!.exitCode}):\n${died.log}`);
          if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${workers.map((w) => w.log).join('\n')}`);
          await sleep(100);
        }
      };
      // SIGKILL worker 0 twice while it holds a job (a kill that lands just after the job ended does
      // not count: try again), starting it again each time.
      const victim = workers[0];
      let midJob = 0;
      for (const round of [1, 2]) {
        await until(async () => (await picturesDone()) >= round * 6, `${round * 6} videos' pictures done`);
        for (let attempt = 0; attempt < 10 && midJob < round; attempt++) {
          let jobId = '';
          await until(async () => (jobId = await runningJobOf(pg, victim.child!.pid!)) !== '', 'worker 0 holding a job');
          victim.child!.kill('SIGKILL');
          await stopped(victim.child!);
          if ((await pg.queue.get(jobId))?.status === 'running') midJob++;
          startWorker(victim);
        }
      }
      expect(midJob).toBe(2);
      await until(async () => {
        const c = await pg.videos.countsByStatus(collection.id);
        return c.processed + c.failed === CLIPS;
      }, 'every video settled');
      expect(await pg.videos.countsByStatus(collection.id)).toMatchObject({ processed: CLIPS, failed: 0, uploaded: 0, processing: 0 });

      // Each video's results were written once: its segments numbered 0..n-1, none deleted but by a
      // speech lane that landed after its picture lane (a revision, not a second write).
      const pool = openPgPool(db.url, 1);
      try {
        const { rows } = await pool.query<{ video_id: string; n: number; idx_ok: boolean }>(
          `SELECT video_id, count(*)::int AS n, bool_and(idx < (SELECT count(*) FROM segments s2 WHERE s2.video_id = s.video_id)) AS idx_ok
           FROM segments s GROUP BY video_id`,
        );
        expect(rows.length).toBe(CLIPS);
        for (const r of rows) expect(r.idx_ok, r.video_id).toBe(true);
        const deletions = await expectedSegmentDeletions(pool);
        expect(deletions.actual, JSON.stringify(deletions)).toBe(deletions.expected);
        const jobs = (await pool.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM jobs GROUP BY status`)).rows;
        // Three jobs per video: its plan, its picture lane, its speech lane.
        expect(jobs).toEqual([{ status: 'done', n: 3 * CLIPS }]);
        // Each job the killed worker held was claimed again under a newer token (the restarted worker
        // may take the same job again: count claims beyond the first, not jobs).
        const reclaims = Number((await pool.query(`SELECT sum(lease_token - 1) AS n FROM jobs`)).rows[0].n);
        expect(reclaims).toBeGreaterThanOrEqual(midJob);
      } finally {
        await pool.end();
      }

      // The same clips in a SQLite library: the same page for the same queries.
      const sqliteHome = path.join(dir, 'sqlite');
      const local = new LocalEngine({ home: sqliteHome, databaseUrl: '', storageUrl: `file://${path.join(sqliteHome, 'blobs')}` });
      const onPg = new LocalEngine({ home: path.join(dir, 'reader'), databaseUrl: db.url, storageUrl: `file://${shared}` });
      try {
        expect(local.isLocalLibrary).toBe(true);
        expect(onPg.isLocalLibrary).toBe(false);
        await local.createCollection({ name: 'shared-lib' });
        for (const f of (await import('node:fs')).readdirSync(clipsDir).sort()) await local.uploadVideo('shared-lib', { path: path.join(clipsDir, f), filename: f });
        await new Worker(local, { idleExitMs: 300, pollMs: 50 }).run(new AbortController().signal);
        const segsLocal = new Map<string, number>();
        for (const v of await local.listVideos('shared-lib', { limit: 100 })) {
          expect(v.status).toBe('processed');
          segsLocal.set(v.filename, (await local.videoDetails(v.video_id)).segments.length);
        }
        for (const v of await onPg.listVideos('shared-lib', { limit: 100 })) expect((await onPg.videoDetails(v.video_id)).segments.length, v.filename).toBe(segsLocal.get(v.filename));
        for (const text of QUERIES) {
          const a = (await local.search('shared-lib', { text, top_k: 10 })).results;
          const b = (await onPg.search('shared-lib', { text, top_k: 10 })).results;
          expect(b.map((r) => [r.filename, r.start]), text).toEqual(a.map((r) => [r.filename, r.start]));
          b.forEach((r, i) => expect(r.similarity).toBeCloseTo(a[i].similarity, 5));
        }
      } finally {
        await local.close();
        await onPg.close();
      }

      // Two servers, one library: a key made once works on both; what one stores, the other finds.
      const key = await runCli(['--home', up, '--json', 'keys', 'create', '--name', 'team', '--owner', 'default', '--qps', '100'], env);
      expect(key.code, key.stderr).toBe(0);
      const servers = [];
      for (const name of ['server-a', 'server-b']) {
        const engine = new LocalEngine({ home: path.join(dir, name), databaseUrl: db.url, storageUrl: `file://${shared}`, memoryIndex: true });
        const app = await buildServer(engine.services, { keys: engine.catalog.keys });
        servers.push({ engine, app, url: await app.listen({ host: '127.0.0.1', port: 0 }) });
      }
      try {
        const [a, b] = servers;
        expect(a.url).not.toBe(b.url);
        const k = key.json.key as string;
        const listA = await http(a.url, 'GET', '/collections', { key: k });
        const listB = await http(b.url, 'GET', '/collections', { key: k });
        expect(listA.status).toBe(200);
        expect(listA.body.map((c: { name: string }) => c.name)).toEqual(['shared-lib']);
        expect(listB.body).toEqual(listA.body);
        // Server B has searched before (its index holds the collection); A takes a new clip.
        const name = 'shared-lib';
        const before = await http(b.url, 'POST', `/collections/${encodeURIComponent(name)}/search`, { key: k, json: { text: 'a dog', top_k: 100 } });
        expect(before.status).toBe(200);
        await makeStillClip(evalPhotos()[CLIPS], path.join(dir, 'late.mp4'), { seconds: 5, width: 256, height: 144 });
        const form = new FormData();
        form.append('file', await openAsBlob(path.join(dir, 'late.mp4')), 'late.mp4');
        const sent = await http(a.url, 'POST', `/collections/${encodeURIComponent(name)}/videos/upload`, { key: k, form });
        expect(sent.status, JSON.stringify(sent.body)).toBeLessThan(300);
        const id = sent.body.video_id as string;
        await until(async () => (await http(a.url, 'GET', `/videos/${id}`, { key: k })).body.status === 'processed', 'the late clip processed by a worker');
        const after = await http(b.url, 'POST', `/collections/${encodeURIComponent(name)}/search`, { key: k, json: { text: 'a dog', top_k: 100 } });
        expect(after.body.results.map((r: { video_id: string }) => r.video_id)).toContain(id);
        expect(before.body.results.map((r: { video_id: string }) => r.video_id)).not.toContain(id);
      } finally {
        for (const s of servers) {
          await s.app.close();
          await s.engine.close();
        }
      }
    } finally {
      await pg.close();
    }
  }, 900_000);
});

/** The id of the job the worker process with this pid holds, if any ('' when none). */
async function runningJobOf(pg: PgCatalog, pid: number): Promise<string> {
  const live = await pg.registry.alive(60_000);
  const mine = live.find((w) => w.pid === pid);
  if (!mine) return '';
  const { rows } = await pg.pool.query<{ id: string }>(`SELECT id FROM jobs WHERE lease_owner = $1 AND status = 'running' LIMIT 1`, [mine.id]);
  return rows[0]?.id ?? '';
}

/**
 * Outages are weather (issue 21): driver errors of a database or blob store out of reach are told
 * from every other failure; the server answers 503 with Retry-After (never 500) while the catalog
 * fails so, /healthz stays 200 and says what is down, /readyz answers 503; a worker whose queue
 * fails waits it out with backoff and redoes the job it held exactly once. The catalog here is the
 * in-memory one behind a switch that makes every call fail as node-postgres does when the server
 * is stopped (the e2e test test/e2e/pg-outage.test.ts stops a real PostgreSQL).
 */
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InsufficientStorageError, NotFoundError, StorageQuotaError, UnavailableError, ValidationError } from '../../src/api/errors.js';
import { errorFromResponse } from '../../src/client/http-errors.js';
import { LocalEngine } from '../../src/runtime/engine.js';
import { Worker, type JobHost } from '../../src/runtime/worker.js';
import { buildServer } from '../../src/server/app.js';
import type { Catalog } from '../../src/store/catalog/types.js';
import { MemoryBlobStore } from '../../src/store/memory/blobs.js';
import { MemoryCatalog } from '../../src/store/memory/catalog.js';
import { S3RequestError } from '../../src/store/s3-blobs.js';
import { asNoSpace, asUnavailable } from '../../src/store/unavailable.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { http } from '../helpers/server.js';

/** What node-postgres rejects with when the server is not there. */
const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', syscall: 'connect' });

/**
 * `target` (and every object under it) with each method failing as a stopped database does while
 * `down()` says so (or for the next `failNext` calls). Calls go to the real object otherwise.
 */
class Switch {
  down = false;
  failNext = 0;
  calls = 0;
  failing(): boolean {
    if (this.failNext > 0) {
      this.failNext--;
      return true;
    }
    return this.down;
  }
  wrap<T extends object>(target: T): T {
    return new Proxy(target, {
      get: (t, prop, recv) => {
        const v = Reflect.get(t, prop, recv) as unknown;
        if (typeof v === 'function') {
          return (...args: unknown[]) => {
            this.calls++;
            if (prop !== 'close' && this.failing()) return Promise.reject(refused());
            return (v as (...a: unknown[]) => unknown).apply(t, args);
          };
        }
        if (v && typeof v === 'object' && prop !== 'store') return this.wrap(v as object);
        return v;
      },
    });
  }
}

describe('telling outages and full disks from other failures', () => {
  it('recognizes the drivers\' errors of a database or blob store out of reach, wrapped or not', () => {
    const pgShutdown = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    const starting = Object.assign(new Error('the database system is starting up'), { code: '57P03' });
    const wrapped = new Error('PostgreSQL at postgres://x@h/db: connect ECONNREFUSED', { cause: refused() });
    for (const err of [refused(), pgShutdown, starting, wrapped, new Error('Connection terminated unexpectedly'), new S3RequestError('GET x: cannot reach', undefined, undefined), new S3RequestError('PUT x: HTTP 503', 503, 'SlowDown')]) {
      const down = asUnavailable(err);
      expect(down, String(err)).toBeInstanceOf(UnavailableError);
      expect(down!.status).toBe(503);
      expect(down!.retryAfterSeconds).toBeGreaterThan(0);
      // The driver's words (addresses) stay in the cause.
      expect(down!.message).not.toContain('127.0.0.1');
    }
    for (const err of [new Error('boom'), new ValidationError('bad'), new NotFoundError('nope'), new S3RequestError('GET x: HTTP 403', 403, 'AccessDenied'), Object.assign(new Error('duplicate key'), { code: '23505' })]) {
      expect(asUnavailable(err), String(err)).toBeUndefined();
    }
  });

  it('recognizes a full disk: ENOSPC, SQLite\'s "database or disk is full", PostgreSQL\'s disk_full', () => {
    const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const sqlite = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    const pgFull = Object.assign(new Error('could not extend file'), { code: '53100' });
    for (const err of [enospc, sqlite, pgFull, new Error('storing failed', { cause: enospc })]) {
      const full = asNoSpace(err);
      expect(full, String(err)).toBeInstanceOf(InsufficientStorageError);
      expect(full!.status).toBe(507);
    }
    expect(asNoSpace(new Error('boom'))).toBeUndefined();
    expect(asNoSpace(refused())).toBeUndefined();
  });
});

describe('the remote client reads the new statuses back as the same errors', () => {
  it('503 (with its Retry-After), 507 and 413 storage_quota_exceeded', () => {
    const down = errorFromResponse(503, { detail: 'the database cannot be reached right now; retry in a few seconds', code: 'unavailable' }, '7');
    expect(down).toBeInstanceOf(UnavailableError);
    expect((down as UnavailableError).retryAfterSeconds).toBe(7);
    expect(errorFromResponse(507, { detail: 'full', code: 'insufficient_storage' })).toBeInstanceOf(InsufficientStorageError);
    expect(errorFromResponse(413, { detail: 'over', code: 'storage_quota_exceeded' })).toBeInstanceOf(StorageQuotaError);
    expect(errorFromResponse(413, { detail: 'big', code: 'payload_too_large' })).not.toBeInstanceOf(StorageQuotaError);
  });
});

describe('the server while its database is out of reach', () => {
  const db = new Switch();
  let engine: LocalEngine;
  let url: string;
  let key: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const memory = new MemoryCatalog();
    key = (await memory.keys.create({ name: 'k', qps: 1000 })).key;
    const embedder = new FakeEmbedder();
    engine = new LocalEngine({
      home: path.join(os.tmpdir(), 'vidembed-outage-unit', 'never-created'),
      catalog: db.wrap(memory) as Catalog,
      blobs: new MemoryBlobStore(),
      embedderFor: () => embedder,
      analyzers: [],
      maxUploadBytes: 1024 * 1024,
    });
    const app = await buildServer(engine.services, { keys: engine.catalog.keys });
    url = await app.listen({ host: '127.0.0.1', port: 0 });
    close = async () => {
      await app.close();
      await engine.close();
    };
  });
  afterAll(async () => close?.());

  it('answers 503 with Retry-After and a JSON error (never 500); /healthz 200 saying the database is down; /readyz 503', async () => {
    db.down = true;
    for (const [method, p] of [['GET', '/collections'], ['POST', '/collections'], ['GET', '/videos/vid_x/status'], ['GET', '/async_status/req_x']] as const) {
      const r = await http(url, method, p, { key, ...(method === 'POST' ? { json: { name: 'c' } } : {}) });
      expect(r.status, `${method} ${p}`).toBe(503);
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
      expect(r.body).toEqual({ detail: 'the database cannot be reached right now; retry in a few seconds', code: 'unavailable' });
    }
    const health = await http(url, 'GET', '/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'degraded', database: 'down', storage: 'up' });
    expect(health.body.detail).toContain('the database cannot be reached');
    const ready = await http(url, 'GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(Number(ready.headers['retry-after'])).toBeGreaterThan(0);
    expect(ready.body.code).toBe('unavailable');
  });

  it('answers again as soon as the database does, with no restart', async () => {
    db.down = false;
    expect((await http(url, 'POST', '/collections', { key, json: { name: 'after' } })).status).toBe(201);
    expect((await http(url, 'GET', '/collections', { key })).status).toBe(200);
    // The probe's answer is reused for a second at most.
    await new Promise((r) => setTimeout(r, 1100));
    expect((await http(url, 'GET', '/readyz')).body).toEqual({ status: 'ready' });
    expect((await http(url, 'GET', '/healthz')).body).toEqual({ status: 'ok' });
  });

  it('documents /readyz and the 503 of every API operation in /openapi.json', async () => {
    const doc = (await http(url, 'GET', '/openapi.json')).body;
    expect(Object.keys(doc.paths['/readyz'].get.responses).sort()).toEqual(['200', '500', '503']);
    expect(doc.paths['/readyz'].get.security).toEqual([]);
    expect(doc.paths['/collections'].get.responses['503'].headers['Retry-After'].required).toBe(true);
    expect(doc.paths['/healthz'].get.responses['503']).toBeUndefined();
  });
});

describe('a worker whose job store goes away', () => {
  /** A host whose queue fails on the switch; its job handler records each run. */
  function host(db: Switch, run: (refId: string, attempt: number) => Promise<'done' | 'failed'>) {
    const memory = new MemoryCatalog();
    const catalog = db.wrap(memory);
    const runs: string[] = [];
    const failedSubjects: string[] = [];
    const h: JobHost = {
      catalog,
      runJob: async (job) => {
        runs.push(job.refId);
        return run(job.refId, runs.length);
      },
      failJobSubject: async (job) => void failedSubjects.push(job.refId),
      failStranded: async () => 0,
    };
    return { h, memory, runs, failedSubjects };
  }
  const logs: string[] = [];
  const opts = { pollMs: 2, heartbeatMs: 1000, backoffMs: [1, 4] as const, log: (l: string) => void logs.push(l) };

  it('starts and claims through an outage, and keeps running', async () => {
    const db = new Switch();
    const { h, memory, runs } = host(db, async () => 'done');
    await memory.queue.enqueue('video.process', 'vid_1');
    db.failNext = 25; // start-up and the first claims fail
    const stop = new AbortController();
    const worker = new Worker(h, opts);
    const running = worker.run(stop.signal);
    while ((await memory.queue.pendingCount()) > 0) await new Promise((r) => setTimeout(r, 2));
    stop.abort();
    await expect(running).resolves.toBeUndefined();
    expect(runs).toEqual(['vid_1']);
    expect(logs.some((l) => l.startsWith('cannot reach the database (connect ECONNREFUSED'))).toBe(true);
    expect(logs.some((l) => l.includes('answers again'))).toBe(true);
  });

  it('hands back a job the store failed under (its attempt not counted) and redoes it once the store answers: done once, never failed', async () => {
    const db = new Switch();
    const { h, memory, runs, failedSubjects } = host(db, async (_ref, attempt) => {
      if (attempt === 1) {
        // The database goes away mid-job: the job's own write fails, and the next 30 calls too.
        db.failNext = 30;
        throw refused();
      }
      return 'done';
    });
    const jobId = await memory.queue.enqueue('video.process', 'vid_1');
    const stop = new AbortController();
    const running = new Worker(h, opts).run(stop.signal);
    while ((await memory.queue.get(jobId))?.status !== 'done') await new Promise((r) => setTimeout(r, 2));
    stop.abort();
    await running;
    expect(runs).toEqual(['vid_1', 'vid_1']);
    expect(failedSubjects).toEqual([]);
    // Handed back (attempt 1 uncounted), then claimed again: one counted attempt.
    expect((await memory.queue.get(jobId))!.attempts).toBe(1);
  });

  it('waits, with growing backoff, before claiming again a job handed back while what it needs is out of reach', async () => {
    const db = new Switch();
    const blobStoreDown = () => new S3RequestError('GET videos/v.mp4: cannot reach http://127.0.0.1:9000: ECONNREFUSED', undefined, undefined);
    const { h, memory, runs, failedSubjects } = host(db, async (_ref, attempt) => {
      if (attempt <= 3) throw blobStoreDown();
      return 'done';
    });
    const jobId = await memory.queue.enqueue('video.process', 'vid_1');
    const lines: string[] = [];
    const stop = new AbortController();
    const running = new Worker(h, { ...opts, backoffMs: [5, 40], log: (l) => void lines.push(l) }).run(stop.signal);
    while ((await memory.queue.get(jobId))?.status !== 'done') await new Promise((r) => setTimeout(r, 2));
    stop.abort();
    await running;
    expect(runs).toEqual(['vid_1', 'vid_1', 'vid_1', 'vid_1']);
    expect(failedSubjects).toEqual([]);
    const waits = lines.filter((l) => l.startsWith('cannot reach the blob store')).map((l) => Number(/retrying in ([\d.]+) s/.exec(l)![1]));
    expect(waits).toEqual([0.005, 0.01, 0.02]);
    expect(lines.some((l) => l.startsWith('what the job needs answers again'))).toBe(true);
  });

  it('exits once idle for its idle time even while the store is out of reach (a worker left by a stopped database)', async () => {
    const db = new Switch();
    db.down = true;
    const { h } = host(db, async () => 'done');
    const lines: string[] = [];
    const stop = new AbortController();
    // Without the exit it would wait out the outage until stopped: the test's timeout would fail it.
    await new Worker(h, { ...opts, idleExitMs: 50, backoffMs: [5, 20], log: (l) => void lines.push(l) }).run(stop.signal);
    expect(stop.signal.aborted).toBe(false);
    expect(lines.some((l) => /^idle for \d+ s, the job store out of reach: exiting$/.test(l))).toBe(true);
    expect(lines.some((l) => l.startsWith('cannot reach the database'))).toBe(true);
  });

  it("backs off in the fair lane too: its claims during an outage beside a long job wait longer each time", async () => {
    const db = new Switch();
    // The main job: the database goes away while it runs (400 ms) and is back before it settles.
    const { h, memory } = host(db, async () => {
      db.down = true;
      await new Promise((r) => setTimeout(r, 400));
      db.down = false;
      return 'done';
    });
    const jobId = await memory.queue.enqueue('video.process', 'vid_long', undefined, 'alice');
    const lines: string[] = [];
    const stop = new AbortController();
    const running = new Worker(h, { ...opts, fairLaneMs: 5, backoffMs: [5, 40], log: (l) => void lines.push(l) }).run(stop.signal);
    while ((await memory.queue.get(jobId))?.status !== 'done') await new Promise((r) => setTimeout(r, 2));
    stop.abort();
    await running;
    const waits = lines.filter((l) => l.startsWith('fair lane: cannot reach the database')).map((l) => Number(/retrying in ([\d.]+) s/.exec(l)![1]));
    // Polling every 2 ms would have logged ~200 lines; with backoff: 5, 10, 20, 40, 40… ms.
    expect(waits.slice(0, 4)).toEqual([0.005, 0.01, 0.02, 0.04]);
    expect(waits.length).toBeLessThan(16);
  });
});

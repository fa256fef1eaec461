/**
 * The lane scheduler (src/runtime/worker.ts with src/capabilities/lanes.ts): a worker runs the
 * speech lane after the picture lane — each lane claims only its own job kinds, one job at a time,
 * and the speech lane only while no picture work runs on the worker or waits in the queue (unless
 * its job waited `sideLaneWaitMs`: no starving); a cancelled job never runs; a stopped worker hands
 * its jobs back. On the in-memory queue, with a job host that only records.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SIDE_LANES, Worker, type JobHost } from '../../src/runtime/worker.js';
import type { JobContext } from '../../src/services/jobs.js';
import { MemoryCatalog } from '../../src/store/memory/catalog.js';
import type { QueuedJob } from '../../src/store/queue/types.js';

class RecordingHost implements JobHost {
  readonly catalog: MemoryCatalog;
  readonly log: string[] = [];
  running = new Map<string, number>();
  most = new Map<string, number>();
  /** What each job was told of the main lane when it started (JobContext.beside): main jobs running, the longest wait. */
  beside = new Map<string, { mainRunning: number; maxWaitMs: number } | undefined>();
  /** Jobs that wait for `release(refId)` before they end. */
  private readonly gates = new Map<string, () => void>();
  private readonly held = new Set<string>();

  constructor(catalog: MemoryCatalog, hold: string[] = []) {
    this.catalog = catalog;
    for (const h of hold) this.held.add(h);
  }

  release(key: string): void {
    this.held.delete(key);
    this.gates.get(key)?.();
  }

  async runJob(job: Pick<QueuedJob, 'kind' | 'refId'>, ctx: JobContext): Promise<'done' | 'failed'> {
    const key = `${job.kind} ${job.refId}`;
    const n = (this.running.get(job.kind) ?? 0) + 1;
    this.running.set(job.kind, n);
    this.most.set(job.kind, Math.max(this.most.get(job.kind) ?? 0, n));
    this.log.push(`start ${key}`);
    this.beside.set(key, ctx.beside ? { mainRunning: ctx.beside.mainRunning(), maxWaitMs: ctx.beside.maxWaitMs } : undefined);
    try {
      if (this.held.has(key)) {
        await new Promise<void>((resolve, reject) => {
          this.gates.set(key, resolve);
          ctx.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
        });
      } else await sleep(5);
      this.log.push(`end ${key}`);
      return 'done';
    } finally {
      this.running.set(job.kind, this.running.get(job.kind)! - 1);
    }
  }

  async failJobSubject(): Promise<void> {}
  async failStranded(): Promise<number> {
    return 0;
  }
}

async function until(cond: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (await cond()) return;
    await sleep(5);
  }
  throw new Error(`never: ${what}`);
}

describe('lanes in a worker', () => {
  it('the speech lane is a side lane of its own job kind', () => {
    expect(DEFAULT_SIDE_LANES).toEqual([{ name: 'speech', kinds: ['video.speech'] }]);
  });

  /** Videos v1… in one collection of the in-memory catalog. */
  async function catalogWith(ids: string[]): Promise<MemoryCatalog> {
    const catalog = new MemoryCatalog();
    const col = await catalog.collections.insert({ name: 'c', description: '', model: 'm', dim: 2 });
    for (const id of ids) await catalog.videos.insert({ id, collection_id: col.id, filename: `${id}.mp4`, blob_key: `videos/${id}`, size_bytes: 1 });
    return catalog;
  }

  it('runs speech after the pictures: the speech lane waits while picture work runs or is queued, then takes its jobs one at a time', async () => {
    const catalog = await catalogWith(['v1', 'v2']);
    // Speech queued first, older than any picture job: the order is the lanes', not the queue's.
    await catalog.queue.enqueue('video.speech', 'v1');
    await catalog.queue.enqueue('video.speech', 'v2');
    await catalog.queue.enqueue('video.pictures', 'v1');
    await catalog.queue.enqueue('video.pictures', 'v2');
    const host = new RecordingHost(catalog, ['video.pictures v1', 'video.speech v1']);
    const stop = new AbortController();
    const worker = new Worker(host, { pollMs: 5, fairLaneMs: 0, sideLaneWaitMs: 60_000 }).run(stop.signal);
    await until(() => host.log.includes('start video.pictures v1'), 'the first picture job');
    await sleep(50);
    expect(host.log.filter((l) => l.includes('video.speech'))).toEqual([]); // a picture job runs, another is queued
    host.release('video.pictures v1');
    await until(() => host.log.includes('start video.speech v1'), 'the first speech job');
    // Not before every picture job had ended: v2's pictures, queued, went first too.
    expect(host.log.indexOf('start video.speech v1')).toBeGreaterThan(host.log.indexOf('end video.pictures v2'));
    await sleep(50);
    expect(host.log).not.toContain('start video.speech v2'); // the speech lane runs one at a time
    host.release('video.speech v1');
    await until(async () => (await catalog.queue.pendingCount()) === 0, 'the queue empty');
    stop.abort();
    await worker;
    expect(host.log.indexOf('start video.speech v2')).toBeGreaterThan(host.log.indexOf('end video.speech v1'));
    expect(host.most.get('video.speech')).toBe(1);
    expect(host.most.get('video.pictures')).toBe(1);
  });

  it('a speech job runs at once when there is no picture work', async () => {
    const catalog = await catalogWith(['v1']);
    await catalog.queue.enqueue('video.speech', 'v1');
    const host = new RecordingHost(catalog);
    const stop = new AbortController();
    const worker = new Worker(host, { pollMs: 5, fairLaneMs: 0, sideLaneWaitMs: 60_000 }).run(stop.signal);
    await until(async () => (await catalog.queue.pendingCount()) === 0, 'the speech job done');
    stop.abort();
    await worker;
    expect(host.log).toEqual(['start video.speech v1', 'end video.speech v1']);
    // A side lane's job is told the main lane is idle (its speech may use every core).
    expect(host.beside.get('video.speech v1')).toEqual({ mainRunning: 0, maxWaitMs: 60_000 });
  });

  it("one owner's picture work does not hold another owner's speech", async () => {
    const catalog = await catalogWith(['v1', 'v2']);
    await catalog.queue.enqueue('video.pictures', 'v1', undefined, 'alice');
    await catalog.queue.enqueue('video.pictures', 'v2', undefined, 'alice');
    await catalog.queue.enqueue('video.speech', 'v1', undefined, 'bob');
    const host = new RecordingHost(catalog, ['video.pictures v1']);
    const stop = new AbortController();
    const worker = new Worker(host, { pollMs: 5, fairLaneMs: 0, sideLaneWaitMs: 60_000 }).run(stop.signal);
    await until(() => host.log.includes('end video.speech v1'), "bob's speech");
    expect(host.log).not.toContain('end video.pictures v1'); // beside alice's pictures, still held
    // Told a picture job runs beside it (its speech hears one piece at a time); the picture job is told nothing.
    expect(host.beside.get('video.speech v1')).toEqual({ mainRunning: 1, maxWaitMs: 60_000 });
    expect(host.beside.get('video.pictures v1')).toBeUndefined();
    host.release('video.pictures v1');
    await until(async () => (await catalog.queue.pendingCount()) === 0, 'the queue empty');
    stop.abort();
    await worker;
  });

  it('a long queue of picture work does not starve speech: a speech job that waited sideLaneWaitMs runs beside the pictures', async () => {
    const catalog = await catalogWith(['v1', 'v2', 'v3']);
    await catalog.queue.enqueue('video.speech', 'v1');
    for (const id of ['v1', 'v2', 'v3']) await catalog.queue.enqueue('video.pictures', id);
    const host = new RecordingHost(catalog, ['video.pictures v1']);
    const stop = new AbortController();
    const worker = new Worker(host, { pollMs: 5, fairLaneMs: 0, sideLaneWaitMs: 100 }).run(stop.signal);
    await until(() => host.log.includes('end video.speech v1'), 'the speech job past its wait');
    expect(host.log).not.toContain('end video.pictures v1'); // still held: the speech ran beside it
    host.release('video.pictures v1');
    await until(async () => (await catalog.queue.pendingCount()) === 0, 'the queue empty');
    stop.abort();
    await worker;
  });

  it('a cancelled job never runs; a stopped worker hands a running speech job back to the queue', async () => {
    const catalog = new MemoryCatalog();
    const col = await catalog.collections.insert({ name: 'c', description: '', model: 'm', dim: 2 });
    for (const id of ['v1', 'v2']) await catalog.videos.insert({ id, collection_id: col.id, filename: `${id}.mp4`, blob_key: `videos/${id}`, size_bytes: 1 });
    await catalog.queue.enqueue('video.speech', 'v1');
    await catalog.queue.enqueue('video.speech', 'v2');
    const host = new RecordingHost(catalog, ['video.speech v1']);
    const stop = new AbortController();
    const worker = new Worker(host, { pollMs: 5, fairLaneMs: 0 }).run(stop.signal);
    await until(() => host.log.includes('start video.speech v1'), 'speech v1 running');
    expect(await catalog.queue.cancelFor('v2')).toBe(1);
    stop.abort();
    await worker;
    expect(host.log).not.toContain('start video.speech v2');
    const pending = await catalog.queue.pending();
    expect(pending.map((j) => [j.kind, j.refId, j.status])).toEqual([['video.speech', 'v1', 'queued']]);
  });
});

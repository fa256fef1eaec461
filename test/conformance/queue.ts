import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { JobQueue, QueuedJob, WorkerRegistry } from '../../src/store/queue/types.js';

export interface Handle {
  queue: JobQueue;
  registry: WorkerRegistry;
  close(): Promise<void>;
}

export interface Backend {
  /** A new connection (SQLite) or pool (PostgreSQL) on the same store: several act as separate workers. */
  open(): Promise<Handle>;
}

/** Long enough to outlast any test step on a loaded machine; short ones are only used to be run out. */
const LONG = 60_000;
const SHORT = 5;
/** Waits past a SHORT lease. Tests never assert how long anything took. */
const expire = () => sleep(60);

/**
 * The rules of src/store/queue/types.ts, run against one backend. `backend()` is read in each test
 * (the describe block sets it up in a hook), and every test starts from an empty queue.
 */
export function conformance(backend: () => Backend): void {
  let h: Handle;
  const extra: Handle[] = [];
  beforeEach(async () => {
    h = await backend().open();
  });
  afterEach(async () => {
    for (const x of extra.splice(0)) await x.close();
    await h.close();
  });
  const another = async () => {
    const x = await backend().open();
    extra.push(x);
    return x;
  };

  it('claims the oldest job once, with token 1 and an attempt, and completes it once', async () => {
    const a = await h.queue.enqueue('video.process', 'v1');
    const b = await h.queue.enqueue('video.process', 'v2');
    const job = await h.queue.claim('A', LONG);
    expect(job).toMatchObject({ id: a, kind: 'video.process', refId: 'v1', status: 'running', attempts: 1, maxAttempts: 3, leaseOwner: 'A', token: 1 });
    expect(job!.leaseExpiresAt).toBeGreaterThan(job!.createdAt);
    const next = await h.queue.claim('B', LONG);
    expect(next?.id).toBe(b);
    expect(await h.queue.claim('C', LONG)).toBeUndefined();
    expect(await h.queue.pendingCount()).toBe(2);
    expect(await h.queue.complete(a, job!.token)).toBe(true);
    expect(await h.queue.complete(a, job!.token)).toBe(false);
    expect(await h.queue.get(a)).toMatchObject({ status: 'done', leaseExpiresAt: null });
    expect(await h.queue.pendingCount()).toBe(1);
    expect(await h.queue.claim('C', LONG)).toBeUndefined();
    expect(await h.queue.get('job_missing')).toBeUndefined();
  });

  it('fails a job for good: not retried, and its token does nothing more', async () => {
    const id = await h.queue.enqueue('task.embedding', 'r1');
    const job = (await h.queue.claim('A', LONG))!;
    expect(await h.queue.fail(id, job.token, 'decoder said no')).toBe(true);
    expect(await h.queue.get(id)).toMatchObject({ status: 'failed', lastError: 'decoder said no' });
    expect(await h.queue.claim('B', LONG)).toBeUndefined();
    expect(await h.queue.complete(id, job.token)).toBe(false);
    expect(await h.queue.fail(id, job.token, 'again')).toBe(false);
    expect(await h.queue.renew(id, job.token, LONG)).toBe(false);
  });

  it('makes a job whose lease ran out claimable again, and renewing keeps it', async () => {
    const id = await h.queue.enqueue('video.process', 'v1');
    const first = (await h.queue.claim('A', SHORT))!;
    await expire();
    // Nobody claimed it since: still A's, and a renew puts a long lease on it.
    expect(await h.queue.renew(id, first.token, LONG)).toBe(true);
    expect(await h.queue.claim('B', LONG)).toBeUndefined();
    // Shortened again and run out: B takes it over.
    expect(await h.queue.renew(id, first.token, SHORT)).toBe(true);
    await expire();
    const second = await h.queue.claim('B', LONG);
    expect(second).toMatchObject({ id, leaseOwner: 'B', attempts: 2, token: first.token + 1 });
  });

  it('fences: once another claim took the job, the old token cannot renew, complete, fail or release it', async () => {
    const id = await h.queue.enqueue('video.process', 'v1');
    const a = (await h.queue.claim('A', SHORT))!;
    await expire();
    const other = await another();
    const b = (await other.queue.claim('B', LONG))!;
    expect(b.token).toBeGreaterThan(a.token);
    expect(await h.queue.renew(id, a.token, LONG)).toBe(false);
    expect(await h.queue.complete(id, a.token)).toBe(false);
    expect(await h.queue.fail(id, a.token, 'late')).toBe(false);
    expect(await h.queue.release(id, a.token)).toBe(false);
    expect(await h.queue.get(id)).toMatchObject({ status: 'running', leaseOwner: 'B', token: b.token });
    expect(await other.queue.complete(id, b.token)).toBe(true);
    expect(await h.queue.get(id)).toMatchObject({ status: 'done', lastError: null });
  });

  it('fences by token, not by worker: the same worker re-claiming its own run-out job gets a new token', async () => {
    const id = await h.queue.enqueue('video.process', 'v1');
    const first = (await h.queue.claim('A', SHORT))!;
    await expire();
    const again = (await h.queue.claim('A', LONG))!;
    expect(again.token).toBe(first.token + 1);
    expect(await h.queue.complete(id, first.token)).toBe(false);
    expect(await h.queue.complete(id, again.token)).toBe(true);
  });

  it('release hands a job back without counting the attempt; the next claim fences the old token', async () => {
    const id = await h.queue.enqueue('task.tagging', 'r1', 1);
    const a = (await h.queue.claim('A', LONG))!;
    expect(await h.queue.release(id, a.token)).toBe(true);
    expect(await h.queue.get(id)).toMatchObject({ status: 'queued', attempts: 0, leaseOwner: null, leaseExpiresAt: null });
    expect(await h.queue.release(id, a.token)).toBe(false);
    // maxAttempts 1, yet the job runs again: a hand-back is not a crash.
    const b = await h.queue.claim('B', LONG);
    expect(b).toMatchObject({ id, attempts: 1, token: a.token + 1 });
    expect(await h.queue.complete(id, a.token)).toBe(false);
    expect(await h.queue.complete(id, b!.token)).toBe(true);
  });

  it("expireLeasesOf makes a stopped worker's running jobs claimable now, and only its own", async () => {
    const x = await h.queue.enqueue('video.process', 'e1');
    const y = await h.queue.enqueue('video.process', 'e2');
    const a = (await h.queue.claim('A', LONG))!;
    const b = (await h.queue.claim('B', LONG))!;
    expect([a.id, b.id]).toEqual([x, y]);
    expect(await h.queue.claim('C', LONG)).toBeUndefined();
    expect(await h.queue.expireLeasesOf('A')).toBe(1);
    expect(await h.queue.expireLeasesOf('nobody')).toBe(0);
    const c = await h.queue.claim('C', LONG);
    expect(c).toMatchObject({ id: x, attempts: 2, token: a.token + 1, leaseOwner: 'C' });
    expect(await h.queue.complete(x, a.token)).toBe(false); // A's claim is fenced off
    expect(await h.queue.claim('D', LONG)).toBeUndefined(); // B's lease stands
    expect(await h.queue.complete(y, b.token)).toBe(true);
    expect(await h.queue.complete(x, c!.token)).toBe(true);
  });

  it('gives a job up after maxAttempts crashes, reports it once, and claims the next job in the same call', async () => {
    const crashy = await h.queue.enqueue('video.process', 'v-crashy', 2);
    for (const worker of ['A', 'B']) {
      expect((await h.queue.claim(worker, SHORT))?.id).toBe(crashy);
      await expire(); // the worker "died": no renew, no complete
    }
    const fine = await h.queue.enqueue('video.process', 'v-fine');
    const gaveUp: QueuedJob[] = [];
    const next = await h.queue.claim('C', LONG, undefined, (job) => {
      gaveUp.push(job);
    });
    expect(next?.id).toBe(fine);
    expect(gaveUp).toHaveLength(1);
    expect(gaveUp[0]).toMatchObject({ id: crashy, refId: 'v-crashy', status: 'failed', attempts: 2 });
    expect(gaveUp[0].lastError).toMatch(/gave up after 2 attempts/);
    expect(await h.queue.get(crashy)).toMatchObject({ status: 'failed', leaseOwner: null });
    const more: QueuedJob[] = [];
    expect(await h.queue.claim('D', LONG, undefined, (job) => void more.push(job))).toBeUndefined();
    expect(more).toEqual([]);
  });

  it('waits for an async give-up handler before the claim returns', async () => {
    const id = await h.queue.enqueue('task.embedding', 'r1', 1);
    await h.queue.claim('A', SHORT);
    await expire();
    let handled = false;
    expect(
      await h.queue.claim('B', LONG, undefined, async () => {
        await sleep(5);
        handled = true;
      }),
    ).toBeUndefined();
    expect(handled).toBe(true);
    expect((await h.queue.get(id))?.status).toBe('failed');
  });

  it('claims only the kinds asked for', async () => {
    const emb = await h.queue.enqueue('task.embedding', 'r1');
    const vid = await h.queue.enqueue('video.process', 'v1');
    expect(await h.queue.claim('A', LONG, ['task.tagging'])).toBeUndefined();
    expect((await h.queue.claim('A', LONG, ['video.process']))?.id).toBe(vid);
    expect((await h.queue.claim('A', LONG, ['video.process', 'task.embedding']))?.id).toBe(emb);
  });

  it('cancelFor drops queued jobs of a subject and fails its running one, whose holder is then refused', async () => {
    const running = await h.queue.enqueue('video.process', 'v1');
    const held = (await h.queue.claim('A', LONG))!;
    const queued = await h.queue.enqueue('video.process', 'v1');
    const other = await h.queue.enqueue('video.process', 'v2');
    expect(await h.queue.cancelFor('v1')).toBe(2);
    expect(await h.queue.get(queued)).toBeUndefined();
    const cancelled = await h.queue.get(running);
    expect(cancelled).toMatchObject({ status: 'failed', leaseOwner: null });
    expect(cancelled!.lastError).toMatch(/cancelled/);
    expect(await h.queue.renew(running, held.token, LONG)).toBe(false);
    expect(await h.queue.complete(running, held.token)).toBe(false);
    expect(await h.queue.fail(running, held.token, 'x')).toBe(false);
    expect((await h.queue.claim('B', LONG))?.id).toBe(other);
    expect(await h.queue.cancelFor('nothing')).toBe(0);
  });

  it('is fair across owners: owners take turns (least recently served first), each owner oldest first', async () => {
    const a1 = await h.queue.enqueue('video.process', 'a1', undefined, 'alice');
    const a2 = await h.queue.enqueue('video.process', 'a2', undefined, 'alice');
    const a3 = await h.queue.enqueue('video.process', 'a3', undefined, 'alice');
    const b1 = await h.queue.enqueue('video.process', 'b1', undefined, 'bob');
    const b2 = await h.queue.enqueue('task.tagging', 'b2', undefined, 'bob');
    const c1 = await h.queue.enqueue('task.embedding', 'c1', undefined, 'carol');
    const order: string[] = [];
    for (;;) {
      const job = await h.queue.claim('A', LONG);
      if (!job) break;
      order.push(job.id);
      expect(await h.queue.complete(job.id, job.token)).toBe(true);
    }
    expect(order).toEqual([a1, b1, c1, a2, b2, a3]);
    expect((await h.queue.get(a1))?.owner).toBe('alice');
    // Without an owner a job is the default owner's.
    expect((await h.queue.get(await h.queue.enqueue('video.process', 'd1')))?.owner).toBe('default');
  });

  it("is fair across workers: an owner with a job running waits behind an owner with none, even with older jobs", async () => {
    const a1 = await h.queue.enqueue('video.process', 'a1', undefined, 'alice');
    const a2 = await h.queue.enqueue('video.process', 'a2', undefined, 'alice');
    const b1 = await h.queue.enqueue('video.process', 'b1', undefined, 'bob');
    const long = (await h.queue.claim('A', LONG))!;
    expect(long.id).toBe(a1);
    // Alice has a job running: bob's newer job goes first; then alice's, as nobody else waits.
    expect((await h.queue.claim('B', LONG))?.id).toBe(b1);
    const next = (await h.queue.claim('C', LONG))!;
    expect(next.id).toBe(a2);
    // A lease that ran out does not count as running.
    await h.queue.enqueue('video.process', 'a3', undefined, 'alice');
    const b2 = await h.queue.enqueue('video.process', 'b2', undefined, 'bob');
    expect(await h.queue.renew(a1, long.token, SHORT)).toBe(true);
    expect(await h.queue.renew(a2, next.token, SHORT)).toBe(true);
    await expire();
    // Alice: 0 live jobs, bob: 1 (b1): alice's first, her run-out a1 the oldest of them.
    expect((await h.queue.claim('D', LONG))?.id).toBe(a1);
    expect((await h.queue.claim('D', LONG))?.id).toBe(b2);
  });

  it('idleOwnersOnly takes only jobs of owners with nothing running', async () => {
    const a1 = await h.queue.enqueue('video.process', 'a1', undefined, 'alice');
    await h.queue.enqueue('video.process', 'a2', undefined, 'alice');
    expect((await h.queue.claim('A', LONG))?.id).toBe(a1);
    expect(await h.queue.claim('side', LONG, undefined, undefined, { idleOwnersOnly: true })).toBeUndefined();
    const b1 = await h.queue.enqueue('task.tagging', 'b1', undefined, 'bob');
    const side = await h.queue.claim('side', LONG, undefined, undefined, { idleOwnersOnly: true });
    expect(side).toMatchObject({ id: b1, owner: 'bob', leaseOwner: 'side', status: 'running' });
    await h.queue.enqueue('task.tagging', 'b2', undefined, 'bob');
    expect(await h.queue.claim('side', LONG, undefined, undefined, { idleOwnersOnly: true })).toBeUndefined();
    expect(await h.queue.claim('side', LONG, ['video.process'], undefined, { idleOwnersOnly: true })).toBeUndefined();
  });

  it('after: takes a job only when no job of the given kinds of its owner is claimable nor running under the claimer; a job that waited maxWaitMs regardless', async () => {
    const after = { after: { kinds: ['video.pictures', 'video.process'] as const } };
    const s1 = await h.queue.enqueue('video.speech', 's1', undefined, 'alice');
    const p1 = await h.queue.enqueue('video.pictures', 'p1', undefined, 'alice');
    // A picture job of the owner queued: the speech waits.
    expect(await h.queue.claim('W', LONG, ['video.speech'], undefined, after)).toBeUndefined();
    // Running under this worker's own live lease: still waits.
    const pic = (await h.queue.claim('W', LONG, ['video.pictures']))!;
    expect(pic.id).toBe(p1);
    expect(await h.queue.claim('W', LONG, ['video.speech'], undefined, after)).toBeUndefined();
    // Another owner's picture work (queued, or running here) does not hold this owner's speech.
    const bob = await h.queue.enqueue('video.speech', 'b1', undefined, 'bob');
    expect(await h.queue.claim('W', LONG, ['video.speech'], undefined, after)).toMatchObject({ id: bob, owner: 'bob' });
    // Another worker's live picture job is not this worker's: its speech lane may go on.
    expect(await h.queue.claim('X', LONG, ['video.speech'], undefined, after)).toMatchObject({ id: s1, leaseOwner: 'X' });
    // Without kinds to wait for: no condition.
    await h.queue.enqueue('video.speech', 's2', undefined, 'alice');
    await h.queue.enqueue('video.pictures', 'p2', undefined, 'alice');
    expect(await h.queue.claim('W', LONG, ['video.speech'], undefined, { after: { kinds: [] } })).toMatchObject({ refId: 's2' });
    // maxWaitMs: a job enqueued at least that long ago goes regardless; a newer one waits.
    const s3 = await h.queue.enqueue('video.speech', 's3', undefined, 'alice');
    expect(await h.queue.claim('W', LONG, ['video.speech'], undefined, { after: { ...after.after, maxWaitMs: LONG } })).toBeUndefined();
    await sleep(700);
    await h.queue.enqueue('video.speech', 's4', undefined, 'alice');
    const waited = { after: { ...after.after, maxWaitMs: 600 } };
    expect(await h.queue.claim('W', LONG, ['video.speech'], undefined, waited)).toMatchObject({ id: s3 });
    expect(await h.queue.claim('W', LONG, ['video.speech'], undefined, waited)).toBeUndefined();
    // Once the picture work is drained (the queued one claimed elsewhere, this worker's settled), the speech goes.
    expect(await h.queue.claim('X', LONG, ['video.pictures'])).toMatchObject({ refId: 'p2' });
    expect(await h.queue.claim('W', LONG, ['video.speech'], undefined, after)).toBeUndefined();
    expect(await h.queue.complete(pic.id, pic.token)).toBe(true);
    expect(await h.queue.claim('W', LONG, ['video.speech'], undefined, after)).toMatchObject({ refId: 's4' });
  });

  it('after: a picture job whose lease ran out is claimable, so the speech still waits for it', async () => {
    await h.queue.enqueue('video.pictures', 'p1');
    await h.queue.enqueue('video.speech', 's1');
    expect(await h.queue.claim('gone', SHORT, ['video.pictures'])).toMatchObject({ refId: 'p1' });
    await expire();
    expect(await h.queue.claim('W', LONG, ['video.speech'], undefined, { after: { kinds: ['video.pictures'] } })).toBeUndefined();
  });

  it('cancel fails one pending job with its reason, fences its holder, and leaves settled jobs alone; pending lists by owner', async () => {
    const run = await h.queue.enqueue('video.process', 'v1', undefined, 'alice');
    const held = (await h.queue.claim('A', LONG))!;
    const queued = await h.queue.enqueue('task.embedding', 'r1', undefined, 'bob');
    expect((await h.queue.pending()).map((j) => j.id)).toEqual([run, queued]);
    expect((await h.queue.pending('bob')).map((j) => j.id)).toEqual([queued]);
    expect(await h.queue.cancel(queued, 'cancelled by an admin')).toMatchObject({ id: queued, status: 'queued', owner: 'bob' });
    expect(await h.queue.get(queued)).toMatchObject({ status: 'failed', lastError: 'cancelled by an admin' });
    expect(await h.queue.cancel(run, 'cancelled by its owner')).toMatchObject({ id: run, status: 'running', leaseOwner: 'A' });
    expect(await h.queue.get(run)).toMatchObject({ status: 'failed', leaseOwner: null, lastError: 'cancelled by its owner' });
    expect(await h.queue.renew(run, held.token, LONG)).toBe(false);
    expect(await h.queue.complete(run, held.token)).toBe(false);
    expect(await h.queue.cancel(run, 'again')).toBeUndefined();
    expect(await h.queue.cancel('job_missing', 'x')).toBeUndefined();
    expect(await h.queue.pending()).toEqual([]);
    expect(await h.queue.claim('B', LONG)).toBeUndefined();
  });

  it('refuses nonsense: maxAttempts below 1, a lease that is not positive', async () => {
    await expect(h.queue.enqueue('video.process', 'v1', 0)).rejects.toThrow(RangeError);
    await expect(h.queue.claim('A', 0)).rejects.toThrow(RangeError);
  });

  it('keeps workers by heartbeat time: alive within a window, gone once removed', async () => {
    await h.registry.heartbeat('wrk_a', { pid: 11, host: 'h1', kinds: ['video.process'] });
    await h.registry.heartbeat('wrk_b', { pid: 12, host: 'h2' });
    await h.registry.heartbeat('wrk_a', { pid: 11, host: 'h1', kinds: ['task.embedding'] }); // a second beat updates
    const alive = await h.registry.alive(LONG);
    expect(alive.map((w) => w.id)).toEqual(['wrk_a', 'wrk_b']);
    expect(alive[0]).toMatchObject({ pid: 11, host: 'h1', kinds: ['task.embedding'] });
    expect(typeof alive[0].heartbeatAt).toBe('number');
    expect(await h.registry.remove('wrk_a')).toBe(true);
    expect(await h.registry.remove('wrk_a')).toBe(false);
    expect((await h.registry.alive(LONG)).map((w) => w.id)).toEqual(['wrk_b']);
    await expire();
    // wrk_b's last beat is older than 5 ms now; a pid that still exists (12 may) does not matter.
    expect(await h.registry.alive(SHORT)).toEqual([]);
    // "Every worker, however old its beat" (how the reaper asks) is a window, not an error.
    expect((await h.registry.alive(Number.MAX_SAFE_INTEGER)).map((w) => w.id)).toEqual(['wrk_b']);
    await h.registry.heartbeat('wrk_b', { pid: 12, host: 'h2' });
    expect((await h.registry.alive(LONG)).map((w) => w.id)).toEqual(['wrk_b']);
  });

  it('exactly once under concurrency: separate connections claim together, a job is never held twice and completes once', async () => {
    const claimers = 4;
    const total = 60;
    const ids = new Set<string>();
    for (let i = 0; i < total; i++) ids.add(await h.queue.enqueue(i % 2 ? 'video.process' : 'task.embedding', `r${i}`));
    const handles = [h, ...(await Promise.all(Array.from({ length: claimers - 1 }, another)))];
    const holder = new Map<string, string>();
    const completed = new Map<string, number>();
    const overlaps: string[] = [];
    const refused: string[] = [];
    await Promise.all(
      handles.map(async (x, n) => {
        const me = `W${n}`;
        for (;;) {
          const job = await x.queue.claim(me, LONG);
          if (!job) break; // with long leases, nothing left to claim means everything is taken or done
          if (holder.has(job.id)) overlaps.push(`${job.id}: ${holder.get(job.id)} and ${me}`);
          holder.set(job.id, me);
          await sleep(Math.random() * 3);
          if (Math.random() < 0.3) expect(await x.queue.renew(job.id, job.token, LONG)).toBe(true);
          holder.delete(job.id);
          if (await x.queue.complete(job.id, job.token)) completed.set(job.id, (completed.get(job.id) ?? 0) + 1);
          else refused.push(job.id);
        }
      }),
    );
    expect(overlaps).toEqual([]);
    expect(refused).toEqual([]);
    expect(completed.size).toBe(total);
    expect([...completed.values()].every((c) => c === 1)).toBe(true);
    expect(new Set(completed.keys())).toEqual(ids);
    expect(await h.queue.pendingCount()).toBe(0);
  });

  it('exactly once when workers crash mid-job: what a dead worker held is redone by a live one, once', async () => {
    const total = 30;
    for (let i = 0; i < total; i++) await h.queue.enqueue('video.process', `v${i}`, 5);
    const handles = [h, ...(await Promise.all([another(), another(), another()]))];
    // The crasher takes a few jobs under short leases and walks away from them, like a SIGKILLed worker.
    // (Its own short leases may run out between its claims, so it can take one job twice.)
    const abandoned = new Map<string, number>();
    for (let i = 0; i < 4; i++) {
      const job = await handles[3].queue.claim('crasher', SHORT);
      if (job) abandoned.set(job.id, (abandoned.get(job.id) ?? 0) + 1);
    }
    expect(abandoned.size).toBeGreaterThan(0);
    const holder = new Map<string, string>();
    const completed = new Map<string, string[]>();
    const overlaps: string[] = [];
    await Promise.all(
      handles.slice(0, 3).map(async (x, n) => {
        const me = `W${n}`;
        for (;;) {
          const job = await x.queue.claim(me, LONG);
          if (!job) {
            if ((await x.queue.pendingCount()) === 0) break;
            await sleep(10); // the crasher's leases have not run out yet
            continue;
          }
          if (holder.has(job.id)) overlaps.push(job.id);
          holder.set(job.id, me);
          await sleep(Math.random() * 3);
          holder.delete(job.id);
          expect(await x.queue.complete(job.id, job.token)).toBe(true);
          completed.set(job.id, [...(completed.get(job.id) ?? []), me]);
        }
      }),
    );
    expect(overlaps).toEqual([]);
    expect(completed.size).toBe(total);
    expect([...completed.values()].every((by) => by.length === 1)).toBe(true);
    for (const [id, times] of abandoned) {
      const job = await h.queue.get(id);
      expect(job).toMatchObject({ status: 'done', attempts: times + 1, token: times + 1 });
      expect(job!.leaseOwner).not.toBe('crasher');
    }
  });
}

import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NotFoundError, ValidationError } from '../../src/api/errors.js';
import { DeliveryLoop } from '../../src/runtime/deliveries.js';
import type { LocalEngine } from '../../src/runtime/engine.js';
import { emitVideoEvent } from '../../src/services/webhook-events.js';
import { newId } from '../../src/store/ids.js';
import { nextAttempt } from '../../src/services/webhooks.js';
import { memoryEngine, type MemoryEngine } from '../helpers/memory-engine.js';

/** A receiver on loopback: what it got (body, headers), answering `status(n)` for the n-th request. */
interface Receiver {
  url: string;
  got: { body: string; headers: Record<string, string> }[];
  close(): Promise<void>;
}

async function receiver(status: (n: number) => number = () => 200): Promise<Receiver> {
  const got: Receiver['got'] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      got.push({ body, headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])) });
      res.writeHead(status(got.length)).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    got,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const alice = { owner: 'alice', admin: false };
const bob = { owner: 'bob', admin: false };
const FAST = { firstRetryMs: 20, maxRetryMs: 40, pollMs: 10, leaseMs: 5_000, timeoutMs: 2_000 };

/** Runs the delivery loop until `done()` holds (or 10 s pass), then stops it. */
async function deliverUntil(engine: LocalEngine, done: () => boolean | Promise<boolean>): Promise<void> {
  const stop = new AbortController();
  const { webhooks } = engine.services;
  const loop = new DeliveryLoop(webhooks, { concurrency: 4, pollMs: 10 }).run('wrk_test', stop.signal);
  try {
    for (let i = 0; i < 1000 && !(await done()); i++) await sleep(10);
  } finally {
    stop.abort();
    await loop;
  }
}

describe('webhooks: endpoints', () => {
  let m: MemoryEngine;
  let r: Receiver;
  beforeEach(async () => {
    m = memoryEngine({ webhooks: FAST });
    r = await receiver();
  });
  afterEach(async () => {
    await r.close();
    await m.engine.close();
  });

  it('refuses a loopback or private URL unless the operator allowed them, and shows the secret once', async () => {
    const a = m.engine.as(alice);
    for (const url of [r.url, 'http://10.1.2.3/x', 'http://[::1]:9/x', 'http://0x7f.1/x', 'ftp://example.com/x']) {
      await expect(a.createWebhook({ url }), url).rejects.toBeInstanceOf(ValidationError);
    }
    const created = await a.createWebhook({ url: r.url }, { allowPrivate: true });
    expect(created).toMatchObject({ url: r.url, events: ['video.processed', 'video.failed', 'task.done', 'task.failed'], collection_id: null, description: '' });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
    const listed = await a.listWebhooks();
    expect(listed.webhooks.map((w) => w.webhook_id)).toEqual([created.webhook_id]);
    expect(JSON.stringify(listed)).not.toContain(created.secret);
    expect(JSON.stringify(await a.getWebhook(created.webhook_id))).not.toContain(created.secret);
    // A name that does not resolve now is taken (its deliveries fail and are retried).
    const unresolved = memoryEngine({ webhooks: { resolve: async () => Promise.reject(Object.assign(new Error('no such host'), { code: 'ENOTFOUND' })) } });
    await expect(unresolved.engine.as(alice).createWebhook({ url: 'https://hooks.example.invalid/in' })).resolves.toMatchObject({ url: 'https://hooks.example.invalid/in' });
    await unresolved.engine.close();
  });

  it("keeps owners apart: another owner's webhook answers 404 to everything, and gets none of their events", async () => {
    const hook = await m.engine.as(alice).createWebhook({ url: r.url }, { allowPrivate: true });
    const b = m.engine.as(bob);
    expect((await b.listWebhooks()).webhooks).toEqual([]);
    for (const call of [() => b.getWebhook(hook.webhook_id), () => b.deleteWebhook(hook.webhook_id), () => b.testWebhook(hook.webhook_id), () => b.webhookDeliveries(hook.webhook_id)]) {
      await expect(call()).rejects.toBeInstanceOf(NotFoundError);
    }
    // Bob's video fails: alice's endpoint gets nothing; alice's does: she gets it.
    const bobs = await b.createCollection({ name: 'bobs' });
    const alices = await m.engine.as(alice).createCollection({ name: 'alices' });
    for (const [c, name] of [[bobs.collection_id, 'b.mp4'], [alices.collection_id, 'a.mp4']] as const) {
      const v = await m.catalog.videos.insert({ id: newId('vid'), collection_id: c, filename: name, path: `/tmp/${name}`, size_bytes: 1 });
      await m.engine.services.jobs.failSubject({ kind: 'video.process', refId: v.id }, 'cancelled by its owner');
    }
    await deliverUntil(m.engine, () => r.got.length >= 1);
    await sleep(50);
    expect(r.got.map((g) => JSON.parse(g.body).data.filename)).toEqual(['a.mp4']);
  });

  it('a collection filter and an event list narrow what an endpoint gets', async () => {
    const a = m.engine.as(alice);
    const c1 = await a.createCollection({ name: 'one' });
    const c2 = await a.createCollection({ name: 'two' });
    await a.createWebhook({ url: `${r.url}?only=one`, collection: 'one', events: ['video.failed'] }, { allowPrivate: true });
    await expect(a.createWebhook({ url: r.url, collection: 'nope' }, { allowPrivate: true })).rejects.toBeInstanceOf(NotFoundError);
    await expect(a.createWebhook({ url: r.url, events: ['video.deleted' as never] }, { allowPrivate: true })).rejects.toBeInstanceOf(ValidationError);
    for (const c of [c1, c2]) {
      const v = await m.catalog.videos.insert({ id: newId('vid'), collection_id: c.collection_id, filename: `${c.name}.mp4`, path: `/tmp/${c.name}.mp4`, size_bytes: 1 });
      await m.engine.services.jobs.failSubject({ kind: 'video.process', refId: v.id }, 'no decoder');
      // A processed video of that collection is not a video.failed: not sent either.
      await m.catalog.transaction(async (tx) => {
        await tx.videos.markProcessed(v.id, null);
        await emitVideoEvent(tx, 'video.processed', v.id);
      });
    }
    const task = await m.catalog.tasks.insert('req_1', 'tagging', {}, 'alice');
    await m.engine.services.jobs.failSubject({ kind: 'task.tagging', refId: task.id }, 'no decoder');
    await deliverUntil(m.engine, () => r.got.length >= 1);
    await sleep(50);
    expect(r.got).toHaveLength(1);
    expect(JSON.parse(r.got[0].body)).toMatchObject({ type: 'video.failed', data: { collection_name: 'one', filename: 'one.mp4', status: 'failed', error_message: 'no decoder' } });
  });
});

describe('webhooks: deliveries', () => {
  let m: MemoryEngine;
  let r: Receiver;
  afterEach(async () => {
    await r?.close();
    await m?.engine.close();
  });

  it('signs each attempt the Standard Webhooks way, retries a failing receiver with the same webhook-id, and logs each answer', async () => {
    m = memoryEngine({ webhooks: FAST });
    r = await receiver((n) => (n === 1 ? 500 : n === 2 ? 302 : 204));
    const a = m.engine.as(alice);
    const hook = await a.createWebhook({ url: r.url }, { allowPrivate: true });
    const task = await m.catalog.tasks.insert('req_9', 'embedding', {}, 'alice');
    await m.engine.services.jobs.failSubject({ kind: 'task.embedding', refId: task.id }, 'the video could not be read');
    await deliverUntil(m.engine, async () => (await a.webhookDeliveries(hook.webhook_id)).deliveries[0]?.status === 'delivered');
    expect(r.got).toHaveLength(3);
    const wh = new Webhook(hook.secret);
    const ids = new Set<string>();
    for (const g of r.got) {
      const payload = wh.verify(g.body, g.headers) as { type: string; data: Record<string, unknown> };
      expect(payload).toMatchObject({ type: 'task.failed', data: { request_id: 'req_9', kind: 'embedding', status: 'failed', error_message: 'the video could not be read' } });
      expect(g.headers['content-type']).toBe('application/json');
      ids.add(g.headers['webhook-id']);
    }
    expect(ids.size).toBe(1);
    // A signature made with another secret, or over other bytes, does not verify.
    expect(() => new Webhook('whsec_' + Buffer.alloc(32, 7).toString('base64')).verify(r.got[0].body, r.got[0].headers)).toThrow();
    expect(() => wh.verify(r.got[0].body.replace('req_9', 'req_8'), r.got[0].headers)).toThrow();
    const [d] = (await a.webhookDeliveries(hook.webhook_id)).deliveries;
    expect(d).toMatchObject({ event_id: [...ids][0], event_type: 'task.failed', status: 'delivered', attempts: 3, last_status_code: 204 });
    expect(d.attempt_log.map((x) => [x.attempt, x.status_code, x.error])).toEqual([
      [1, 500, 'HTTP 500'],
      [2, 302, 'HTTP 302'],
      [3, 204, undefined],
    ]);
  });

  it('gives a delivery up once it has been retried for the whole retry window', async () => {
    m = memoryEngine({ webhooks: { ...FAST, retryForMs: 150 } });
    r = await receiver(() => 503);
    const a = m.engine.as(alice);
    const hook = await a.createWebhook({ url: r.url }, { allowPrivate: true });
    const sent = await a.testWebhook(hook.webhook_id);
    expect(sent).toMatchObject({ webhook_id: hook.webhook_id, event_type: 'webhook.test' });
    await deliverUntil(m.engine, async () => (await a.webhookDeliveries(hook.webhook_id)).deliveries[0]?.status === 'failed');
    const [d] = (await a.webhookDeliveries(hook.webhook_id)).deliveries;
    expect(d.status).toBe('failed');
    expect(d.attempts).toBeGreaterThanOrEqual(2);
    expect(d.next_attempt_at).toBeUndefined();
    expect(d.attempt_log.every((x) => x.status_code === 503)).toBe(true);
    const n = r.got.length;
    await sleep(100);
    expect(r.got.length).toBe(n);
  });

  it('checks the target again at each attempt: a name that now resolves to loopback is refused, and nothing is sent', async () => {
    let answer = '93.184.215.14'; // public when registered…
    m = memoryEngine({ webhooks: { ...FAST, resolve: async () => [{ address: answer, family: 4 }] } });
    r = await receiver();
    const port = new URL(r.url).port;
    const a = m.engine.as(alice);
    const hook = await a.createWebhook({ url: `http://hooks.example.com:${port}/hook` });
    answer = '127.0.0.1'; // …loopback when sent (DNS rebinding)
    await a.testWebhook(hook.webhook_id);
    await deliverUntil(m.engine, async () => (await a.webhookDeliveries(hook.webhook_id)).deliveries[0]?.attempts === 1);
    const [d] = (await a.webhookDeliveries(hook.webhook_id)).deliveries;
    expect(d.attempt_log[0]).toMatchObject({ attempt: 1, error: expect.stringMatching(/^refused: .*non-public/) });
    expect(d.attempt_log[0].status_code).toBeUndefined();
    expect(r.got).toEqual([]);
    // Registering a name that resolves to loopback is refused outright.
    await expect(a.createWebhook({ url: 'http://hooks.example.com/x' })).rejects.toBeInstanceOf(ValidationError);
  });

  it('a delivery whose worker stopped mid-attempt is sent again by another, with the same webhook-id', async () => {
    m = memoryEngine({ webhooks: FAST });
    r = await receiver();
    const a = m.engine.as(alice);
    const hook = await a.createWebhook({ url: r.url }, { allowPrivate: true });
    const sent = await a.testWebhook(hook.webhook_id);
    const [lost] = await m.engine.services.webhooks.claim('wrk_dead'); // claimed, never settled
    expect(lost?.event_id).toBe(sent.event_id);
    expect(await m.catalog.webhooks.expireLeasesOf('wrk_dead')).toBe(1); // what reaping a stopped worker does
    await deliverUntil(m.engine, async () => (await a.webhookDeliveries(hook.webhook_id)).deliveries[0]?.status === 'delivered');
    expect(r.got).toHaveLength(1);
    expect(r.got[0].headers['webhook-id']).toBe(sent.event_id);
    expect(await m.engine.services.webhooks.deliver(lost!)).toBe('lost'); // the dead worker's late answer changes nothing
    const [d] = (await a.webhookDeliveries(hook.webhook_id)).deliveries;
    expect(d).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(d.attempt_log.map((x) => x.attempt)).toEqual([2]);
  });
});

describe('webhooks: the retry schedule', () => {
  const s = { firstRetryMs: 5_000, maxRetryMs: 2 * 3600_000, retryForMs: 24 * 3600_000 };
  const mid = () => 0.5; // no jitter

  it('waits 5 s, then twice as long each time up to 2 h, and gives up only after 24 h of retrying', () => {
    const waits: number[] = [];
    let age = 0;
    for (let attempts = 1; attempts < 100; attempts++) {
      const next = nextAttempt(attempts, age, s, mid);
      if ('failed' in next) break;
      if (!('retryInMs' in next)) throw new Error('a failed attempt is never delivered');
      waits.push(next.retryInMs);
      age += next.retryInMs;
    }
    expect(waits.slice(0, 4)).toEqual([5_000, 10_000, 20_000, 40_000]);
    expect(Math.max(...waits)).toBe(2 * 3600_000);
    expect(waits.every((w, i) => i === 0 || w >= waits[i - 1])).toBe(true);
    expect(age).toBeGreaterThanOrEqual(24 * 3600_000);
    expect(age - waits[waits.length - 1]).toBeLessThan(24 * 3600_000);
    expect(nextAttempt(3, 24 * 3600_000, s, mid)).toEqual({ failed: true });
  });

  it('jitters each wait by at most a fifth either way', () => {
    expect(nextAttempt(1, 0, s, () => 0)).toEqual({ retryInMs: 4_000 });
    expect(nextAttempt(1, 0, s, () => 0.999999)).toEqual({ retryInMs: 6_000 });
  });
});

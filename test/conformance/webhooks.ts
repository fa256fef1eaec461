import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Catalog } from '../../src/store/catalog/types.js';
import type { NewWebhookEndpoint, NewWebhookEvent } from '../../src/store/webhooks/types.js';

export type Handle = Pick<Catalog, 'webhooks' | 'transaction' | 'close'>;

export interface Backend {
  /** A new connection (SQLite), pool (PostgreSQL) or catalog (memory) on the same store: several act as separate workers. */
  open(): Promise<Handle>;
}

const LONG = 60_000;
const SHORT = 5;
/** Waits past a SHORT lease or retry. Tests never assert how long anything took. */
const expire = () => sleep(60);

const ALL = ['video.processed', 'video.failed', 'task.done', 'task.failed'];
const endpoint = (over: Partial<NewWebhookEndpoint> = {}): NewWebhookEndpoint => ({
  owner: 'alice',
  url: 'https://hooks.example.com/in',
  secret: 'whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0',
  events: ALL,
  collection_id: null,
  description: '',
  allow_private: false,
  ...over,
});
let n = 0;
const event = (over: Partial<NewWebhookEvent> = {}): NewWebhookEvent => ({
  id: `msg_${++n}`,
  type: 'video.processed',
  owner: 'alice',
  collection_id: 'col_1',
  payload: JSON.stringify({ type: 'video.processed', n }),
  ...over,
});
const ok = { status_code: 200, error: null, duration_ms: 3 };
const down = { status_code: 503, error: 'HTTP 503', duration_ms: 4 };

/**
 * The rules of src/store/webhooks/types.ts, run against one backend. `backend()` is read in each
 * test (the describe block sets it up in a hook), and every test starts from an empty store.
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

  it('stores endpoints as given, lists an owner’s oldest first, and removes one', async () => {
    const a = await h.webhooks.addEndpoint(endpoint({ description: 'first', collection_id: 'col_9', allow_private: true, events: ['task.done'] }));
    const b = await h.webhooks.addEndpoint(endpoint({ url: 'https://hooks.example.com/2' }));
    const c = await h.webhooks.addEndpoint(endpoint({ owner: 'bob' }));
    expect(a).toMatchObject({ owner: 'alice', url: 'https://hooks.example.com/in', events: ['task.done'], collection_id: 'col_9', description: 'first', allow_private: true });
    expect(a.id).toMatch(/^whk_/);
    expect(a.secret).toBe(endpoint().secret);
    expect(typeof a.created_at).toBe('number');
    expect(await h.webhooks.endpoint(a.id)).toEqual(a);
    expect((await h.webhooks.endpoints('alice')).map((e) => e.id)).toEqual([a.id, b.id]);
    expect((await h.webhooks.endpoints(null)).map((e) => e.id)).toEqual([a.id, b.id, c.id]);
    expect(await h.webhooks.removeEndpoint(a.id)).toBe(true);
    expect(await h.webhooks.removeEndpoint(a.id)).toBe(false);
    expect(await h.webhooks.endpoint(a.id)).toBeUndefined();
    expect((await h.webhooks.endpoints('alice')).map((e) => e.id)).toEqual([b.id]);
  });

  it("fans an event out to the owner's endpoints that want its type and collection, and to no one else's", async () => {
    const all = await h.webhooks.addEndpoint(endpoint());
    const tasksOnly = await h.webhooks.addEndpoint(endpoint({ events: ['task.done', 'task.failed'] }));
    const col1 = await h.webhooks.addEndpoint(endpoint({ collection_id: 'col_1' }));
    const col2 = await h.webhooks.addEndpoint(endpoint({ collection_id: 'col_2' }));
    const bobs = await h.webhooks.addEndpoint(endpoint({ owner: 'bob' }));
    const video = await h.webhooks.emit(event({ collection_id: 'col_1' }));
    expect(video).toHaveLength(2);
    const targets = await Promise.all(video.map(async (id) => (await h.webhooks.delivery(id))!.endpoint_id));
    expect(targets.sort()).toEqual([all.id, col1.id].sort());
    const task = await h.webhooks.emit(event({ type: 'task.done', collection_id: null }));
    const taskTargets = await Promise.all(task.map(async (id) => (await h.webhooks.delivery(id))!.endpoint_id));
    expect(taskTargets.sort()).toEqual([all.id, tasksOnly.id].sort());
    expect(await h.webhooks.emit(event({ owner: 'carol' }))).toEqual([]);
    expect(await h.webhooks.deliveries(bobs.id, 10, 0)).toEqual([]);
    expect(await h.webhooks.deliveries(col2.id, 10, 0)).toEqual([]);
    // Aimed at one endpoint (a test event): whatever it subscribes to, but only the owner's own.
    const aimed = await h.webhooks.emit(event({ type: 'webhook.test' }), col2.id);
    expect(aimed).toHaveLength(1);
    expect(await h.webhooks.delivery(aimed[0])).toMatchObject({ endpoint_id: col2.id, event_type: 'webhook.test', status: 'pending', attempts: 0, token: 0 });
    expect(await h.webhooks.emit(event({ owner: 'carol' }), col2.id)).toEqual([]);
  });

  it('writes nothing when the transaction that emitted rolls back, and everything when it commits', async () => {
    const e = await h.webhooks.addEndpoint(endpoint());
    await expect(
      h.transaction(async (tx) => {
        await tx.webhooks.emit(event());
        throw new Error('the state change failed');
      }),
    ).rejects.toThrow('the state change failed');
    expect(await h.webhooks.deliveries(e.id, 10, 0)).toEqual([]);
    expect(await h.webhooks.dueCount()).toBe(0);
    const ids = await h.transaction((tx) => tx.webhooks.emit(event({ id: 'msg_kept', payload: '{"exact": "bytes" }' })));
    expect(await h.webhooks.delivery(ids[0])).toMatchObject({ event_id: 'msg_kept', payload: '{"exact": "bytes" }', owner: 'alice', event_type: 'video.processed' });
  });

  it('claims the delivery due longest ago under a lease, with its endpoint, and settles it once', async () => {
    const e = await h.webhooks.addEndpoint(endpoint());
    const [first] = await h.webhooks.emit(event());
    const [second] = await h.webhooks.emit(event());
    const c = await h.webhooks.claim('A', LONG);
    expect(c).toMatchObject({ id: first, status: 'pending', attempts: 1, token: 1, lease_owner: 'A', url: e.url, secret: e.secret, allow_private: false });
    expect(c!.claimed_at).toBeGreaterThanOrEqual(c!.created_at);
    expect(c!.lease_expires_at).toBeGreaterThan(c!.claimed_at);
    expect((await h.webhooks.claim('B', LONG))?.id).toBe(second);
    expect(await h.webhooks.claim('C', LONG)).toBeUndefined();
    expect(await h.webhooks.dueCount()).toBe(0);
    expect(await h.webhooks.settle(first, c!.token, ok, { delivered: true })).toBe(true);
    expect(await h.webhooks.settle(first, c!.token, ok, { delivered: true })).toBe(false);
    expect(await h.webhooks.delivery(first)).toMatchObject({ status: 'delivered', attempts: 1, last_status_code: 200, last_error: null, next_attempt_at: null, lease_owner: null });
    expect(await h.webhooks.attempts([first])).toEqual([{ delivery_id: first, attempt: 1, at: expect.any(Number), status_code: 200, error: null, duration_ms: 3 }]);
    expect(await h.webhooks.claim('C', LONG)).toBeUndefined();
  });

  it('claimMany leases up to the limit in due order, and two claimers never share one', async () => {
    await h.webhooks.addEndpoint(endpoint());
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(...(await h.webhooks.emit(event())));
    const first = await h.webhooks.claimMany('A', LONG, 3);
    expect(first.map((d) => d.id)).toEqual(ids.slice(0, 3));
    expect(first.every((d) => d.token === 1 && d.attempts === 1 && d.lease_owner === 'A' && d.url === endpoint().url)).toBe(true);
    const other = await another();
    const second = await other.webhooks.claimMany('B', LONG, 10);
    expect(second.map((d) => d.id)).toEqual(ids.slice(3));
    expect(await h.webhooks.claimMany('C', LONG, 10)).toEqual([]);
    for (const d of [...first, ...second]) expect(await h.webhooks.settle(d.id, d.token, ok, { delivered: true })).toBe(true);
  });

  it('a retry is due after retryInMs, logged attempt by attempt; failed is for good', async () => {
    await h.webhooks.addEndpoint(endpoint());
    const [id] = await h.webhooks.emit(event());
    const a = (await h.webhooks.claim('A', LONG))!;
    expect(await h.webhooks.settle(id, a.token, down, { retryInMs: LONG })).toBe(true);
    expect(await h.webhooks.delivery(id)).toMatchObject({ status: 'pending', last_status_code: 503, last_error: 'HTTP 503', lease_owner: null });
    expect(await h.webhooks.claim('B', LONG)).toBeUndefined(); // not due yet
    // Due again at once.
    const [id2] = await h.webhooks.emit(event());
    const c = (await h.webhooks.claim('C', LONG))!;
    expect(c.id).toBe(id2);
    expect(await h.webhooks.settle(id2, c.token, { status_code: null, error: 'connection refused\nat line 2', duration_ms: 1 }, { retryInMs: SHORT })).toBe(true);
    await expire();
    expect(await h.webhooks.dueCount()).toBe(1);
    const d = (await h.webhooks.claim('D', LONG))!;
    expect(d).toMatchObject({ id: id2, attempts: 2, token: c.token + 1 });
    expect(await h.webhooks.settle(id2, d.token, down, { failed: true })).toBe(true);
    expect(await h.webhooks.delivery(id2)).toMatchObject({ status: 'failed', attempts: 2, next_attempt_at: null });
    expect((await h.webhooks.attempts([id2])).map((x) => [x.attempt, x.status_code, x.error])).toEqual([
      [1, null, 'connection refused at line 2'],
      [2, 503, 'HTTP 503'],
    ]);
    expect(await h.webhooks.claim('E', LONG)).toBeUndefined();
  });

  it('fences: once another claim took a delivery whose lease ran out, the old token settles and releases nothing', async () => {
    await h.webhooks.addEndpoint(endpoint());
    const [id] = await h.webhooks.emit(event());
    const a = (await h.webhooks.claim('A', SHORT))!;
    await expire();
    const other = await another();
    const b = (await other.webhooks.claim('B', LONG))!;
    expect(b).toMatchObject({ id, attempts: 2, token: a.token + 1, lease_owner: 'B' });
    expect(await h.webhooks.settle(id, a.token, ok, { delivered: true })).toBe(false);
    expect(await h.webhooks.release(id, a.token)).toBe(false);
    expect(await h.webhooks.attempts([id])).toEqual([]);
    expect(await other.webhooks.settle(id, b.token, ok, { delivered: true })).toBe(true);
    expect((await h.webhooks.attempts([id])).map((x) => x.attempt)).toEqual([2]);
  });

  it('release hands a delivery back due now without counting the attempt; expireLeasesOf frees only that worker’s', async () => {
    await h.webhooks.addEndpoint(endpoint());
    const [x] = await h.webhooks.emit(event());
    const [y] = await h.webhooks.emit(event());
    const a = (await h.webhooks.claim('A', LONG))!;
    expect(await h.webhooks.release(x, a.token)).toBe(true);
    expect(await h.webhooks.release(x, a.token)).toBe(false);
    expect(await h.webhooks.delivery(x)).toMatchObject({ attempts: 0, lease_owner: null, status: 'pending' });
    const again = (await h.webhooks.claim('A', LONG))!;
    expect(again).toMatchObject({ id: x, attempts: 1, token: a.token + 1 });
    const b = (await h.webhooks.claim('B', LONG))!;
    expect(b.id).toBe(y);
    expect(await h.webhooks.expireLeasesOf('A')).toBe(1);
    expect(await h.webhooks.expireLeasesOf('nobody')).toBe(0);
    const c = await h.webhooks.claim('C', LONG);
    expect(c).toMatchObject({ id: x, attempts: 2, lease_owner: 'C' });
    expect(await h.webhooks.claim('D', LONG)).toBeUndefined(); // B's lease stands
  });

  it('lists an endpoint’s deliveries newest first, by page, with their attempts', async () => {
    const e = await h.webhooks.addEndpoint(endpoint());
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(...(await h.webhooks.emit(event())));
    const page = await h.webhooks.deliveries(e.id, 2, 1);
    expect(page.map((d) => d.id)).toEqual([ids[3], ids[2]]);
    expect((await h.webhooks.deliveries(e.id, 10, 0)).map((d) => d.id)).toEqual([...ids].reverse());
    expect(await h.webhooks.attempts([])).toEqual([]);
    expect(await h.webhooks.attempts(['dlv_missing'])).toEqual([]);
  });

  it('removing an endpoint removes its deliveries and their log', async () => {
    const e = await h.webhooks.addEndpoint(endpoint());
    const [id] = await h.webhooks.emit(event());
    const a = (await h.webhooks.claim('A', LONG))!;
    await h.webhooks.settle(id, a.token, down, { retryInMs: 0 });
    expect(await h.webhooks.removeEndpoint(e.id)).toBe(true);
    expect(await h.webhooks.delivery(id)).toBeUndefined();
    expect(await h.webhooks.attempts([id])).toEqual([]);
    expect(await h.webhooks.claim('B', LONG)).toBeUndefined();
    expect(await h.webhooks.dueCount()).toBe(0);
  });

  it('purges settled deliveries older than asked, never pending ones', async () => {
    const e = await h.webhooks.addEndpoint(endpoint());
    const [done] = await h.webhooks.emit(event());
    const [failed] = await h.webhooks.emit(event());
    const [pending] = await h.webhooks.emit(event());
    const a = (await h.webhooks.claim('A', LONG))!;
    await h.webhooks.settle(done, a.token, ok, { delivered: true });
    const b = (await h.webhooks.claim('A', LONG))!;
    await h.webhooks.settle(failed, b.token, down, { failed: true });
    expect(await h.webhooks.purgeSettled(LONG, 100)).toBe(0);
    await expire();
    expect(await h.webhooks.purgeSettled(30, 1)).toBe(1);
    expect(await h.webhooks.purgeSettled(30, 100)).toBe(1);
    expect((await h.webhooks.deliveries(e.id, 10, 0)).map((d) => d.id)).toEqual([pending]);
    expect(await h.webhooks.attempts([done, failed])).toEqual([]);
  });

  it('claimers racing on several connections take every delivery exactly once', async () => {
    await h.webhooks.addEndpoint(endpoint());
    const total = 40;
    for (let i = 0; i < total; i++) await h.webhooks.emit(event());
    const handles = [h, await another(), await another()];
    const taken: string[] = [];
    await Promise.all(
      handles.flatMap((x, i) =>
        [0, 1].map(async (j) => {
          for (;;) {
            const c = await x.webhooks.claim(`W${i}.${j}`, LONG);
            if (!c) return;
            taken.push(c.id);
            expect(await x.webhooks.settle(c.id, c.token, ok, { delivered: true })).toBe(true);
          }
        }),
      ),
    );
    expect(taken).toHaveLength(total);
    expect(new Set(taken).size).toBe(total);
  });
}

import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimitedError, ServerBusyError } from '../../src/api/errors.js';
import { syncLimits } from '../../src/env.js';
import { Slots, workSlotsOf } from '../../src/server/work-limits.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { http as call, openApiDocument, startTestServer, type TestServer } from '../helpers/server.js';

describe('slots: a cap per server and per key', () => {
  it('refuses a key at its own cap with 429 and a full server with 503; releasing (once) makes room', () => {
    const slots = new Slots('things', 2, 1);
    const a = slots.take('a');
    expect(() => slots.take('a')).toThrow(RateLimitedError);
    const b = slots.take('b');
    expect(slots.inUse).toBe(2);
    const busy = (() => {
      try {
        slots.take('c');
      } catch (err) {
        return err;
      }
    })();
    expect(busy).toBeInstanceOf(ServerBusyError);
    expect(busy).toMatchObject({ status: 503, retryAfterSeconds: 2 });
    expect(() => slots.take(undefined)).toThrow(ServerBusyError);
    a();
    a(); // a second release changes nothing
    expect(slots.inUse).toBe(1);
    const c = slots.take(undefined);
    expect(() => slots.take('a')).toThrow(ServerBusyError);
    b();
    c();
    expect(slots.inUse).toBe(0);
    slots.take('a');
  });

  it('reads its caps from the environment, at least 1 each', () => {
    expect(syncLimits({})).toEqual({ sync: 2, syncPerKey: 1, largeBodies: 2, largeBodiesPerKey: 1, largeBodyBytes: 8 * 1024 * 1024 });
    expect(syncLimits({ VIDEMBED_SYNC_MAX: '0', VIDEMBED_SYNC_MAX_PER_KEY: '3', VIDEMBED_LARGE_BODY_MB: '1' })).toMatchObject({ sync: 1, syncPerKey: 3, largeBodyBytes: 1048576 });
  });
});

describe('large bodies over HTTP: per key 429, per server 503, with Retry-After', () => {
  let s: TestServer;
  let other: string;
  beforeAll(async () => {
    const fake = new FakeEmbedder();
    s = await startTestServer({
      engine: { embedderFor: () => fake },
      server: { workLimits: { sync: 1, syncPerKey: 1, largeBodies: 1, largeBodiesPerKey: 1, largeBodyBytes: 1024 * 1024 } },
    });
    other = s.engine.store.keys.create({ name: 'other', qps: 1000 }).key;
  });
  afterAll(async () => s?.close());

  /** A tensor upload that announces 2 MiB and sends one byte: it holds a large-body slot until destroyed. */
  const holdLargeBody = async (key: string) => {
    const url = new URL(`${s.url}/files/upload/tensors`);
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(2 * 1024 * 1024), 'x-api-key': key } });
    req.on('error', () => {});
    req.write('{');
    // Wait until its hook has taken the slot.
    const slots = workSlotsOf(s.app)!.largeBodies;
    for (let i = 0; i < 500 && slots.inUse === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(slots.inUse).toBe(1);
    return req;
  };
  const bigBody = (key: string) =>
    call(s.url, 'POST', '/files/upload/tensors', {
      key,
      json: { service: 'embedding', request_id: 'big', video_input: { data: Buffer.alloc(900 * 1024).toString('base64'), shape: [1, 1, 3, 480, 640], dtype: 'uint8' } },
    });

  it('answers the same key 429, another key 503, a small body as usual; the slot comes back when the client goes away', async () => {
    const held = await holdLargeBody(s.key);
    const same = await bigBody(s.key);
    expect(same.status).toBe(429);
    expect(Number(same.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(same.body.detail).toMatch(/this key has 1 large request bodies in progress/);
    const another = await bigBody(other);
    expect(another.status).toBe(503);
    expect(another.body).toMatchObject({ code: 'server_busy' });
    expect(Number(another.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Small bodies are not counted.
    expect((await call(s.url, 'POST', '/collections', { key: other, json: { name: 'small' } })).status).toBe(201);
    held.destroy();
    await new Promise((resolve) => held.once('close', resolve));
    const slots = workSlotsOf(s.app)!.largeBodies;
    for (let i = 0; i < 500 && slots.inUse > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(slots.inUse).toBe(0);
    expect((await bigBody(other)).status).toBe(200);
  });

  it('documents 503 with Retry-After on the operations that take large bodies or analyse synchronously', async () => {
    const doc = (await openApiDocument(s.url)) as unknown as { paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>> };
    for (const [p, m] of [['/files/upload/tensors', 'post'], ['/video_embedding/encode_video', 'post'], ['/video_tagging', 'post'], ['/collections/{collection_id}/videos/upload', 'post']]) {
      expect(doc.paths[p][m].responses['503']?.headers?.['Retry-After'], `${m} ${p}`).toBeDefined();
    }
    expect(doc.paths['/healthz'].get.responses['503']).toBeUndefined();
    expect(doc.paths['/collections/{collection_id}/videos/upload'].post.responses['503'].description).toMatch(/cap of synchronous analyses or large bodies/);
  });
});

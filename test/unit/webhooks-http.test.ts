import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from '../../src/runtime/worker.js';
import { http, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * `/webhooks` over HTTP on a real server (SQLite, loopback), every answer checked against
 * /openapi.json by the `http` helper: the SSRF guard, the secret shown once, owners kept apart,
 * and a test event sent by a worker and logged with its status code.
 */
describe('/webhooks', () => {
  let strict: TestServer;
  let open: TestServer;
  let receiver: Server;
  let hookUrl: string;
  const got: { body: string; headers: Record<string, string> }[] = [];

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        got.push({ body, headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])) });
        res.writeHead(200).end('thanks');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/in`;
    strict = await startTestServer();
    // The operator's flag (`serve --allow-private-webhooks`): loopback receivers allowed.
    open = await startTestServer({ engine: { webhooks: { allowPrivate: true, pollMs: 20 } } });
  });
  afterAll(async () => {
    await strict?.close();
    await open?.close();
    await new Promise((resolve) => receiver.close(resolve));
  });

  it('refuses a loopback receiver unless the operator allowed private addresses', async () => {
    const r = await http(strict.url, 'POST', '/webhooks', { key: strict.key, json: { url: hookUrl } });
    expect(r.status).toBe(422);
    expect(r.body.detail[0]).toMatchObject({ loc: ['body', 'url'], type: 'value_error.url.host' });
    const bad = await http(strict.url, 'POST', '/webhooks', { key: strict.key, json: { url: 'https://hooks.example.com/x', events: ['video.deleted'] } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['body', 'events', 0]);
    const extra = await http(strict.url, 'POST', '/webhooks', { key: strict.key, json: { url: 'https://hooks.example.com/x', allow_private: true } });
    expect(extra.status).toBe(422); // a client cannot grant itself private targets
  });

  it('creates (secret once), lists, tests, logs and removes; another owner sees none of it', async () => {
    const created = await http(open.url, 'POST', '/webhooks', { key: open.key, json: { url: hookUrl, events: ['task.done'], description: 'ci' } });
    expect(created.status).toBe(201);
    const { webhook_id: id, secret } = created.body;
    expect(secret).toMatch(/^whsec_/);
    const list = await http(open.url, 'GET', '/webhooks', { key: open.key });
    expect(list.body.webhooks).toEqual([{ webhook_id: id, url: hookUrl, events: ['task.done'], collection_id: null, description: 'ci', created_at: created.body.created_at }]);
    const bob = open.engine.store.keys.create({ name: 'bob', qps: 1000 }).key;
    expect((await http(open.url, 'GET', '/webhooks', { key: bob })).body.webhooks).toEqual([]);
    for (const [m, p] of [
      ['GET', `/webhooks/${id}`],
      ['POST', `/webhooks/${id}/test`],
      ['GET', `/webhooks/${id}/deliveries`],
      ['DELETE', `/webhooks/${id}`],
    ] as const) {
      expect((await http(open.url, m, p, { key: bob })).status, `${m} ${p}`).toBe(404);
    }

    const test = await http(open.url, 'POST', `/webhooks/${id}/test`, { key: open.key });
    expect(test.status).toBe(202);
    expect(test.body).toMatchObject({ webhook_id: id, event_type: 'webhook.test' });
    // A worker sends it (the server process's own worker, as `serve` runs one).
    const stop = new AbortController();
    const worker = new Worker(open.engine, { pollMs: 20 }).run(stop.signal);
    try {
      for (let i = 0; i < 500 && got.length === 0; i++) await sleep(20);
      let d;
      for (let i = 0; i < 100; i++) {
        d = (await http(open.url, 'GET', `/webhooks/${id}/deliveries?limit=5`, { key: open.key })).body.deliveries[0];
        if (d.status === 'delivered') break;
        await sleep(20);
      }
      expect(d).toMatchObject({ delivery_id: test.body.delivery_id, event_id: test.body.event_id, status: 'delivered', attempts: 1, last_status_code: 200 });
      expect(d.attempt_log).toEqual([{ attempt: 1, at: expect.any(String), status_code: 200, duration_ms: expect.any(Number) }]);
    } finally {
      stop.abort();
      await worker;
    }
    expect(got).toHaveLength(1);
    expect(new Webhook(secret).verify(got[0].body, got[0].headers)).toMatchObject({ type: 'webhook.test', data: { webhook_id: id } });

    expect((await http(open.url, 'DELETE', `/webhooks/${id}`, { key: open.key })).body).toEqual({ webhook_id: id, deleted: true });
    expect((await http(open.url, 'GET', `/webhooks/${id}/deliveries`, { key: open.key })).status).toBe(404);
  });
});

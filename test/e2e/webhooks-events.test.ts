/**
 * The events webhooks report, from the real job paths (issue 34): a clip processed by a worker
 * (real ffmpeg, the fake embedder) is `video.processed`, bytes that are no video are
 * `video.failed` naming the user's file, an async tagging task is `task.done`, one on garbage
 * `task.failed` — each written to the outbox in the transaction that settled it, sent by the
 * worker, and signed (verified with `standardwebhooks`). Another owner's endpoint gets none.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from '../../src/runtime/worker.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { makeTestPatternClip, makeTextFileAsMp4, removeDir, tempDir } from '../helpers/clips.js';
import { anyFileIsVideo, http, startTestServer, type TestServer } from '../helpers/server.js';

describe('webhook events from the job paths', () => {
  let s: TestServer;
  let dir: string;
  let receiver: Server;
  const got: { body: string; headers: Record<string, string> }[] = [];

  beforeAll(async () => {
    dir = tempDir('vidembed-webhook-events-');
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        got.push({ body, headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const fake = new FakeEmbedder();
    s = await startTestServer({ engine: { embedderFor: () => fake, analyzers: [], checkVideo: anyFileIsVideo, webhooks: { allowPrivate: true, pollMs: 20 } } });
  });
  afterAll(async () => {
    await s?.close();
    await new Promise((resolve) => receiver?.close(resolve));
    removeDir(dir);
  });

  it('video.processed, video.failed, task.done and task.failed, each signed, only to the owner', async () => {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/in`;
    const hook = await http(s.url, 'POST', '/webhooks', { key: s.key, json: { url } });
    expect(hook.status).toBe(201);
    const bob = s.engine.store.keys.create({ name: 'bob', qps: 1000 }).key;
    expect((await http(s.url, 'POST', '/webhooks', { key: bob, json: { url: `${url}?bob` } })).status).toBe(201);

    const cid = (await http(s.url, 'POST', '/collections', { key: s.key, json: { name: 'events', model: new FakeEmbedder().id } })).body.collection_id;
    const clip = await makeTestPatternClip(path.join(dir, 'pattern.mp4'), 3);
    const text = makeTextFileAsMp4(path.join(dir, 'notes.mp4'));
    const good = (await s.engine.as({ owner: 'test', admin: false }).uploadVideo(cid, { path: clip, filename: 'pattern.mp4' })).video_id;
    const bad = (await s.engine.as({ owner: 'test', admin: false }).uploadVideo(cid, { path: text, filename: 'notes.mp4' })).video_id;
    const done = (await http(s.url, 'POST', '/video_tagging/async', { key: s.key, json: { video_base64: readFileSync(clip).toString('base64') } })).body.request_id;
    const failed = (await http(s.url, 'POST', '/video_tagging/async', { key: s.key, json: { video_base64: Buffer.from('no video here').toString('base64') } })).body.request_id;

    const stop = new AbortController();
    const worker = new Worker(s.engine, { pollMs: 20 }).run(stop.signal);
    try {
      for (let i = 0; i < 1500 && got.length < 4; i++) await sleep(100);
      await sleep(300); // nothing more comes (bob's endpoint gets none of these)
    } finally {
      stop.abort();
      await worker;
    }
    const wh = new Webhook(hook.body.secret);
    const byType = new Map(got.map((g) => [JSON.parse(g.body).type as string, { ...g, payload: wh.verify(g.body, g.headers) as { data: Record<string, unknown> } }]));
    expect([...byType.keys()].sort()).toEqual(['task.done', 'task.failed', 'video.failed', 'video.processed']);
    expect(got).toHaveLength(4);
    expect(byType.get('video.processed')!.payload.data).toMatchObject({ video_id: good, collection_id: cid, collection_name: 'events', filename: 'pattern.mp4', status: 'processed', duration: expect.closeTo(3, 0) });
    const failure = byType.get('video.failed')!.payload.data;
    expect(failure).toMatchObject({ video_id: bad, filename: 'notes.mp4', status: 'failed' });
    expect(String(failure.error_message)).toContain('notes.mp4');
    expect(String(failure.error_message)).not.toContain(dir);
    expect(String(failure.error_message)).not.toContain(s.home);
    expect(byType.get('task.done')!.payload.data).toEqual({ request_id: done, kind: 'tagging', status: 'completed' });
    expect(byType.get('task.failed')!.payload.data).toMatchObject({ request_id: failed, kind: 'tagging', status: 'failed', error_message: expect.any(String) });
    // The status the API reports agrees with what the event said.
    expect((await http(s.url, 'GET', `/videos/${good}/status`, { key: s.key })).body.status).toBe('processed');
    expect((await http(s.url, 'GET', `/async_status/${done}`, { key: s.key })).body.status).toBe('completed');
  });
});

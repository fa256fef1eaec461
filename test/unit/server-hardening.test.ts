import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TEXT_CHARS } from '../../src/runtime/engine.js';
import { MAX_JSON_BODY_BYTES } from '../../src/server/app.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { http, startTestServer, type TestServer, anyFileIsVideo } from '../helpers/server.js';

/** Sends raw bytes on a fresh connection and returns the status line and body of the answer. */
function raw(url: string, head: string, body: Buffer | ((sock: net.Socket) => void) = Buffer.alloc(0)): Promise<{ status: number; body: any }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(port), hostname);
    let got = '';
    const finish = () => {
      const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
      if (!m) return reject(new Error(`no HTTP answer: ${JSON.stringify(got.slice(0, 200))}`));
      const text = got.slice(got.indexOf('\r\n\r\n') + 4);
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* left as text */
      }
      resolve({ status: Number(m[1]), body: parsed });
    };
    sock.on('data', (d) => {
      got += d.toString('latin1');
      // One answer is all we wait for: stop sending, and stop reading once its body is complete.
      const at = got.indexOf('\r\n\r\n');
      const len = /content-length: (\d+)/i.exec(got);
      if (at >= 0 && len && got.length - at - 4 >= Number(len[1])) {
        sock.destroy();
        finish();
      }
    });
    sock.on('error', () => {});
    // Closed with nothing read: status 0 (callers decide whether that is acceptable).
    sock.on('close', () => (got ? finish() : resolve({ status: 0, body: undefined })));
    sock.write(head);
    if (typeof body === 'function') body(sock);
    else sock.end(body);
  });
}

const expectBody = (r: { status: number; body: any }, status: number) => {
  expect(r.status).toBe(status);
  expect(typeof r.body).toBe('object');
  expect(Object.keys(r.body).sort()).toEqual(['code', 'detail']);
};

describe('one request cannot stop the server', () => {
  let s: TestServer;
  const fake = new FakeEmbedder();
  const healthy = async () => expect((await http(s.url, 'GET', '/healthz')).body).toEqual({ status: 'ok' });

  beforeAll(async () => {
    // Default body limits: the tensor limit is the one that used to exceed V8's string limit.
    s = await startTestServer({ engine: { embedderFor: () => fake, checkVideo: anyFileIsVideo } });
  });
  afterAll(async () => s?.close());

  it('answers 413 for a tensor body longer than the longest string V8 can build, declared or streamed', async () => {
    const path = '/files/upload/tensors';
    const declared = await raw(s.url, `POST ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${s.key}\r\nContent-Type: application/json\r\nContent-Length: ${MAX_JSON_BODY_BYTES + 2 * 1024 * 1024}\r\n\r\n`);
    expectBody(declared, 413);
    await healthy();
    // Chunked, no length: the server counts while reading and answers once past the limit.
    const size = 4 * 1024 * 1024;
    const chunk = Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), Buffer.alloc(size, 0x61), Buffer.from('\r\n')]);
    const streamed = await raw(s.url, `POST ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${s.key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`, (sock) => {
      let sent = 0;
      const pump = () => {
        while (!sock.destroyed && sent <= MAX_JSON_BODY_BYTES + chunk.length) {
          sent += size;
          if (!sock.write(chunk)) return void sock.once('drain', pump);
        }
      };
      pump();
    });
    // The server answers 413 and closes; when our unsent bytes are still queued the kernel may
    // reset the connection before we read the answer. Either way it stayed up and read no further.
    if (streamed.status !== 0) expectBody(streamed, 413);
    await healthy();
  });

  it('cuts a multi-megabyte text to a bounded length before any model sees it, and says so', async () => {
    fake.texts.length = 0;
    const big = 'sunset over the sea '.repeat(400_000); // 8 MB
    const r = await http(s.url, 'POST', '/video_embedding/encode_text', { key: s.key, json: { text: big } });
    expect(r.status).toBe(200);
    expect(r.body.truncated).toBe(true);
    const c = await http(s.url, 'POST', '/collections', { key: s.key, json: { name: 'long-queries', model: fake.id } });
    const found = await http(s.url, 'POST', `/collections/${c.body.collection_id}/search`, { key: s.key, json: { text: 'x'.repeat(60 * 1024 * 1024) } });
    expect(found.status).toBe(200);
    expect(fake.texts.length).toBe(2);
    for (const t of fake.texts) expect(t.length).toBe(MAX_TEXT_CHARS);
    // Short texts are untouched.
    const short = await http(s.url, 'POST', '/video_embedding/encode_text', { key: s.key, json: { text: 'a dog' } });
    expect(short.body.truncated).toBe(false);
    expect(fake.texts[2]).toBe('a dog');
    await healthy();
  });

  it('answers 400 for JSON nested deeper than the limit (it used to overflow the stack when the task was stored)', async () => {
    const deep = `{"video_base64":"AAAA","x":${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
    for (const p of ['/video_embedding/encode_video/async', '/video_tagging/async', '/collections']) {
      const r = await http(s.url, 'POST', p, { key: s.key, raw: deep });
      expectBody(r, 400);
    }
    // Brackets inside strings are text, not nesting.
    const inString = await http(s.url, 'POST', '/collections', { key: s.key, json: { name: 'brackets', description: '[[[[{{{{'.repeat(100) } });
    expect(inString.status).toBe(201);
    await healthy();
  });

  it('answers 400 for multipart without a boundary or cut off mid-part', async () => {
    const c = await http(s.url, 'POST', '/collections', { key: s.key, json: { name: 'multipart-bad' } });
    const p = `/collections/${c.body.collection_id}/videos/upload`;
    expectBody(await http(s.url, 'POST', p, { key: s.key, raw: 'hello', headers: { 'content-type': 'multipart/form-data' } }), 400);
    const cut = Buffer.from('--XYZ\r\nContent-Disposition: form-data; name="file"; filename="a.mp4"\r\nContent-Type: video/mp4\r\n\r\nsome bytes but no closing boundary');
    expectBody(await http(s.url, 'POST', p, { key: s.key, raw: cut, headers: { 'content-type': 'multipart/form-data; boundary=XYZ' } }), 400);
    const garbage = Buffer.from('--XYZ\r\nno headers at all\r\n\r\n--XYZ--\r\n');
    const r = await http(s.url, 'POST', p, { key: s.key, raw: garbage, headers: { 'content-type': 'multipart/form-data; boundary=XYZ' } });
    expect(r.status).toBe(400);
    await healthy();
  });

  it("answers the framework's own refusals in {detail, code}: 414, 400 bad percent-encoding, 431", async () => {
    expectBody(await http(s.url, 'GET', `/videos/${'v'.repeat(300)}/status`, { key: s.key }), 414);
    expectBody(await http(s.url, 'GET', '/videos/%E0%A4%A/status', { key: s.key }), 400);
    const big = await raw(s.url, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Filler: ${'f'.repeat(20_000)}\r\n\r\n`);
    expectBody(big, 431);
    const garbage = await raw(s.url, 'THIS IS NOT HTTP\r\n\r\n');
    expectBody(garbage, 400);
    await healthy();
  });

  it('refuses conflicting credentials', async () => {
    const get = (headers: Record<string, string>) => http(s.url, 'GET', '/collections', { headers });
    expect((await get({ 'x-api-key': s.key, authorization: `Bearer ${s.key}` })).status).toBe(200);
    expectBody(await get({ 'x-api-key': s.key, authorization: 'Bearer vk_not_the_same' }), 401);
    expectBody(await get({ 'x-api-key': s.key, authorization: 'Basic dXNlcjpwYXNz' }), 401);
    expectBody(await get({ authorization: `Token ${s.key}` }), 401);
  });
});

import path from 'node:path';
import { FormData } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, startTestServer, type TestServer, anyFileIsVideo } from '../helpers/server.js';

/** Every status of the seed's error table that needs no model, from real requests on loopback. */
describe('HTTP API errors and limits', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ engine: { maxUploadBytes: 64 * 1024, maxTensorBytes: 4096, checkVideo: anyFileIsVideo }, server: { maxJsonBytes: 256 * 1024 } });
  });
  afterAll(async () => s?.close());

  const expectError = (r: { status: number; body: any }, status: number, code?: string) => {
    expect(r.status).toBe(status);
    expect(r.body).toHaveProperty('detail');
    expect(typeof r.body.code).toBe('string');
    if (code) expect(r.body.code).toBe(code);
  };

  it('keeps /healthz and /openapi.json open and describes every endpoint', async () => {
    expect((await http(s.url, 'GET', '/healthz')).body).toEqual({ status: 'ok' });
    const doc = (await http(s.url, 'GET', '/openapi.json')).body;
    for (const p of [
      '/files/upload/tensors',
      '/video_embedding/encode_video',
      '/video_embedding/encode_text',
      '/video_embedding/encode_video/async',
      '/async_status/{request_id}',
      '/video_tagging',
      '/video_tagging/async',
      '/collections',
      '/collections/{collection_id}/search',
      '/collections/{collection_id}/videos/upload',
      '/videos/{video_id}/status',
    ]) {
      expect(doc.paths, p).toHaveProperty([p]);
    }
    expect(doc.paths['/collections'].post.requestBody.content['application/json'].schema.required).toContain('name');
  });

  it('answers 401 for a missing, wrong or revoked key, with either header style', async () => {
    expectError(await http(s.url, 'GET', '/collections'), 401, 'unauthorized');
    expectError(await http(s.url, 'GET', '/collections', { key: 'vk_wrong' }), 401);
    expectError(await http(s.url, 'GET', '/collections', { key: 'vk_wrong', bearer: true }), 401);
    expect((await http(s.url, 'GET', '/collections', { key: s.key })).status).toBe(200);
    expect((await http(s.url, 'GET', '/collections', { key: s.key, bearer: true })).status).toBe(200);
    const { key, row } = s.engine.store.keys.create({ name: 'short-lived', qps: 100 });
    expect((await http(s.url, 'GET', '/collections', { key })).status).toBe(200);
    s.engine.store.keys.revoke(row.id);
    const r = await http(s.url, 'GET', '/collections', { key });
    expectError(r, 401);
    expect(r.body.detail).toMatch(/revoked/);
  });

  it('creates and lists collections; duplicate names are 409; bad fields are FastAPI-style 422', async () => {
    const created = await http(s.url, 'POST', '/collections', { key: s.key, json: { name: 'errs', description: 'd' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'errs', description: 'd' });
    expect(created.body.collection_id).toMatch(/^col_/);
    expectError(await http(s.url, 'POST', '/collections', { key: s.key, json: { name: 'errs' } }), 409, 'conflict');

    const missing = await http(s.url, 'POST', '/collections', { key: s.key, json: { description: 'no name' } });
    expectError(missing, 422, 'validation_error');
    expect(missing.body.detail).toEqual([{ loc: ['body', 'name'], msg: 'field required', type: 'value_error.missing' }]);
    const wrongType = await http(s.url, 'POST', '/collections', { key: s.key, json: { name: 42 } });
    expectError(wrongType, 422);
    expect(wrongType.body.detail[0].loc).toEqual(['body', 'name']);
    const tooLong = await http(s.url, 'POST', '/collections', { key: s.key, json: { name: 'x'.repeat(129) } });
    expectError(tooLong, 422);

    const list = await http(s.url, 'GET', '/collections?limit=1000', { key: s.key });
    expect(list.body.map((c: any) => c.name)).toContain('errs');
    expectError(await http(s.url, 'GET', '/collections?limit=0', { key: s.key }), 422);
    expectError(await http(s.url, 'GET', '/collections?limit=1001', { key: s.key }), 422);
  });

  it('answers 400 for malformed JSON and 413 for an oversized JSON body', async () => {
    expectError(await http(s.url, 'POST', '/collections', { key: s.key, raw: '{"name": "x"' }), 400, 'malformed_json');
    expectError(await http(s.url, 'POST', '/collections', { key: s.key, raw: '' }), 400);
    const huge = JSON.stringify({ name: 'big', description: 'x'.repeat(300 * 1024) });
    expectError(await http(s.url, 'POST', '/collections', { key: s.key, raw: huge }), 413, 'payload_too_large');
  });

  it('answers 404 for unknown routes, collections, videos and tasks', async () => {
    expectError(await http(s.url, 'GET', '/nope', { key: s.key }), 404, 'not_found');
    expectError(await http(s.url, 'GET', '/videos/vid_nope/status', { key: s.key }), 404);
    expectError(await http(s.url, 'GET', '/async_status/req_nope', { key: s.key }), 404);
    expectError(await http(s.url, 'POST', '/collections/col_nope/search', { key: s.key, json: { text: 'x' } }), 404);
  });

  it('validates search bodies before touching a model', async () => {
    const c = await http(s.url, 'POST', '/collections', { key: s.key, json: { name: 'search-validation' } });
    const id = c.body.collection_id;
    for (const body of [{ text: 'x', top_k: 0 }, { text: 'x', top_k: 101 }, { text: '' }, { text: 'x', top_k: 'ten' }, { top_k: 3 }, { text: 'x', top_k: 1e308 }]) {
      const r = await http(s.url, 'POST', `/collections/${id}/search`, { key: s.key, json: body });
      expectError(r, 422);
      expect(Array.isArray(r.body.detail)).toBe(true);
    }
  });

  it('rejects bad multipart uploads: no file part, two file parts, too large, unknown collection', async () => {
    const c = await http(s.url, 'POST', '/collections', { key: s.key, json: { name: 'multipart' } });
    const id = c.body.collection_id;
    const url = `/collections/${id}/videos/upload`;
    const noFile = new FormData();
    noFile.set('note', 'hello');
    expectError(await http(s.url, 'POST', url, { key: s.key, form: noFile }), 400);
    const two = new FormData();
    two.append('file', new Blob([Buffer.alloc(10)]), 'a.mp4');
    two.append('file', new Blob([Buffer.alloc(10)]), 'b.mp4');
    expectError(await http(s.url, 'POST', url, { key: s.key, form: two }), 400);
    const big = new FormData();
    big.set('file', new Blob([Buffer.alloc(100 * 1024)]), 'big.mp4');
    expectError(await http(s.url, 'POST', url, { key: s.key, form: big }), 413);
    const notMultipart = await http(s.url, 'POST', url, { key: s.key, json: { file: 'x' } });
    expectError(notMultipart, 400);
    const small = new FormData();
    small.set('file', new Blob([Buffer.alloc(10)]), '../../etc/passwd');
    expectError(await http(s.url, 'POST', `/collections/col_nope/videos/upload`, { key: s.key, form: small }), 404);
    // Path traversal in the name is harmless: stored under the video id, shown by its base name.
    const ok = await http(s.url, 'POST', url, { key: s.key, form: small });
    expect(ok.status).toBe(202);
    expect(ok.body).toMatchObject({ status: 'uploaded' });
    expect(s.engine.store.videos.byId(ok.body.video_id)!.filename).toBe('passwd');
    const row = s.engine.store.videos.byId(ok.body.video_id)!;
    expect(row.blob_key).toBe(`videos/${row.id}`); // the name has no extension to keep
    expect((await s.engine.videoFile(row.id)).path).toBe(path.join(s.engine.paths.blobsDir, 'videos', row.id));
  });

  it('validates tensor uploads: dtype, rank, byte length, base64, size; stores valid ones', async () => {
    const t = (shape: number[], bytes: number, dtype = 'uint8') => ({ data: Buffer.alloc(bytes, 7).toString('base64'), shape, dtype });
    const post = (json: unknown) => http(s.url, 'POST', '/files/upload/tensors', { key: s.key, json });
    const good = await post({ service: 'embedding', request_id: 'r1', video_input: t([1, 2, 3, 4, 4], 96), audio_input: t([1, 1, 8], 32, 'float32') });
    expect(good.status).toBe(200);
    // Keys are namespaced by the key's owner ("test", the key's name).
    expect(good.body).toEqual({ request_id: 'r1', r2_keys: { video_input: 'tensors/test/r1/video_input', audio_input: 'tensors/test/r1/audio_input' } });
    // The same request_id again is a conflict, never a silent overwrite.
    expectError(await post({ service: 'embedding', request_id: 'r1', video_input: t([1, 2, 3, 4, 4], 96) }), 409, 'conflict');

    const mismatch = await post({ service: 'embedding', request_id: 'r2', video_input: t([1, 2, 3, 4, 4], 95) });
    expectError(mismatch, 422);
    expect(mismatch.body.detail[0].loc).toEqual(['body', 'video_input', 'data']);
    const badDtype = await post({ service: 'tagging', request_id: 'r3', video_input: t([1, 2, 3, 4, 4], 96, 'complex64') });
    expectError(badDtype, 422);
    expect(badDtype.body.detail[0].loc).toEqual(['body', 'video_input', 'dtype']);
    expectError(await post({ service: 'tagging', request_id: 'r4', video_input: t([1, 2, 3, 4], 24) }), 422);
    expectError(await post({ service: 'tagging', request_id: 'r5', video_input: t([1, -2, 3, 4, 4], 96) }), 422);
    expectError(await post({ service: 'tagging', request_id: 'r6', video_input: t([1, 2, 3, 9007199254740993, 4], 96) }), 422);
    expectError(await post({ service: 'nope', request_id: 'r7', video_input: t([1, 2, 3, 4, 4], 96) }), 422);
    expectError(await post({ service: 'tagging', request_id: 'r8', video_input: { data: '!!!not base64!!!', shape: [1, 1, 3, 1, 1], dtype: 'uint8' } }), 400);
    expectError(await post({ service: 'tagging', request_id: 'r9', video_input: t([1, 64, 3, 8, 8], 64 * 3 * 64) }), 413);
    for (const request_id of ['../../x', '..', '.', '', 'a/b', 'x'.repeat(129)]) {
      const r = await post({ service: 'tagging', request_id, video_input: t([1, 2, 3, 4, 4], 96) });
      expectError(r, 422);
      expect(r.body.detail[0].loc).toEqual(['body', 'request_id']);
    }

    // Async submits that name unknown keys are 404 at once; known keys are accepted.
    expectError(await http(s.url, 'POST', '/video_tagging/async', { key: s.key, json: { tensor: { video_input_key: 'tensors/none/video_input' } } }), 404);
    const sub = await http(s.url, 'POST', '/video_embedding/encode_video/async', { key: s.key, json: { tensor: { video_input_key: good.body.r2_keys.video_input, audio_input_key: good.body.r2_keys.audio_input } } });
    expect(sub.status).toBe(202);
    expect(sub.body).toMatchObject({ status: 'pending' });
    expect((await http(s.url, 'GET', `/async_status/${sub.body.request_id}`, { key: s.key })).body.status).toBe('pending');
  });

  it('refuses video_url schemes other than http(s) and private addresses (SSRF guard)', async () => {
    for (const video_url of ['file:///etc/passwd', 'ftp://example.com/a.mp4', 'http://127.0.0.1:1/x.mp4', 'http://169.254.169.254/latest', 'http://[::1]/a.mp4']) {
      const r = await http(s.url, 'POST', '/video_embedding/encode_video', { key: s.key, json: { video_url } });
      expectError(r, 422);
      expect(r.body.detail[0].loc).toEqual(['body', 'video_url']);
    }
  });
});

describe('rate limits and quotas', () => {
  it('answers 429 with Retry-After above the key QPS, and recovers after it', async () => {
    const s = await startTestServer({ qps: 2 });
    try {
      const codes: number[] = [];
      let retryAfter: string | undefined;
      for (let i = 0; i < 6; i++) {
        const r = await http(s.url, 'GET', '/collections', { key: s.key });
        codes.push(r.status);
        if (r.status === 429) {
          retryAfter = r.headers['retry-after'] as string;
          expect(r.body.code).toBe('rate_limited');
        }
      }
      expect(codes.filter((c) => c === 200).length).toBeGreaterThanOrEqual(2);
      expect(codes).toContain(429);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
      await new Promise((r) => setTimeout(r, Number(retryAfter) * 1000));
      expect((await http(s.url, 'GET', '/collections', { key: s.key })).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('answers 402 once the quota is used up', async () => {
    const s = await startTestServer({ quota: 3 });
    try {
      const codes = [];
      for (let i = 0; i < 5; i++) codes.push((await http(s.url, 'GET', '/collections', { key: s.key })).status);
      expect(codes).toEqual([200, 200, 200, 402, 402]);
      const r = await http(s.url, 'GET', '/collections', { key: s.key });
      expect(r.body.code).toBe('quota_exceeded');
    } finally {
      await s.close();
    }
  });
});

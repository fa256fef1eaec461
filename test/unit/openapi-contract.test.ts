import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateRequest } from '../../src/api/validate.js';
import { listEmbedders } from '../../src/embedders/registry.js';
import { http, openApiDocument, startTestServer, type TestServer } from '../helpers/server.js';

/* What the server enforces is stated where /openapi.json can say it (issue 21 part 6). */
describe('the document states the rules the server enforces', () => {
  let s: TestServer;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let doc: any;
  beforeAll(async () => {
    s = await startTestServer(); // the registry's models: the schemas name them
    doc = await openApiDocument(s.url);
  });
  afterAll(async () => s?.close());
  const body = (p: string) => doc.paths[p].post.requestBody.content['application/json'].schema;

  it('a model is one of the models the engine knows; another is refused by the schema', async () => {
    const ids = listEmbedders().map((e) => e.id);
    for (const p of ['/video_embedding/encode_text', '/video_embedding/encode_video', '/collections']) expect(body(p).properties.model.enum, p).toEqual(ids);
    const r = await http(s.url, 'POST', '/video_embedding/encode_text', { key: s.key, json: { text: 'a dog', model: 'no-such-model' } });
    expect(r.status).toBe(422);
    expect(r.body.detail[0]).toMatchObject({ loc: ['body', 'model'], type: 'value_error.enum' });
  });

  it('tensors: dtype, the [1, T, 3, H, W] shape and the request_id pattern', async () => {
    const t = body('/files/upload/tensors');
    expect(t.properties.video_input.properties.dtype.enum).toEqual(['uint8']);
    expect(t.properties.video_input.properties.shape).toMatchObject({ minItems: 5, maxItems: 5 });
    expect(t.properties.video_input.properties.shape.prefixItems[2]).toMatchObject({ const: 3 });
    expect(t.properties.audio_input.properties.dtype.enum).toEqual(['float32']);
    expect(new RegExp(t.properties.request_id.pattern).test('..')).toBe(false);
    const wrong = await http(s.url, 'POST', '/files/upload/tensors', {
      key: s.key,
      json: { service: 'embedding', request_id: 'r1', video_input: { data: 'AAECAwQFBgcICQoL', shape: [1, 1, 4, 2, 2], dtype: 'uint8' } },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.detail[0].loc).toEqual(['body', 'video_input', 'shape', 2]);
  });

  it('exactly one source (oneOf); the single multipart part; the file may be octet-stream', async () => {
    expect(body('/video_embedding/encode_video').oneOf).toEqual([{ required: ['video_url'] }, { required: ['video_base64'] }]);
    expect(body('/video_tagging/async').oneOf).toEqual([{ required: ['video_url'] }, { required: ['video_base64'] }, { required: ['tensor'] }]);
    const two = await http(s.url, 'POST', '/video_tagging/async', { key: s.key, json: { video_url: 'https://example.com/a.mp4', video_base64: 'AAAA' } });
    expect(two.status).toBe(422);
    expect(two.body.detail[0].msg).toMatch(/exactly one/);
    const upload = doc.paths['/collections/{collection_id}/videos/upload'].post.requestBody.content['multipart/form-data'].schema;
    expect(upload).toMatchObject({ required: ['file'], additionalProperties: false });
    expect(Object.keys(doc.paths['/videos/{video_id}/file'].get.responses['200'].content)).toEqual(['video/*', 'application/octet-stream']);
  });

  it('the local CLI validates with the same schemas, a video by path being one more source', () => {
    expect(validateRequest('encodeVideo', 'body', { video_path: '/tmp/clip.mp4' })).toMatchObject({ video_path: '/tmp/clip.mp4', fps: 1 });
    expect(() => validateRequest('encodeVideo', 'body', { video_path: '/tmp/clip.mp4', video_url: 'https://example.com/a.mp4' })).toThrow(/exactly one/);
    expect(() => validateRequest('tagVideo', 'body', {})).toThrow(/exactly one/);
    expect(validateRequest('asyncSubmit', 'body', { tensor: { video_input_key: 'tensors/default/r/video_input' } })).toMatchObject({ tensor: { video_input_key: 'tensors/default/r/video_input' } });
    expect(() => validateRequest('encodeText', 'body', { text: '   ' })).toThrow(/must not be empty/);
  });

  it('answers a method a path does not take with 405 and Allow, an unknown path with 404 (after the key is checked)', async () => {
    const trace = await request(`${s.url}/collections`, { method: 'TRACE', headers: { 'x-api-key': s.key } });
    expect(trace.statusCode).toBe(405);
    expect(trace.headers.allow).toBe('GET, HEAD, POST');
    expect(await trace.body.json()).toMatchObject({ code: 'method_not_allowed' });
    const put = await request(`${s.url}/videos/vid_x`, { method: 'PUT', headers: { 'x-api-key': s.key } });
    expect(put.statusCode).toBe(405);
    expect(put.headers.allow).toBe('DELETE, GET, HEAD');
    await put.body.text();
    const none = await request(`${s.url}/nowhere`, { method: 'TRACE', headers: { 'x-api-key': s.key } });
    expect(none.statusCode).toBe(404);
    await none.body.text();
  });
});

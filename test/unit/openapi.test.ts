import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Ajv2020 from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApi, type RouteDoc } from '../../src/server/openapi.js';
import { http, openApiDocument, responseProblems, startTestServer, type TestServer, anyFileIsVideo } from '../helpers/server.js';

type Json = Record<string, any>;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const OPEN = ['/healthz', '/openapi.json', '/readyz'];

function operations(doc: Json): { path: string; method: string; op: Json }[] {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([m]) => METHODS.includes(m))
      .map(([method, op]) => ({ path, method, op: op as Json })),
  );
}

/** Every object schema (with `properties`) reachable from `schema` that does not say what it requires. */
function missingRequired(schema: unknown, at: string, out: string[] = []): string[] {
  if (!schema || typeof schema !== 'object') return out;
  const s = schema as Json;
  if (s.properties && typeof s.properties === 'object') {
    if (!Array.isArray(s.required) || s.required.length === 0) out.push(at);
    else for (const r of s.required) if (!(r in s.properties)) out.push(`${at} requires ${r}, which it does not describe`);
    for (const [k, v] of Object.entries(s.properties)) missingRequired(v, `${at}.properties.${k}`, out);
  }
  if (s.items) missingRequired(s.items, `${at}.items`, out);
  if (s.additionalProperties && typeof s.additionalProperties === 'object') missingRequired(s.additionalProperties, `${at}.additionalProperties`, out);
  for (const k of ['oneOf', 'anyOf', 'allOf']) (s[k] ?? []).forEach((x: unknown, i: number) => missingRequired(x, `${at}.${k}[${i}]`, out));
  for (const k of ['if', 'then', 'else']) if (s[k]) missingRequired(s[k], `${at}.${k}`, out);
  return out;
}

describe('GET /openapi.json', () => {
  let s: TestServer;
  let doc: Json;
  beforeAll(async () => {
    s = await startTestServer({ engine: { maxUploadBytes: 64 * 1024, maxTensorBytes: 4096, checkVideo: anyFileIsVideo }, server: { maxJsonBytes: 64 * 1024 } });
    const r = await http(s.url, 'GET', '/openapi.json');
    expect(r.status).toBe(200);
    doc = r.body;
  });
  afterAll(async () => s?.close());

  it('is OpenAPI 3.1 with servers, tags and security schemes', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(Array.isArray(doc.servers) && doc.servers.length).toBeTruthy();
    for (const sv of doc.servers) expect(typeof sv.url).toBe('string');
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apiKey', 'bearer']);
    const declared = new Set((doc.tags as Json[]).map((t) => t.name));
    for (const { path, method, op } of operations(doc)) {
      expect(op.tags?.length, `${method} ${path} tags`).toBeGreaterThan(0);
      for (const t of op.tags) expect(declared.has(t), `${method} ${path}: tag ${t} declared`).toBe(true);
      expect(op.summary, `${method} ${path} summary`).toBeTruthy();
    }
  });

  it('names every operation with a unique, stable camelCase operationId', () => {
    const ids = operations(doc).map(({ path, method, op }) => {
      expect(op.operationId, `${method} ${path}`).toMatch(/^[a-z][A-Za-z0-9]*$/);
      return op.operationId as string;
    });
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(
      [
        'createCollection',
        'listCollections',
        'searchCollection',
        'uploadVideo',
        'getVideoStatus',
        'encodeText',
        'encodeVideo',
        'submitEmbeddingTask',
        'getTaskStatus',
        'deleteTask',
        'tagVideo',
        'submitTaggingTask',
        'uploadTensors',
        'deleteTensors',
        'health',
        'libraryScan',
        'openapi',
        'ready',
        'reindexCollection',
        'findDuplicates',
        'getCollection',
        'updateCollection',
        'deleteCollection',
        'listVideos',
        'findVideos',
        'getVideo',
        'deleteVideo',
        'reprocessVideo',
        'getVideoFile',
        'getVideoPlayback',
        'getVideoThumbnail',
        'getVideoTranscript',
        'listJobs',
        'cancelJob',
        'createWebhook',
        'listWebhooks',
        'getWebhook',
        'deleteWebhook',
        'testWebhook',
        'listWebhookDeliveries',
      ].sort(),
    );
  });

  it('marks open routes `security: []` and documents the auth statuses only on the others', () => {
    for (const { path, method, op } of operations(doc)) {
      const codes = Object.keys(op.responses);
      expect(codes, `${method} ${path}`).toContain('500');
      if (OPEN.includes(path)) {
        expect(op.security, `${method} ${path}`).toEqual([]);
        for (const c of ['401', '402', '429']) expect(codes, `${method} ${path}`).not.toContain(c);
      } else {
        expect(op.security, `${method} ${path}`).toEqual([{ apiKey: [] }, { bearer: [] }]);
        for (const c of ['401', '402', '429']) expect(codes, `${method} ${path}`).toContain(c);
        const retry = op.responses['429'].headers?.['Retry-After'];
        expect(retry, `${method} ${path} 429 Retry-After`).toMatchObject({ required: true, schema: { type: 'integer' } });
      }
    }
  });

  it('lists per operation only the statuses it can answer', () => {
    const codes = (p: string, m: string) => Object.keys(doc.paths[p][m].responses);
    expect(codes('/async_status/{request_id}', 'get')).not.toContain('409');
    expect(codes('/collections', 'get')).not.toContain('502');
    expect(codes('/collections', 'get')).not.toContain('413');
    expect(codes('/collections/{collection_id}/search', 'post')).toEqual(expect.arrayContaining(['404', '413', '422']));
    // A picture by URL can fail upstream (502); a picture or a long query can run out of time (504).
    expect(codes('/collections/{collection_id}/search', 'post')).toEqual(expect.arrayContaining(['502', '504']));
    expect(codes('/collections/{collection_id}/search', 'post')).not.toContain('416');
    for (const p of ['/video_embedding/encode_video', '/video_tagging']) expect(codes(p, 'post')).toEqual(expect.arrayContaining(['502', '504']));
    for (const p of ['/video_embedding/encode_video/async', '/video_tagging/async']) {
      expect(codes(p, 'post')).not.toContain('502');
      expect(codes(p, 'post')).not.toContain('504');
    }
    expect(codes('/healthz', 'get').sort()).toEqual(['200', '500']);
    // Path parameters: bad percent-encoding (400) and over-long values (414) are the router's answers.
    for (const { path, method } of operations(doc).filter((o) => o.path.includes('{'))) {
      expect(codes(path, method), `${method} ${path}`).toEqual(expect.arrayContaining(['400', '414']));
    }
  });

  it('declares the required fields of every response body, success and error', () => {
    for (const { path, method, op } of operations(doc)) {
      for (const [code, res] of Object.entries(op.responses as Json)) {
        // A file (GET /videos/{id}/file): a binary body, no JSON to declare fields of.
        if (Number(code) < 300 && !res.content?.['application/json'] && Object.values(res.content ?? {}).every((m: any) => m.schema?.format === 'binary')) continue;
        const schema = res.content?.['application/json']?.schema;
        expect(schema, `${method} ${path} ${code}`).toBeTruthy();
        expect(missingRequired(schema, `${method} ${path} ${code}`)).toEqual([]);
        if (Number(code) >= 400) {
          const variants: Json[] = schema.oneOf ?? [schema];
          for (const v of variants) expect(v.required, `${method} ${path} ${code}`).toEqual(expect.arrayContaining(['detail', 'code']));
        }
        if (code === '422') {
          const list = (schema.oneOf ?? [schema]).find((v: Json) => v.properties.detail.type === 'array');
          expect(list.properties.detail.items.required.sort()).toEqual(['loc', 'msg', 'type']);
        }
      }
    }
  });

  it('gives every request body examples that its schema accepts', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    let bodies = 0;
    for (const { path, method, op } of operations(doc)) {
      if (!op.requestBody) continue;
      for (const [type, media] of Object.entries(op.requestBody.content as Json)) {
        bodies++;
        const examples: unknown[] = media.examples ? Object.values(media.examples).map((e: any) => e.value) : media.example !== undefined ? [media.example] : [];
        expect(examples.length, `${method} ${path} ${type} examples`).toBeGreaterThan(0);
        if (type !== 'application/json') continue;
        const validate = ajv.compile(media.schema);
        for (const ex of examples) expect(validate(ex), `${method} ${path} example ${JSON.stringify(ex)}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      }
    }
    expect(bodies).toBe(12);
  });

  it('documents path parameters of every templated path', () => {
    for (const { path, method, op } of operations(doc)) {
      const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      const declared = (op.parameters ?? []).filter((p: Json) => p.in === 'path').map((p: Json) => p.name);
      expect(declared.sort(), `${method} ${path}`).toEqual(names.sort());
    }
  });

  it('serves the open routes without a key, and refuses the others without one', async () => {
    for (const { path, method } of operations(doc)) {
      if (method !== 'get' || path.includes('{')) continue;
      const r = await http(s.url, 'GET', path);
      expect(r.status, path).toBe(OPEN.includes(path) ? 200 : 401);
    }
  });

  it('documents every route as open when the server runs without auth', () => {
    const routes: RouteDoc[] = [
      { method: 'GET', url: '/collections', operationId: 'listCollections', tags: ['collections'], errors: [422], summary: 'list' },
      { method: 'GET', url: '/healthz', operationId: 'health', tags: ['meta'], errors: [], open: true, summary: 'liveness' },
    ];
    const off = buildOpenApi(routes, { auth: false }) as Json;
    expect(off.security).toEqual([]);
    expect(off.paths['/collections'].get.security).toEqual([]);
    expect(Object.keys(off.paths['/collections'].get.responses).sort()).toEqual(['200', '422', '500', '503', '507']);
    const on = buildOpenApi(routes) as Json;
    expect(Object.keys(on.paths['/collections'].get.responses).sort()).toEqual(['200', '401', '402', '422', '429', '500', '503', '507']);
    expect(on.paths['/healthz'].get.security).toEqual([]);
  });

  it('answers the refusals it documents (each response checked against the document by http())', async () => {
    const bad = await http(s.url, 'GET', '/videos/%E0%A4%A/status', { key: s.key });
    expect(bad.status).toBe(400);
    expect((await http(s.url, 'GET', `/async_status/${'x'.repeat(300)}`, { key: s.key })).status).toBe(414);
    expect((await http(s.url, 'POST', `/collections/${'c'.repeat(300)}/search`, { key: s.key, json: { text: 'x' } })).status).toBe(414);
    expect((await http(s.url, 'GET', '/collections?limit=abc', { key: s.key })).status).toBe(422);
    const deep = '['.repeat(40) + ']'.repeat(40);
    expect((await http(s.url, 'POST', '/video_embedding/encode_text', { key: s.key, raw: `{"text": ${deep}}` })).status).toBe(400);
    expect((await http(s.url, 'POST', '/collections', { key: s.key, raw: '<name>x</name>', headers: { 'content-type': 'application/xml' } })).status).toBe(400);
    expect((await http(s.url, 'POST', '/video_tagging/async', { key: s.key, json: { video_url: 'https://example.com/a.mp4', fps: 99 } })).status).toBe(422);
    expect((await http(s.url, 'POST', '/video_embedding/encode_video', { key: s.key, json: { video_base64: '###' } })).status).toBe(400);
    expect((await http(s.url, 'POST', '/video_embedding/encode_video', { key: s.key, json: {} })).status).toBe(422);
    // Not usable media (ffmpeg says so): test/e2e/server-media-errors.test.ts.
  });

  it('accepts its own examples on the live server', async () => {
    const create = doc.paths['/collections'].post.requestBody.content['application/json'].examples;
    for (const ex of Object.values(create) as Json[]) expect((await http(s.url, 'POST', '/collections', { key: s.key, json: ex.value })).status).toBe(201);
    const tensors = doc.paths['/files/upload/tensors'].post.requestBody.content['application/json'].examples;
    for (const ex of Object.values(tensors) as Json[]) expect((await http(s.url, 'POST', '/files/upload/tensors', { key: s.key, json: ex.value })).status).toBe(200);
  });

  it('can fail: a wrong body, an undocumented status or a missing Retry-After is reported', async () => {
    const d = await openApiDocument(s.url);
    const ok = { collection_id: 'col_1', name: 'x', description: '', created_at: '2024-01-01T00:00:00Z', model: 'm', dim: 512 };
    expect(responseProblems(d, 'POST', '/collections', { status: 201, headers: {}, body: ok })).toEqual([]);
    const { dim: _dim, ...noDim } = ok;
    expect(responseProblems(d, 'POST', '/collections', { status: 201, headers: {}, body: noDim }).join()).toMatch(/dim/);
    expect(responseProblems(d, 'POST', '/collections', { status: 201, headers: {}, body: { ...ok, dim: 'big' } })).not.toEqual([]);
    const searchProblems = responseProblems(d, 'POST', '/collections/col_1/search', { status: 200, headers: {}, body: { model: 'm', results: [{ video_id: 'v', similarity: 0.5 }] } }).join('\n');
    // Every missing required field of the result is reported, not just one of them.
    for (const field of ['start', 'end', 'filename']) expect(searchProblems).toContain(`required property '${field}'`);
    expect(responseProblems(d, 'GET', '/async_status/req_1', { status: 409, headers: {}, body: { detail: 'x', code: 'conflict' } }).join()).toMatch(/not documented/);
    expect(responseProblems(d, 'GET', '/async_status/req_1', { status: 200, headers: {}, body: { request_id: 'req_1', status: 'failed' } }).join()).toMatch(/error_message/);
    expect(responseProblems(d, 'GET', '/collections', { status: 502, headers: {}, body: { detail: 'x', code: 'upstream_error' } })).not.toEqual([]);
    expect(responseProblems(d, 'GET', '/collections', { status: 429, headers: {}, body: { detail: 'slow down', code: 'rate_limited' } }).join()).toMatch(/Retry-After/);
    expect(responseProblems(d, 'GET', '/collections', { status: 429, headers: { 'retry-after': '2' }, body: { detail: 'slow down', code: 'rate_limited' } })).toEqual([]);
    expect(responseProblems(d, 'POST', '/collections', { status: 422, headers: {}, body: { detail: 'bad', code: 'validation_error' } })).not.toEqual([]);
    expect(responseProblems(d, 'POST', '/collections', { status: 422, headers: {}, body: { detail: [{ loc: ['body'], msg: 'x' }], code: 'validation_error' } }).join()).toMatch(/type/);
    expect(responseProblems(d, 'POST', '/video_tagging', { status: 422, headers: {}, body: { detail: [{ loc: ['body'], msg: 'no video stream', type: 'value_error.invalid_media' }], code: 'invalid_media' } })).toEqual([]);
    // Every 422 is the list form: a sentence is refused, whatever the code.
    expect(responseProblems(d, 'POST', '/video_tagging', { status: 422, headers: {}, body: { detail: 'no video stream', code: 'invalid_media' } })).not.toEqual([]);
    expect(responseProblems(d, 'GET', '/nope', { status: 404, headers: {}, body: { detail: 'no route', code: 'not_found' } })).toEqual([]);
  });

  it('makes http() throw on a response the document does not allow', async () => {
    // A server that publishes this document but answers a list item without its required fields.
    const fake: Server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/openapi.json') return void res.end(JSON.stringify(doc));
      if (req.url === '/collections/c/search') return void res.writeHead(418).end(JSON.stringify({ detail: 'x', code: 'teapot' }));
      res.end(JSON.stringify([{ id: 'col_1', name: 'x' }]));
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', () => r()));
    try {
      const base = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
      await expect(http(base, 'GET', '/collections?limit=5', { key: 'k' })).rejects.toThrow(/GET \/collections answered 200[\s\S]*required/);
      await expect(http(base, 'POST', '/collections/c/search', { key: 'k', json: { text: 'x' } })).rejects.toThrow(/418 is not documented/);
    } finally {
      await new Promise((r) => fake.close(r));
    }
  });
});

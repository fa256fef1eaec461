import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError, ValidationError, VidembedClient, OPERATIONS, type OperationId } from '../../src/client/index.js';
import { operationsFile, renderOperations, serverRoutes } from '../../src/server/client-gen.js';
import { findOperation, openApiDocument, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The typed client (`vidembed/client`) and the server cannot drift apart: its table of operations
 * is what the generator makes of the server's route table today, it agrees with /openapi.json
 * operation by operation, and every method of the client sends a request the document has.
 */

type DocOperation = {
  operationId: string;
  parameters?: { name: string; in: 'path' | 'query' }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
};

describe('the typed client against /openapi.json', () => {
  let s: TestServer;
  let doc: { paths: Record<string, Record<string, DocOperation>> };
  beforeAll(async () => {
    s = await startTestServer();
    doc = (await openApiDocument(s.url)) as unknown as typeof doc;
  });
  afterAll(async () => s?.close());

  it('src/client/operations.ts is what `npm run gen:client` makes of the route table now', async () => {
    const fresh = renderOperations(await serverRoutes());
    expect(readFileSync(operationsFile(), 'utf8'), 'src/client/operations.ts is stale: run `npm run gen:client`').toBe(fresh);
  });

  it('has every operation of the document, with its method, path, parameters, body and response, and no other', () => {
    const fromDoc = Object.entries(doc.paths).flatMap(([p, byMethod]) => Object.entries(byMethod).map(([m, op]) => ({ p, m: m.toUpperCase(), op })));
    expect(Object.keys(OPERATIONS).sort()).toEqual(fromDoc.map((d) => d.op.operationId).sort());
    for (const { p, m, op } of fromDoc) {
      const spec = OPERATIONS[op.operationId as OperationId] as { method: string; path: string; schema?: Record<string, any>; multipart?: boolean; file?: boolean; status?: number };
      const id = op.operationId;
      expect(`${spec.method} ${spec.path}`, id).toBe(`${m} ${p}`);
      const names = (where: 'path' | 'query') => (op.parameters ?? []).filter((x) => x.in === where).map((x) => x.name).sort();
      expect(Object.keys(spec.schema?.params?.properties ?? {}).sort(), `${id} path parameters`).toEqual(names('path'));
      expect(Object.keys(spec.schema?.querystring?.properties ?? {}).sort(), `${id} query`).toEqual(names('query'));
      const content = op.requestBody?.content ?? {};
      expect(Boolean(content['multipart/form-data']), `${id} multipart`).toBe(spec.multipart === true);
      expect(Boolean(content['application/json']), `${id} JSON body`).toBe(spec.schema?.body !== undefined);
      const success = String(spec.status ?? 200);
      expect(op.responses[success], `${id} answers ${success}`).toBeDefined();
      if (spec.file) expect(op.responses[success].content?.['application/json'], `${id} is a file`).toBeUndefined();
      else if (spec.schema?.response) expect(op.responses[success].content?.['application/json']?.schema, `${id} response`).toEqual(JSON.parse(JSON.stringify(spec.schema.response)));
    }
  });

  it('types requests and answers by operation, and gives the same errors as the CLI', async () => {
    const client = new VidembedClient({ baseUrl: s.url, apiKey: s.key, retries: 0 });
    const created = await client.request('createCollection', { body: { name: 'typed' } });
    const id: string = created.collection_id;
    const page = await client.request('listVideos', { params: { collection_id: id }, query: { limit: 5 } });
    expect(page).toEqual([]);
    await expect(client.request('getVideo', { params: { video_id: 'vid_missing' } })).rejects.toBeInstanceOf(NotFoundError);
    const bad = await client.request('searchCollection', { params: { collection_id: id }, body: { text: 'x', top_k: 0 } }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ValidationError);
    expect((bad as ValidationError).issues[0].loc).toEqual(['body', 'top_k']);
    const raw = await client.send('getCollection', { params: { collection_id: 'nope' } });
    expect(raw.status).toBe(404);
    expect(raw.body).toMatchObject({ code: 'not_found' });
  });
});

describe("every method of the client sends a request the document has", () => {
  let recorder: Server;
  let base: string;
  let dir: string;
  const seen: string[] = [];
  let doc: Parameters<typeof findOperation>[0];
  let s: TestServer;

  beforeAll(async () => {
    s = await startTestServer();
    doc = await openApiDocument(s.url);
    dir = mkdtempSync(path.join(os.tmpdir(), 'vidembed-client-'));
    writeFileSync(path.join(dir, 'clip.mp4'), 'bytes');
    recorder = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push(`${req.method} ${req.url}`);
        const body = req.method === 'GET' && req.url?.startsWith('/collections?') ? [{ id: 'col_1', name: 'demo' }] : {};
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => recorder.close(resolve));
    rmSync(dir, { recursive: true, force: true });
    await s?.close();
  });

  it('for each of them, a documented operation', async () => {
    const c = new VidembedClient({ baseUrl: base, retries: 0 });
    const file = path.join(dir, 'clip.mp4');
    const calls: [string, () => Promise<unknown>][] = [
      ['createCollection', () => c.createCollection({ name: 'x' })],
      ['listCollections', () => c.listCollections({ limit: 2 })],
      ['getCollection', () => c.getCollection('demo')],
      ['reindexCollection', () => c.reindexCollection('demo')],
      ['collectionDetails', () => c.collectionDetails('demo')],
      ['updateCollection', () => c.updateCollection('demo', { description: 'd' })],
      ['deleteCollection', () => c.deleteCollection('demo')],
      ['listVideos', () => c.listVideos('demo', { status: 'processed', limit: 3 })],
      ['videoDetails', () => c.videoDetails('vid_1')],
      ['findVideos', () => c.findVideos({ name: 'card-01/C0001.MP4', collection: 'demo' })],
      ['videoTranscript', () => c.videoTranscript('vid_1')],
      ['deleteVideo', () => c.deleteVideo('vid_1')],
      ['reprocessVideo', () => c.reprocessVideo('vid_1')],
      ['findDuplicates', () => c.findDuplicates('demo', { min_similarity: 0.9 })],
      ['uploadVideo', () => c.uploadVideo('col_1', { path: file, filename: 'clip.mp4' })],
      ['scanLibrary', () => c.scanLibrary('demo', { path: 'card' })],
      ['listJobs', () => c.listJobs('alice')],
      ['cancelJob', () => c.cancelJob('job_1')],
      ['videoStatus', () => c.videoStatus('vid_1')],
      ['search', () => c.search('col_1', { text: 'a dog' })],
      ['encodeText', () => c.encodeText({ text: 'a dog' })],
      ['encodeVideo', () => c.encodeVideo({ video_path: file })],
      ['tagVideo', () => c.tagVideo({ video_url: 'https://example.com/a.mp4' })],
      ['submitEmbeddingTask', () => c.submitEmbeddingTask({ video_path: file })],
      ['submitTask', () => c.submitTask('tagging', { video_path: file })],
      ['taskStatus', () => c.taskStatus('req_1')],
      ['uploadTensors', () => c.uploadTensors({ service: 'embedding', request_id: 'r', video_input: { data: 'AAAA', shape: [1, 1, 3, 1, 1], dtype: 'uint8' } })],
      ['createWebhook', () => c.createWebhook({ url: 'https://hooks.example.com/x' })],
      ['listWebhooks', () => c.listWebhooks()],
      ['getWebhook', () => c.getWebhook('whk_1')],
      ['deleteWebhook', () => c.deleteWebhook('whk_1')],
      ['testWebhook', () => c.testWebhook('whk_1')],
      ['webhookDeliveries', () => c.webhookDeliveries('whk_1', { limit: 3 })],
      ['downloadVideo', () => c.downloadVideo('vid_1', path.join(dir, 'download.mp4'))],
    ];
    const service = Object.getOwnPropertyNames(Object.getPrototypeOf(c)).filter((n) => !['constructor', 'close', 'request', 'send'].includes(n) && !n.startsWith('_'));
    const covered = new Set(calls.map(([n]) => n));
    // Every public method is exercised here (private ones are not on the list TypeScript shows, but are on the prototype).
    const PRIVATE = ['sendParts', 'ok', 'op', 'call', 'exchange', 'portable'];
    expect(service.filter((n) => !PRIVATE.includes(n) && !covered.has(n))).toEqual([]);
    const problems: string[] = [];
    for (const [name, call] of calls) {
      const before = seen.length;
      await call();
      const sent = seen.slice(before);
      if (sent.length === 0) problems.push(`${name} sent nothing`);
      for (const line of sent) {
        const [m, url] = line.split(' ');
        if (!findOperation(doc, m, url)) problems.push(`${name}: ${line} is not in /openapi.json`);
      }
    }
    expect(problems).toEqual([]);
  });
});

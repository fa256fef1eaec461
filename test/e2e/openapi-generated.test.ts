/**
 * Issue 21's contract test: requests generated from /openapi.json alone, for every operation, and
 * none refused for a reason the document does not state. A small generator (JSON Schema 2020-12,
 * the subset the document uses) makes for each operation a body, query and path from its schemas:
 * the required fields alone, every field, and each documented example. Each request is checked
 * against the operation's own schema first (so the generator cannot cheat), then sent to a real
 * server (real SQLite, real ffmpeg for the synchronous analyses; fake models). The answer must be
 * a status the operation lists (the `http` helper checks every answer against the document), and
 * a schema-valid request is never a 400 or a 422 — except `invalid_media`, which the operations
 * that analyse a video document as the answer for bytes that are not a usable video.
 *
 * Path parameters name real resources (a collection, a video, a task, a job, a webhook), so the
 * operations do their work instead of answering 404.
 *
 * Every request goes through the typed client (`vidembed/client`, src/client): by operationId, its
 * path, parameters and body placed by the client's generated table of operations — so an operation
 * the client lacks, or places differently from the document, fails here too.
 */
import Ajv2020 from 'ajv/dist/2020.js';
import { FormData } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { VidembedClient, type OperationId, type OperationRequest } from '../../src/client/index.js';
import { anyFileIsVideo, http, openApiDocument, responseProblems, type Reply, type TestServer, startTestServer } from '../helpers/server.js';

type Schema = {
  type?: string;
  const?: unknown;
  enum?: unknown[];
  default?: unknown;
  examples?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  minProperties?: number;
  prefixItems?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  additionalProperties?: boolean | Schema;
  format?: string;
};

/** Strings to try, in order, for a pattern; the first the pattern accepts is used. */
const STRING_CANDIDATES = ['clip-0001', 'a', 'https://example.invalid/clip.mp4', 'abc', '0'];

/** A value the schema accepts: `full` fills every property, else only the required ones. */
function generate(schema: Schema, full: boolean, name = ''): unknown {
  if (schema.const !== undefined) return schema.const;
  if (schema.examples?.length) return schema.examples[0];
  if (schema.enum?.length) return schema.enum[full ? schema.enum.length - 1 : 0];
  if (schema.default !== undefined && !full) return schema.default;
  if (schema.oneOf?.length || schema.anyOf?.length) {
    const alt = (schema.oneOf ?? schema.anyOf)![0];
    const merged: Schema = { ...schema, oneOf: undefined, anyOf: undefined, required: [...(schema.required ?? []), ...(alt.required ?? [])] };
    const value = generate(merged, false, name) as Record<string, unknown>;
    if (!full) return value;
    // Every other optional property, except the other alternatives' own fields (exactly one source).
    const others = new Set(((schema.oneOf ?? schema.anyOf ?? []) as Schema[]).flatMap((a) => a.required ?? []));
    for (const [k, s] of Object.entries(schema.properties ?? {})) if (!(k in value) && !others.has(k)) value[k] = generate(s, true, k);
    return value;
  }
  switch (schema.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, s] of Object.entries(schema.properties ?? {})) if (full || schema.required?.includes(k)) out[k] = generate(s, full, k);
      for (const [k, s] of Object.entries(schema.properties ?? {})) if (Object.keys(out).length < (schema.minProperties ?? 0) && !(k in out)) out[k] = generate(s, full, k);
      return out;
    }
    case 'array': {
      if (schema.prefixItems) return schema.prefixItems.map((s, i) => generate(s, full, `${name}[${i}]`));
      const n = Math.max(schema.minItems ?? 0, full ? 1 : 0);
      return Array.from({ length: n }, () => generate(schema.items ?? { type: 'string' }, full, name));
    }
    case 'integer':
    case 'number': {
      const lo = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + (schema.type === 'integer' ? 1 : 0.5) : undefined);
      const hi = schema.maximum;
      let v = lo ?? (hi !== undefined ? Math.min(hi, 1) : 1);
      if (full && hi !== undefined && lo !== undefined) v = schema.type === 'integer' ? Math.floor((lo + hi) / 2) : (lo + hi) / 2;
      return v;
    }
    case 'boolean':
      return full;
    case 'string': {
      if (schema.format === 'binary') return 'bytes';
      const ok = (s: string) => (!schema.pattern || new RegExp(schema.pattern, 'u').test(s)) && s.length >= (schema.minLength ?? 0) && s.length <= (schema.maxLength ?? Infinity);
      const fixed = name === 'video_base64' ? Buffer.from('not a video').toString('base64') : undefined;
      const found = [fixed, ...STRING_CANDIDATES].find((s): s is string => s !== undefined && ok(s));
      if (found === undefined) throw new Error(`the generator has no string for ${name} (pattern ${schema.pattern})`);
      return found;
    }
    default:
      return {};
  }
}

interface Operation {
  operationId: string;
  parameters?: { name: string; in: 'path' | 'query'; schema: Schema }[];
  requestBody?: { content: Record<string, { schema: Schema; examples?: Record<string, { value: unknown }> }> };
  responses: Record<string, { description?: string }>;
}

describe('requests generated from /openapi.json are refused only for reasons it states', () => {
  let s: TestServer;
  let doc: { paths: Record<string, Record<string, Operation>> };
  const ids: Record<string, string> = {};
  const ajv = new Ajv2020.default({ strict: false, allErrors: true, validateFormats: false });

  beforeAll(async () => {
    const fake = new FakeEmbedder();
    // Placeholder bytes pass as a video at upload (what a video is, is tested elsewhere).
    s = await startTestServer({ engine: { embedderFor: () => fake, checkVideo: anyFileIsVideo } });
    doc = (await openApiDocument(s.url)) as unknown as typeof doc;
    const c = await http(s.url, 'POST', '/collections', { key: s.key, json: { name: 'fixtures' } });
    ids.collection_id = c.body.collection_id;
    const form = new FormData();
    form.set('file', new Blob([Buffer.from('not really a video')]), 'clip.mp4');
    ids.video_id = (await http(s.url, 'POST', `/collections/${ids.collection_id}/videos/upload`, { key: s.key, form })).body.video_id;
    ids.request_id = (await http(s.url, 'POST', '/video_tagging/async', { key: s.key, json: { video_base64: 'AAAA' } })).body.request_id;
    ids.job_id = (await http(s.url, 'GET', '/jobs', { key: s.key })).body.jobs[0].job_id;
    // A name that does not resolve here is accepted (its deliveries would fail and be retried).
    ids.webhook_id = (await http(s.url, 'POST', '/webhooks', { key: s.key, json: { url: 'https://hooks.example.invalid/in' } })).body.webhook_id;
  });
  afterAll(async () => s?.close());

  it('every operation, with its required fields, all its fields and its examples', async () => {
    const client = new VidembedClient({ baseUrl: s.url, apiKey: s.key });
    const problems: string[] = [];
    const ops = Object.entries(doc.paths).flatMap(([p, byMethod]) => Object.entries(byMethod).map(([m, op]) => ({ p, m, op })));
    // Deletions last: they remove the fixtures the others name.
    ops.sort((a, b) => Number(a.m === 'delete') - Number(b.m === 'delete'));
    let sent = 0;
    for (const { p, m, op } of ops) {
      const params = op.parameters ?? [];
      const listed = new Set(Object.keys(op.responses).map(Number));
      const content = op.requestBody?.content ?? {};
      const json = content['application/json'];
      const multipart = content['multipart/form-data'];
      const bodies: { what: string; body: unknown }[] = [];
      if (json) {
        bodies.push({ what: 'required', body: generate(json.schema, false) }, { what: 'full', body: generate(json.schema, true) });
        for (const [name, ex] of Object.entries(json.examples ?? {})) bodies.push({ what: `example ${name}`, body: ex.value });
      } else bodies.push({ what: multipart ? 'multipart' : 'no body', body: undefined });
      for (const [i, { what, body }] of bodies.entries()) {
        const full = what !== 'required';
        if (json) {
          const validate = ajv.compile(json.schema);
          expect(validate(body), `${m} ${p} ${what}: the generator made a body its schema refuses: ${JSON.stringify(validate.errors)}`).toBe(true);
        }
        const pathParams = Object.fromEntries(params.filter((x) => x.in === 'path').map((x) => [x.name, ids[x.name] ?? 'x']));
        const query = Object.fromEntries(params.filter((x) => x.in === 'query' && (full || x.name === 'format')).map((x) => [x.name, generate(x.schema, full, x.name)]));
        const url = p.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(pathParams[name]));
        // A tensor upload's request_id is used once per owner (409 the second time): one per body.
        const sentBody = body && typeof body === 'object' && 'request_id' in body ? { ...body, request_id: `gen-${i}` } : body;
        let form: FormData | undefined;
        if (multipart) {
          form = new FormData();
          form.set('file', new Blob([Buffer.from(`generated ${sent}`)]), 'generated.mp4');
        }
        let reply: Reply;
        try {
          const parts = { params: pathParams, query, ...(json ? { body: sentBody } : {}), ...(form ? { form } : {}) } as unknown as OperationRequest<OperationId>;
          reply = await client.send(op.operationId as OperationId, parts, { retries: 0 });
        } catch (err) {
          problems.push(`${m} ${p} ${what}: ${(err as Error).message.split('\n')[0]}`);
          continue;
        }
        // The client put the request where the document says (an operation it places elsewhere fails here).
        if (`${reply.method} ${reply.path.split('?')[0]}` !== `${m.toUpperCase()} ${url}`) problems.push(`${m} ${p} ${what}: the client sent ${reply.method} ${reply.path}`);
        // Every answer as the document says (what the `http` helper checks on each request).
        const isJson = reply.body !== undefined && typeof reply.body !== 'string' && !Buffer.isBuffer(reply.body);
        for (const problem of responseProblems(doc as never, m.toUpperCase(), url, reply, isJson)) problems.push(`${m} ${p} ${what}: ${problem}`);
        sent++;
        if (!listed.has(reply.status) && reply.status >= 300) problems.push(`${m} ${p} ${what}: ${reply.status} is not listed`);
        const mediaError = reply.status === 422 && reply.body?.code === 'invalid_media' && /invalid_media/.test(op.responses['422']?.description ?? '');
        if ((reply.status === 400 || reply.status === 422) && !mediaError) {
          problems.push(`${m} ${p} ${what}: a schema-valid request answered ${reply.status}: ${JSON.stringify(reply.body).slice(0, 300)}`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(sent).toBeGreaterThanOrEqual(ops.length);
  });
});

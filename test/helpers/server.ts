import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { request, type FormData } from 'undici';
import type { FastifyInstance } from 'fastify';
import { LocalEngine, type EngineOptions } from '../../src/runtime/engine.js';
import { buildServer, type ServerOptions } from '../../src/server/app.js';

export interface TestServer {
  url: string;
  engine: LocalEngine;
  app: FastifyInstance;
  home: string;
  key: string;
  close(): Promise<void>;
}

/**
 * For unit tests that upload placeholder bytes as videos: takes any file (the real check probes
 * with ffmpeg, a process, so it belongs to end-to-end tests: test/e2e/non-video.test.ts).
 */
export const anyFileIsVideo = async (): Promise<void> => {};

/** A real server on 127.0.0.1 (random port) over a real engine in a temp home, with one key. */
export async function startTestServer(opts: { engine?: EngineOptions; server?: ServerOptions; qps?: number; quota?: number } = {}): Promise<TestServer> {
  const home = mkdtempSync(path.join(os.tmpdir(), 'vidembed-srv-'));
  const engine = new LocalEngine({ home, ...opts.engine });
  const { key } = engine.store.keys.create({ name: 'test', qps: opts.qps ?? 1000, quota: opts.quota });
  const app = await buildServer(engine.services, { keys: engine.catalog.keys, ...opts.server });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url,
    engine,
    app,
    home,
    key,
    async close() {
      await app.close();
      await engine.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

export async function http(
  base: string,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  p: string,
  opts: { key?: string | null; bearer?: boolean; json?: unknown; raw?: string | Buffer; headers?: Record<string, string>; form?: FormData } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers[opts.bearer ? 'authorization' : 'x-api-key'] = opts.bearer ? `Bearer ${opts.key}` : opts.key;
  let body: string | Buffer | FormData | undefined;
  if (opts.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.json);
  } else if (opts.raw !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = opts.raw;
  } else if (opts.form) body = opts.form;
  const res = await request(`${base}${p}`, { method, headers, body: body as any });
  const text = await res.body.text();
  let parsed: unknown = text;
  let isJson = false;
  try {
    parsed = JSON.parse(text);
    isJson = true;
  } catch {
    /* not JSON */
  }
  const reply: Reply = { status: res.statusCode, headers: res.headers, body: parsed };
  await checkAgainstDocument(base, method, p, reply, isJson);
  return reply;
}

// ---- every response against /openapi.json ------------------------------------------------------

export interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: object }>; headers?: Record<string, { required?: boolean; schema?: object }> }>;
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
}

const documents = new Map<string, Promise<OpenApiDocument>>();
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false, logger: false });
const validators = new WeakMap<object, ValidateFunction>();

async function fetchDocument(base: string): Promise<OpenApiDocument> {
  const res = await request(`${base}/openapi.json`);
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`GET ${base}/openapi.json answered ${res.statusCode}: not a vidembed server?`);
  return JSON.parse(text) as OpenApiDocument;
}

/** The document of the server at `base`, fetched once (`fresh`: again, e.g. a new server on a reused port). */
export function openApiDocument(base: string, fresh = false): Promise<OpenApiDocument> {
  let doc = documents.get(base);
  if (!doc || fresh) {
    doc = fetchDocument(base);
    documents.set(base, doc);
    doc.catch(() => documents.delete(base));
  }
  return doc;
}

function compiled(schema: object): ValidateFunction {
  let v = validators.get(schema);
  if (!v) {
    v = ajv.compile(schema);
    validators.set(schema, v);
  }
  return v;
}

/** The operation a request path falls under: exact path first, then path templates (`{x}` = one segment). */
export function findOperation(doc: OpenApiDocument, method: string, rawPath: string): { template: string; op: Operation } | undefined {
  const p = rawPath.split('?')[0].split('#')[0];
  const m = method.toLowerCase();
  if (doc.paths[p]?.[m]) return { template: p, op: doc.paths[p][m] };
  for (const [template, item] of Object.entries(doc.paths)) {
    if (!template.includes('{') || !item[m]) continue;
    const re = new RegExp(`^${template.split(/\{[^}]+\}/).map((s) => s.replace(/[.*+?^$()|[\]\\]/g, '\\$&')).join('[^/]+')}$`);
    if (re.test(p)) return { template, op: item[m] };
  }
  return undefined;
}

/** Problems of one response against the document ([] when it conforms or is exempt). */
export function responseProblems(doc: OpenApiDocument, method: string, p: string, reply: Pick<Reply, 'status' | 'headers' | 'body'>, isJson = typeof reply.body !== 'string'): string[] {
  if (method === 'HEAD' || method === 'OPTIONS') return [];
  const found = findOperation(doc, method, p);
  if (!found) return []; // no such route: the not-found handler's 404
  const documented = found.op.responses?.[String(reply.status)];
  if (!documented) return [`status ${reply.status} is not documented for ${method} ${found.template} (documented: ${Object.keys(found.op.responses ?? {}).join(', ')})`];
  const problems: string[] = [];
  for (const [name, h] of Object.entries(documented.headers ?? {})) {
    const raw = reply.headers[name.toLowerCase()];
    if (raw === undefined) {
      if (h.required) problems.push(`header ${name} is missing`);
      continue;
    }
    const value = Array.isArray(raw) ? raw[0] : raw;
    const type = (h.schema as { type?: string } | undefined)?.type;
    const typed = type === 'integer' || type === 'number' ? (/^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value) : value;
    if (h.schema && !compiled(h.schema)(typed)) problems.push(`header ${name}: ${JSON.stringify(value)} ${ajv.errorsText(compiled(h.schema).errors)}`);
  }
  // A success that may come in several media types (a transcript as text) is checked as the one it came in.
  const type = String(reply.headers['content-type'] ?? '').split(';')[0].trim();
  const other = type !== '' && type !== 'application/json' && documented.content?.[type] !== undefined;
  const schema = other ? undefined : documented.content?.['application/json']?.schema;
  if (schema) {
    if (!isJson) problems.push(`body is not JSON: ${String(reply.body).slice(0, 200)}`);
    else {
      const validate = compiled(schema);
      if (!validate(reply.body)) problems.push(...(validate.errors ?? []).map((e: ErrorObject) => `body${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`));
    }
  }
  return problems;
}

async function checkAgainstDocument(base: string, method: string, p: string, reply: Reply, isJson: boolean): Promise<void> {
  let problems = responseProblems(await openApiDocument(base), method, p, reply, isJson);
  // A cached document can belong to an earlier server on the same port: check against a fresh one before failing.
  if (problems.length) problems = responseProblems(await openApiDocument(base, true), method, p, reply, isJson);
  if (problems.length) {
    throw new Error(
      `${method} ${p.split('?')[0]} answered ${reply.status}, which /openapi.json does not allow:\n  ${problems.join('\n  ')}\nbody: ${JSON.stringify(reply.body)?.slice(0, 500)}`,
    );
  }
}

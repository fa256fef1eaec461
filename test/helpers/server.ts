import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request, type FormData } from 'undici';
import type { FastifyInstance } from 'fastify';
import { LocalEngine, type EngineOptions } from '../../src/engine/engine.js';
import { buildServer, type ServerOptions } from '../../src/server/app.js';

export interface TestServer {
  url: string;
  engine: LocalEngine;
  app: FastifyInstance;
  home: string;
  key: string;
  close(): Promise<void>;
}

/** A real server on 127.0.0.1 (random port) over a real engine in a temp home, with one key. */
export async function startTestServer(opts: { engine?: EngineOptions; server?: ServerOptions; qps?: number; quota?: number } = {}): Promise<TestServer> {
  const home = mkdtempSync(path.join(os.tmpdir(), 'vidembed-srv-'));
  const engine = new LocalEngine({ home, ...opts.engine });
  const { key } = engine.store.keys.create({ name: 'test', qps: opts.qps ?? 1000, quota: opts.quota });
  const app = await buildServer(engine, opts.server);
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
  method: 'GET' | 'POST',
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
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.statusCode, headers: res.headers, body: parsed };
}

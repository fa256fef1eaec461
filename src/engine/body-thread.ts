/**
 * Heavy parsing off the event loop (issue 21: /healthz stays fast under load). A JSON body over
 * OFF_THREAD_BYTES is parsed, and a base64 string over it decoded, on one worker thread shared by
 * the process (started on first use, unreferenced while idle); smaller ones in place, where a
 * thread round trip would cost more than the work. What comes back is a copy (structured clone) or,
 * for decoded bytes, the thread's own buffer handed over without a copy.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { errorFromWire, VidembedError, type WireError } from '../api/errors.js';
import { decodeBase64Strict, parseJsonBody } from './body-parse.js';

/** Below this many bytes, parsing in place is cheaper than the round trip. */
export const OFF_THREAD_BYTES = 1024 * 1024;

type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: WireError; syntax: boolean };

let worker: Worker | undefined;
let nextId = 0;
const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();

function workerUrl(): URL {
  const sibling = new URL('./body-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(sibling))) return sibling;
  // Running from the TypeScript sources (vitest): the worker compiled by `npm run build`.
  const built = new URL('../../dist/src/engine/body-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(built))) return built;
  throw new VidembedError(`the body parser's worker script is missing (${fileURLToPath(sibling)}): run \`npm run build\``);
}

function thread(): Worker {
  if (worker) return worker;
  const w = new Worker(workerUrl());
  w.unref();
  w.on('message', (m: Reply) => {
    const p = waiting.get(m.id);
    if (!p) return;
    waiting.delete(m.id);
    if (waiting.size === 0) w.unref();
    if (m.ok) p.resolve(m.value);
    else p.reject(m.syntax ? new SyntaxError(m.error.message) : errorFromWire(m.error));
  });
  const fail = (err: Error) => {
    worker = undefined;
    for (const p of waiting.values()) p.reject(err);
    waiting.clear();
  };
  w.on('error', fail);
  w.on('exit', (code) => fail(new VidembedError(`the body parser's thread stopped (exit ${code})`)));
  worker = w;
  return w;
}

function call(message: Record<string, unknown>, transfer: ArrayBuffer[] = []): Promise<unknown> {
  const w = thread();
  const id = ++nextId;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    w.ref();
    w.postMessage({ ...message, id }, transfer);
  });
}

/** A JSON request body, parsed (in the thread when large). Rejects like JSON.parse / parseJsonBody. */
export async function parseJson(body: Buffer): Promise<unknown> {
  if (body.length < OFF_THREAD_BYTES) return parseJsonBody(body.toString('utf8'));
  // Copy out of a pooled buffer so the whole body can be handed over.
  const own = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : Buffer.from(body);
  const buf = new Uint8Array(own.buffer, own.byteOffset, own.byteLength);
  return call({ op: 'json', buf }, [buf.buffer as ArrayBuffer]);
}

/** The bytes of a base64 string (in the thread when large); 400 naming `field` when it is not base64. */
export async function decodeBase64(text: string, field: string): Promise<Buffer> {
  if (text.length < OFF_THREAD_BYTES) return decodeBase64Strict(text, field);
  const out = (await call({ op: 'base64', text, field })) as Uint8Array;
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
}

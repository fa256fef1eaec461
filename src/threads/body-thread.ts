/**
 * Heavy parsing off the event loop (issue 21: /healthz stays fast under load). A JSON body over
 * OFF_THREAD_BYTES is parsed, and a base64 string over it decoded, on one worker thread shared by
 * the process (started on first use, unreferenced while idle); smaller ones in place, where a
 * thread round trip would cost more than the work. What comes back is a copy (structured clone) or,
 * for decoded bytes, the thread's own buffer handed over without a copy. A tensor upload's body is
 * streamed to the thread chunk by chunk and comes back with its tensors as bytes (`TensorBodyReader`).
 */
import { Worker } from 'node:worker_threads';
import { errorFromWire, VidembedError, type WireError } from '../api/errors.js';
import { decodeBase64Strict, parseJsonBody, parseTensorBody, type DecodedData } from './body-parse.js';
import { workerScript } from './worker-script.js';

/** Below this many bytes, parsing in place is cheaper than the round trip. */
export const OFF_THREAD_BYTES = 1024 * 1024;

type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: WireError; syntax: boolean } | { op: 'spare'; buf: Uint8Array };

let worker: Worker | undefined;
let nextId = 0;
const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();

function workerUrl(): URL {
  return workerScript(import.meta.url, 'src/threads/body-worker.js', (m) => new VidembedError(`the body parser's worker script: ${m}`));
}

function thread(): Worker {
  if (worker) return worker;
  const w = new Worker(workerUrl());
  w.unref();
  w.on('message', (m: Reply) => {
    if ('op' in m) return void spareBatch(m.buf.buffer as ArrayBuffer);
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

/** Tensor objects of bodies read by a TensorBodyReader, with their `data` decoded beside them. */
const decodedData = new WeakMap<object, DecodedData>();

/** The decoded `data` of a tensor object of a body read by a TensorBodyReader; undefined: its `data` is as sent. */
export function decodedTensorData(tensor: unknown): DecodedData | undefined {
  return tensor !== null && typeof tensor === 'object' ? decodedData.get(tensor) : undefined;
}

function withDecoded({ value, decoded }: { value: unknown; decoded: Record<string, DecodedData> }): unknown {
  for (const [field, d] of Object.entries(decoded)) decodedData.set((value as Record<string, object>)[field], d);
  return value;
}

/** Chunks are copied into batches of this size, each handed to the thread whole (transferred). */
const BATCH_BYTES = 4 * 1024 * 1024;
/**
 * Batches the thread has copied out and handed back, to be filled again: fresh memory for every
 * MiB of a 427 MB body costs the event loop its page faults and the collector's attention.
 */
const spareBatches: ArrayBuffer[] = [];
const MAX_SPARE_BATCHES = 8;

function spareBatch(buf: ArrayBuffer): void {
  if (buf.byteLength === BATCH_BYTES && spareBatches.length < MAX_SPARE_BATCHES) spareBatches.push(buf);
}

function newBatch(): Buffer {
  const spare = spareBatches.pop();
  return spare ? Buffer.from(spare) : Buffer.allocUnsafeSlow(BATCH_BYTES);
}

/**
 * Receives a tensor upload's body chunk by chunk. Up to OFF_THREAD_BYTES it is kept here and parsed
 * in place; past that, each batch of chunks goes to the body thread as it fills (handed over, no
 * copy), which joins, parses and decodes the body there and hands back the tensors' bytes (no
 * copy): the event loop never holds the body whole, nor its base64 as a string.
 */
export class TensorBodyReader {
  private kept: Buffer[] = [];
  private batch = newBatch();
  private used = 0;
  private size = 0;
  private stream?: { w: Worker; id: number; reply: Promise<unknown> };
  private done = false;

  /** `expected`: the body's declared length (0: unknown), so the thread can hold it in one buffer from the start. */
  constructor(private readonly expected = 0) {}

  push(chunk: Buffer): void {
    if (this.done) return;
    this.size += chunk.length;
    for (let at = 0; at < chunk.length; ) {
      const n = chunk.copy(this.batch, this.used, at);
      this.used += n;
      at += n;
      if (this.used === BATCH_BYTES) this.flush();
    }
  }

  /**
   * The body parsed, once every chunk was pushed, each tensor's `data` '' with its bytes beside it
   * (`decodedTensorData`). Rejects like `parseJson`.
   */
  async end(): Promise<unknown> {
    if (this.done) throw new VidembedError('the tensor body was already ended');
    if (!this.stream && this.size < OFF_THREAD_BYTES) {
      this.done = true;
      const body = Buffer.concat([...this.kept, this.batch.subarray(0, this.used)]);
      for (const b of [...this.kept, this.batch]) spareBatch(b.buffer as ArrayBuffer);
      this.kept = [];
      return withDecoded(parseTensorBody(body));
    }
    this.flush();
    this.done = true;
    spareBatch(this.batch.buffer as ArrayBuffer);
    const { w, id, reply } = this.stream!;
    w.postMessage({ op: 'end', id });
    const out = (await reply) as { value: unknown; decoded: Record<string, DecodedData> };
    for (const d of Object.values(out.decoded)) if (d.bytes) d.bytes = Buffer.from(d.bytes.buffer, d.bytes.byteOffset, d.bytes.byteLength);
    return withDecoded(out);
  }

  /** The client went away or the body is refused: the thread forgets what it received. */
  abort(): void {
    if (this.done) return;
    this.done = true;
    for (const b of [...this.kept, this.batch]) spareBatch(b.buffer as ArrayBuffer);
    this.kept = [];
    if (!this.stream) return;
    const { w, id } = this.stream;
    const p = waiting.get(id);
    waiting.delete(id);
    if (waiting.size === 0) w.unref();
    w.postMessage({ op: 'abort', id });
    p?.resolve(undefined);
  }

  /** The batch is full (or the body ends): kept here while the body is small, else handed to the thread. */
  private flush(): void {
    if (this.used === 0) return;
    const full = this.used === BATCH_BYTES ? this.batch : this.batch.subarray(0, this.used);
    this.batch = newBatch();
    this.used = 0;
    this.kept.push(full);
    if (!this.stream && this.size < OFF_THREAD_BYTES) return;
    if (!this.stream) {
      const w = thread();
      const id = ++nextId;
      const reply = new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
      reply.catch(() => {}); // awaited by end(); an abort or a dead thread must not be unhandled before that
      w.ref();
      w.postMessage({ op: 'open', id, expected: this.expected });
      this.stream = { w, id, reply };
    }
    for (const b of this.kept) {
      const buf = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
      this.stream.w.postMessage({ op: 'chunk', id: this.stream.id, buf }, [buf.buffer as ArrayBuffer]);
    }
    this.kept = [];
  }
}

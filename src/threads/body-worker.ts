/**
 * The worker thread of src/threads/body-thread.ts: parses large JSON bodies and decodes large
 * base64 strings away from the event loop, and receives tensor upload bodies chunk by chunk
 * (`open`, `chunk`…, `end`; `abort` forgets one), parses them and hands their decoded bytes back
 * without a copy. Errors go back as wire errors (src/api/errors.ts).
 */
import { parentPort } from 'node:worker_threads';
import { errorToWire } from '../api/errors.js';
import { decodeBase64Strict, parseJsonBody, parseTensorBody, type DecodedData } from './body-parse.js';

type Message =
  | { id: number; op: 'json'; buf: Uint8Array }
  | { id: number; op: 'base64'; text: string; field: string }
  | { id: number; op: 'open'; expected: number }
  | { id: number; op: 'end' }
  | { id: number; op: 'abort' }
  | { id: number; op: 'chunk'; buf: Uint8Array };

/** Tensor bodies being received, by id: one buffer (the declared length, else grown by doubling) and the bytes in it. */
const streams = new Map<number, { buf: Buffer; used: number }>();

/** Copies a batch into its body and hands the batch back to the event loop, to be filled again. */
function receive(id: number, batch: Uint8Array): void {
  const s = streams.get(id);
  if (s) {
    if (s.used + batch.byteLength > s.buf.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(2 * s.buf.length, s.used + batch.byteLength));
      s.buf.copy(grown, 0, 0, s.used);
      s.buf = grown;
    }
    s.buf.set(batch, s.used);
    s.used += batch.byteLength;
  }
  parentPort!.postMessage({ op: 'spare', buf: batch }, [batch.buffer as ArrayBuffer]);
}

/** Bytes to send back: a buffer of their own is handed over (transferred), a slice of Node's pool copied. */
function handOver(bytes: Uint8Array, transfer: ArrayBuffer[]): Uint8Array {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) {
    transfer.push(bytes.buffer as ArrayBuffer);
    return new Uint8Array(bytes.buffer, 0, bytes.byteLength);
  }
  return new Uint8Array(bytes);
}

function tensorBody(id: number): { value: unknown; decoded: Record<string, DecodedData>; transfer: ArrayBuffer[] } {
  const s = streams.get(id);
  streams.delete(id);
  const { value, decoded } = parseTensorBody(s ? s.buf.subarray(0, s.used) : Buffer.alloc(0));
  const transfer: ArrayBuffer[] = [];
  for (const d of Object.values(decoded)) if (d.bytes) d.bytes = handOver(d.bytes, transfer);
  return { value, decoded, transfer };
}

parentPort!.on('message', (m: Message) => {
  try {
    if (m.op === 'open') streams.set(m.id, { buf: Buffer.allocUnsafeSlow(m.expected || 8 * 1024 * 1024), used: 0 });
    else if (m.op === 'chunk') receive(m.id, m.buf);
    else if (m.op === 'abort') streams.delete(m.id);
    else if (m.op === 'end') {
      const { value, decoded, transfer } = tensorBody(m.id);
      parentPort!.postMessage({ id: m.id, ok: true, value: { value, decoded } }, transfer);
    } else if (m.op === 'json') {
      parentPort!.postMessage({ id: m.id, ok: true, value: parseJsonBody(Buffer.from(m.buf.buffer, m.buf.byteOffset, m.buf.byteLength).toString('utf8')) });
    } else if (m.op === 'base64') {
      const transfer: ArrayBuffer[] = [];
      const value = handOver(decodeBase64Strict(m.text, m.field), transfer);
      parentPort!.postMessage({ id: m.id, ok: true, value }, transfer);
    }
  } catch (err) {
    parentPort!.postMessage({ id: m.id, ok: false, error: errorToWire(err), syntax: err instanceof SyntaxError });
  }
});

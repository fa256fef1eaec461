/**
 * The worker thread of src/engine/body-thread.ts: parses large JSON bodies and decodes large
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
  | { id: number; op: 'open' }
  | { id: number; op: 'end' }
  | { id: number; op: 'abort' }
  | { id: number; op: 'chunk'; buf: Uint8Array };

/** Tensor bodies being received, by id. */
const streams = new Map<number, Uint8Array[]>();

/** Bytes to send back: a buffer of their own is handed over (transferred), a slice of Node's pool copied. */
function handOver(bytes: Uint8Array, transfer: ArrayBuffer[]): Uint8Array {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) {
    transfer.push(bytes.buffer as ArrayBuffer);
    return new Uint8Array(bytes.buffer, 0, bytes.byteLength);
  }
  return new Uint8Array(bytes);
}

function tensorBody(id: number): { value: unknown; decoded: Record<string, DecodedData>; transfer: ArrayBuffer[] } {
  const parts = streams.get(id) ?? [];
  streams.delete(id);
  const { value, decoded } = parseTensorBody(Buffer.concat(parts));
  parts.length = 0;
  const transfer: ArrayBuffer[] = [];
  for (const d of Object.values(decoded)) if (d.bytes) d.bytes = handOver(d.bytes, transfer);
  return { value, decoded, transfer };
}

parentPort!.on('message', (m: Message) => {
  try {
    if (m.op === 'open') streams.set(m.id, []);
    else if (m.op === 'chunk') streams.get(m.id)?.push(m.buf);
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

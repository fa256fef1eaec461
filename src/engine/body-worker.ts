/**
 * The worker thread of src/engine/body-thread.ts: parses large JSON bodies and decodes large
 * base64 strings away from the event loop. Errors go back as wire errors (src/api/errors.ts).
 */
import { parentPort } from 'node:worker_threads';
import { errorToWire } from '../api/errors.js';
import { decodeBase64Strict, parseJsonBody } from './body-parse.js';

type Message = { id: number; op: 'json'; buf: Uint8Array } | { id: number; op: 'base64'; text: string; field: string };

parentPort!.on('message', (m: Message) => {
  try {
    if (m.op === 'json') {
      parentPort!.postMessage({ id: m.id, ok: true, value: parseJsonBody(Buffer.from(m.buf.buffer, m.buf.byteOffset, m.buf.byteLength).toString('utf8')) });
    } else {
      const bytes = decodeBase64Strict(m.text, m.field);
      const out = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      // A decoded buffer of its own (not a slice of Node's pool) can be handed over without a copy.
      const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
      parentPort!.postMessage({ id: m.id, ok: true, value: own ? out : new Uint8Array(out) }, own ? [out.buffer as ArrayBuffer] : []);
    }
  } catch (err) {
    parentPort!.postMessage({ id: m.id, ok: false, error: errorToWire(err), syntax: err instanceof SyntaxError });
  }
});

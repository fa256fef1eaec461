/**
 * Parsing a request body, the same on the event loop (small bodies) and in the body thread (large
 * ones, src/threads/body-thread.ts): JSON nested too deep or carrying a prototype key is refused
 * (400) as the framework's own parser would; base64 must be strict.
 */
import { BadRequestError } from '../api/errors.js';
import { checkJsonDepth, MAX_JSON_DEPTH } from '../api/json.js';

const STRICT_BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

/** JSON.parse after the depth check; `__proto__` and `constructor.prototype` keys are refused. */
export function parseJsonBody(text: string): unknown {
  checkJsonDepth(text, MAX_JSON_DEPTH);
  return JSON.parse(text, function (key, value: unknown) {
    if (key === '__proto__' || (key === 'constructor' && value !== null && typeof value === 'object' && Object.prototype.hasOwnProperty.call(value, 'prototype'))) {
      throw new BadRequestError('Object contains forbidden prototype property');
    }
    return value;
  });
}

/** Bytes of a base64 string (white space ignored); 400 naming `field` when it is not base64. */
export function decodeBase64Strict(text: string, field: string): Buffer {
  const clean = /\s/.test(text) ? text.replace(/\s+/g, '') : text;
  if (clean.length % 4 === 1 || !STRICT_BASE64_RE.test(clean)) throw new BadRequestError(`${field} is not valid base64`);
  return Buffer.from(clean, 'base64');
}

/** The fields of a tensor upload (SPEC §4) whose `data` is base64 of the tensor's bytes. */
export const TENSOR_FIELDS = ['video_input', 'audio_input'] as const;

/** A tensor's `data`, decoded where the body was parsed: its length as sent, its bytes or why there are none. */
export interface DecodedData {
  /** Characters of the base64 string as sent (the size check reads them before the bytes). */
  chars: number;
  bytes?: Uint8Array;
  /** The 400's message when the string is not base64. */
  error?: string;
}

/**
 * A tensor upload's body parsed (as `parseJsonBody`) with each tensor's `data` string decoded and
 * replaced by '' (still a string for the schema; the bytes come beside it), so hundreds of
 * megabytes of base64 never travel as a string. A `data` that is not base64 is not an error here:
 * the request is checked in its usual order (schema, size, then base64), src/pipeline/tensors.ts.
 */
export function parseTensorBody(body: Buffer): { value: unknown; decoded: Record<string, DecodedData> } {
  const value = parseJsonBody(body.toString('utf8'));
  const decoded: Record<string, DecodedData> = {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { value, decoded };
  for (const field of TENSOR_FIELDS) {
    const t = Object.prototype.hasOwnProperty.call(value, field) ? (value as Record<string, unknown>)[field] : undefined;
    if (t === null || typeof t !== 'object' || Array.isArray(t)) continue;
    const data = (t as { data?: unknown }).data;
    if (typeof data !== 'string') continue;
    const out: DecodedData = { chars: data.length };
    try {
      out.bytes = decodeBase64Strict(data, `${field}.data`);
    } catch (err) {
      out.error = (err as Error).message;
    }
    (t as { data: string }).data = '';
    decoded[field] = out;
  }
  return { value, decoded };
}

/**
 * Parsing a request body, the same on the event loop (small bodies) and in the body thread (large
 * ones, src/engine/body-thread.ts): JSON nested too deep or carrying a prototype key is refused
 * (400) as the framework's own parser would; base64 must be strict.
 */
import { BadRequestError } from '../api/errors.js';
import { checkJsonDepth, MAX_JSON_DEPTH } from '../server/json.js';

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

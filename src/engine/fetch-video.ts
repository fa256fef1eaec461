import { lookup } from 'node:dns/promises';
import { createWriteStream } from 'node:fs';
import net from 'node:net';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { PayloadTooLargeError, UpstreamError, ValidationError } from '../api/errors.js';

export interface FetchPolicy {
  /** Allow loopback/private/link-local targets (tests, trusted networks). Off by default: SSRF guard. */
  allowPrivate: boolean;
  timeoutMs: number;
  maxBytes?: number;
}

export const DEFAULT_FETCH_POLICY: FetchPolicy = { allowPrivate: false, timeoutMs: 60_000 };

export function isPrivateAddress(ip: string): boolean {
  if (net.isIPv4(ip)) {
    const [a, b] = ip.split('.').map(Number);
    return (
      a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127) || a >= 224
    );
  }
  const v6 = ip.toLowerCase();
  if (v6.startsWith('::ffff:')) return isPrivateAddress(v6.slice(7));
  return v6 === '::1' || v6 === '::' || v6.startsWith('fc') || v6.startsWith('fd') || v6.startsWith('fe80');
}

/**
 * Downloads a video URL to a file under the SSRF guard: http(s) only, every resolved address
 * checked, no redirects followed (a redirect could point inside), size and time capped.
 */
export async function fetchVideoToFile(url: string, file: string, policy: FetchPolicy): Promise<void> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ValidationError([{ loc: ['body', 'video_url'], msg: 'is not a valid URL', type: 'value_error.url' }]);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ValidationError([{ loc: ['body', 'video_url'], msg: 'only http and https URLs are accepted', type: 'value_error.url.scheme' }]);
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  const addresses = net.isIP(host) ? [host] : (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address);
  if (addresses.length === 0) throw new UpstreamError(`cannot resolve host ${host}`);
  if (!policy.allowPrivate && addresses.some(isPrivateAddress)) {
    throw new ValidationError([
      { loc: ['body', 'video_url'], msg: 'points to a private, loopback or link-local address', type: 'value_error.url.host' },
    ]);
  }
  const { request } = await import('undici'); // only callers that fetch pay for loading it
  let res;
  try {
    res = await request(parsed, {
      method: 'GET',
      headersTimeout: policy.timeoutMs,
      bodyTimeout: policy.timeoutMs,
      maxRedirections: 0,
    } as Parameters<typeof request>[1]);
  } catch (err) {
    throw new UpstreamError(`fetching ${url} failed: ${(err as Error).message}`);
  }
  if (res.statusCode < 200 || res.statusCode >= 300) {
    res.body.resume();
    throw new UpstreamError(`fetching ${url} failed: HTTP ${res.statusCode}`);
  }
  const max = policy.maxBytes ?? Number.POSITIVE_INFINITY;
  const declared = Number(res.headers['content-length'] ?? NaN);
  if (declared > max) {
    res.body.destroy();
    throw new PayloadTooLargeError(`video at ${url} is ${declared} bytes, over the ${max}-byte limit`);
  }
  let seen = 0;
  const cap = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      seen += chunk.length;
      if (seen > max) cb(new PayloadTooLargeError(`video at ${url} is over the ${max}-byte limit`));
      else cb(null, chunk);
    },
  });
  const timer = setTimeout(() => res.body.destroy(new UpstreamError(`fetching ${url} timed out`)), policy.timeoutMs);
  try {
    await pipeline(res.body, cap, createWriteStream(file));
  } catch (err) {
    if (err instanceof PayloadTooLargeError || err instanceof UpstreamError) throw err;
    throw new UpstreamError(`fetching ${url} failed: ${(err as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
}

import { lookup } from 'node:dns/promises';
import { createWriteStream } from 'node:fs';
import type { LookupAddress } from 'node:dns';
import type { Socket } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { PayloadTooLargeError, UpstreamError, ValidationError } from '../api/errors.js';
import { classifyAddress, formatIP, parseIP, parseIPv4, sameAddress, type ParsedAddress } from './net-guard.js';

/** Resolves a host name to its addresses (all of them, in the resolver's order). */
export type Resolver = (host: string) => Promise<ReadonlyArray<{ address: string; family?: number } | string>>;

export interface FetchPolicy {
  /** Allow loopback/private/link-local targets (tests, trusted networks). Off by default: SSRF guard. */
  allowPrivate: boolean;
  /** Budget for the whole fetch: resolution, connection, headers and body. */
  timeoutMs: number;
  maxBytes?: number;
  /** How host names are resolved; default `dns.promises.lookup(host, {all: true, verbatim: true})`. */
  resolve?: Resolver;
}

export const DEFAULT_FETCH_POLICY: FetchPolicy = { allowPrivate: false, timeoutMs: 60_000 };

export const defaultResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/**
 * The one message for every upstream failure (DNS failure, refused, reset, timeout, non-2xx,
 * redirect). It never carries the upstream's status, headers, body or socket error: a message that
 * did would turn the endpoint into a probe of what listens where.
 */
export const UPSTREAM_FAILURE_MESSAGE = 'could not fetch video_url: the server did not return the video';

function upstreamFailure(cause?: unknown): UpstreamError {
  // The cause stays on the error for server-side debugging; only the message reaches callers.
  return new UpstreamError(UPSTREAM_FAILURE_MESSAGE, cause === undefined ? undefined : { cause });
}

function refused(msg: string, type: string, field = 'video_url'): ValidationError {
  return new ValidationError([{ loc: ['body', field], msg, type }]);
}

function refusedHost(field = 'video_url'): ValidationError {
  return refused('points to a private, loopback, link-local or otherwise non-public address', 'value_error.url.host', field);
}

/**
 * Is this address allowed as a fetch target under the policy? (For callers that check addresses
 * themselves; fetchVideoToFile does this for every address it connects to.)
 */
export function isPrivateAddress(ip: string): boolean {
  return !classifyAddress(ip).public;
}

/** Rejects when the signal aborts, so a hanging resolver cannot outlive the time budget. */
function withSignal<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/**
 * The addresses this URL's host stands for, each checked by the guard. A literal is its own answer;
 * a name is resolved once, and these answers are the only addresses the connection may use. A
 * refusal names `field` (the request field that held the URL). Also the webhook sender's guard
 * (src/net/post-webhook.ts).
 */
export async function targetAddresses(hostname: string, policy: FetchPolicy, signal: AbortSignal, field = 'video_url'): Promise<ParsedAddress[]> {
  // The WHATWG parser has already canonicalised literals: IPv6 in brackets, IPv4 as a dotted quad.
  if (hostname.startsWith('[')) {
    const literal = parseIP(hostname);
    if (!literal) throw refused('is not a valid URL', 'value_error.url', field);
    if (!policy.allowPrivate && !classifyAddress(literal).public) throw refusedHost(field);
    return [literal];
  }
  const v4 = parseIPv4(hostname);
  if (v4) {
    const literal: ParsedAddress = { family: 4, bytes: v4 };
    if (!policy.allowPrivate && !classifyAddress(literal).public) throw refusedHost(field);
    return [literal];
  }
  let answers: ReadonlyArray<{ address: string; family?: number } | string>;
  try {
    answers = await withSignal((policy.resolve ?? defaultResolver)(hostname), signal);
  } catch (err) {
    throw upstreamFailure(err);
  }
  if (!Array.isArray(answers) || answers.length === 0) throw upstreamFailure();
  const parsed = answers.map((a) => parseIP(typeof a === 'string' ? a : String(a?.address ?? '')));
  // Any answer that is not public refuses the whole name, whichever one the connection would use.
  if (!policy.allowPrivate && parsed.some((p) => !p || !classifyAddress(p).public)) throw refusedHost(field);
  const usable = parsed.filter((p): p is ParsedAddress => p !== null);
  if (usable.length === 0) throw upstreamFailure();
  return usable;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net.connect/tls.connect that answers `addresses` whatever host it is asked about,
 * in both forms net.connect uses: `(err, address, family)`, or `(err, [{address, family}])` when it
 * asks with `all: true` (autoSelectFamily).
 */
export function makePinnedLookup(addresses: ParsedAddress[]) {
  if (addresses.length === 0) throw new Error('makePinnedLookup: no address to pin');
  const pinned: LookupAddress[] = addresses.map((a) => ({ address: formatIP(a), family: a.family }));
  return (_hostname: string, options: unknown, callback?: LookupCallback): void => {
    const cb = (typeof options === 'function' ? options : callback) as LookupCallback;
    const all = typeof options === 'object' && options !== null && (options as { all?: boolean }).all === true;
    if (all) cb(null, pinned.map((p) => ({ ...p })));
    else cb(null, pinned[0].address, pinned[0].family);
  };
}

/**
 * An undici connector that can only reach `addresses`: its lookup answers them whatever it is
 * asked (so a DNS answer that changed since the check cannot be used), and the peer address of the
 * connected socket is checked once more. TLS SNI and the Host header stay the URL's host name:
 * undici takes them from the URL, not from the address.
 */
export function pinnedConnector(
  buildConnector: typeof import('undici').buildConnector,
  addresses: ParsedAddress[],
  timeout: number,
): import('undici').buildConnector.connector {
  const lookup = makePinnedLookup(addresses);
  const base = buildConnector({ lookup, timeout } as Parameters<typeof buildConnector>[0]);
  return (opts, callback) => {
    base(opts, (err, socket) => {
      if (err || !socket) {
        callback(err ?? new Error('connection failed'), null);
        return;
      }
      const remote = (socket as Socket).remoteAddress;
      if (!remote || !addresses.some((a) => sameAddress(formatIP(a), remote))) {
        socket.destroy();
        callback(new Error('connected to an address that was not checked'), null);
        return;
      }
      callback(null, socket);
    });
  };
}

/**
 * Downloads a video URL to a file under the SSRF guard: http(s) only; the host (literal or every
 * resolved address) classified after full normalisation; the connection pinned to the checked
 * addresses; no redirects followed (a redirect could point inside); size and time capped. Every
 * upstream failure reads the same (UPSTREAM_FAILURE_MESSAGE).
 */
export async function fetchVideoToFile(url: string, file: string, policy: FetchPolicy): Promise<void> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refused('is not a valid URL', 'value_error.url');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw refused('only http and https URLs are accepted', 'value_error.url.scheme');
  }
  if (!parsed.hostname) throw refused('is not a valid URL', 'value_error.url');

  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new Error('timed out')), policy.timeoutMs);
  try {
    const addresses = await targetAddresses(parsed.hostname, policy, deadline.signal);
    const { Agent, buildConnector, request } = await import('undici'); // only callers that fetch pay for loading it
    const agent = new Agent({
      connect: pinnedConnector(buildConnector, addresses, policy.timeoutMs),
      headersTimeout: policy.timeoutMs,
      bodyTimeout: policy.timeoutMs,
      connections: 1,
      pipelining: 1,
    });
    try {
      await download(request, agent, parsed, file, policy, deadline.signal);
    } finally {
      await agent.destroy().catch(() => {});
    }
  } finally {
    clearTimeout(timer);
  }
}

/** Drops a response body we will not read (undici reports the destroy as an error: swallow it). */
function discard(body: NodeJS.ReadableStream & { destroy(): void }): void {
  body.on('error', () => {});
  body.destroy();
}

async function download(
  request: typeof import('undici').request,
  agent: import('undici').Agent,
  url: URL,
  file: string,
  policy: FetchPolicy,
  signal: AbortSignal,
): Promise<void> {
  let res;
  try {
    res = await request(url, {
      dispatcher: agent,
      method: 'GET',
      signal,
      headersTimeout: policy.timeoutMs,
      bodyTimeout: policy.timeoutMs,
      maxRedirections: 0, // a 3xx is a failure like any other non-2xx
    } as Parameters<typeof request>[1]);
  } catch (err) {
    throw upstreamFailure(err);
  }
  if (res.statusCode < 200 || res.statusCode >= 300) {
    discard(res.body);
    throw upstreamFailure();
  }
  const max = policy.maxBytes ?? Number.POSITIVE_INFINITY;
  const declared = Number(res.headers['content-length'] ?? NaN);
  if (declared > max) {
    discard(res.body);
    throw new PayloadTooLargeError(`video_url is over the ${max}-byte limit`);
  }
  let seen = 0;
  const cap = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      seen += chunk.length;
      if (seen > max) cb(new PayloadTooLargeError(`video_url is over the ${max}-byte limit`));
      else cb(null, chunk);
    },
  });
  try {
    await pipeline(res.body, cap, createWriteStream(file), { signal });
  } catch (err) {
    if (err instanceof PayloadTooLargeError) throw err;
    throw upstreamFailure(err);
  }
}

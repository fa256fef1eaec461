/**
 * Sending a webhook under the same SSRF guard as `video_url` (./fetch-video.ts): http(s) only, the
 * host — a literal, or every address its name resolves to — classified by ./net-guard.ts, the
 * connection pinned to the checked addresses (a DNS answer that changed since cannot be used),
 * no redirects followed, a time budget. Private, loopback and link-local targets are refused unless
 * the endpoint was allowed them by the operator (`allowPrivate`).
 */
import { UpstreamError, ValidationError, errorMessage } from '../api/errors.js';
import { pinnedConnector, targetAddresses, type Resolver } from './fetch-video.js';

export interface WebhookTargetPolicy {
  allowPrivate: boolean;
  /** How host names are resolved (tests); default the system resolver. */
  resolve?: Resolver;
}

export interface WebhookPostResult {
  /** The receiver's HTTP status; null when none came back. */
  status: number | null;
  /** Why it did not succeed (a short line for the delivery log), or null on a 2xx. */
  error: string | null;
  durationMs: number;
}

function parseTarget(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ValidationError([{ loc: ['body', 'url'], msg: 'is not a valid URL', type: 'value_error.url' }]);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ValidationError([{ loc: ['body', 'url'], msg: 'only http and https URLs are accepted', type: 'value_error.url.scheme' }]);
  }
  if (parsed.username || parsed.password) {
    throw new ValidationError([{ loc: ['body', 'url'], msg: 'must not carry a user name or password', type: 'value_error.url.userinfo' }]);
  }
  return parsed;
}

/**
 * Checks a webhook URL when it is registered: a 422 at `body.url` for one that is not http(s) or
 * whose host is (or resolves to) a non-public address under the policy. A name that does not
 * resolve now is accepted — it may later; its deliveries fail and are retried meanwhile — while
 * every delivery is checked again, address by address.
 */
export async function checkWebhookUrl(url: string, policy: WebhookTargetPolicy, timeoutMs = 10_000): Promise<void> {
  const parsed = parseTarget(url);
  const budget = AbortSignal.timeout(timeoutMs);
  try {
    await targetAddresses(parsed.hostname, { allowPrivate: policy.allowPrivate, timeoutMs, resolve: policy.resolve }, budget, 'url');
  } catch (err) {
    if (err instanceof UpstreamError) return;
    throw err;
  }
}

/**
 * POSTs `body` to `url` with `headers`, within `timeoutMs`, and says what came back: a 2xx is a
 * success, anything else (another status, a redirect, no answer, a refused target) a failure with a
 * one-line reason. Never throws for the receiver's doing; rejects only when `signal` aborts.
 */
export async function postWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  opts: WebhookTargetPolicy & { timeoutMs: number; signal?: AbortSignal },
): Promise<WebhookPostResult> {
  const started = performance.now();
  const done = (status: number | null, error: string | null): WebhookPostResult => ({ status, error, durationMs: performance.now() - started });
  const budget = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, budget]) : budget;
  let parsed: URL;
  try {
    parsed = parseTarget(url);
  } catch (err) {
    return done(null, `refused: ${(err as ValidationError).issues?.[0]?.msg ?? errorMessage(err)}`);
  }
  let addresses;
  try {
    addresses = await targetAddresses(parsed.hostname, { allowPrivate: opts.allowPrivate, timeoutMs: opts.timeoutMs, resolve: opts.resolve }, signal, 'url');
  } catch (err) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    if (err instanceof ValidationError) return done(null, 'refused: the URL points to a private, loopback, link-local or otherwise non-public address');
    return done(null, budget.aborted ? 'timed out resolving the host' : 'could not resolve the host');
  }
  const { request } = await import('undici');
  const agent = await pinnedAgent(parsed, addresses, opts.timeoutMs);
  try {
    const res = await request(parsed, {
      dispatcher: agent,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'vidembed-webhooks/1', ...headers },
      body,
      signal,
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
      maxRedirections: 0, // a 3xx is a failure like any other non-2xx: a redirect could point inside
    } as Parameters<typeof request>[1]);
    // The answer's body is not kept (a receiver's page is no business of the log): read and dropped.
    await res.body.dump({ limit: 64 * 1024 }).catch(() => {});
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    return done(res.statusCode, ok ? null : `HTTP ${res.statusCode}`);
  } catch (err) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    if (budget.aborted) return done(null, `timed out after ${opts.timeoutMs / 1000} s`);
    return done(null, `no answer: ${connectionError(err)}`);
  }
}

/**
 * Connections kept alive between deliveries, per origin and the exact addresses the guard checked
 * for it: an agent connects only to its own pinned addresses, so a name that resolves elsewhere
 * next time gets another agent (checked afresh) and never a connection made for the old answer.
 * The least recently used agents are closed past `MAX_AGENTS`.
 */
const MAX_AGENTS = 64;
const agents = new Map<string, import('undici').Agent>();

async function pinnedAgent(url: URL, addresses: Awaited<ReturnType<typeof targetAddresses>>, timeoutMs: number): Promise<import('undici').Agent> {
  const key = `${url.protocol}//${url.host}|${timeoutMs}|${addresses.map((a) => Array.from(a.bytes).join('.')).join(',')}`;
  const found = agents.get(key);
  if (found) {
    agents.delete(key); // most recently used last
    agents.set(key, found);
    return found;
  }
  const { Agent, buildConnector } = await import('undici');
  const agent = new Agent({ connect: pinnedConnector(buildConnector, addresses, timeoutMs), connections: 8, keepAliveTimeout: 10_000, keepAliveMaxTimeout: 30_000 });
  agents.set(key, agent);
  for (const [k, old] of agents) {
    if (agents.size <= MAX_AGENTS) break;
    agents.delete(k);
    void old.close().catch(() => {});
  }
  return agent;
}

/** A socket error in words, without addresses (the log is the endpoint owner's to read). */
function connectionError(err: unknown): string {
  const code = (err as { code?: string; cause?: { code?: string } }).code ?? (err as { cause?: { code?: string } }).cause?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection reset';
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'connection timed out';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    default:
      return code ?? 'the connection failed';
  }
}

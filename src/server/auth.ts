import type { FastifyReply, FastifyRequest } from 'fastify';
import { QuotaExceededError, RateLimitedError, UnauthorizedError } from '../api/errors.js';
import type { Principal } from '../api/principal.js';
import { principalOf, type ApiKeyRow, type KeysRepo } from '../store/keys.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who the request acts for; set by the auth hook (full rights with `serve --no-auth`). */
    principal?: Principal;
    apiKey?: ApiKeyRow;
  }
}

/**
 * Per-key token bucket: holds up to max(1, qps) tokens, refilled at `qps` per second; a request
 * takes one. Kept in memory: limits are per server process, and a restart forgives.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  take(key: string, qps: number, now = Date.now()): { ok: true } | { ok: false; retryAfterSeconds: number } {
    const capacity = Math.max(1, qps);
    const b = this.buckets.get(key) ?? { tokens: capacity, at: now };
    b.tokens = Math.min(capacity, b.tokens + ((now - b.at) / 1000) * qps);
    b.at = now;
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - b.tokens) / qps)) };
  }
}

/**
 * The key a request presents, from `X-API-Key` or `Authorization: Bearer`. Credentials that
 * disagree (two different keys, a repeated header, an Authorization header of another scheme next
 * to X-API-Key) are refused rather than guessed between.
 */
export function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  if (Array.isArray(header)) throw new UnauthorizedError('conflicting credentials: send one X-API-Key header');
  const fromHeader = typeof header === 'string' && header.trim() ? header.trim() : undefined;
  const auth = request.headers.authorization;
  let fromBearer: string | undefined;
  if (typeof auth === 'string' && auth.trim()) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth.trim());
    if (!m) {
      if (fromHeader) throw new UnauthorizedError('conflicting credentials: an Authorization header that is not a Bearer key next to X-API-Key');
      throw new UnauthorizedError('unsupported Authorization scheme: send Authorization: Bearer KEY or X-API-Key');
    }
    fromBearer = m[1];
  }
  if (fromHeader && fromBearer && fromHeader !== fromBearer) {
    throw new UnauthorizedError('conflicting credentials: X-API-Key and Authorization: Bearer carry different keys');
  }
  return fromHeader ?? fromBearer;
}

/**
 * Authenticates, rate-limits and charges one quota unit per request (the documented unit:
 * one API request). Order: 401 before 429 before 402, so a bad key never learns about limits.
 */
export function makeAuthHook(keys: KeysRepo, buckets: TokenBuckets) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const key = presentedKey(request);
    if (!key) throw new UnauthorizedError('missing API key: send X-API-Key or Authorization: Bearer');
    const row: ApiKeyRow | undefined = keys.byKey(key);
    if (!row) throw new UnauthorizedError('invalid API key');
    if (row.revoked_at) throw new UnauthorizedError('API key revoked');
    const taken = buckets.take(row.id, row.qps);
    if (!taken.ok) throw new RateLimitedError(`rate limit of ${row.qps} requests/s exceeded`, taken.retryAfterSeconds);
    if (!keys.charge(row.id, 1)) throw new QuotaExceededError(`quota of ${row.quota} requests used up for key ${row.name}`);
    request.apiKey = row;
    request.principal = principalOf(row);
  };
}

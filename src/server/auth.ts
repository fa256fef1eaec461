import type { FastifyReply, FastifyRequest } from 'fastify';
import { QuotaExceededError, RateLimitedError, UnauthorizedError } from '../api/errors.js';
import type { Principal } from '../api/principal.js';
import { principalOf, type ApiKeyRow } from '../store/keys.js';
import type { KeysCatalog } from '../store/catalog/types.js';
import { cookieValue, isMediaRead, MEDIA_COOKIE, type MediaSource, type UiSessions } from './ui.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who the request acts for; set by the auth hook (full rights with `serve --no-auth`). */
    principal?: Principal;
    apiKey?: ApiKeyRow;
    /** The credential that let the request in: a stored key (by id) or a page's ephemeral key (by hash). */
    credential?: MediaSource;
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
 *
 * With `ui` (the web page's state), two more credentials are accepted: the ephemeral keys a
 * `vidembed ui` login link is exchanged for (the local owner, full rights, no limits: like the
 * local CLI), and — for GET of a thumbnail or a video file only — the page's media cookie, which
 * acts for the key that opened it (its limits and quota) and stops when that key is revoked.
 */
/** What authentication needs of the key store: a key by its secret or id, and a charge against its quota. */
export type KeyStore = Pick<KeysCatalog, 'byKey' | 'byId' | 'charge'>;

export function makeAuthHook(keys: KeyStore, buckets: TokenBuckets, ui?: UiSessions) {
  const admit = async (request: FastifyRequest, row: ApiKeyRow): Promise<void> => {
    const taken = buckets.take(row.id, row.qps);
    if (!taken.ok) throw new RateLimitedError(`rate limit of ${row.qps} requests/s exceeded`, taken.retryAfterSeconds);
    if (!(await keys.charge(row.id, 1))) throw new QuotaExceededError(`quota of ${row.quota} requests used up for key ${row.name}`);
    request.apiKey = row;
    request.principal = principalOf(row);
  };
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const key = presentedKey(request);
    if (!key) {
      const sid = ui && isMediaRead(request) ? cookieValue(request.headers.cookie, MEDIA_COOKIE) : undefined;
      if (ui && sid) {
        const cookieKey = ui.mediaSessionSource(sid);
        const row = cookieKey?.kind === 'key' ? await keys.byId(cookieKey.id) : undefined;
        const session = ui.mediaSession(sid, (source) => source.kind !== 'key' || Boolean(row && row.id === source.id && !row.revoked_at));
        if (!session) throw new UnauthorizedError("the page's media session has ended: sign in again");
        if (row) await admit(request, row);
        else request.principal = session.principal;
        return;
      }
      throw new UnauthorizedError('missing API key: send X-API-Key or Authorization: Bearer');
    }
    const eph = ui?.ephemeral(key);
    if (eph) {
      request.principal = eph.principal;
      request.credential = { kind: 'ephemeral', hash: eph.hash };
      return;
    }
    const row: ApiKeyRow | undefined = await keys.byKey(key);
    if (!row) throw new UnauthorizedError('invalid API key');
    if (row.revoked_at) throw new UnauthorizedError('API key revoked');
    await admit(request, row);
    request.credential = { kind: 'key', id: row.id };
  };
}

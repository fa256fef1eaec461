/**
 * The web page (`web/` at the repository root) and the little state it needs besides the API:
 * one-time login tokens (`vidembed ui`), the ephemeral keys they are exchanged for, and the media
 * cookie that lets `<img>` and `<video>` (which cannot send X-API-Key) read thumbnails and files.
 * Everything here lives in server memory only: a restart forgets it all.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FromSchema } from 'json-schema-to-ts';
import { NotFoundError, UnauthorizedError, UnavailableError } from '../api/errors.js';
import { LOCAL_PRINCIPAL, type Principal } from '../api/principal.js';
import { FILTERABLE_KINDS, filterVocabulary } from '../tags/registry.js';

/** A `vidembed ui` login link works once, for this long. */
export const LOGIN_TOKEN_TTL_MS = 2 * 60_000;
/** Ephemeral keys and media cookies last at most this long (and never past a restart). */
export const UI_SESSION_MAX_AGE_S = 12 * 3600;
export const MEDIA_COOKIE = 'vidembed_media';
/** The only routes the media cookie opens, and only for GET. */
export const MEDIA_ROUTES: ReadonlySet<string> = new Set(['/videos/:video_id/thumbnail', '/videos/:video_id/file', '/videos/:video_id/playback']);

const MAX_TOKENS = 64;
const MAX_EPHEMERAL_KEYS = 1024;
/** Media sessions the server keeps in all (memory); when full, a new one is refused (503), never another key's evicted. */
const MAX_MEDIA_SESSIONS = 10_000;
/** Media sessions one key (stored or ephemeral) keeps: its oldest goes when it opens one more. */
export const MAX_MEDIA_SESSIONS_PER_KEY = 16;

const sourceId = (s: MediaSource): string => (s.kind === 'key' ? `key:${s.id}` : `eph:${s.hash}`);

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** What a media session acts for: a stored API key (by id) or an ephemeral key (by hash). */
export type MediaSource = { kind: 'key'; id: string } | { kind: 'ephemeral'; hash: string };

interface Expiring {
  expires: number;
}

/** Drops expired entries; if still at `max`, the oldest (Maps keep insertion order). */
function prune<T extends Expiring>(map: Map<string, T>, max: number, now: number): void {
  for (const [k, v] of map) if (v.expires <= now) map.delete(k);
  while (map.size >= max) map.delete(map.keys().next().value as string);
}

/** Login tokens, ephemeral keys and media sessions, each kept by the SHA-256 of its secret. */
export class UiSessions {
  private readonly tokens = new Map<string, Expiring>();
  private readonly keys = new Map<string, Expiring & { principal: Principal }>();
  private readonly media = new Map<string, Expiring & { principal: Principal; source: MediaSource }>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxMediaSessions = MAX_MEDIA_SESSIONS,
  ) {}

  /** A new one-time login token (for the `#login=` fragment of the page's address). */
  mintLoginToken(ttlMs = LOGIN_TOKEN_TTL_MS): string {
    const token = randomBytes(32).toString('base64url');
    prune(this.tokens, MAX_TOKENS, this.now());
    this.tokens.set(sha256(token), { expires: this.now() + ttlMs });
    return token;
  }

  /**
   * Spends a login token: an ephemeral key for the local owner (full rights, like the local CLI),
   * or undefined when the token is unknown, used or expired.
   */
  redeem(token: string): { key: string; expiresIn: number } | undefined {
    const h = sha256(token);
    const t = this.tokens.get(h);
    if (!t) return undefined;
    this.tokens.delete(h); // single use, whatever happens next
    const now = this.now();
    if (t.expires <= now) return undefined;
    const key = `vku_${randomBytes(32).toString('base64url')}`;
    prune(this.keys, MAX_EPHEMERAL_KEYS, now);
    this.keys.set(sha256(key), { principal: LOCAL_PRINCIPAL, expires: now + UI_SESSION_MAX_AGE_S * 1000 });
    return { key, expiresIn: UI_SESSION_MAX_AGE_S };
  }

  /** The principal of an ephemeral key, if `key` is one that is still valid. */
  ephemeral(key: string): { principal: Principal; hash: string } | undefined {
    const hash = sha256(key);
    return this.ephemeralByHash(hash) ? { principal: this.keys.get(hash)!.principal, hash } : undefined;
  }

  private ephemeralByHash(hash: string): boolean {
    const e = this.keys.get(hash);
    if (!e) return false;
    if (e.expires > this.now()) return true;
    this.keys.delete(hash);
    return false;
  }

  /** Forgets an ephemeral key, by its hash (sign-out): its media sessions die with it. */
  forgetEphemeral(hash: string): void {
    this.keys.delete(hash);
  }

  /** A media session for `source`; returns the cookie value. */
  openMedia(source: MediaSource, principal: Principal): string {
    const sid = randomBytes(32).toString('base64url');
    const now = this.now();
    // Expired sessions go; then the key's own oldest while it is at its cap (Maps keep insertion
    // order): one key can sign out only itself, never another key's pages.
    const own: string[] = [];
    for (const [k, v] of this.media) {
      if (v.expires <= now) this.media.delete(k);
      else if (sourceId(v.source) === sourceId(source)) own.push(k);
    }
    while (own.length >= MAX_MEDIA_SESSIONS_PER_KEY || (own.length > 0 && this.media.size >= this.maxMediaSessions)) this.media.delete(own.shift()!);
    if (this.media.size >= this.maxMediaSessions) {
      throw new UnavailableError('the server holds as many media sessions as it can; try again later', 60);
    }
    this.media.set(sha256(sid), { principal, source, expires: now + UI_SESSION_MAX_AGE_S * 1000 });
    return sid;
  }

  closeMedia(sid: string): void {
    this.media.delete(sha256(sid));
  }

  /**
   * The media session behind a cookie value, if it is still valid. A session of an ephemeral key
   * ends with that key; one of a stored key is checked against the store by the caller
   * (`stillValid`), so a revoked key's cookie stops at once.
   */
  /** Who a media cookie acts for, unchecked (the caller looks the key up, then asks `mediaSession`). */
  mediaSessionSource(sid: string): MediaSource | undefined {
    return this.media.get(sha256(sid))?.source;
  }

  mediaSession(sid: string, stillValid: (source: MediaSource) => boolean): { principal: Principal; source: MediaSource } | undefined {
    const h = sha256(sid);
    const s = this.media.get(h);
    if (!s) return undefined;
    const alive = s.expires > this.now() && (s.source.kind === 'ephemeral' ? this.ephemeralByHash(s.source.hash) : stillValid(s.source));
    if (!alive) {
      this.media.delete(h);
      return undefined;
    }
    return { principal: s.principal, source: s.source };
  }
}

/** The value of cookie `name` in a Cookie header (the first, when repeated). */
export function cookieValue(header: string | string[] | undefined, name: string): string | undefined {
  const all = Array.isArray(header) ? header.join(';') : (header ?? '');
  for (const part of all.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

/** Is this a read of a thumbnail or a video file: the only requests the media cookie may authenticate? */
export function isMediaRead(request: FastifyRequest): boolean {
  return request.method === 'GET' && MEDIA_ROUTES.has(request.routeOptions.url ?? '');
}

// ---- the page's files -----------------------------------------------------------------------

/** `web/` of this package: beside the nearest ancestor package.json named vidembed (works from src/ and dist/). */
export function webDir(): string | undefined {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json');
    if (!existsSync(pkg)) continue;
    try {
      if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name !== 'vidembed') continue;
    } catch {
      continue;
    }
    const web = path.join(dir, 'web');
    return existsSync(path.join(web, 'index.html')) ? web : undefined;
  }
  return undefined;
}

/** URL → file in web/ and its type. */
export const UI_ASSETS: Readonly<Record<string, { file: string; type: string }>> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/ui/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/ui/dom.js': { file: 'dom.js', type: 'text/javascript; charset=utf-8' },
  '/ui/transcript.js': { file: 'transcript.js', type: 'text/javascript; charset=utf-8' },
  '/ui/player.js': { file: 'player.js', type: 'text/javascript; charset=utf-8' },
  '/ui/video-view.js': { file: 'video-view.js', type: 'text/javascript; charset=utf-8' },
  '/ui/results.js': { file: 'results.js', type: 'text/javascript; charset=utf-8' },
  '/ui/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
  '/ui/icon.svg': { file: 'icon.svg', type: 'image/svg+xml' },
};

/** Everything from this server, nothing inline, nothing from elsewhere; blob: for local previews. */
export const UI_CSP = [
  "default-src 'self'",
  "img-src 'self' blob:",
  "media-src 'self' blob:",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function pageHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('Content-Security-Policy', UI_CSP)
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Frame-Options', 'DENY');
}

export interface UiOptions {
  auth: boolean;
  sessions: UiSessions;
  /** Route URLs served without a key: the page's files, its config and the login exchange. */
  open: Set<string>;
}

const loginBody = { type: 'object', required: ['token'], additionalProperties: false, properties: { token: { type: 'string', minLength: 1, maxLength: 256 } } } as const;

/**
 * The page's routes. None is part of the API's OpenAPI document: they serve files and the page's
 * own sign-in, not data. Open (no key): the files, `GET /ui/config`, `POST /ui/login`. With a key:
 * `POST /ui/session` (sets the media cookie) and `DELETE /ui/session` (sign out).
 */
export function registerUi(app: FastifyInstance, opts: UiOptions): void {
  const dir = webDir();
  const files = new Map<string, { body: Buffer; type: string; etag: string }>();
  if (dir) {
    for (const [url, a] of Object.entries(UI_ASSETS)) {
      const body = readFileSync(path.join(dir, a.file));
      files.set(url, { body, type: a.type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
    }
  }
  for (const url of Object.keys(UI_ASSETS)) {
    opts.open.add(url);
    app.get(url, async (request, reply) => {
      const f = files.get(url);
      if (!f) throw new NotFoundError('the web page is not installed with this copy of vidembed');
      pageHeaders(reply).header('Cache-Control', 'no-cache').header('ETag', f.etag);
      if (request.headers['if-none-match'] === f.etag) return reply.code(304).send();
      return reply.code(200).header('Content-Type', f.type).send(f.body);
    });
  }

  opts.open.add('/ui/config');
  app.get('/ui/config', async (_request, reply) =>
    pageHeaders(reply)
      .header('Cache-Control', 'no-store')
      .send({
        auth: opts.auth,
        // The page builds one menu per filterable tag kind (src/tags/registry.ts), in this order.
        filters: filterVocabulary(),
        filter_titles: Object.fromEntries(FILTERABLE_KINDS.map((k) => [k.name, k.title])),
      }),
  );

  opts.open.add('/ui/login');
  app.post<{ Body: FromSchema<typeof loginBody> }>(
    '/ui/login',
    { schema: { body: loginBody } },
    async (request, reply) => {
      const got = opts.sessions.redeem(request.body.token);
      if (!got) throw new UnauthorizedError('this login link was already used, has expired or is not valid: run `vidembed ui` again for a new one');
      return pageHeaders(reply).header('Cache-Control', 'no-store').send({ api_key: got.key, expires_in: got.expiresIn });
    },
  );

  app.post('/ui/session', async (request, reply) => {
    pageHeaders(reply).header('Cache-Control', 'no-store');
    if (!opts.auth) return reply.send({ media: 'open' }); // --no-auth: images and files need nothing
    // The auth hook let this request in with a key (never the cookie: this is no media read).
    const source = request.credential;
    if (!source) throw new UnauthorizedError('missing API key: send X-API-Key or Authorization: Bearer');
    const old = cookieValue(request.headers.cookie, MEDIA_COOKIE);
    if (old) opts.sessions.closeMedia(old);
    const sid = opts.sessions.openMedia(source, request.principal!);
    return reply.header('Set-Cookie', mediaCookie(request, sid, UI_SESSION_MAX_AGE_S)).send({ media: 'cookie', expires_in: UI_SESSION_MAX_AGE_S });
  });

  app.delete('/ui/session', async (request, reply) => {
    pageHeaders(reply).header('Cache-Control', 'no-store');
    const old = cookieValue(request.headers.cookie, MEDIA_COOKIE);
    if (old) opts.sessions.closeMedia(old);
    if (request.credential?.kind === 'ephemeral') opts.sessions.forgetEphemeral(request.credential.hash);
    return reply.header('Set-Cookie', mediaCookie(request, '', 0)).send({ signed_out: true });
  });
}

/** HttpOnly (no script reads it), SameSite=Strict (no other site sends it), Secure over https. */
function mediaCookie(request: FastifyRequest, value: string, maxAge: number): string {
  return `${MEDIA_COOKIE}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${request.protocol === 'https' ? '; Secure' : ''}`;
}

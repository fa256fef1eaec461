/**
 * The web page's server side, over a real server on 127.0.0.1: the page's files and their headers,
 * the one-time login of `vidembed ui`, ephemeral keys, and the media cookie that opens thumbnails
 * and video files (GET only) and nothing else. The page itself runs in Chromium in test/e2e/web-ui.test.ts.
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FormData, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schemas } from '../../src/api/schemas.js';
import { systemOpener } from '../../src/cli/commands/ui.js';
import { hashKey } from '../../src/store/keys.js';
import { LOGIN_TOKEN_TTL_MS, MEDIA_COOKIE, UI_ASSETS, UI_SESSION_MAX_AGE_S, UiSessions } from '../../src/server/ui.js';
import { repoRoot } from '../helpers/clips.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { http, startTestServer, type Reply, type TestServer, anyFileIsVideo } from '../helpers/server.js';

const WEB = path.join(repoRoot, 'web');
/** A stand-in poster: the server serves the stored JPEG bytes as they are. */
const POSTER = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 4, 5, 6, 0xff, 0xd9]);
const VIDEO_BYTES = Buffer.from(Array.from({ length: 4000 }, (_, i) => (i * 7) % 256));

const header = (r: Reply | { headers: Record<string, string | string[] | undefined> }, name: string): string => {
  const v = r.headers[name.toLowerCase()];
  return Array.isArray(v) ? v.join('\n') : (v ?? '');
};
/** `name=value` of the media cookie a Set-Cookie header sets. */
const cookieOf = (r: Reply): string => {
  const m = new RegExp(`(?:^|\\n)(${MEDIA_COOKIE}=[^;]*)`).exec(header(r, 'set-cookie'));
  if (!m) throw new Error(`no ${MEDIA_COOKIE} cookie in ${JSON.stringify(r.headers['set-cookie'])}`);
  return m[1];
};

async function setUp(opts: { auth?: boolean; sessions?: UiSessions } = {}) {
  const fake = new FakeEmbedder();
  const s = await startTestServer({ engine: { embedderFor: () => fake, analyzers: [], checkVideo: anyFileIsVideo }, server: { auth: opts.auth, ui: opts.sessions } });
  const key = opts.auth === false ? null : s.key;
  const collectionId = (await http(s.url, 'POST', '/collections', { key, json: { name: 'footage', model: fake.id } })).body.collection_id as string;
  const form = new FormData();
  form.set('file', new Blob([VIDEO_BYTES]), 'clip.mp4');
  const up = await http(s.url, 'POST', `/collections/${collectionId}/videos/upload`, { key, form });
  expect(up.status).toBe(202);
  const videoId = up.body.video_id as string;
  await s.engine.blobs.put(`thumbs/${videoId}/poster.jpg`, POSTER);
  return { s, collectionId, videoId };
}

describe('the web page and its sign-in (auth on)', () => {
  let now = Date.now();
  const sessions = new UiSessions(() => now);
  let s: TestServer;
  let collectionId: string;
  let videoId: string;

  beforeAll(async () => {
    ({ s, collectionId, videoId } = await setUp({ sessions }));
  });
  afterAll(async () => s?.close());

  const login = (token: string) => http(s.url, 'POST', '/ui/login', { json: { token } });
  const ephemeralKey = async (): Promise<string> => {
    const r = await login(sessions.mintLoginToken());
    expect(r.status).toBe(200);
    return r.body.api_key as string;
  };
  const mediaCookie = async (key: string): Promise<string> => {
    const r = await http(s.url, 'POST', '/ui/session', { key });
    expect(r.status).toBe(200);
    return cookieOf(r);
  };

  it('serves the page and its files without a key, typed, with a strict CSP and nosniff', async () => {
    for (const [url, asset] of Object.entries(UI_ASSETS)) {
      const r = await http(s.url, 'GET', url);
      expect(r.status, url).toBe(200);
      expect(header(r, 'content-type'), url).toBe(asset.type);
      expect(header(r, 'x-content-type-options'), url).toBe('nosniff');
      const csp = header(r, 'content-security-policy');
      for (const d of ["default-src 'self'", "img-src 'self' blob:", "media-src 'self' blob:", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]) {
        expect(csp, url).toContain(d);
      }
      expect(csp).not.toContain('unsafe');
      expect(String(r.body), url).toBe(readFileSync(path.join(WEB, asset.file), 'utf8'));
      // Revalidation: the same bytes answer 304.
      const again = await request(`${s.url}${url}`, { headers: { 'if-none-match': header(r, 'etag') } });
      await again.body.dump();
      expect(again.statusCode, url).toBe(304);
    }
    const page = (await http(s.url, 'GET', '/')).body as string;
    expect(page).toContain('<script type="module" src="/ui/app.js"></script>');
    expect(page).toMatch(/<input id="search-text" type="search"/);
    expect(page).toMatch(/<input id="file-input" type="file" multiple/);
    expect(page).toMatch(/<video id="player"/);
  });

  it('loads nothing from elsewhere and ships well under 150 KB of JavaScript', () => {
    const files = readdirSync(WEB);
    for (const f of files) {
      const text = readFileSync(path.join(WEB, f), 'utf8');
      // No absolute URL to another origin (the SVG's XML namespace is a name, not a fetch).
      const urls = [...text.matchAll(/(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}[^\s"')]*/gi)].map((m) => m[0]).filter((u) => u !== 'http://www.w3.org/2000/svg');
      expect(urls, f).toEqual([]);
      expect(text, f).not.toMatch(/@import|<script(?![^>]*src="\/ui\/app\.js")/);
    }
    // Every file the page is made of is one of the served assets, and the JavaScript is small.
    expect(files.sort()).toEqual(Object.values(UI_ASSETS).map((a) => a.file).sort());
    const js = files.filter((f) => f.endsWith('.js')).reduce((n, f) => n + statSync(path.join(WEB, f)).size, 0);
    expect(js).toBeGreaterThan(0);
    expect(js).toBeLessThan(150 * 1024);
  });

  it('keeps the page routes out of the API document', async () => {
    const doc = (await http(s.url, 'GET', '/openapi.json')).body as { paths: Record<string, unknown> };
    for (const p of Object.keys(doc.paths)) expect(p === '/' || p.startsWith('/ui/'), p).toBe(false);
  });

  it('tells the page that a key is needed, and the filter vocabularies the search accepts', async () => {
    const r = await http(s.url, 'GET', '/ui/config');
    expect(r.status).toBe(200);
    const props = schemas.search.body.properties;
    expect(r.body).toEqual({
      auth: true,
      filters: { shot_size: [...props.shot_size.enum], camera_movement: [...props.camera_movement.enum], shooting_angle: [...props.shooting_angle.enum], audio: [...props.audio.enum] },
      filter_titles: { shot_size: 'Shot size', camera_movement: 'Movement', shooting_angle: 'Angle', audio: 'Audio' },
    });
  });

  it('exchanges a login token once for an ephemeral key; a used, wrong or missing token is refused', async () => {
    const token = sessions.mintLoginToken();
    const first = await login(token);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ api_key: expect.stringMatching(/^vku_[A-Za-z0-9_-]{40,}$/), expires_in: UI_SESSION_MAX_AGE_S });
    expect(header(first, 'cache-control')).toBe('no-store');
    const second = await login(token);
    expect(second.status).toBe(401);
    expect(second.body.code).toBe('unauthorized');
    expect((await login('not-a-token')).status).toBe(401);
    expect((await http(s.url, 'POST', '/ui/login', { json: {} })).status).toBe(422);
  });

  it('lets an ephemeral key call the API (header or Bearer) without storing it as a key', async () => {
    const key = await ephemeralKey();
    const list = await http(s.url, 'GET', '/collections', { key });
    expect(list.status).toBe(200);
    expect(list.body.map((c: { id: string }) => c.id)).toContain(collectionId);
    expect((await http(s.url, 'GET', `/videos/${videoId}`, { key, bearer: true })).status).toBe(200);
    const made = await http(s.url, 'POST', '/collections', { key, json: { name: 'from-the-page', model: 'fake-16' } });
    expect(made.status).toBe(201);
    // The local owner, like the CLI; and nothing in the api_keys table.
    expect((await s.engine.getCollection(made.body.collection_id)).owner).toBe('default');
    const stored = s.engine.store.keys.list();
    expect(stored.map((k) => k.name)).toEqual(['test']);
    expect(stored.some((k) => k.key_hash === hashKey(key))).toBe(false);
    expect((await http(s.url, 'GET', '/collections', { key: `${key}x` })).status).toBe(401);
  });

  it('sets an HttpOnly, SameSite=Strict media cookie for a key, and only for a key', async () => {
    expect((await http(s.url, 'POST', '/ui/session')).status).toBe(401);
    const r = await http(s.url, 'POST', '/ui/session', { key: s.key });
    expect(r.status).toBe(200);
    const set = header(r, 'set-cookie');
    const attrs = set.split(';').map((a) => a.trim().toLowerCase());
    expect(attrs[0]).toMatch(new RegExp(`^${MEDIA_COOKIE}=[a-z0-9_-]{40,}$`));
    expect(attrs).toEqual(expect.arrayContaining(['httponly', 'samesite=strict', 'path=/', `max-age=${UI_SESSION_MAX_AGE_S}`]));
    expect(attrs).not.toContain('secure'); // plain http on loopback: a Secure cookie would never come back
    // The cookie alone cannot open another one.
    expect((await http(s.url, 'POST', '/ui/session', { headers: { cookie: cookieOf(r) } })).status).toBe(401);
  });

  it('accepts the cookie for GET of thumbnails and video files, and nowhere else', async () => {
    const cookie = await mediaCookie(s.key);
    const headers = { cookie };
    const thumb = await request(`${s.url}/videos/${videoId}/thumbnail`, { headers });
    expect(thumb.statusCode).toBe(200);
    expect(thumb.headers['content-type']).toBe('image/jpeg');
    expect(Buffer.from(await thumb.body.arrayBuffer()).equals(POSTER)).toBe(true);
    const file = await request(`${s.url}/videos/${videoId}/file`, { headers: { ...headers, range: 'bytes=10-19' } });
    expect(file.statusCode).toBe(206);
    expect(Buffer.from(await file.body.arrayBuffer()).equals(VIDEO_BYTES.subarray(10, 20))).toBe(true);

    // Without it, the same reads are refused.
    expect((await http(s.url, 'GET', `/videos/${videoId}/thumbnail`)).status).toBe(401);
    expect((await http(s.url, 'GET', `/videos/${videoId}/file`)).status).toBe(401);
    // With it, every other route is refused: reads, writes, other methods on the media paths.
    const refused: [Parameters<typeof http>[1], string, unknown?][] = [
      ['GET', '/collections'],
      ['GET', `/collections/${collectionId}`],
      ['GET', `/collections/${collectionId}/videos`],
      ['GET', `/videos/${videoId}`],
      ['GET', `/videos/${videoId}/status`],
      ['POST', `/collections/${collectionId}/search`, { text: 'a dog' }],
      ['POST', '/collections', { name: 'by-cookie' }],
      ['PATCH', `/collections/${collectionId}`, { name: 'renamed' }],
      ['DELETE', `/videos/${videoId}`],
      ['DELETE', `/collections/${collectionId}`],
      ['POST', `/videos/${videoId}/reprocess`],
    ];
    for (const [method, p, json] of refused) {
      const r = await http(s.url, method, p, { headers, json });
      expect(r.status, `${method} ${p}`).toBe(401);
    }
    const head = await request(`${s.url}/videos/${videoId}/file`, { method: 'HEAD', headers });
    await head.body.dump();
    expect(head.statusCode).toBe(401);
    // Nothing was changed by those attempts.
    expect((await s.engine.getCollection(collectionId)).name).toBe('footage');
    expect((await s.engine.videoStatus(videoId)).video_id).toBe(videoId);
    // A forged cookie opens nothing.
    expect((await http(s.url, 'GET', `/videos/${videoId}/thumbnail`, { headers: { cookie: `${MEDIA_COOKIE}=forged` } })).status).toBe(401);
  });

  it("acts for the key that opened it: the key's quota counts, and revoking the key ends it", async () => {
    const { key } = s.engine.store.keys.create({ name: 'page-user', owner: 'test', qps: 1000, quota: 3 });
    const cookie = await mediaCookie(key); // 1 unit
    const get = (p: string) => http(s.url, 'GET', p, { headers: { cookie } });
    expect((await get(`/videos/${videoId}/thumbnail`)).status).toBe(200); // 2
    expect((await get(`/videos/${videoId}/thumbnail`)).status).toBe(200); // 3
    expect((await get(`/videos/${videoId}/thumbnail`)).status).toBe(402);

    const { key: other } = s.engine.store.keys.create({ name: 'revoked-later', owner: 'test', qps: 1000 });
    const c2 = await mediaCookie(other);
    expect((await http(s.url, 'GET', `/videos/${videoId}/thumbnail`, { headers: { cookie: c2 } })).status).toBe(200);
    expect(s.engine.store.keys.revoke('revoked-later')).toBe(1);
    expect((await http(s.url, 'GET', `/videos/${videoId}/thumbnail`, { headers: { cookie: c2 } })).status).toBe(401);
  });

  it('signs out: the ephemeral key and its cookie stop working', async () => {
    const key = await ephemeralKey();
    const cookie = await mediaCookie(key);
    expect((await http(s.url, 'GET', `/videos/${videoId}/thumbnail`, { headers: { cookie } })).status).toBe(200);
    const out = await http(s.url, 'DELETE', '/ui/session', { key, headers: { cookie } });
    expect(out.status).toBe(200);
    expect(header(out, 'set-cookie')).toMatch(new RegExp(`^${MEDIA_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict`));
    expect((await http(s.url, 'GET', `/videos/${videoId}/thumbnail`, { headers: { cookie } })).status).toBe(401);
    expect((await http(s.url, 'GET', '/collections', { key })).status).toBe(401);
  });

  // These move the server's clock: they come last.
  it('refuses a login token after its two minutes', async () => {
    const token = sessions.mintLoginToken();
    now += LOGIN_TOKEN_TTL_MS + 1000;
    expect((await login(token)).status).toBe(401);
  });

  it('ends ephemeral keys and media cookies after their maximum age', async () => {
    const key = await ephemeralKey();
    const cookie = await mediaCookie(s.key);
    expect((await http(s.url, 'GET', '/collections', { key })).status).toBe(200);
    now += UI_SESSION_MAX_AGE_S * 1000 + 1000;
    expect((await http(s.url, 'GET', '/collections', { key })).status).toBe(401);
    expect((await http(s.url, 'GET', `/videos/${videoId}/thumbnail`, { headers: { cookie } })).status).toBe(401);
  });
});

describe('the web page without auth (serve --no-auth)', () => {
  let s: TestServer;
  let videoId: string;
  beforeAll(async () => {
    ({ s, videoId } = await setUp({ auth: false }));
  });
  afterAll(async () => s?.close());

  it('says no key is needed, and needs no cookie for thumbnails and files', async () => {
    expect((await http(s.url, 'GET', '/ui/config')).body.auth).toBe(false);
    expect((await http(s.url, 'GET', '/')).status).toBe(200);
    const session = await http(s.url, 'POST', '/ui/session');
    expect(session.status).toBe(200);
    expect(session.body).toEqual({ media: 'open' });
    expect(session.headers['set-cookie']).toBeUndefined();
    const thumb = await request(`${s.url}/videos/${videoId}/thumbnail`);
    expect(thumb.statusCode).toBe(200);
    expect(Buffer.from(await thumb.body.arrayBuffer()).equals(POSTER)).toBe(true);
    expect((await http(s.url, 'GET', `/videos/${videoId}/file`)).status).toBe(200);
  });
});

describe('vidembed ui: the system opener', () => {
  it('uses xdg-open on Linux and open on macOS when on PATH, start on Windows, else none (the link is printed)', () => {
    const bin = mkdtempSync(path.join(os.tmpdir(), 'vidembed-opener-'));
    try {
      for (const name of ['xdg-open', 'open']) {
        writeFileSync(path.join(bin, name), '#!/bin/sh\n');
        chmodSync(path.join(bin, name), 0o755);
      }
      const linux = systemOpener('linux', `/nonexistent${path.delimiter}${bin}`);
      expect(linux?.cmd).toBe(path.join(bin, 'xdg-open'));
      expect(linux?.args('http://127.0.0.1:1/#login=t')).toEqual(['http://127.0.0.1:1/#login=t']);
      expect(systemOpener('darwin', bin)?.cmd).toBe(path.join(bin, 'open'));
      expect(systemOpener('linux', '/nonexistent')).toBeUndefined();
      expect(systemOpener('linux', '')).toBeUndefined();
      const win = systemOpener('win32', '');
      expect(win?.cmd).toBe('cmd');
      expect(win?.args('http://x/')).toEqual(['/c', 'start', '', 'http://x/']);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });
});

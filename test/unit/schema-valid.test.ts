import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HTTP_URL_PATTERN } from '../../src/api/schema-parts.js';
import { MediaError } from '../../src/api/errors.js';
import { http, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Issue 30 item 4: a schema-valid body is never a 500, and the document states the rules the code
 * applies. A model that is not installed is a 422 naming it before any work starts (the server
 * here uses the real model registry, with an empty models directory: `clip-vit-b32` is known but
 * not installed), and the rules the code used to apply beyond the schema (empty base64, URLs
 * `new URL` refuses, blank names) are in the schema, so /openapi.json says them.
 */
describe('a model that is not installed', () => {
  let s: TestServer;
  let modelsDir: string;
  const saved = process.env.VIDEMBED_MODELS_DIR;

  beforeAll(async () => {
    modelsDir = mkdtempSync(path.join(os.tmpdir(), 'vidembed-no-models-'));
    process.env.VIDEMBED_MODELS_DIR = modelsDir;
    // No video is ever analysed here (the refusal comes first); anything that got that far is refused as ffmpeg would.
    s = await startTestServer({ engine: { checkVideo: async (_f, name) => Promise.reject(new MediaError(`${name} is not a video`)) } });
  });
  afterAll(async () => {
    await s?.close();
    rmSync(modelsDir, { recursive: true, force: true });
    if (saved === undefined) delete process.env.VIDEMBED_MODELS_DIR;
    else process.env.VIDEMBED_MODELS_DIR = saved;
  });

  const notInstalled = (r: { status: number; body: any }) => {
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(r.body.code).toBe('validation_error');
    expect(r.body.detail).toEqual([{ loc: ['body', 'model'], msg: 'model clip-vit-b32 is not installed: run `vidembed models pull clip-vit-b32`', type: 'value_error.model.not_installed' }]);
  };

  it('is a 422 naming it from encode_text, encode_video, video_tagging and their async forms (no task made)', async () => {
    const video = { video_base64: Buffer.from('not a video').toString('base64'), model: 'clip-vit-b32' };
    notInstalled(await http(s.url, 'POST', '/video_embedding/encode_text', { key: s.key, json: { text: 'hi', model: 'clip-vit-b32' } }));
    notInstalled(await http(s.url, 'POST', '/video_embedding/encode_video', { key: s.key, json: video }));
    notInstalled(await http(s.url, 'POST', '/video_tagging', { key: s.key, json: video }));
    notInstalled(await http(s.url, 'POST', '/video_embedding/encode_video/async', { key: s.key, json: video }));
    notInstalled(await http(s.url, 'POST', '/video_tagging/async', { key: s.key, json: { video_url: 'https://example.com/a.mp4', model: 'clip-vit-b32' } }));
    notInstalled(await http(s.url, 'POST', '/collections', { key: s.key, json: { name: 'c', model: 'clip-vit-b32' } }));
    expect((await http(s.url, 'GET', '/jobs', { key: s.key })).body.jobs).toEqual([]);
    // The installed default still works past the check (here: to the video check).
    expect((await http(s.url, 'POST', '/video_tagging', { key: s.key, json: { ...video, model: undefined } })).body.code).toBe('invalid_media');
  });

  it('the document says which models there are and that one not installed is a 422', async () => {
    const doc = (await http(s.url, 'GET', '/openapi.json')).body;
    const model = doc.paths['/video_embedding/encode_text'].post.requestBody.content['application/json'].schema.properties.model;
    expect(model.enum).toContain('clip-vit-b32');
    expect(model.description).toMatch(/not installed is a 422/);
  });
});

describe('rules the code applies are in the schemas', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ engine: { embedderFor: () => ({ id: 'fake', dim: 2 }) as never, checkVideo: async (_f, name) => Promise.reject(new MediaError(`${name} is not a video`)) } });
  });
  afterAll(async () => s?.close());

  const schemaRefusal = (r: { status: number; body: any }, loc: string[]) => {
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(r.body.detail.map((d: { loc: string[] }) => d.loc)).toContainEqual(loc);
  };

  it('empty or blank video_base64 is refused by the schema; bytes that decode to nothing are a 400', async () => {
    for (const v of ['', ' ', '\n']) schemaRefusal(await http(s.url, 'POST', '/video_embedding/encode_video', { key: s.key, json: { video_base64: v } }), ['body', 'video_base64']);
    for (const v of ['A', '==', 'data:video/mp4;base64,=']) {
      const r = await http(s.url, 'POST', '/video_tagging', { key: s.key, json: { video_base64: v } });
      expect(r.status, `${v}: ${JSON.stringify(r.body)}`).toBe(400);
    }
  });

  it('a video_url new URL() refuses (port 99999, 256 in an IPv4 address, a bad IPv6) is refused by the schema', async () => {
    for (const url of ['http://example.com:99999/v.mp4', 'http://256.1.1.1/v.mp4', 'http://[:::]/v.mp4', 'http://a.999/v.mp4', 'http://exa mple.com/', 'http://a%zz/']) {
      schemaRefusal(await http(s.url, 'POST', '/video_embedding/encode_video/async', { key: s.key, json: { video_url: url } }), ['body', 'video_url']);
    }
    const r = await http(s.url, 'POST', '/video_tagging/async', { key: s.key, json: { video_url: 'http://example.com:65535/v.mp4' } });
    expect(r.status).toBe(202);
  });

  it('a blank collection name, search text or said is refused by the schema', async () => {
    schemaRefusal(await http(s.url, 'POST', '/collections', { key: s.key, json: { name: ' ' } }), ['body', 'name']);
    const c = (await http(s.url, 'POST', '/collections', { key: s.key, json: { name: 'named' } })).body.collection_id;
    schemaRefusal(await http(s.url, 'PATCH', `/collections/${c}`, { key: s.key, json: { name: '\t' } }), ['body', 'name']);
    schemaRefusal(await http(s.url, 'POST', `/collections/${c}/search`, { key: s.key, json: { text: '  ' } }), ['body', 'text']);
    schemaRefusal(await http(s.url, 'POST', `/collections/${c}/search`, { key: s.key, json: { said: ' ' } }), ['body', 'said']);
    const both = await http(s.url, 'POST', `/collections/${c}/search`, { key: s.key, json: { image_base64: 'AAAA', image_url: 'https://example.com/a.jpg' } });
    expect(both.status).toBe(422);
    expect(both.body.detail[0].msg).toBe('give only one of image_base64, image_url');
  });
});

describe('HTTP_URL_PATTERN', () => {
  const re = new RegExp(HTTP_URL_PATTERN, 'u');

  it('every URL it accepts, WHATWG URL parses as http(s) with a host (IDN labels aside)', () => {
    fc.assert(
      fc.property(fc.stringMatching(re), (url) => {
        fc.pre(!/xn--/i.test(url));
        const u = new URL(url);
        expect(['http:', 'https:']).toContain(u.protocol);
        expect(u.hostname).not.toBe('');
      }),
      { numRuns: 2000, seed: 30 },
    );
  });

  it('accepts what users send and refuses what new URL() refuses', () => {
    for (const ok of ['https://example.com/clips/beach.mp4', 'HTTP://u:p@Ex.com', 'http://[::1]:8080/x', 'http://1.2.3.4/', 'http://a:65535/', 'http://a:/', 'http://cdn_1.example.co.uk./v?x=1#t', 'https://xn--ls8h.la/']) {
      expect(re.test(ok), ok).toBe(true);
    }
    for (const bad of ['http://a:99999/', 'http://256.1.1.1/', 'http://a.999/', 'http://[:::]/', 'http://a b/', 'ftp://a/', 'http://']) {
      expect(re.test(bad), bad).toBe(false);
      expect(() => {
        const u = new URL(bad);
        if (!/^https?:$/.test(u.protocol) || !u.hostname) throw new Error('refused');
      }, bad).toThrow();
    }
  });
});

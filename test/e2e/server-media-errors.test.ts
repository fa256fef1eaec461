import { FormData } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { http, startTestServer, type TestServer } from '../helpers/server.js';

/*
 * What the server answers for media ffmpeg cannot use (a real ffmpeg run: end-to-end). Moved from
 * test/unit/openapi.test.ts and test/unit/server-hardening.test.ts, whose other tests need no process.
 */

describe('media that does not decode: the documented refusal', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ engine: { maxUploadBytes: 64 * 1024, maxTensorBytes: 4096 }, server: { maxJsonBytes: 64 * 1024 } });
  });
  afterAll(async () => s?.close());

  it('is a 422 in the list form, code invalid_media (checked against the document by http())', async () => {
    const media = await http(s.url, 'POST', '/video_tagging', { key: s.key, json: { video_base64: 'AAAA' } });
    expect([media.status, media.body.code, Array.isArray(media.body.detail)]).toEqual([422, 'invalid_media', true]);
    expect(media.body.detail[0]).toMatchObject({ loc: ['body'], type: 'value_error.invalid_media' });
  });
});

describe('error messages name the user\'s file, never the server\'s layout', () => {
  let s: TestServer;
  beforeAll(async () => {
    const fake = new FakeEmbedder();
    s = await startTestServer({ engine: { embedderFor: () => fake } });
  });
  afterAll(async () => s?.close());

  it('a corrupt upload is refused with its own name, before it is stored; sync calls do not show temp paths', async () => {
    const c = await http(s.url, 'POST', '/collections', { key: s.key, json: { name: 'corrupt' } });
    const form = new FormData();
    form.set('file', new Blob([Buffer.from('definitely not a video file, just text')]), 'holiday.mp4');
    const up = await http(s.url, 'POST', `/collections/${c.body.collection_id}/videos/upload`, { key: s.key, form });
    expect([up.status, up.body.code]).toEqual([422, 'invalid_media']);
    const msg = up.body.detail[0].msg as string;
    expect(msg).toContain('holiday.mp4 is not a video');
    expect(msg).not.toContain(s.home);
    expect(msg).not.toMatch(/\/(tmp|videos|uploads)\//);
    expect(await http(s.url, 'GET', `/collections/${c.body.collection_id}/videos`, { key: s.key }).then((r) => r.body)).toEqual([]);

    const sync = await http(s.url, 'POST', '/video_embedding/encode_video', { key: s.key, json: { video_base64: Buffer.from('not a video').toString('base64') } });
    expect(sync.status).toBe(422);
    expect(sync.body.detail[0].msg).toContain('video_base64');
    expect(sync.body.detail[0].msg).not.toMatch(/\/tmp\/|vidembed-src-/);
  });
});

import { FormData } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { http, startTestServer, type Reply, type TestServer, anyFileIsVideo } from '../helpers/server.js';

/**
 * Every endpoint × the owner's key, another owner's key and an admin key, on a real server on
 * loopback. Another owner's ids answer exactly like ids that do not exist (404), names are per
 * owner, tensor keys are namespaced per owner.
 */
describe('each key sees only its own library', () => {
  let s: TestServer;
  let owner: string;
  let other: string;
  let admin: string;
  const ids = { collection: '', video: '', task: '', tensorVideo: '', tensorAudio: '' };
  const tensor = (bytes: number, shape: number[], dtype = 'uint8') => ({ data: Buffer.alloc(bytes, 3).toString('base64'), shape, dtype });

  beforeAll(async () => {
    const fake = new FakeEmbedder();
    s = await startTestServer({ engine: { embedderFor: () => fake, checkVideo: anyFileIsVideo } });
    owner = s.key; // owner "test"
    other = s.engine.store.keys.create({ name: 'bob', qps: 1000 }).key;
    admin = s.engine.store.keys.create({ name: 'ops', qps: 1000, role: 'admin' }).key;

    const c = await http(s.url, 'POST', '/collections', { key: owner, json: { name: 'footage' } });
    expect(c.status).toBe(201);
    ids.collection = c.body.collection_id;
    const form = new FormData();
    form.set('file', new Blob([Buffer.from('not really a video')]), 'clip.mp4');
    const up = await http(s.url, 'POST', `/collections/${ids.collection}/videos/upload`, { key: owner, form });
    expect(up.status).toBe(202);
    ids.video = up.body.video_id;
    const tu = await http(s.url, 'POST', '/files/upload/tensors', {
      key: owner,
      json: { service: 'embedding', request_id: 'same-id', video_input: tensor(96, [1, 2, 3, 4, 4]), audio_input: tensor(32, [1, 1, 8], 'float32') },
    });
    expect(tu.status).toBe(200);
    ids.tensorVideo = tu.body.r2_keys.video_input;
    ids.tensorAudio = tu.body.r2_keys.audio_input;
    const task = await http(s.url, 'POST', '/video_embedding/encode_video/async', { key: owner, json: { video_base64: Buffer.from('xyz').toString('base64') } });
    expect(task.status).toBe(202);
    ids.task = task.body.request_id;
  });
  afterAll(async () => s?.close());

  /** What a request answers for each of the three keys. */
  type Case = { name: string; call: (key: string) => Promise<Reply>; expect: [number, number, number] };
  const cases: Case[] = [
    { name: 'POST /collections/{id}/search', call: (k) => http(s.url, 'POST', `/collections/${ids.collection}/search`, { key: k, json: { text: 'a dog' } }), expect: [200, 404, 200] },
    {
      name: 'POST /collections/{id}/videos/upload',
      call: (k) => {
        const f = new FormData();
        f.set('file', new Blob([Buffer.from('bytes')]), 'x.mp4');
        return http(s.url, 'POST', `/collections/${ids.collection}/videos/upload`, { key: k, form: f });
      },
      expect: [202, 404, 202],
    },
    { name: 'POST /collections/{id}/reindex', call: (k) => http(s.url, 'POST', `/collections/${ids.collection}/reindex`, { key: k }), expect: [202, 404, 202] },
    { name: 'GET /collections/{id}', call: (k) => http(s.url, 'GET', `/collections/${ids.collection}`, { key: k }), expect: [200, 404, 200] },
    { name: 'PATCH /collections/{id}', call: (k) => http(s.url, 'PATCH', `/collections/${ids.collection}`, { key: k, json: { description: 'mine' } }), expect: [200, 404, 200] },
    { name: 'GET /collections/{id}/videos', call: (k) => http(s.url, 'GET', `/collections/${ids.collection}/videos`, { key: k }), expect: [200, 404, 200] },
    { name: 'GET /videos/{id}', call: (k) => http(s.url, 'GET', `/videos/${ids.video}`, { key: k }), expect: [200, 404, 200] },
    { name: 'GET /videos/{id}/file', call: (k) => http(s.url, 'GET', `/videos/${ids.video}/file`, { key: k }), expect: [200, 404, 200] },
    { name: 'POST /videos/{id}/reprocess', call: (k) => http(s.url, 'POST', `/videos/${ids.video}/reprocess`, { key: k }), expect: [202, 404, 202] },
    { name: 'GET /videos/{id}/status', call: (k) => http(s.url, 'GET', `/videos/${ids.video}/status`, { key: k }), expect: [200, 404, 200] },
    { name: 'GET /async_status/{id}', call: (k) => http(s.url, 'GET', `/async_status/${ids.task}`, { key: k }), expect: [200, 404, 200] },
    {
      name: 'POST /video_embedding/encode_video/async with the owner\'s tensor keys',
      call: (k) => http(s.url, 'POST', '/video_embedding/encode_video/async', { key: k, json: { tensor: { video_input_key: ids.tensorVideo, audio_input_key: ids.tensorAudio } } }),
      expect: [202, 404, 202],
    },
    {
      name: 'POST /video_tagging/async with the owner\'s tensor keys',
      call: (k) => http(s.url, 'POST', '/video_tagging/async', { key: k, json: { tensor: { video_input_key: ids.tensorVideo } } }),
      expect: [202, 404, 202],
    },
    // Endpoints that hold no stored resource answer every valid key the same.
    { name: 'POST /video_embedding/encode_text', call: (k) => http(s.url, 'POST', '/video_embedding/encode_text', { key: k, json: { text: 'hello' } }), expect: [200, 200, 200] },
    { name: 'GET /healthz', call: (k) => http(s.url, 'GET', '/healthz', { key: k }), expect: [200, 200, 200] },
  ];

  for (const c of cases) {
    it(`${c.name}: owner ${c.expect[0]}, other owner ${c.expect[1]}, admin ${c.expect[2]}`, async () => {
      const got = [await c.call(owner), await c.call(other), await c.call(admin)].map((r) => r.status);
      expect(got).toEqual(c.expect);
    });
  }

  it('another owner cannot delete: 404, and the video and collection are still there', async () => {
    expect((await http(s.url, 'DELETE', `/videos/${ids.video}`, { key: other })).status).toBe(404);
    expect((await http(s.url, 'DELETE', `/collections/${ids.collection}`, { key: other })).status).toBe(404);
    expect((await http(s.url, 'GET', `/videos/${ids.video}/status`, { key: owner })).status).toBe(200);
    expect((await http(s.url, 'GET', `/collections/${ids.collection}`, { key: owner })).status).toBe(200);
  });

  it("another owner's id answers exactly like an id that does not exist", async () => {
    const pairs: [string, string][] = [
      [`/videos/${ids.video}/status`, '/videos/vid_doesnotexist/status'],
      [`/async_status/${ids.task}`, '/async_status/req_doesnotexist'],
    ];
    for (const [theirs, none] of pairs) {
      const a = await http(s.url, 'GET', theirs, { key: other });
      const b = await http(s.url, 'GET', none, { key: other });
      expect(a.status).toBe(404);
      expect(a.body.code).toBe(b.body.code);
      expect(a.body.detail.replace(/\S+$/, 'ID')).toBe(b.body.detail.replace(/\S+$/, 'ID'));
    }
    const search = await http(s.url, 'POST', `/collections/${ids.collection}/search`, { key: other, json: { text: 'x' } });
    const none = await http(s.url, 'POST', '/collections/col_doesnotexist/search', { key: other, json: { text: 'x' } });
    expect(search.body.detail.replace(ids.collection, 'ID')).toBe(none.body.detail.replace('col_doesnotexist', 'ID'));
  });

  it('lists only the owner\'s collections; an admin lists every owner\'s', async () => {
    const names = async (k: string) => (await http(s.url, 'GET', '/collections', { key: k })).body.map((c: { id: string }) => c.id);
    expect(await names(owner)).toContain(ids.collection);
    expect(await names(other)).not.toContain(ids.collection);
    expect(await names(admin)).toContain(ids.collection);
  });

  it('names are unique per owner: another owner may reuse one (no 409 that reveals it), the same owner may not', async () => {
    const theirs = await http(s.url, 'POST', '/collections', { key: other, json: { name: 'footage' } });
    expect(theirs.status).toBe(201);
    expect(theirs.body.collection_id).not.toBe(ids.collection);
    expect((await http(s.url, 'POST', '/collections', { key: owner, json: { name: 'footage' } })).status).toBe(409);
    // A name resolves within the caller's own library.
    const mine = await http(s.url, 'POST', '/collections/footage/search', { key: other, json: { text: 'x' } });
    expect(mine.status).toBe(200);
    expect(mine.body.results).toEqual([]);
  });

  it('tensor uploads are namespaced per owner: the same request_id from another owner never touches the first', async () => {
    const before = await s.engine.blobs.get(`${ids.tensorVideo}.bin`);
    const theirs = await http(s.url, 'POST', '/files/upload/tensors', { key: other, json: { service: 'embedding', request_id: 'same-id', video_input: tensor(48, [1, 1, 3, 4, 4]) } });
    expect(theirs.status).toBe(200);
    expect(theirs.body.r2_keys.video_input).not.toBe(ids.tensorVideo);
    expect(await s.engine.blobs.get(`${ids.tensorVideo}.bin`)).toEqual(before);
    // The owner's own re-upload of the same request_id is a conflict, never a silent overwrite.
    const again = await http(s.url, 'POST', '/files/upload/tensors', { key: owner, json: { service: 'embedding', request_id: 'same-id', video_input: tensor(48, [1, 1, 3, 4, 4]) } });
    expect(again.status).toBe(409);
    expect(await s.engine.blobs.get(`${ids.tensorVideo}.bin`)).toEqual(before);
  });
});

/**
 * Search by example over a real server on loopback, with real clips (ffmpeg) and a deterministic
 * fake embedder: pictures and moments as queries, mixing them with text, leaving the query's own
 * video out, pages, and the refusals (no query, private image_url, not a picture, a model that
 * takes no pictures, a path sent over HTTP).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from '../../src/runtime/worker.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { evalPhoto, evalPhotosDir, ffmpeg, isCI, makeStillClip, removeDir, requireSharedData, tempDir } from '../helpers/clips.js';
import { http, startTestServer, type TestServer } from '../helpers/server.js';

const haveData = isCI || requireSharedData([evalPhotosDir]);

const PHOTOS = ['opencv-doc__chicky_512.jpg', 'kphotoalbum__grand_canyon_3.jpg', 'python3-skimage__coffee.jpg', 'opencv-doc__messi5.jpg', 'kphotoalbum__snow.jpg'];

describe.skipIf(!haveData)('search by example (real clips, fake embedder)', () => {
  let s: TestServer;
  let dir: string;
  let cid: string;
  const vids: string[] = [];
  const fake = new FakeEmbedder();
  const search = (body: Record<string, unknown>) => http(s.url, 'POST', `/collections/${cid}/search`, { key: s.key, json: body });

  beforeAll(async () => {
    requireSharedData([evalPhotosDir]);
    dir = tempDir('vidembed-example-');
    s = await startTestServer({ engine: { embedderFor: () => fake, analyzers: [] } });
    cid = (await http(s.url, 'POST', '/collections', { key: s.key, json: { name: 'examples', model: fake.id } })).body.collection_id;
    for (const [i, photo] of PHOTOS.entries()) {
      const clip = await makeStillClip(evalPhoto(photo), path.join(dir, `clip${i}.mp4`), { seconds: 6 });
      vids.push((await s.engine.uploadVideo(cid, { path: clip, filename: `clip${i}.mp4` })).video_id);
    }
    await new Worker(s.engine, { idleExitMs: 0, pollMs: 20 }).run(new AbortController().signal);
  });
  afterAll(async () => {
    await s?.close();
    removeDir(dir);
  });

  it('takes a picture as the query (base64): the clip made from it comes first', async () => {
    for (const [i, photo] of PHOTOS.entries()) {
      const r = await search({ image_base64: readFileSync(evalPhoto(photo)).toString('base64'), top_k: 3 });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.results[0].video_id, photo).toBe(vids[i]);
    }
  });

  it("gives each result its moment's shot tags, as the video's segment has them", async () => {
    const r = await search({ text: 'anything', top_k: 5 });
    for (const res of r.body.results) {
      const seg = (await http(s.url, 'GET', `/videos/${res.video_id}`, { key: s.key })).body.segments.find((x: { start: number }) => x.start === res.start);
      expect(res.tags.camera_movement).toEqual({ label: seg.tags.camera_movement.label, confidence: expect.closeTo(seg.tags.camera_movement.confidence, 3) });
      expect(res.tags.camera_movement.label).toBe('static'); // still clips
    }
  });

  it('takes a moment as the query and leaves its own video out; mixes it with text and a picture', async () => {
    const like = await search({ like: { video_id: vids[0] }, top_k: 10 });
    expect(like.status).toBe(200);
    const ids = like.body.results.map((r: { video_id: string }) => r.video_id);
    expect(ids).not.toContain(vids[0]);
    expect(new Set(ids)).toEqual(new Set(vids.slice(1)));
    const at = await search({ like: { video_id: vids[0], t: 5 }, top_k: 10 });
    expect(at.body.results.map((r: { video_id: string }) => r.video_id)).not.toContain(vids[0]);
    // A mix is one query: the picture of clip 2 plus the words still find clip 2 first.
    const mixed = await search({ text: 'a cup', image_base64: readFileSync(evalPhoto(PHOTOS[2])).toString('base64'), like: { video_id: vids[4] } });
    expect(mixed.status).toBe(200);
    expect(mixed.body.results.map((r: { video_id: string }) => r.video_id)).not.toContain(vids[4]);
  });

  it('pages: offset + top_k walk the same ranking, next_offset says where the next page starts', async () => {
    const full = (await search({ text: 'anything', top_k: 5 })).body.results.map((r: { video_id: string }) => r.video_id);
    expect(full).toHaveLength(5);
    const p1 = await search({ text: 'anything', top_k: 2 });
    const p2 = await search({ text: 'anything', top_k: 2, offset: 2 });
    const p3 = await search({ text: 'anything', top_k: 2, offset: 4 });
    expect([...p1.body.results, ...p2.body.results, ...p3.body.results].map((r: { video_id: string }) => r.video_id)).toEqual(full);
    expect(p1.body.next_offset).toBe(2);
    expect(p2.body).toMatchObject({ offset: 2, next_offset: 4 });
    expect(p3.body.next_offset).toBeUndefined();
    const tooDeep = await search({ text: 'anything', top_k: 10, offset: 995 });
    expect(tooDeep.status).toBe(422);
    expect(tooDeep.body.detail[0].loc).toEqual(['body', 'offset']);
  });

  it('refuses what is not a query, with the field named', async () => {
    const none = await search({ top_k: 3 });
    expect(none.status).toBe(422);
    // A path on the server's disk is never read for a remote caller: the field is dropped.
    const pathOnly = await search({ image_path: evalPhoto(PHOTOS[0]) });
    expect(pathOnly.status).toBe(422);
    const notPicture = await search({ image_base64: Buffer.from('just some words, not a picture').toString('base64') });
    expect(notPicture.status).toBe(422);
    expect(JSON.stringify(notPicture.body)).toMatch(/image_base64 is not a picture/);
    expect(JSON.stringify(notPicture.body)).not.toMatch(/vidembed-query-|\/tmp\//);
    const privateUrl = await search({ image_url: 'http://127.0.0.1:9/photo.jpg' });
    expect(privateUrl.status).toBe(422);
    expect(privateUrl.body.detail[0].loc).toEqual(['body', 'image_url']);
    const unknown = await search({ like: { video_id: 'vid_nope' } });
    expect(unknown.status).toBe(404);
    const badT = await search({ like: { video_id: vids[0], t: -1 } });
    expect(badT.status).toBe(422);
  });

  it('refuses a picture for a model that does not take pictures', async () => {
    const textOnly = Object.assign(new FakeEmbedder('fake-text-only'), { queryKinds: ['text'] });
    const t = await startTestServer({ engine: { embedderFor: () => textOnly, analyzers: [] } });
    try {
      const c = (await http(t.url, 'POST', '/collections', { key: t.key, json: { name: 'words', model: textOnly.id } })).body.collection_id;
      const r = await http(t.url, 'POST', `/collections/${c}/search`, { key: t.key, json: { image_base64: readFileSync(evalPhoto(PHOTOS[0])).toString('base64') } });
      expect(r.status).toBe(422);
      expect(r.body.detail[0].msg).toMatch(/does not take pictures/);
    } finally {
      await t.close();
    }
  });

  it('reads a picture made by ffmpeg from a frame (PNG), as an editor would grab one', async () => {
    const png = path.join(dir, 'grab.png');
    await ffmpeg(['-y', '-v', 'error', '-i', path.join(dir, 'clip3.mp4'), '-ss', '1', '-frames:v', '1', png]);
    const r = await search({ image_base64: readFileSync(png).toString('base64'), top_k: 1 });
    expect(r.body.results[0].video_id).toBe(vids[3]);
  });
});

import { existsSync } from 'node:fs';
import { FormData, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { http, startTestServer, type TestServer, anyFileIsVideo } from '../helpers/server.js';

/** See and manage a library over a real server on loopback: details, lists, rename, file with Range, delete frees the disk. */
describe('managing collections and videos over HTTP', () => {
  let s: TestServer;
  let collectionId: string;
  const vids: string[] = [];
  const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));
  const fake = new FakeEmbedder();

  const upload = async (name: string, content: Buffer = bytes, query = '') => {
    const form = new FormData();
    form.set('file', new Blob([content]), name);
    const r = await http(s.url, 'POST', `/collections/${collectionId}/videos/upload${query}`, { key: s.key, form });
    expect(r.status).toBe(202);
    return r.body as { video_id: string; status: string; duplicate?: boolean };
  };

  beforeAll(async () => {
    s = await startTestServer({ engine: { embedderFor: () => fake, analyzers: [], checkVideo: anyFileIsVideo } });
    collectionId = (await http(s.url, 'POST', '/collections', { key: s.key, json: { name: 'footage', model: fake.id } })).body.collection_id;
    vids.push((await upload('first.mp4')).video_id);
    vids.push((await upload('second.mov', Buffer.from(bytes).reverse())).video_id);
    // The first one "processed": segments, vectors and keywords of its own.
    const v = (await fake.embedText('a dog')).vector;
    s.engine.store.segments.replaceForVideo(vids[0], collectionId, fake.dim, [{ idx: 0, start: 0, end: 4, description: 'A dog.', keywords: 'dog', vector: v }]);
    s.engine.store.videos.markProcessed(vids[0], '{}');
  });
  afterAll(async () => s?.close());

  it('shows a collection with counts by status, and lists its videos newest first, by status', async () => {
    const d = await http(s.url, 'GET', `/collections/${collectionId}`, { key: s.key });
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ id: collectionId, name: 'footage', video_count: 2, counts: { uploaded: 1, processing: 0, processed: 1, failed: 0 } });
    const all = await http(s.url, 'GET', `/collections/${collectionId}/videos`, { key: s.key });
    expect(all.body.map((v: { video_id: string }) => v.video_id)).toEqual([vids[1], vids[0]]);
    const processed = await http(s.url, 'GET', `/collections/${collectionId}/videos?status=processed&limit=5`, { key: s.key });
    expect(processed.body.map((v: { filename: string }) => v.filename)).toEqual(['first.mp4']);
    expect((await http(s.url, 'GET', `/collections/${collectionId}/videos?limit=1&offset=1`, { key: s.key })).body.map((v: { video_id: string }) => v.video_id)).toEqual([vids[0]]);
    const bad = await http(s.url, 'GET', `/collections/${collectionId}/videos?status=done`, { key: s.key });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['query', 'status']);
  });

  it('answers an upload of bytes the collection already holds with that video, unless forced', async () => {
    const dup = await upload('copy-of-first.mp4');
    expect(dup).toEqual({ video_id: vids[0], status: 'processed', duplicate: true });
    const forced = await upload('copy-of-first.mp4', bytes, '?force=true');
    expect(forced.duplicate).toBeUndefined();
    expect(forced.video_id).not.toBe(vids[0]);
    await http(s.url, 'DELETE', `/videos/${forced.video_id}`, { key: s.key });
  });

  it('renames a collection (names unique per owner) and changes its description', async () => {
    await http(s.url, 'POST', '/collections', { key: s.key, json: { name: 'taken', model: fake.id } });
    expect((await http(s.url, 'PATCH', `/collections/${collectionId}`, { key: s.key, json: { name: 'taken' } })).status).toBe(409);
    expect((await http(s.url, 'PATCH', `/collections/${collectionId}`, { key: s.key, json: {} })).status).toBe(422);
    const r = await http(s.url, 'PATCH', `/collections/${collectionId}`, { key: s.key, json: { name: 'holidays', description: 'trip' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: collectionId, name: 'holidays', description: 'trip' });
    expect((await http(s.url, 'GET', '/collections/holidays', { key: s.key })).body.id).toBe(collectionId);
  });

  it('shows a video with its segments', async () => {
    const r = await http(s.url, 'GET', `/videos/${vids[0]}`, { key: s.key });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ video_id: vids[0], collection_id: collectionId, filename: 'first.mp4', status: 'processed', size_bytes: 1000 });
    expect(r.body.segments).toEqual([expect.objectContaining({ start: 0, end: 4, description: 'A dog.' })]);
  });

  it('serves the original file, whole or by byte range (so a browser can seek)', async () => {
    const get = async (range?: string) => {
      const res = await request(`${s.url}/videos/${vids[0]}/file`, { headers: { 'x-api-key': s.key, ...(range ? { range } : {}) } });
      return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
    };
    const whole = await get();
    expect(whole.status).toBe(200);
    expect(whole.headers['accept-ranges']).toBe('bytes');
    expect(whole.headers['content-type']).toBe('video/mp4');
    expect(whole.body.equals(bytes)).toBe(true);
    const part = await get('bytes=100-199');
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe('bytes 100-199/1000');
    expect(part.body.equals(bytes.subarray(100, 200))).toBe(true);
    const open = await get('bytes=990-');
    expect(open.body.equals(bytes.subarray(990))).toBe(true);
    const suffix = await get('bytes=-10');
    expect(suffix.headers['content-range']).toBe('bytes 990-999/1000');
    expect(suffix.body.equals(bytes.subarray(990))).toBe(true);
    const outside = await get('bytes=5000-6000');
    expect(outside.status).toBe(416);
    expect(outside.headers['content-range']).toBe('bytes */1000');
    expect(JSON.parse(outside.body.toString()).code).toBe('range_not_satisfiable');
  });

  it('reprocesses a video: its job is queued again', async () => {
    const r = await http(s.url, 'POST', `/videos/${vids[0]}/reprocess`, { key: s.key });
    expect(r.status).toBe(202);
    expect(s.engine.store.db.prepare(`SELECT COUNT(*) FROM jobs WHERE ref_id = ? AND status = 'queued'`).pluck().get(vids[0])).toBe(1);
  });

  it('deletes a video: its file, segments, vectors, keywords and jobs go; the disk is freed', async () => {
    const file = (await s.engine.videoFile(vids[0])).path;
    expect(existsSync(file)).toBe(true);
    const r = await http(s.url, 'DELETE', `/videos/${vids[0]}`, { key: s.key });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: vids[0], deleted: true });
    expect(existsSync(file)).toBe(false);
    const db = s.engine.store.db;
    expect(db.prepare('SELECT COUNT(*) FROM segments WHERE video_id = ?').pluck().get(vids[0])).toBe(0);
    expect(db.prepare(`SELECT COUNT(*) FROM segments_fts WHERE segments_fts MATCH 'dog'`).pluck().get()).toBe(0);
    expect(db.prepare(`SELECT COUNT(*) FROM vec_segments_${fake.dim}`).pluck().get()).toBe(0);
    expect(db.prepare('SELECT COUNT(*) FROM jobs WHERE ref_id = ?').pluck().get(vids[0])).toBe(0);
    expect((await http(s.url, 'GET', `/videos/${vids[0]}`, { key: s.key })).status).toBe(404);
    expect((await http(s.url, 'GET', `/videos/${vids[0]}/file`, { key: s.key })).status).toBe(404);
  });

  it('deletes a collection with everything in it', async () => {
    const file = (await s.engine.videoFile(vids[1])).path;
    const r = await http(s.url, 'DELETE', `/collections/${collectionId}`, { key: s.key });
    expect(r.body).toEqual({ id: collectionId, deleted: true, videos: 1 });
    expect(existsSync(file)).toBe(false);
    expect(s.engine.store.db.prepare('SELECT COUNT(*) FROM jobs WHERE ref_id = ?').pluck().get(vids[1])).toBe(0);
    expect((await http(s.url, 'GET', `/collections/${collectionId}`, { key: s.key })).status).toBe(404);
    expect((await http(s.url, 'GET', `/videos/${vids[1]}/status`, { key: s.key })).status).toBe(404);
  });
});

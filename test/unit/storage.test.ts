/**
 * Storage that can be reclaimed (issue 21): a task's video_base64 payload is a blob, not part of
 * its row; tasks and tensor uploads can be deleted by their owner (DELETE, another owner's: 404);
 * settled tasks expire after the retention window with their blobs; partial uploads left by a dead
 * process are removed at start; a full disk (ENOSPC at the blob store) answers 507 and loses
 * nothing. In-memory catalog and blob store behind a real server on loopback.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { FormData } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEngine } from '../../src/runtime/engine.js';
import { buildServer } from '../../src/server/app.js';
import { cleanPartialUploads } from '../../src/server/uploads.js';
import { NO_SPACE_FAILURE } from '../../src/services/no-space.js';
import { joinTaskPayload } from '../../src/services/task-payloads.js';
import { MemoryBlobStore } from '../../src/store/memory/blobs.js';
import { MemoryCatalog } from '../../src/store/memory/catalog.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { anyFileIsVideo, http } from '../helpers/server.js';

/** A blob store whose disk can be made full: every write fails with ENOSPC while `full`. */
class FillableBlobStore extends MemoryBlobStore {
  full = false;
  constructor() {
    super(() => blobsNow ?? Date.now());
  }
  private check(): void {
    if (this.full) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' });
  }
  override async put(key: string, data: Buffer | Readable): Promise<void> {
    this.check();
    return super.put(key, data);
  }
  override async putFile(key: string, file: string): Promise<void> {
    this.check();
    return super.putFile(key, file);
  }
}

const RETENTION_MS = 60_000;
/** The blob store's clock, when a test moves it. */
let blobsNow: number | undefined;
const TINY_TENSOR = { data: 'AAECAwQFBgcICQoL', shape: [1, 1, 3, 2, 2], dtype: 'uint8' };

describe('storage that can be reclaimed', () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'vidembed-storage-unit-'));
  const catalog = new MemoryCatalog();
  const blobs = new FillableBlobStore();
  let engine: LocalEngine;
  let url: string;
  let alice: string;
  let bob: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    alice = (await catalog.keys.create({ name: 'alice', qps: 1000 })).key;
    bob = (await catalog.keys.create({ name: 'bob', qps: 1000 })).key;
    const embedder = new FakeEmbedder();
    engine = new LocalEngine({ home, catalog, blobs, embedderFor: () => embedder, analyzers: [], retentionMs: RETENTION_MS, maxUploadBytes: 1024 * 1024, checkVideo: anyFileIsVideo });
    const app = await buildServer(engine.services, { keys: engine.catalog.keys });
    url = await app.listen({ host: '127.0.0.1', port: 0 });
    close = async () => {
      await app.close();
      await engine.close();
    };
  });
  afterAll(async () => {
    await close?.();
    rmSync(home, { recursive: true, force: true });
  });

  const submit = (key: string, body: unknown) => http(url, 'POST', '/video_embedding/encode_video/async', { key, json: body });

  it("keeps a task's video_base64 in the blob store, not in its row, and gives the worker the request as submitted", async () => {
    const payload = Buffer.alloc(300_000, 7).toString('base64');
    const r = await submit(alice, { video_base64: payload, fps: 2 });
    expect(r.status).toBe(202);
    const row = (await catalog.tasks.byId(r.body.request_id))!;
    expect(row.request_json.length).toBeLessThan(200);
    expect(row.request_json).not.toContain(payload.slice(0, 64));
    const key = `tasks/alice/${row.id}/video_base64`;
    expect((await blobs.get(key)).toString()).toBe(payload);
    expect(await joinTaskPayload(blobs, row.request_json)).toMatchObject({ video_base64: payload, fps: 2 });
    expect(JSON.parse(row.request_json)).not.toHaveProperty('video_base64');
    // A request without a payload stays whole in its row.
    const byUrl = await submit(alice, { video_url: 'https://example.com/a.mp4' });
    expect(JSON.parse((await catalog.tasks.byId(byUrl.body.request_id))!.request_json)).toMatchObject({ video_url: 'https://example.com/a.mp4' });
  });

  it('DELETE /async_status/{id}: the owner forgets a task (row, payload, its waiting job); another owner gets 404', async () => {
    const r = await submit(alice, { video_base64: Buffer.from('not really a video').toString('base64') });
    const id = r.body.request_id as string;
    expect((await http(url, 'DELETE', `/async_status/${id}`, { key: bob })).status).toBe(404);
    expect(await catalog.tasks.byId(id)).toBeDefined();
    const del = await http(url, 'DELETE', `/async_status/${id}`, { key: alice });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ request_id: id, deleted: true });
    expect(await catalog.tasks.byId(id)).toBeUndefined();
    expect(await blobs.has(`tasks/alice/${id}/video_base64`)).toBe(false);
    expect((await http(url, 'GET', `/async_status/${id}`, { key: alice })).status).toBe(404);
    expect((await http(url, 'DELETE', `/async_status/${id}`, { key: alice })).status).toBe(404);
    // Its job was cancelled with it: nothing is left for a worker to run.
    const job = await catalog.queue.claim('w_test', 60_000);
    expect(job === undefined || job.refId !== id).toBe(true);
    if (job) await catalog.queue.release(job.id, job.token);
  });

  it('DELETE /files/upload/tensors/{request_id}: every part of the owner\'s upload goes; the id can be used again; another owner gets 404', async () => {
    const body = { service: 'embedding', request_id: 'clip-1', video_input: TINY_TENSOR, video_kwargs: { fps: 1 } };
    expect((await http(url, 'POST', '/files/upload/tensors', { key: alice, json: body })).status).toBe(200);
    expect((await http(url, 'POST', '/files/upload/tensors', { key: alice, json: body })).status).toBe(409);
    expect((await http(url, 'DELETE', '/files/upload/tensors/clip-1', { key: bob })).status).toBe(404);
    expect(await blobs.has('tensors/alice/clip-1/video_input.bin')).toBe(true);
    const del = await http(url, 'DELETE', '/files/upload/tensors/clip-1', { key: alice });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ request_id: 'clip-1', deleted: true });
    for (const part of ['video_input.bin', 'video_input.json', 'video_kwargs.json']) expect(await blobs.has(`tensors/alice/clip-1/${part}`)).toBe(false);
    expect((await http(url, 'DELETE', '/files/upload/tensors/clip-1', { key: alice })).status).toBe(404);
    expect((await http(url, 'DELETE', '/files/upload/tensors/bad%20id', { key: alice })).status).toBe(422);
    expect((await http(url, 'POST', '/files/upload/tensors', { key: alice, json: body })).status).toBe(200);
  });

  it('documents both DELETE operations in /openapi.json', async () => {
    const doc = (await http(url, 'GET', '/openapi.json')).body;
    expect(doc.paths['/async_status/{request_id}'].delete.operationId).toBe('deleteTask');
    expect(doc.paths['/files/upload/tensors/{request_id}'].delete.operationId).toBe('deleteTensors');
    expect(Object.keys(doc.paths['/files/upload/tensors/{request_id}'].delete.responses)).toContain('404');
  });

  it('expires settled tasks (rows and blobs) and tensor uploads after the retention window; waiting tasks and newer uploads stay', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await submit(alice, { video_base64: Buffer.from(`v${i}`).toString('base64') })).body.request_id);
    await catalog.tasks.complete(ids[0], { embedding: [1] });
    await catalog.tasks.fail(ids[1], 'bad video');
    expect((await http(url, 'POST', '/files/upload/tensors', { key: alice, json: { service: 'tagging', request_id: 'old-1', video_input: TINY_TENSOR } })).status).toBe(200);
    expect(await engine.services.tasks.expire(Date.now())).toEqual({ tasks: 0, tensorUploads: 0 }); // inside the window
    expect(await engine.housekeeping()).toEqual([]);
    blobsNow = Date.now() + RETENTION_MS + 500; // written later: still inside the window then
    expect((await http(url, 'POST', '/files/upload/tensors', { key: bob, json: { service: 'tagging', request_id: 'new-1', video_input: TINY_TENSOR } })).status).toBe(200);
    const later = Date.now() + RETENTION_MS + 1000;
    const expired = await engine.services.tasks.expire(later);
    expect(expired.tasks).toBeGreaterThanOrEqual(2);
    expect(expired.tensorUploads).toBeGreaterThanOrEqual(1);
    expect(await catalog.tasks.byId(ids[0])).toBeUndefined();
    expect(await catalog.tasks.byId(ids[1])).toBeUndefined();
    expect(await blobs.has(`tasks/alice/${ids[0]}/video_base64`)).toBe(false);
    expect(await blobs.has(`tasks/alice/${ids[1]}/video_base64`)).toBe(false);
    expect((await catalog.tasks.byId(ids[2]))?.status).toBe('pending');
    expect(await blobs.has(`tasks/alice/${ids[2]}/video_base64`)).toBe(true);
    expect(await blobs.bytesUnder('tensors/alice/old-1')).toBe(0);
    expect(await blobs.has('tensors/bob/new-1/video_input.bin')).toBe(true);
    blobsNow = undefined;
  });

  it('a full disk answers 507 with a clear message and stores nothing; the same requests succeed once space is back', async () => {
    const col = (await http(url, 'POST', '/collections', { key: alice, json: { name: 'disk' } })).body.collection_id as string;
    const upload = () => {
      const form = new FormData();
      form.set('file', new Blob([Buffer.from('some video bytes')]), 'clip.mp4');
      return http(url, 'POST', `/collections/${col}/videos/upload`, { key: alice, form });
    };
    const tasksBefore = catalog.store.state.tasks.size;
    blobs.full = true;
    for (const r of [await upload(), await submit(alice, { video_base64: 'AAAA' }), await http(url, 'POST', '/files/upload/tensors', { key: alice, json: { service: 'embedding', request_id: 'full-1', video_input: TINY_TENSOR } })]) {
      expect(r.status).toBe(507);
      expect(r.body).toEqual({ detail: "the server's storage is full: nothing was stored; retry once space has been freed", code: 'insufficient_storage' });
    }
    expect((await http(url, 'GET', `/collections/${col}/videos`, { key: alice })).body).toEqual([]);
    expect(catalog.store.state.tasks.size).toBe(tasksBefore);
    expect(readdirSync(path.join(home, 'uploads')).filter((f) => f.endsWith('.part'))).toEqual([]);
    blobs.full = false;
    expect((await upload()).status).toBe(202);
    expect((await submit(alice, { video_base64: 'AAAA' })).status).toBe(202);
  });

  it('retries videos that failed for lack of space once there is room; reprocess answers the new state, not the old error', async () => {
    const col = (await http(url, 'POST', '/collections', { key: alice, json: { name: 'space' } })).body.collection_id as string;
    for (const id of ['vid_full1', 'vid_full2', 'vid_bad']) {
      await catalog.videos.insert({ id, collection_id: col, filename: `${id}.mp4`, blob_key: `videos/${id}.mp4`, size_bytes: 10 });
    }
    await catalog.videos.markFailed('vid_full1', NO_SPACE_FAILURE);
    await catalog.videos.markFailed('vid_full2', NO_SPACE_FAILURE);
    await catalog.videos.markFailed('vid_bad', 'no video stream');
    expect(await engine.services.jobs.retryNoSpace(async () => false)).toBe(0); // still full: left alone
    expect((await catalog.videos.byId('vid_full1'))?.status).toBe('failed');
    expect(await engine.services.jobs.retryNoSpace(async () => true)).toBe(2);
    for (const id of ['vid_full1', 'vid_full2']) {
      const st = await http(url, 'GET', `/videos/${id}/status`, { key: alice });
      expect(st.body.status, id).toBe('processing');
      expect(st.body).not.toHaveProperty('error_message');
    }
    expect((await catalog.videos.byId('vid_bad'))?.status).toBe('failed'); // failed for its own reasons: not retried
    // By hand: the answer is the new state.
    const again = await http(url, 'POST', '/videos/vid_bad/reprocess', { key: alice });
    expect(again.status).toBe(202);
    expect(again.body.status).toBe('processing');
    expect(again.body).not.toHaveProperty('error_message');
    // A processed video too (issue 30: it answered "processed"): it is being processed again.
    await catalog.videos.insert({ id: 'vid_done', collection_id: col, filename: 'done.mp4', blob_key: 'videos/vid_done.mp4', size_bytes: 10 });
    await catalog.videos.markProcessed('vid_done', '{}');
    const redo = await http(url, 'POST', '/videos/vid_done/reprocess', { key: alice });
    expect(redo.status).toBe(202);
    expect(redo.body).toMatchObject({ video_id: 'vid_done', status: 'processing', progress: 0 });
    expect((await http(url, 'GET', '/videos/vid_done/status', { key: alice })).body.status).toBe('processing');
    const queued = new Set<string>();
    for (let job = await catalog.queue.claim('w_test', 60_000); job; job = await catalog.queue.claim('w_test', 60_000)) queued.add(job.refId);
    expect([...queued]).toEqual(expect.arrayContaining(['vid_full1', 'vid_full2', 'vid_bad', 'vid_done']));
  });
});

describe('partial uploads at start', () => {
  it('removes the parts of dead processes and of the old naming, never one a live process is writing', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vidembed-parts-'));
    try {
      mkdirSync(dir, { recursive: true });
      const live = `${process.ppid}.vid_live.part`;
      for (const f of ['2147483646.vid_dead.part', 'vid_legacy.part', live, 'keep.mp4']) writeFileSync(path.join(dir, f), 'x');
      expect(await cleanPartialUploads(dir)).toBe(2);
      expect(readdirSync(dir).sort()).toEqual(['keep.mp4', live].sort());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the per-owner storage quota', () => {
  const catalog = new MemoryCatalog();
  const blobs = new MemoryBlobStore();
  let url: string;
  let alice: string;
  let admin: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    alice = (await catalog.keys.create({ name: 'alice', qps: 1000 })).key;
    admin = (await catalog.keys.create({ name: 'ops', qps: 1000, role: 'admin', owner: 'ops' })).key;
    const embedder = new FakeEmbedder();
    const engine = new LocalEngine({
      home: path.join(os.tmpdir(), 'vidembed-quota-unit', 'never-created'),
      catalog,
      blobs,
      embedderFor: () => embedder,
      analyzers: [],
      storageQuotaBytes: 1000,
      checkVideo: anyFileIsVideo,
    });
    const app = await buildServer(engine.services, { keys: engine.catalog.keys });
    url = await app.listen({ host: '127.0.0.1', port: 0 });
    close = async () => {
      await app.close();
      await engine.close();
    };
  });
  afterAll(async () => close?.());

  const upload = (key: string, col: string, bytes: number, fill: number) => {
    const form = new FormData();
    form.set('file', new Blob([Buffer.alloc(bytes, fill)]), `v${fill}.mp4`);
    return http(url, 'POST', `/collections/${col}/videos/upload`, { key, form });
  };

  it("refuses with 413 storage_quota_exceeded what would take the owner past the quota, counting videos, tensors and task payloads; freeing makes room; admins are not limited", async () => {
    const col = (await http(url, 'POST', '/collections', { key: alice, json: { name: 'q' } })).body.collection_id as string;
    const first = await upload(alice, col, 600, 1);
    expect(first.status).toBe(202);
    expect((await upload(alice, col, 600, 1)).body.duplicate).toBe(true); // the same bytes add nothing
    const over = await upload(alice, col, 600, 2);
    expect(over.status).toBe(413);
    expect(over.body.code).toBe('storage_quota_exceeded');
    expect(over.body.detail).toMatch(/storage quota/);
    // 600 used: a 12-byte tensor fits, a 500-character payload does not.
    expect((await http(url, 'POST', '/files/upload/tensors', { key: alice, json: { service: 'embedding', request_id: 't1', video_input: TINY_TENSOR } })).status).toBe(200);
    const task = await http(url, 'POST', '/video_tagging/async', { key: alice, json: { video_base64: 'A'.repeat(500) } });
    expect(task.status).toBe(413);
    expect(task.body.code).toBe('storage_quota_exceeded');
    // Deleting frees the room.
    expect((await http(url, 'DELETE', `/videos/${first.body.video_id}`, { key: alice })).status).toBe(200);
    expect((await upload(alice, col, 600, 2)).status).toBe(202);
    // Admin keys are not limited.
    const adminCol = (await http(url, 'POST', '/collections', { key: admin, json: { name: 'big' } })).body.collection_id as string;
    expect((await upload(admin, adminCol, 5000, 3)).status).toBe(202);
  });
});

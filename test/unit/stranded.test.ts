/**
 * A worker that fails a job and dies before failing its video leaves the video "processing" with
 * no job to finish it. Workers sweep such videos and tasks when they start and when idle.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LocalEngine } from '../../src/runtime/engine.js';
import { Worker } from '../../src/runtime/worker.js';
import type { Catalog } from '../../src/store/catalog/types.js';
import { memoryEngine } from '../helpers/memory-engine.js';

describe('videos and tasks whose job ended without them', () => {
  let engine: LocalEngine;
  let store: Catalog;
  let collection: string;
  beforeEach(async () => {
    const m = memoryEngine();
    engine = m.engine;
    store = m.catalog;
    collection = (await engine.createCollection({ name: 'c', model: m.embedder.id })).collection_id;
  });
  afterEach(async () => engine.close());

  /** A video with a job that a worker claimed and failed (it died before failing the video). */
  async function strandedVideo(id: string, error: string): Promise<void> {
    await store.videos.insert({ id, collection_id: collection, filename: `${id}.mp4`, path: '/nonexistent.mp4', size_bytes: 1 });
    await store.queue.enqueue('video.process', id);
    const job = (await store.queue.claim('w_dead', 60_000))!;
    expect(job.refId).toBe(id);
    await store.videos.markProcessing(id);
    expect(await store.queue.fail(job.id, job.token, error)).toBe(true);
  }

  it('fails exactly those, with the job\'s last error; waiting, running and finished ones are left alone', async () => {
    await strandedVideo('vid_lost', 'gave up after 3 attempts');
    // Waiting for its job, and running under a live lease: not stranded.
    await store.videos.insert({ id: 'vid_waiting', collection_id: collection, filename: 'w.mp4', path: '/w.mp4', size_bytes: 1 });
    await store.queue.enqueue('video.process', 'vid_waiting');
    await store.videos.insert({ id: 'vid_running', collection_id: collection, filename: 'r.mp4', path: '/r.mp4', size_bytes: 1 });
    await store.queue.enqueue('video.process', 'vid_running');
    const claims = [(await store.queue.claim('w_live', 60_000))!, (await store.queue.claim('w_live', 60_000))!];
    const waiting = claims.find((c) => c.refId === 'vid_waiting')!;
    expect(await store.queue.release(waiting.id, waiting.token)).toBe(true);
    await store.videos.markProcessing('vid_running');
    // Processed with its job done; failed with its job failed: finished.
    await store.videos.insert({ id: 'vid_done', collection_id: collection, filename: 'd.mp4', path: '/d.mp4', size_bytes: 1 });
    await store.videos.markProcessed('vid_done', null);
    // A task whose job gave up, and one waiting.
    await store.tasks.insert('req_lost', 'embedding', { video_url: 'http://127.0.0.1:9/x.mp4' }, 'local');
    await store.queue.enqueue('task.embedding', 'req_lost');
    const tjob = (await store.queue.claim('w_dead', 60_000, ['task.embedding']))!;
    await store.queue.fail(tjob.id, tjob.token, 'gave up after 3 attempts');
    await store.tasks.insert('req_waiting', 'embedding', { video_url: 'http://127.0.0.1:9/y.mp4' }, 'local');
    await store.queue.enqueue('task.embedding', 'req_waiting');

    expect(await engine.failStranded()).toBe(2);
    expect(await engine.videoStatus('vid_lost')).toMatchObject({ status: 'failed', error_message: 'processing stopped: gave up after 3 attempts' });
    expect(await store.tasks.byId('req_lost')).toMatchObject({ status: 'failed', error_message: 'processing stopped: gave up after 3 attempts' });
    expect((await engine.videoStatus('vid_waiting')).status).toBe('uploaded');
    expect((await engine.videoStatus('vid_running')).status).toBe('processing');
    expect((await engine.videoStatus('vid_done')).status).toBe('processed');
    expect((await store.tasks.byId('req_waiting'))!.status).toBe('pending');
    // Nothing left to sweep: a second pass changes nothing.
    expect(await engine.failStranded()).toBe(0);
  });

  it('a worker sweeps when it starts', async () => {
    await strandedVideo('vid_lost', 'internal error: boom');
    await new Worker(engine, { idleExitMs: 0, pollMs: 10 }).run(new AbortController().signal);
    expect(await engine.videoStatus('vid_lost')).toMatchObject({ status: 'failed', error_message: 'processing stopped: internal error: boom' });
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError, ValidationError } from '../../src/api/errors.js';
import type { TagValue, Tags } from '../../src/api/types.js';
import { framesToTensor } from '../../src/pipeline/tensors.js';
import { Worker } from '../../src/runtime/worker.js';
import type { Frame } from '../../src/media/types.js';
import { fakeAnalysis } from '../helpers/fake-analyzer.js';
import { memoryEngine, type MemoryEngine } from '../helpers/memory-engine.js';

/*
 * Engine logic on the in-memory catalog and blob store with the fake embedder and the fake
 * analyzer: collections, search filters, tensor tasks through a worker, and the tag path (the
 * analyzer's tags per segment and aggregated over the video). Nothing here touches a file or starts
 * a process.
 */

/** `n` frames of one colour, 16x16, one per second from `t0`. */
function solid(rgb: [number, number, number], n: number, t0 = 0): Frame[] {
  return Array.from({ length: n }, (_, i) => {
    const data = new Uint8Array(16 * 16 * 3);
    for (let p = 0; p < data.length; p += 3) data.set(rgb, p);
    return { t: t0 + i, width: 16, height: 16, data };
  });
}

const DARK_RED: [number, number, number] = [150, 20, 20];
const BRIGHT_GREY: [number, number, number] = [250, 250, 250];

describe('engine on the in-memory catalog', () => {
  let m: MemoryEngine;
  beforeEach(() => {
    m = memoryEngine();
  });
  afterEach(async () => m.engine.close());

  const addVideo = async (collectionId: string, id: string, segs: Array<{ text: string; keywords?: string; shot_size?: string }> = []) => {
    await m.blobs.put(`videos/${id}.mp4`, Buffer.from(id));
    await m.catalog.videos.insert({ id, collection_id: collectionId, filename: `${id}.mp4`, blob_key: `videos/${id}.mp4`, size_bytes: id.length });
    if (segs.length === 0) return id;
    const vectors = await Promise.all(segs.map(async (s) => (await m.embedder.embedText(s.text)).vector));
    await m.catalog.segments.replaceForVideo(
      id,
      collectionId,
      m.embedder.dim,
      segs.map((s, i) => ({ idx: i, start: i * 4, end: i * 4 + 4, description: s.text, keywords: s.keywords, tags: s.shot_size ? { shot_size: s.shot_size } : undefined, vector: vectors[i] })),
    );
    await m.catalog.videos.markProcessed(id, null);
    return id;
  };

  it('collections: names unique per owner, each owner sees its own, rename conflicts, details count the videos', async () => {
    const { engine, embedder } = m;
    const mine = await engine.createCollection({ name: 'trips', description: 'summer', model: embedder.id });
    expect(mine).toMatchObject({ name: 'trips', description: 'summer', model: 'fake-16', dim: 16 });
    await expect(engine.createCollection({ name: 'trips', model: embedder.id })).rejects.toBeInstanceOf(ConflictError);
    const alice = engine.as({ owner: 'alice', admin: false });
    const hers = await alice.createCollection({ name: 'trips', model: embedder.id });
    expect((await alice.listCollections()).map((c) => c.id)).toEqual([hers.collection_id]);
    expect((await engine.listCollections()).map((c) => c.id).sort()).toEqual([mine.collection_id, hers.collection_id].sort());
    await expect(alice.getCollection(mine.collection_id)).rejects.toBeInstanceOf(NotFoundError);

    const other = await engine.createCollection({ name: 'other', model: embedder.id });
    await expect(engine.updateCollection(other.collection_id, { name: 'trips' })).rejects.toBeInstanceOf(ConflictError);
    expect(await engine.updateCollection(other.collection_id, { name: 'renamed', description: 'new' })).toMatchObject({ name: 'renamed', description: 'new' });

    await addVideo(mine.collection_id, 'vid_a', [{ text: 'a dog' }]);
    await addVideo(mine.collection_id, 'vid_b');
    expect(await engine.collectionDetails('trips')).toMatchObject({ video_count: 2, counts: { uploaded: 1, processing: 0, processed: 1, failed: 0 } });
  });

  it('deleting a collection takes its videos, segments, blobs and pending jobs along; other collections keep theirs', async () => {
    const { engine, catalog, blobs, embedder } = m;
    const gone = (await engine.createCollection({ name: 'gone', model: embedder.id })).collection_id;
    const kept = (await engine.createCollection({ name: 'kept', model: embedder.id })).collection_id;
    await addVideo(gone, 'vid_1', [{ text: 'harbour at dawn' }]);
    await addVideo(gone, 'vid_2');
    await addVideo(kept, 'vid_3', [{ text: 'harbour at night' }]);
    await catalog.queue.enqueue('video.process', 'vid_2');
    await blobs.put('thumbs/vid_1/poster.jpg', Buffer.from('jpeg'));

    expect(await engine.deleteCollection('gone')).toEqual({ id: gone, deleted: true, videos: 2 });
    expect(await catalog.collections.byId(gone)).toBeUndefined();
    expect(await catalog.videos.byId('vid_1')).toBeUndefined();
    expect(await catalog.segments.countForCollection(gone)).toBe(0);
    expect(await catalog.queue.pendingCount()).toBe(0);
    expect(blobs.keys()).toEqual(['videos/vid_3.mp4']);
    expect(await catalog.segments.countForCollection(kept)).toBe(1);
    await expect(engine.getCollection('gone')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('search: tag filters keep to the segments tagged so, keywords count, an unknown label is a 422 that lists the labels', async () => {
    const { engine, embedder } = m;
    const col = (await engine.createCollection({ name: 'lib', model: embedder.id })).collection_id;
    await addVideo(col, 'vid_wide', [{ text: 'dog on the beach', keywords: 'dog \n beach', shot_size: 'wide' }]);
    await addVideo(col, 'vid_close', [{ text: 'dog on the sofa', keywords: 'dog \n sofa', shot_size: 'close_up' }]);
    await addVideo(col, 'vid_untagged', [{ text: 'dog in the park', keywords: 'dog \n park' }]);

    const all = await engine.search(col, { text: 'dog', top_k: 10 });
    expect(all.results.map((r) => r.video_id).sort()).toEqual(['vid_close', 'vid_untagged', 'vid_wide']);
    expect((await engine.search(col, { text: 'dog', shot_size: 'wide', top_k: 10 })).results.map((r) => r.video_id)).toEqual(['vid_wide']);
    expect((await engine.search(col, { text: 'dog', shot_size: 'close_up', top_k: 10 })).results.map((r) => r.video_id)).toEqual(['vid_close']);
    expect((await engine.search(col, { text: 'dog', shot_size: 'extreme_wide', top_k: 10 })).results).toEqual([]);
    // The keyword side: "sofa" is in one segment's keywords, and that one comes first.
    expect((await engine.search(col, { text: 'sofa', top_k: 10 })).results[0].video_id).toBe('vid_close');

    const bad = await engine.search(col, { text: 'dog', shot_size: 'huge' }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ValidationError);
    expect((bad as ValidationError).message).toMatch(/must be one of .*close_up.*wide/s);
  });

  /** Uploads frames as a tensor for `service` and submits the task; its request id. */
  async function submitTensorTask(service: 'tagging' | 'embedding', frames: Frame[]): Promise<string> {
    const up = await m.engine.uploadTensors({ service, request_id: `${service}-1`, video_input: framesToTensor(frames), video_kwargs: { fps: 1 } });
    const sub = await m.engine.submitTask(service, { tensor: { video_input_key: up.r2_keys.video_input, video_kwargs_key: up.r2_keys.video_kwargs }, segment_seconds: 4 });
    expect(sub.status).toBe('pending');
    expect(await m.catalog.queue.pendingCount()).toBe(1);
    return sub.request_id;
  }

  const runWorker = () => new Worker(m.engine, { idleExitMs: 0, pollMs: 5 }).run(new AbortController().signal);

  it("tagging a tensor through a worker: the fake analyzer's tags per segment, and the video's tags aggregated by duration", async () => {
    const frames = [...solid(DARK_RED, 4, 0), ...solid(BRIGHT_GREY, 4, 4)];
    const id = await submitTensorTask('tagging', frames);
    await runWorker();

    const status = await m.engine.taskStatus(id);
    expect(status.status).toBe('completed');
    const tags = (status as unknown as { tags: Tags }).tags;
    const red = fakeAnalysis([150 / 255, 20 / 255, 20 / 255]).tags!;
    const grey = fakeAnalysis([250 / 255, 250 / 255, 250 / 255]).tags!;
    expect(tags.segments.map((s) => [s.start, s.end, (s.shot_size as TagValue).label, (s.shooting_angle as TagValue).label])).toEqual([
      [0, 3.5, 'close_up', 'high_angle'],
      [3.5, 7.5, 'wide', 'high_angle'],
    ]);
    expect(tags.segments[0].shot_size).toEqual(red.shot_size);
    expect(tags.segments[1].shot_size).toEqual(grey.shot_size);
    // The cut between the colours ends the first segment half-way between its frames (3.5 s): the
    // video's scores are the duration-weighted means, its confidence that of the winning label's segment, weighted.
    const wide = (3.5 * red.shot_size.scores.wide + 4 * grey.shot_size.scores.wide) / 7.5;
    expect(tags.shot_size!.label).toBe('wide');
    expect(tags.shot_size!.scores.wide).toBeCloseTo(wide, 4);
    expect(tags.shot_size!.scores.close_up).toBeCloseTo(1 - wide, 4);
    expect(tags.shot_size!.confidence).toBeCloseTo((4 * grey.shot_size.confidence) / 7.5, 4);
    expect(tags.shooting_angle!.label).toBe('high_angle');
    expect(tags.duration).toBe(8);
    expect(tags.model).toBe('fake-16+pixels-v1');
    // The analyzer saw each segment once, with the pixel tags the pipeline measured.
    expect(m.analyzer.seen).toHaveLength(2);
    for (const s of m.analyzer.seen) expect(s.ctx.tags?.camera_movement?.label).toEqual(expect.any(String));
    expect(await m.catalog.queue.pendingCount()).toBe(0);
  });

  it('an embedding task on a tensor: one fake vector per segment, the analysis handed to the embedder', async () => {
    const seen: unknown[] = [];
    const embed = m.embedder.embedSegment.bind(m.embedder);
    m.embedder.embedSegment = async (frames, ctx) => {
      seen.push(ctx.analysis);
      return embed(frames, ctx);
    };
    const id = await submitTensorTask('embedding', [...solid(BRIGHT_GREY, 4, 0), ...solid(DARK_RED, 4, 4)]);
    await runWorker();
    const status = (await m.engine.taskStatus(id)) as unknown as { status: string; embeddings: number[][]; segments: unknown[]; model: string; dim: number };
    expect(status).toMatchObject({ status: 'completed', model: 'fake-16', dim: 16, segments: [{ start: 0, end: 3.5 }, { start: 3.5, end: 7.5 }] });
    expect(status.embeddings).toHaveLength(2);
    for (const v of status.embeddings) expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    expect(seen).toEqual([
      { fake: expect.objectContaining({ facts: [expect.objectContaining({ label: 'grey' }), expect.objectContaining({ label: 'daylight' })] }) },
      { fake: expect.objectContaining({ facts: [expect.objectContaining({ label: 'red' }), expect.objectContaining({ label: 'night' })] }) },
    ]);
  });

  it('a task whose tensor is gone fails with a message a caller can read', async () => {
    const id = await submitTensorTask('tagging', solid(DARK_RED, 2));
    await m.blobs.deletePrefix('tensors');
    await runWorker();
    expect(await m.engine.taskStatus(id)).toMatchObject({ status: 'failed', error_message: expect.stringMatching(/tensor not found/) });
  });
});

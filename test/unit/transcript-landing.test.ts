/**
 * A transcript read right as the speech lane settles: the lane commits its state (speech done),
 * then moves the transcript into place. A read in between waits for the file instead of answering
 * "no words" with a wrong reason (seen by the lanes bench: 0 words at `processed`, 22 words 1.5 s
 * later); a done capability whose file never comes says it is missing.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { storeTranscript } from '../../src/speech/store.js';
import { memoryEngine, type MemoryEngine } from '../helpers/memory-engine.js';

describe('video transcript while the speech lane lands', () => {
  let m: MemoryEngine;
  let videoId: string;
  beforeEach(async () => {
    m = memoryEngine();
    const c = await m.engine.createCollection({ name: 'talks', model: m.embedder.id });
    videoId = 'vid_talk';
    await m.blobs.put(`videos/${videoId}.mp4`, Buffer.from('x'));
    await m.catalog.videos.insert({ id: videoId, collection_id: c.collection_id, filename: 'talk.mp4', blob_key: `videos/${videoId}.mp4`, size_bytes: 1 });
    await m.catalog.videos.markProcessed(videoId, null);
  });
  afterEach(async () => m.engine.close());

  const transcript = { engine: 'pocketsphinx/test', language: 'en', duration: 2, words: [{ w: 'hello', start: 0.1, end: 0.5, conf: 1 }] };

  it('waits for the file of a transcript whose capability is done', async () => {
    await m.catalog.analysis.set(videoId, [{ capability: 'speech', status: 'done', version: 'v' }]);
    const landing = new Promise<void>((resolve) => setTimeout(() => resolve(storeTranscript(m.blobs, videoId, transcript)), 120));
    const t = await m.engine.videoTranscript(videoId);
    await landing;
    expect(t.words.map((w) => w.w)).toEqual(['hello']);
    expect(t.reason).toBeUndefined();
  });

  it('says the transcript is missing when its capability is done and no file comes', async () => {
    await m.catalog.analysis.set(videoId, [{ capability: 'speech', status: 'done', version: 'v' }]);
    vi.useFakeTimers();
    try {
      const read = m.engine.videoTranscript(videoId);
      await vi.advanceTimersByTimeAsync(3_500); // the whole wait, on the fake clock
      const t = await read;
      expect(t.words).toEqual([]);
      expect(t.reason).toMatch(/missing/);
    } finally {
      vi.useRealTimers();
    }
  });

  it('says speech is still running when it is', async () => {
    await m.catalog.analysis.set(videoId, [{ capability: 'speech', status: 'running', version: 'v' }]);
    const t = await m.engine.videoTranscript(videoId);
    expect(t.words).toEqual([]);
    expect(t.reason).toMatch(/not heard yet/);
  });
});

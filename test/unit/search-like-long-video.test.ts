/**
 * A search by a moment of a long video (in-memory stores, the fake embedder): the video's own
 * moments are left out inside the vector search, so a video with hundreds of near-identical
 * segments (an hour-long interview) cannot fill the candidates and leave the page short.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { memoryEngine } from '../helpers/memory-engine.js';

describe('a search by a moment of a long video', () => {
  const { engine, catalog, embedder } = memoryEngine({ analyzers: [] });
  let col = '';

  beforeAll(async () => {
    col = (await engine.createCollection({ name: 'long', model: embedder.id })).collection_id;
    const video = async (id: string, texts: string[]) => {
      await catalog.videos.insert({ id, collection_id: col, filename: `${id}.mp4`, path: `/library/${id}.mp4`, size_bytes: 1 });
      await catalog.videos.setMediaInfo(id, { duration: texts.length * 4, width: 64, height: 36, fps: 25 });
      const segs = [];
      for (const [idx, text] of texts.entries()) segs.push({ idx, start: idx * 4, end: idx * 4 + 4, description: text, keywords: '', vector: (await embedder.embedText(text)).vector });
      await catalog.segments.replaceForVideo(id, col, embedder.dim, segs);
      await catalog.videos.markProcessed(id, '{}');
    };
    // 300 moments of one interview, all nearly the same picture (more than the 200 candidates a page of 10 asks for).
    await video('vid_interview', Array.from({ length: 300 }, (_, i) => `a man talking at a desk in an office, take ${i % 3}`));
    // Twelve other videos, each one moment near it.
    for (let v = 0; v < 12; v++) await video(`vid_other_${v}`, [`a man talking at a desk in an office, shot ${v}`]);
  });

  it('fills its page with other videos, never its own', async () => {
    const res = await engine.search(col, { like: { video_id: 'vid_interview', t: 10 }, top_k: 10 });
    expect(res.results).toHaveLength(10);
    for (const r of res.results) expect(r.video_id).not.toBe('vid_interview');
    // A whole-video moment (no t) too.
    const whole = await engine.search(col, { like: { video_id: 'vid_interview' }, top_k: 12 });
    expect(whole.results.map((r) => r.video_id).sort()).toEqual(Array.from({ length: 12 }, (_, v) => `vid_other_${v}`).sort());
  });
});

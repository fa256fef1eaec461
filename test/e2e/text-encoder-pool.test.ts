import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEngine } from '../../src/runtime/engine.js';
import { DEFAULT_EMBEDDER_ID, getEmbedder } from '../../src/embedders/registry.js';
import { CachedTextEncoder } from '../../src/embedders/text-encoder.js';
import { TextEncoderPool } from '../../src/embedders/text-encoder-pool.js';
import { http, startTestServer, type TestServer } from '../helpers/server.js';
import { isCI } from '../helpers/clips.js';

// The pool's threads run the compiled worker (dist/, built by `npm test`'s pretest).
const BUILT_WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../dist/src/embedders/text-encoder-worker.js');

const TEXTS = [
  'a dog on the grass',
  'people walking in a city street',
  'sunset over the sea',
  'A close-up of a Face',
  'a red car',
  'snow',
  'café crème brûlée on a table',
  'ein Hund läuft über die Wiese',
  '東京の夜景',
  'a cat 🐈 indoors!!! (maybe?)',
  'aerial view of a beach, drone shot, 4k, golden hour',
  // More than USE's 128 tokens: cut, `truncated: true`.
  Array.from({ length: 400 }, (_, i) => `word${i}`).join(' '),
];

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

describe.runIf(existsSync(BUILT_WORKER) || isCI)('text encoding on worker threads (real default embedder)', () => {
  let pool: TextEncoderPool;
  beforeAll(() => {
    pool = new TextEncoderPool({ threads: 2 });
  });
  afterAll(async () => {
    await pool?.close();
  });

  it('gives exactly the vectors (and truncation) of in-process encoding, for texts sent together', async () => {
    const local = getEmbedder(DEFAULT_EMBEDDER_ID);
    const expected = [];
    for (const t of TEXTS) expected.push(await local.embedText(t)); // one at a time, on this thread
    // All at once and twice over: the threads batch them.
    const texts = [...TEXTS, ...TEXTS];
    const got = await Promise.all(texts.map((t) => pool.embedText(DEFAULT_EMBEDDER_ID, t)));
    got.forEach((g, i) => {
      const e = expected[i % TEXTS.length];
      expect(g.vector.length).toBe(512);
      expect(maxAbsDiff(g.vector, e.vector)).toBeLessThanOrEqual(1e-6);
      expect(g.truncated).toBe(e.truncated);
    });
    expect(expected.at(-1)!.truncated).toBe(true);
    expect(pool.stats().batches).toBeLessThan(texts.length);
  });

  describe('behind a real HTTP server', () => {
    let s: TestServer;
    let serverPool: TextEncoderPool;
    let collectionId: string;
    beforeAll(async () => {
      serverPool = new TextEncoderPool({ threads: 2 });
      s = await startTestServer({ engine: { memoryIndex: true, textEncoder: new CachedTextEncoder(serverPool, 100) } });
      const c = await http(s.url, 'POST', '/collections', { key: s.key, json: { name: 'pool' } });
      expect(c.status).toBe(201);
      collectionId = c.body.collection_id;
      // Six one-segment videos whose vectors are the USE embeddings of six descriptions.
      const local = getEmbedder(DEFAULT_EMBEDDER_ID);
      const store = s.engine.store;
      for (const [i, text] of TEXTS.slice(0, 6).entries()) {
        const id = `vid_pool${i}`;
        store.videos.insert({ id, collection_id: collectionId, filename: `v${i}.mp4`, path: '/dev/null', size_bytes: 1 });
        const { vector } = await local.embedText(text);
        store.segments.replaceForVideo(id, collectionId, 512, [{ idx: 0, start: 0, end: 4, description: text, vector }]);
        store.videos.markProcessed(id, null);
      }
    });
    afterAll(async () => {
      await s?.close(); // closes the engine, which closes its text encoder (the pool)
      expect(serverPool.liveThreads).toBe(0);
    });

    it("answers search and encode_text with the pool's encodings, as in-process encoding would", async () => {
      const before = serverPool.stats().texts;
      const r = await http(s.url, 'POST', `/collections/${collectionId}/search`, { key: s.key, json: { text: 'a red car', top_k: 6 } });
      expect(r.status).toBe(200);
      expect(serverPool.stats().texts).toBe(before + 1);
      expect(r.body.results[0].video_id).toBe('vid_pool4');
      expect(r.body.results[0].similarity).toBeCloseTo(1, 3);

      // The same search by an engine on the same library that encodes on its own thread.
      const inProcess = new LocalEngine({ home: s.home, memoryIndex: true });
      try {
        const local = await inProcess.search(collectionId, { text: 'a red car', top_k: 6 });
        expect(r.body.results.map((x: { video_id: string; similarity: number }) => [x.video_id, x.similarity])).toEqual(local.results.map((x) => [x.video_id, x.similarity]));
      } finally {
        await inProcess.close();
      }

      const enc = await http(s.url, 'POST', '/video_embedding/encode_text', { key: s.key, json: { text: 'snow on the mountains' } });
      expect(enc.status).toBe(200);
      expect(serverPool.stats().texts).toBe(before + 2);
      const { vector } = await getEmbedder(DEFAULT_EMBEDDER_ID).embedText('snow on the mountains');
      expect(maxAbsDiff(enc.body.embedding, vector)).toBeLessThanOrEqual(1e-6);

      // A repeated query is answered from the cache, without the pool.
      const again = await http(s.url, 'POST', `/collections/${collectionId}/search`, { key: s.key, json: { text: '  a red   car ', top_k: 6 } });
      expect(again.body.results).toEqual(r.body.results);
      expect(serverPool.stats().texts).toBe(before + 2);
    });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TEXT_CHARS } from '../../src/runtime/engine.js';
import { memoryEngine } from '../helpers/memory-engine.js';

/**
 * Search semantics on a hand-made library (fake embedder: a text's vector is a hash of its words):
 * the order follows the number shown, the keyword side holds only analysis words, confidence is a
 * calibrated number with a label, and the response says what the user should know.
 */
describe('search: relevance, keywords, confidence, warnings', () => {
  const { engine, catalog, embedder: fake } = memoryEngine({ analyzers: [] });
  let collectionId: string;

  const addVideo = async (filename: string, segs: { text: string; keywords: string; description: string; facts?: Record<string, unknown> }[], status: 'processed' | 'uploaded' = 'processed') => {
    const id = `vid_${filename.replace(/\W/g, '')}`;
    await catalog.videos.insert({ id, collection_id: collectionId, filename, path: `/library/${filename}`, size_bytes: 1 });
    if (status === 'uploaded') return id;
    await catalog.videos.setMediaInfo(id, { duration: 3.5, width: 64, height: 36, fps: 25 });
    const vectors = await Promise.all(segs.map(async (s) => (await fake.embedText(s.text)).vector));
    await catalog.segments.replaceForVideo(
      id,
      collectionId,
      fake.dim,
      segs.map((s, i) => ({ idx: i, start: i * 4, end: i * 4 + 4, description: s.description, keywords: s.keywords, facts: s.facts, vector: vectors[i] })),
    );
    await catalog.videos.markProcessed(id, '{}');
    return id;
  };

  beforeAll(async () => {
    collectionId = (await engine.createCollection({ name: 'lib', model: fake.id })).collection_id;
    await addVideo('dog.mp4', [{ text: 'dog grass park', keywords: 'dog \n grass', description: 'A dog. Low-angle shot looking up.' }]);
    await addVideo('cat.mp4', [{ text: 'cat sofa', keywords: 'cat \n couch', description: 'A cat. Low-angle shot looking up.' }]);
    await addVideo('sign.mp4', [
      { text: 'street night', keywords: 'street \n EXIT', description: 'A street. Text on screen: "EXIT".', facts: { ocr: { version: '1', facts: [{ kind: 'text', label: 'EXIT', confidence: 0.9 }] } } },
    ]);
    await addVideo('sea.mp4', [
      { text: 'sea waves', keywords: 'sea', description: 'The sea.' },
      { text: 'boat sea harbour', keywords: 'boat \n sea', description: 'A boat on the sea.' },
    ]);
  });
  afterAll(async () => engine.close());

  it('orders results by the relevance it shows (0–1, the ranking probability), one per video, with a label and evidence by kind', async () => {
    const res = await engine.search(collectionId, { text: 'a dog on the grass', top_k: 10 });
    expect(res.results[0].filename).toBe('dog.mp4');
    const rel = res.results.map((r) => r.relevance!);
    expect(rel).toEqual([...rel].sort((a, b) => b - a));
    expect(new Set(res.results.map((r) => r.video_id)).size).toBe(res.results.length);
    for (const r of res.results) {
      expect(r.relevance).toBeGreaterThanOrEqual(0);
      expect(r.relevance).toBeLessThanOrEqual(1);
      expect(r.confidence).toBeGreaterThanOrEqual(0);
      expect(r.confidence).toBeLessThanOrEqual(1);
      expect(r.confidence_label).toBe(r.confidence! >= 0.7 ? 'high' : r.confidence! >= 0.4 ? 'medium' : 'low');
      // No talk here: what matched is seen (or written), each kind with its own probability.
      expect(r.kinds.length).toBeGreaterThan(0);
      expect(r.kinds).not.toContain('said');
      for (const k of r.kinds) expect(r.evidence[k]!.probability).toBeGreaterThanOrEqual(0);
    }
    expect(res.results[0].evidence.seen?.matched).toEqual(expect.arrayContaining(['dog']));
    expect(res.results[0].confidence!).toBeGreaterThan(res.results[1].confidence!);
  });

  it("matches words analysis found (text on screen), never the engine's own template wording", async () => {
    const exit = await engine.search(collectionId, { text: 'EXIT', top_k: 1 }, { explain: true });
    expect(exit.results[0].filename).toBe('sign.mp4');
    expect(exit.results[0].matched_words).toEqual(['exit']);
    // Text on screen is written evidence, with the line that was read.
    expect(exit.results[0].kinds).toContain('written');
    expect(exit.results[0].evidence.written).toMatchObject({ matched: ['exit'], snippet: expect.stringMatching(/EXIT/) });
    expect(exit.results[0].evidence.written!.parts).toHaveProperty('sure_words');
    // "looking" is only in the descriptions' camera wording: no word matches anything.
    const looking = await engine.search(collectionId, { text: 'looking', top_k: 10 }, { explain: true });
    for (const r of looking.results) {
      expect(r.kinds).toEqual(['seen']);
      expect(r.evidence.seen!.matched).toBeUndefined();
      expect(r.matched_words).toBeUndefined();
    }
  });

  it('reads "black and white" as one thing: monochrome footage, not a colour picture of black and white things', async () => {
    const { engine: e, catalog: c, embedder: f } = memoryEngine({ analyzers: [] });
    const col = (await e.createCollection({ name: 'bw', model: f.id })).collection_id;
    const add = async (id: string, text: string, keywords: string) => {
      await c.videos.insert({ id, collection_id: col, filename: `${id}.mp4`, path: `/library/${id}.mp4`, size_bytes: 1 });
      await c.videos.setMediaInfo(id, { duration: 4, width: 64, height: 36, fps: 25 });
      // Both vectors are the same text: only the keyword side tells them apart.
      await c.segments.replaceForVideo(id, col, f.dim, [{ idx: 0, start: 0, end: 4, description: text, keywords, vector: (await f.embedText('a street')).vector }]);
      await c.videos.markProcessed(id, '{}');
    };
    await add('zebra', 'A zebra, black and white stripes, green grass.', 'zebra \n black \n white \n green');
    await add('film', 'An old street.', 'street \n black and white \n monochrome \n grayscale');
    for (const q of ['black and white footage', 'a B&W street', 'black-and-white film']) {
      const res = await e.search(col, { text: q, top_k: 2 }, { explain: true });
      expect(res.results.map((r) => r.filename)).toEqual(['film.mp4', 'zebra.mp4']);
      expect(res.results[0].matched_words).toContain('monochrome');
      expect(res.results[1].matched_words ?? []).not.toContain('black');
    }
    await e.close();
  });

  it('finds the best moment of a video, inside the video', async () => {
    const res = await engine.search(collectionId, { text: 'a boat in the harbour', top_k: 1 });
    expect(res.results[0]).toMatchObject({ filename: 'sea.mp4', start: 4 });
    // The segment runs 4–8 s but the video is 3.5 s long: the moment is clamped to the video.
    expect(res.results[0].end).toBeLessThanOrEqual(4);
  });

  it('leaves out results under min_confidence and says when every match is weak', async () => {
    const all = await engine.search(collectionId, { text: 'a dog on the grass', top_k: 10 });
    const cut = (all.results[0].confidence! + all.results[1].confidence!) / 2;
    const strong = await engine.search(collectionId, { text: 'a dog on the grass', top_k: 10, min_confidence: cut });
    expect(strong.results.map((r) => r.filename)).toEqual(all.results.filter((r) => r.confidence! >= cut).map((r) => r.filename));
    expect(strong.results.length).toBeLessThan(all.results.length);
    const nothing = await engine.search(collectionId, { text: 'quantum chromodynamics lecture', top_k: 10 });
    expect(nothing.results.map((r) => r.confidence_label)).not.toContain('high');
    expect(nothing.results.every((r) => r.confidence! < 0.4)).toBe(true);
    expect(nothing.warnings).toContain('no strong match: every result has low confidence');
    expect(all.warnings ?? []).not.toContain('no strong match: every result has low confidence');
    await expect(engine.search(collectionId, { text: 'x', min_confidence: 2 })).rejects.toMatchObject({ status: 422 });
  });

  it('warns about a script the text model does not read, a cut query, and videos still processing', async () => {
    const ja = await engine.search(collectionId, { text: '海辺の犬の写真', top_k: 3 });
    expect(ja.warnings?.join(' ')).toMatch(/reads English.*Chinese\/Japanese|Japanese/);
    const en = await engine.search(collectionId, { text: 'a dog', top_k: 3 });
    expect((en.warnings ?? []).join(' ')).not.toMatch(/reads English/);
    const long = await engine.search(collectionId, { text: 'dog '.repeat(MAX_TEXT_CHARS), top_k: 1 });
    expect(long.truncated).toBe(true);
    expect(long.warnings?.join(' ')).toMatch(/cut/);
    await addVideo('pending.mp4', [], 'uploaded');
    const pending = await engine.search(collectionId, { text: 'a dog', top_k: 3 });
    expect(pending.warnings).toContain('1 video is still processing: results cover the 4 processed');
  });

  it('refuses an unknown tag value with the allowed ones', async () => {
    for (const [field, value] of [['shot_size', 'closeup'], ['camera_movement', 'zoom'], ['shooting_angle', 'low']] as const) {
      const err = await engine.search(collectionId, { text: 'x', [field]: value }).catch((e) => e);
      expect(err).toMatchObject({ status: 422 });
      expect(err.issues[0].loc).toEqual(['body', field]);
      expect(err.issues[0].msg).toMatch(/^must be one of /);
    }
    expect((await engine.search(collectionId, { text: 'dog', shot_size: 'close_up' })).results).toEqual([]);
  });
});

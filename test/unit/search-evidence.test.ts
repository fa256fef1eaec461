/**
 * Search with pictures and talk in one library (in-memory stores, the fake embedder): what is said
 * is its own evidence. A talk clip never comes up for a picture query by a common word it says or
 * by a sound-alike; a rare phrase said as itself finds it, as `said`, with a window that holds the
 * words; `seen` searches leave what is said out.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { keywordsOf, storedFacts } from '../../src/analysis/keywords.js';
import { soundtrackSegment } from '../../src/speech/analyzer.js';
import { storeTranscript } from '../../src/speech/store.js';
import type { SpokenWord } from '../../src/speech/types.js';
import { memoryEngine } from '../helpers/memory-engine.js';

const said = (text: string, from: number): SpokenWord[] => text.split(' ').map((w, i) => ({ w, start: from + i * 0.4, end: from + i * 0.4 + 0.35, conf: 0.9 }));

describe('seen, said, written in one library', () => {
  const { engine, catalog, blobs, embedder } = memoryEngine({ analyzers: [] });
  let col = '';

  beforeAll(async () => {
    col = (await engine.createCollection({ name: 'mixed', model: embedder.id })).collection_id;
    const picture = async (name: string, text: string, object: string) => {
      const id = `vid_${name}`;
      await catalog.videos.insert({ id, collection_id: col, filename: `${name}.mp4`, path: `/library/${name}.mp4`, size_bytes: 1 });
      await catalog.videos.setMediaInfo(id, { duration: 6, width: 64, height: 36, fps: 25 });
      const analysis = { detector: { facts: [{ kind: 'object', label: object, confidence: 0.85 }] } };
      await catalog.segments.replaceForVideo(id, col, embedder.dim, [
        { idx: 0, start: 0, end: 4, description: text, keywords: keywordsOf(analysis), facts: storedFacts(analysis, []), vector: (await embedder.embedText(text)).vector },
      ]);
      await catalog.videos.markProcessed(id, '{}');
    };
    await picture('cans', 'a can of soup on a shelf', 'can');
    await picture('rocket', 'a rocket on a launch pad', 'rocket');
    // A phone prompt under a test picture: what it says is in its transcript and its spoken terms.
    const id = 'vid_phone';
    const words = said('please hold while i can transfer you to the quarterly revenue conference only participant', 1);
    await catalog.videos.insert({ id, collection_id: col, filename: 'phone.mp4', path: '/library/phone.mp4', size_bytes: 1 });
    await catalog.videos.setMediaInfo(id, { duration: 8, width: 64, height: 36, fps: 25 });
    const heard = { hasAudio: true, levels: Array(80).fill({ db: -20, flatness: 0.3, hf: 0.1 }), transcript: { engine: 'fake', language: 'en', words, duration: 8 } };
    const segs = [];
    for (const [idx, [start, end]] of [[0, 4], [4, 8]].entries()) {
      const analysis = { speech: soundtrackSegment(heard, start, end) };
      segs.push({ idx, start, end, description: 'Colour bars.', keywords: keywordsOf(analysis), facts: storedFacts(analysis, []), vector: (await embedder.embedText('colour bars test card')).vector });
    }
    await catalog.segments.replaceForVideo(id, col, embedder.dim, segs);
    await catalog.videos.markProcessed(id, JSON.stringify({ cuts: [{ t: 4, confidence: 0.9 }] }));
    await storeTranscript(blobs, id, heard.transcript);
  });

  it('never lets a common word said in a talk clip outrank a picture of it', async () => {
    const res = await engine.search(col, { text: 'a can', top_k: 5 });
    expect(res.results[0].filename).toBe('cans.mp4');
    expect(res.results[0].kinds).toEqual(['seen']);
    for (const r of res.results) expect(r.kinds).not.toContain('said');
  });

  it('counts a phrase of rare words said as itself, as said, its window holding every matched word', async () => {
    const res = await engine.search(col, { text: 'quarterly revenue conference', top_k: 5 }, { explain: true });
    const phone = res.results.find((r) => r.filename === 'phone.mp4')!;
    expect(phone.kinds).toContain('said');
    expect(phone.evidence.said).toMatchObject({ matched: ['quarterly', 'revenue', 'conference'], snippet: expect.stringContaining('*quarterly revenue conference*') });
    expect(phone.evidence.said!.parts).toMatchObject({ exact: 1, content_words: 3 });
    expect(phone.start).toBeLessThanOrEqual(phone.said!.start);
    expect(phone.end).toBeGreaterThanOrEqual(phone.said!.end); // the words run past the cut at 4 s
    expect(phone.said!.end).toBeGreaterThan(4);
    expect(res.results[0].filename).toBe('phone.mp4');
  });

  it('finds what is said with said, and leaves it out with seen', async () => {
    const s = await engine.search(col, { said: 'while i can', top_k: 5 });
    expect(s.results.map((r) => r.filename)).toEqual(['phone.mp4']);
    expect(s.results[0].kinds).toEqual(['said']);
    const seen = await engine.search(col, { seen: 'quarterly revenue conference', top_k: 5 });
    for (const r of seen.results) expect(r.kinds).toEqual(['seen']);
  });
});

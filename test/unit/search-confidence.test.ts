import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confidenceOf, sureWordShare, wordEvidence, WEAK_GUESS } from '../../src/search/confidence.js';
import { SEARCH_WEIGHTS } from '../../src/models/perception/weights.js';
import { memoryEngine } from '../helpers/memory-engine.js';

/**
 * A result's confidence is its own: the same moment for the same query gets the same confidence
 * with or without a filter, on any page and whatever the page size; a weak classifier guess that
 * happens to name the query cannot make a result high; `explain` says what drove it. In-memory
 * stores and the fake embedder (a text's vector is a hash of its words).
 */
describe('search confidence depends on the result alone', () => {
  const { engine, catalog, embedder } = memoryEngine({ analyzers: [] });
  let col = '';

  const thing = (label: string, confidence: number) => ({ kind: 'thing', label, confidence });
  const add = async (name: string, text: string, keywords: string, shot: string, facts?: Record<string, unknown>) => {
    const id = `vid_${name}`;
    await catalog.videos.insert({ id, collection_id: col, filename: `${name}.mp4`, path: `/library/${name}.mp4`, size_bytes: 1 });
    await catalog.videos.setMediaInfo(id, { duration: 8, width: 64, height: 36, fps: 25 });
    const vector = (await embedder.embedText(text)).vector;
    await catalog.segments.replaceForVideo(id, col, embedder.dim, [{ idx: 0, start: 0, end: 4, description: text, keywords, facts, tags: { shot_size: shot }, vector }]);
    await catalog.videos.markProcessed(id, '{}');
  };

  beforeAll(async () => {
    col = (await engine.createCollection({ name: 'lib', model: embedder.id })).collection_id;
    const animals = ['dog', 'cat', 'horse', 'goat', 'duck', 'fox'];
    const places = ['beach', 'grass', 'snow', 'street', 'field', 'sofa'];
    let n = 0;
    for (const a of animals) {
      for (const p of places.slice(0, 3)) {
        const shot = n % 3 === 0 ? 'wide' : n % 3 === 1 ? 'close_up' : 'medium';
        await add(`${a}_${p}_${n}`, `a ${a} on the ${p}`, `${a} \n ${p}`, shot, { detector: { version: '1', facts: [{ kind: 'object', label: a, confidence: 0.4 + 0.1 * (n % 5) }] } });
        n++;
      }
    }
    // The same picture twice (same vector): a hare the classifier also guessed, weakly or surely, was a monkey.
    await add('hare_weak_guess', 'a hare on the grass', 'hare \n monkey \n grass', 'wide', { imagenet: { version: '1', facts: [thing('hare', 0.62), thing('monkey', 0.07)] } });
    await add('hare_sure', 'a hare on the grass', 'hare \n monkey \n grass', 'wide', { imagenet: { version: '1', facts: [thing('hare', 0.62), thing('monkey', 0.9)] } });
  });
  afterAll(async () => engine.close());

  const byVideo = (results: { video_id: string; confidence?: number; confidence_label?: string }[]) => new Map(results.map((r) => [r.video_id, [r.confidence, r.confidence_label]]));

  it('is the same with and without a filter', async () => {
    for (const text of ['a dog on the beach', 'fox', 'a duck in the snow', 'a hare on the grass']) {
      const all = byVideo((await engine.search(col, { text, top_k: 50 })).results);
      for (const shot_size of ['wide', 'close_up', 'medium']) {
        const filtered = (await engine.search(col, { text, top_k: 50, shot_size })).results;
        expect(filtered.length).toBeGreaterThan(0);
        for (const r of filtered) expect([r.confidence, r.confidence_label], `${text} / ${shot_size}: ${r.filename}`).toEqual(all.get(r.video_id));
      }
    }
  });

  it('is the same on every page and whatever the page size', async () => {
    const text = 'a goat on the grass';
    const full = (await engine.search(col, { text, top_k: 20 })).results;
    expect(full.length).toBe(20);
    const pages = [];
    for (let offset = 0; offset < 20; offset += 4) pages.push(...(await engine.search(col, { text, top_k: 4, offset })).results);
    expect(pages.map((r) => [r.video_id, r.confidence, r.confidence_label])).toEqual(full.map((r) => [r.video_id, r.confidence, r.confidence_label]));
    const first = (await engine.search(col, { text, top_k: 1 })).results[0];
    expect([first.video_id, first.confidence]).toEqual([full[0].video_id, full[0].confidence]);
  });

  it('a weak classifier guess naming the query does not make a result high; a sure one counts', async () => {
    const res = await engine.search(col, { text: 'a monkey', top_k: 50 }, { explain: true });
    const weak = res.results.find((r) => r.filename === 'hare_weak_guess.mp4')!;
    const sure = res.results.find((r) => r.filename === 'hare_sure.mp4')!;
    expect(weak.similarity).toBe(sure.similarity); // the same picture: only the guess differs
    expect(weak.confidence_label).not.toBe('high');
    expect(sure.confidence!).toBeGreaterThan(weak.confidence!);
    // The weak guess adds nothing: the same as a moment that has no word of the query (a one-word query).
    expect(weak.confidence).toBeCloseTo(confidenceOf({ similarity: weak.similarity, sureWords: 0, classified: true, words: 1 }), 3);
    // --explain says what drove it.
    expect(weak.confidence_reason).toMatch(/"monkey" \(monkey, 7%: a weak guess, not counted\)/);
    expect(sure.confidence_reason).toMatch(/"monkey" \(monkey, 90%\)/);
  });

  it('no single guess under the weak-guess bar turns a result high, at any similarity', () => {
    const idf = new Map([['monkey', 2.5]]);
    for (let s = -0.2; s <= 1; s += 0.01) {
      for (const classified of [false, true]) {
        const without = confidenceOf({ similarity: s, sureWords: 0, classified });
        // Without a word analysis was sure of, nothing is high, however close the picture.
        expect(without).toBeLessThan(SEARCH_WEIGHTS.highConfidence);
        for (const p of [0.01, 0.07, 0.15, WEAK_GUESS - 0.001]) {
          const found = wordEvidence(['monkey'], [thing('monkey', p)]);
          expect(confidenceOf({ similarity: s, sureWords: sureWordShare(idf, found), classified })).toBe(without);
        }
      }
    }
  });

  it('counts a found word by the surest fact naming it, stemmed like the keyword index', () => {
    const found = wordEvidence(['dogs', 'squirrel', 'exit'], [
      { kind: 'object', label: 'dog', confidence: 0.5, alternatives: [{ label: 'cat', confidence: 0.3 }] },
      { kind: 'thing', label: 'fox squirrel', confidence: 0.8 },
      { kind: 'thing', label: 'dog sled', confidence: 0.2 },
    ]);
    expect(found.get('dogs')).toEqual({ strength: 0.5, label: 'dog' });
    expect(found.get('squirrel')).toEqual({ strength: 0.8, label: 'fox squirrel' });
    // A keyword with no fact behind it (words given with a tensor) is taken as said.
    expect(found.get('exit')).toEqual({ strength: 1 });
    const idf = new Map([['dogs', 1], ['squirrel', 1], ['exit', 2]]);
    expect(sureWordShare(idf, found)).toBeCloseTo((0.5 + 0.8 + 2) / 4, 6);
  });
});

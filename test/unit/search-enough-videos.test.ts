import { describe, expect, it } from 'vitest';
import { hybridSearch, type HybridSearchInput } from '../../src/search/hybrid.js';
import type { SegmentsCatalog } from '../../src/store/catalog/types.js';
import { MemoryCatalog } from '../../src/store/memory/catalog.js';

/*
 * A search asks the catalog for its k candidates with `videos`: once the nearest hold the videos
 * its shortlist weighs, the catalog may stop reading (pgvector does: a third fewer rows at 1M;
 * SegmentsCatalog.candidates in src/store/catalog/types.ts). The claim that makes it safe: the
 * answers are the same as with all k. Here a catalog that returns the least the contract allows
 * (the nearest up to the one that brings the count to `videos`, and the `also` segments) answers
 * every kind of search exactly as the in-memory catalog that returns all k.
 */

const DIM = 8;
const WORDS = 'dog cat car tree sea sky beach road night snow boat bird'.split(' ');

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

/** The least `candidates` may return with `videos`: the nearest up to the one that brings the count to `videos`, plus `also`. */
function leastCatalog(inner: SegmentsCatalog, cut: { asked: number; cut: number }): SegmentsCatalog {
  const least: SegmentsCatalog['candidates'] = async (collectionId, dim, query, k, filter, also, exclude, videos) => {
    if (videos === undefined) return inner.candidates(collectionId, dim, query, k, filter, also, exclude);
    cut.asked++;
    const nearest = [...(await inner.candidates(collectionId, dim, query, k, filter, [], exclude))].sort((a, b) => b[1].similarity - a[1].similarity || a[0] - b[0]);
    const videoOf = await inner.videosOf(collectionId, nearest.map(([id]) => id));
    const seen = new Set<string>();
    let end = nearest.length;
    for (const [i, [id]] of nearest.entries()) {
      if (seen.add(videoOf.get(id)!).size === videos) {
        end = i + 1;
        break;
      }
    }
    if (end < nearest.length) cut.cut++;
    const out = new Map(nearest.slice(0, end));
    for (const [id, s] of await inner.candidates(collectionId, dim, query, 0, filter, also, exclude)) out.set(id, s);
    return out;
  };
  return Object.assign(Object.create(inner) as SegmentsCatalog, { candidates: least });
}

describe('search: candidates read until the shortlist is held answer as all k', () => {
  it('text, moments (own video left out), filters, pages and explain: the same results', async () => {
    const r = rng(20261201);
    const gauss = () => Math.sqrt(-2 * Math.log(r() || 1e-9)) * Math.cos(2 * Math.PI * r());
    const unit = (v: number[]) => {
      const n = Math.hypot(...v) || 1;
      return new Float32Array(v.map((x) => x / n));
    };
    const catalog = new MemoryCatalog();
    const col = (await catalog.collections.insert({ name: 'enough', description: '', model: 'fake', dim: DIM })).id;
    // 400 videos of 1 to 30 moments, each video near a centre of its own (near-identical moments
    // fill the nearest in long videos), some words each, a shot size.
    const centres = Array.from({ length: 12 }, () => unit(Array.from({ length: DIM }, gauss)));
    const segmentsOf = new Map<string, number[]>();
    for (let v = 0; v < 400; v++) {
      const id = `vid_${v}`;
      const centre = centres[Math.floor(r() * centres.length)];
      const spread = 0.05 + 0.4 * r();
      const own = unit([...centre].map((x) => x + spread * gauss()));
      const n = 1 + Math.floor(r() ** 2 * 30);
      await catalog.videos.insert({ id, collection_id: col, filename: `${id}.mp4`, path: `/library/${id}.mp4`, size_bytes: 1 });
      await catalog.segments.replaceForVideo(
        id,
        col,
        DIM,
        Array.from({ length: n }, (_, idx) => {
          const words = `${WORDS[Math.floor(r() * WORDS.length)]} ${WORDS[Math.floor(r() * WORDS.length)]}`;
          return { idx, start: idx * 4, end: idx * 4 + 4, description: words, keywords: words, tags: { shot_size: r() < 0.3 ? 'close' : 'wide' }, vector: unit([...own].map((x) => x + 0.1 * gauss())) };
        }),
      );
      segmentsOf.set(id, [...(await catalog.segments.listForVideo(id))].map((s) => s.id));
    }
    const cut = { asked: 0, cut: 0 };
    const least = leastCatalog(catalog.segments, cut);
    const inputs: HybridSearchInput[] = [];
    for (let i = 0; i < 20; i++) {
      const q = unit(Array.from({ length: DIM }, gauss));
      const base = { collectionId: col, dim: DIM, queryVector: q, filter: {}, explain: true };
      inputs.push({ ...base, text: '', topK: 10, example: true });
      inputs.push({ ...base, text: `${WORDS[i % WORDS.length]} ${WORDS[(i * 5) % WORDS.length]}`, topK: 10 });
      inputs.push({ ...base, text: WORDS[(i * 3) % WORDS.length], topK: 5 + (i % 20), filter: { shot_size: 'close' } });
      // A moment as the query: its video left out, inside the search and from the results.
      const own = `vid_${(i * 37) % 400}`;
      inputs.push({ ...base, text: '', topK: 10, example: true, excludeVideoIds: new Set([own]), excludeSegmentIds: segmentsOf.get(own) });
    }
    for (const input of inputs) {
      const all = await hybridSearch(catalog.segments, catalog.videos, input);
      const fewer = await hybridSearch(least, catalog.videos, input);
      expect(fewer).toEqual(all);
      expect(all.length).toBeGreaterThan(0);
    }
    // Every search here may stop early (no min_confidence, no common word, no picture check), and
    // many did read fewer than k: the comparison is not between two identical reads.
    // (A filtered search asks twice: its rivals are measured without the filter.)
    expect(cut.asked).toBe(inputs.length + inputs.filter((i) => Object.keys(i.filter).length).length);
    expect(cut.cut).toBeGreaterThan(cut.asked / 4);
  });

  it('asks for all k where more than the shortlist counts: min_confidence weighs every video', async () => {
    const catalog = new MemoryCatalog();
    const col = (await catalog.collections.insert({ name: 'all', description: '', model: 'fake', dim: DIM })).id;
    await catalog.videos.insert({ id: 'vid_a', collection_id: col, filename: 'a.mp4', path: '/library/a.mp4', size_bytes: 1 });
    await catalog.segments.replaceForVideo('vid_a', col, DIM, [{ idx: 0, start: 0, end: 4, description: 'dog', vector: new Float32Array([1, 0, 0, 0, 0, 0, 0, 0]) }]);
    const cut = { asked: 0, cut: 0 };
    const least = leastCatalog(catalog.segments, cut);
    const q = new Float32Array([1, 0.1, 0, 0, 0, 0, 0, 0]);
    await hybridSearch(least, catalog.videos, { collectionId: col, dim: DIM, queryVector: q, text: '', topK: 10, filter: {}, explain: false, minConfidence: 0.1 });
    expect(cut.asked).toBe(0);
    await hybridSearch(least, catalog.videos, { collectionId: col, dim: DIM, queryVector: q, text: '', topK: 10, filter: {}, explain: false });
    expect(cut.asked).toBe(1);
  });
});

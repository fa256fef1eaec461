import { describe, expect, it } from 'vitest';
import { hybridSearch, KEYWORD_LIST_LIMIT, type HybridSearchInput } from '../../src/search/hybrid.js';
import { MemoryCatalog } from '../../src/store/memory/catalog.js';
import type { SegmentsCatalog } from '../../src/store/catalog/types.js';

const DIM = 4;
const unit = (...v: number[]) => {
  const n = Math.hypot(...v);
  return new Float32Array(v.map((x) => x / n));
};

/**
 * A word held by more than KEYWORD_LIST_LIMIT segments of the collection is not listed: it is looked
 * up among the candidates (src/search/hybrid.ts). Before, its 2,000 "best" matches were listed — the
 * oldest ones when they tied — and a near moment that holds the word but came later got no bonus.
 */
describe('search: a word too common to list counts where the candidates hold it', () => {
  it('the near moment that holds a common word outranks a nearer one without it; the common word is never listed whole', async () => {
    const catalog = new MemoryCatalog();
    const col = (await catalog.collections.insert({ name: 'common', description: '', model: 'fake', dim: DIM })).id;
    const add = async (id: string, segs: Array<{ keywords: string; vector: Float32Array }>) => {
      await catalog.videos.insert({ id, collection_id: col, filename: `${id}.mp4`, path: '/dev/null', size_bytes: 1 });
      await catalog.segments.replaceForVideo(id, col, DIM, segs.map((s, idx) => ({ idx, start: idx, end: idx + 1, description: s.keywords, keywords: s.keywords, vector: s.vector })));
    };
    // 2,100 old moments that hold "tree", far from the query; 19,000 others so that "tree" stays
    // selective (held by ≤ 10 % of the library).
    for (let v = 0; v < 100; v++) await add(`old_${v}`, Array.from({ length: 21 }, () => ({ keywords: 'tree bark', vector: unit(0, 0, 1, 0.2) })));
    for (let v = 0; v < 190; v++) await add(`other_${v}`, Array.from({ length: 100 }, () => ({ keywords: 'river stone', vector: unit(0, 0, 0.2, 1) })));
    await add('nearest', [{ keywords: 'sky cloud', vector: unit(1, 0.1, 0, 0) }]);
    await add('holder', [{ keywords: 'tree leaf', vector: unit(1, 0.3, 0, 0) }]);

    const listed: string[][] = [];
    const segments = catalog.segments;
    const spy: SegmentsCatalog = Object.assign(Object.create(segments) as SegmentsCatalog, {
      termMatches: (c: string, terms: string[], limit: number, filter?: Record<string, string>) => {
        listed.push(terms);
        return segments.termMatches(c, terms, limit, filter);
      },
    });
    const input: HybridSearchInput = { collectionId: col, dim: DIM, queryVector: unit(1, 0, 0, 0), text: 'tree', topK: 5, filter: {}, explain: true };
    const lists = await segments.termLists(col, ['tree', 'leaf'], KEYWORD_LIST_LIMIT);
    expect(lists.get('tree')).toBeNull();
    expect(lists.get('leaf')).toEqual({ total: 1, ids: expect.any(Array) });
    expect(await segments.selectiveTerms(['tree'])).toEqual(['tree']);

    const results = await hybridSearch(spy, catalog.videos, input);
    expect(results.map((r) => r.video_id).slice(0, 2)).toEqual(['holder', 'nearest']);
    expect(results[0].relevance).toBeGreaterThan(results[1].relevance);
    // The ranking of all of "tree"'s matches is never asked for (the memory catalog lists through
    // termMatches only for words under the limit).
    expect(listed.flat()).not.toContain('tree');

  });
});

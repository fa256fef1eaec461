import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/index.js';
import { schemaVersion } from '../../src/store/migrations.js';
import { ftsQuery } from '../../src/search/hybrid.js';

function unit(dim: number, hot: number[]): Float32Array {
  const v = new Float32Array(dim);
  for (const i of hot) v[i] = 1;
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

describe('store', () => {
  let dir: string;
  let store: Store;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vidembed-store-'));
    store = Store.open(path.join(dir, 'db.sqlite'));
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('migrates once and reopens at the same version', () => {
    const v = schemaVersion(store.db);
    expect(v).toBeGreaterThanOrEqual(1);
    store.close();
    store = Store.open(path.join(dir, 'db.sqlite'));
    expect(schemaVersion(store.db)).toBe(v);
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
  });

  it('lists collections newest first and enforces unique names', () => {
    store.collections.insert({ name: 'a', description: '', model: 'm', dim: 4 });
    store.collections.insert({ name: 'b', description: 'd', model: 'm', dim: 4 });
    expect(store.collections.list(10, 0).map((c) => c.name)).toEqual(['b', 'a']);
    expect(store.collections.list(1, 1).map((c) => c.name)).toEqual(['a']);
    expect(() => store.collections.insert({ name: 'a', description: '', model: 'm', dim: 4 })).toThrow(/a collection named "a" already exists/);
  });

  it('stores segments with vectors and descriptions, searches them per collection, and replaces on redo', () => {
    const c1 = store.collections.insert({ name: 'c1', description: '', model: 'm', dim: 8 });
    const c2 = store.collections.insert({ name: 'c2', description: '', model: 'm', dim: 8 });
    store.videos.insert({ id: 'v1', collection_id: c1.id, filename: 'a.mp4', path: '/x', size_bytes: 1 });
    store.videos.insert({ id: 'v2', collection_id: c2.id, filename: 'b.mp4', path: '/y', size_bytes: 1 });
    const seg = (idx: number, hot: number[], description: string) => ({ idx, start: idx * 4, end: idx * 4 + 4, description, vector: unit(8, hot) });
    store.segments.replaceForVideo('v1', c1.id, 8, [seg(0, [0], 'a dog on green grass'), seg(1, [1], 'a red car on a street')]);
    store.segments.replaceForVideo('v2', c2.id, 8, [seg(0, [0], 'a dog in the snow')]);

    const hits = store.segments.nearest(c1.id, 8, unit(8, [1]), 10);
    expect(hits).toHaveLength(2); // c2's segment is not in c1's partition
    expect(hits[0].similarity).toBeCloseTo(1, 5);
    const rows = store.segments.byIds(hits.map((h) => h.segmentId));
    expect(rows.get(hits[0].segmentId)!.description).toContain('car');

    const kw = store.segments.keyword(c1.id, ftsQuery('dog')!, 10);
    expect(kw).toHaveLength(1);
    expect(store.segments.byIds([kw[0].segmentId]).get(kw[0].segmentId)!.video_id).toBe('v1');

    // A redone job replaces rather than duplicates.
    store.segments.replaceForVideo('v1', c1.id, 8, [seg(0, [2], 'a boat on the sea')]);
    expect(store.segments.countForCollection(c1.id)).toBe(1);
    expect(store.segments.nearest(c1.id, 8, unit(8, [1]), 10)).toHaveLength(1);
    expect(store.segments.keyword(c1.id, ftsQuery('dog')!, 10)).toHaveLength(0);
  });

  it('filters vector and keyword hits by tags', () => {
    const c = store.collections.insert({ name: 'c', description: '', model: 'm', dim: 4 });
    store.videos.insert({ id: 'v', collection_id: c.id, filename: 'a.mp4', path: '/x', size_bytes: 1 });
    store.segments.replaceForVideo('v', c.id, 4, [
      { idx: 0, start: 0, end: 4, description: 'face', tags: { shot_size: 'close_up' }, vector: unit(4, [0]) },
      { idx: 1, start: 4, end: 8, description: 'face', tags: { shot_size: 'wide' }, vector: unit(4, [0, 1]) },
    ]);
    const hits = store.segments.nearest(c.id, 4, unit(4, [0]), 10, { shot_size: 'wide' });
    expect(hits).toHaveLength(1);
    expect(store.segments.keyword(c.id, '"face"', 10, { shot_size: 'close_up' })).toHaveLength(1);
  });

  it('turns free text into a safe FTS query', () => {
    expect(ftsQuery('a dog on "the" grass*')).toBe('"dog" OR "grass"');
    expect(ftsQuery('   ')).toBeUndefined();
    expect(ftsQuery('AND OR NOT (')).toBe('"not"');
  });
});

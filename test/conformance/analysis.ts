import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Catalog } from '../../src/store/catalog/types.js';
import { DIM, seg, vec } from './segments.js';

/*
 * The rules of AnalysisCatalog (capabilities' states per video) and SegmentsCatalog.reviseForVideo
 * (src/store/catalog/types.ts), run against every backend: what a lane that lands later (speech)
 * relies on to merge its output into segments another lane wrote.
 */

export interface Backend {
  open(): Promise<Catalog>;
  /**
   * Two catalogs of this process may each hold a transaction open at once (memory, PostgreSQL);
   * SQLite's connections are synchronous: the second BEGIN IMMEDIATE would block the one thread.
   */
  concurrentTransactions: boolean;
}

export function conformance(backend: () => Backend): void {
  let c: Catalog;
  const open: Catalog[] = [];
  beforeEach(async () => {
    c = await backend().open();
    open.push(c);
  });
  afterEach(async () => {
    for (const x of open.splice(0)) await x.close();
  });

  let n = 0;
  const collection = async () => (await c.collections.insert({ name: `an${++n}-${Date.now()}`, description: '', model: 'test', dim: DIM })).id;
  const video = async (collectionId: string) => {
    const id = `vid_an${++n}_${Date.now()}`;
    await c.videos.insert({ id, collection_id: collectionId, filename: 'a.mp4', blob_key: `videos/${id}.mp4`, size_bytes: 1 });
    return id;
  };

  describe('capabilities per video', () => {
    it('set upserts each state (others kept), forVideo by name, forCollection by video then name; rows carry exactly their fields', async () => {
      const col = await collection();
      const v = await video(col);
      const w = await video(col);
      await c.analysis.set(v, [
        { capability: 'speech', status: 'pending', version: 'ps+1' },
        { capability: 'perception', status: 'running', version: 'perception-5' },
      ]);
      await c.analysis.set(w, [{ capability: 'imagenet', status: 'skipped', message: 'not installed' }]);
      await c.analysis.set(v, [{ capability: 'speech', status: 'failed', version: 'ps+1', message: 'the recognizer stopped' }]);
      const rows = await c.analysis.forVideo(v);
      expect(rows.map((r) => [r.capability, r.status, r.version, r.message])).toEqual([
        ['perception', 'running', 'perception-5', null],
        ['speech', 'failed', 'ps+1', 'the recognizer stopped'],
      ]);
      for (const r of rows) {
        expect(Object.keys(r).sort()).toEqual(['capability', 'message', 'status', 'updated_at', 'version', 'video_id']);
        expect(r.video_id).toBe(v);
        expect(r.updated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      }
      const all = await c.analysis.forCollection(col);
      const expected = [v, w].sort();
      expect([...new Set(all.map((r) => r.video_id))]).toEqual(expected);
      expect(all.filter((r) => r.video_id === w)).toEqual([expect.objectContaining({ capability: 'imagenet', status: 'skipped', version: null, message: 'not installed' })]);
      expect(await c.analysis.forVideo('vid_none')).toEqual([]);
      expect(await c.analysis.forCollection('col_none')).toEqual([]);
    });

    it('a video that does not exist is refused and nothing is stored; deleting the video (or its collection) deletes its states', async () => {
      await expect(c.analysis.set('vid_none', [{ capability: 'speech', status: 'done' }])).rejects.toThrow();
      const col = await collection();
      const v = await video(col);
      const w = await video(col);
      await c.analysis.set(v, [{ capability: 'speech', status: 'done', version: '1' }]);
      await c.analysis.set(w, [{ capability: 'speech', status: 'done', version: '1' }]);
      await c.videos.delete(v);
      expect(await c.analysis.forVideo(v)).toEqual([]);
      expect(await c.analysis.forVideo(w)).toHaveLength(1);
      await c.collections.delete(col);
      expect(await c.analysis.forVideo(w)).toEqual([]);
    });

    it('in a transaction: set lands with the commit and goes with a rollback; lock holds the video until the transaction ends', async () => {
      const col = await collection();
      const v = await video(col);
      await c.transaction(async (tx) => {
        await tx.analysis.lock(v);
        await tx.analysis.set(v, [{ capability: 'speech', status: 'done' }]);
      });
      await expect(
        c.transaction(async (tx) => {
          await tx.analysis.lock(v);
          await tx.analysis.set(v, [{ capability: 'speech', status: 'failed', message: 'x' }]);
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect((await c.analysis.forVideo(v)).map((r) => r.status)).toEqual(['done']);
    });

    it.runIf(backend().concurrentTransactions)('two transactions that lock the same video take turns: the second reads what the first wrote', async () => {
      const col = await collection();
      const v = await video(col);
      const other = await backend().open();
      open.push(other);
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let firstLocked!: () => void;
      const locked = new Promise<void>((r) => (firstLocked = r));
      const first = c.transaction(async (tx) => {
        await tx.analysis.lock(v);
        firstLocked();
        await held;
        await tx.analysis.set(v, [{ capability: 'pictures', status: 'done' }]);
      });
      await locked;
      const second = other.transaction(async (tx) => {
        await tx.analysis.lock(v);
        return (await tx.analysis.forVideo(v)).map((r) => r.capability);
      });
      setTimeout(release, 50);
      await first;
      expect(await second).toEqual(['pictures']);
    });
  });

  describe('reviseForVideo', () => {
    it('rewrites facts, tags, description and keywords of every segment, keeps vectors, times and keyframe hashes; new ids', async () => {
      const col = await collection();
      const v = await video(col);
      await c.segments.replaceForVideo(v, col, DIM, [
        seg(0, vec(1, 0, 0, 0), { description: 'a harbour', keywords: 'harbour boat', facts: { perception: { version: 'p', facts: [] } }, tags: { shot_size: { label: 'wide' } }, phash: '0123456789abcdef' }),
        seg(1, vec(0, 1, 0, 0), { description: 'a quay', keywords: 'quay', details: { kept: true } }),
      ]);
      const before = await c.segments.listForVideo(v);
      await c.transaction(async (tx) =>
        tx.segments.reviseForVideo(v, col, DIM, [
          { idx: 0, keywords: 'harbour boat ahoy', facts: { perception: { version: 'p', facts: [] }, speech: { version: 's', facts: [{ kind: 'speech', label: 'ahoy' }] } }, tags: { shot_size: { label: 'wide' }, audio: { label: 'speech' } } },
          { idx: 1, keywords: 'quay', description: 'a quay at night' },
        ]),
      );
      const after = await c.segments.listForVideo(v);
      expect(after.map((r) => r.idx)).toEqual([0, 1]);
      expect(after.every((r, i) => r.id > before[before.length - 1].id && (i === 0 || r.id > after[i - 1].id))).toBe(true);
      expect(after[0]).toMatchObject({ start: 0, end: 2, description: 'a harbour', phash: '0123456789abcdef', labels: { shot_size: 'wide', audio: 'speech' } });
      expect(JSON.parse(after[0].facts_json!)).toEqual({ perception: { version: 'p', facts: [] }, speech: { version: 's', facts: [{ kind: 'speech', label: 'ahoy' }] } });
      expect(after[1]).toMatchObject({ description: 'a quay at night', details_json: '{"kept":true}', facts_json: null, tags_json: null });
      const vectors = await c.segments.vectors(DIM, after.map((r) => r.id));
      expect([...vectors.get(after[0].id)!]).toEqual([1, 0, 0, 0]);
      expect([...vectors.get(after[1].id)!]).toEqual([0, 1, 0, 0]);
      // The index holds the new keywords (and not the old segments).
      const m = await c.segments.termMatches(col, ['ahoy', 'harbour'], 10);
      expect(m.get('ahoy')).toEqual([after[0].id]);
      expect(m.get('harbour')).toEqual([after[0].id]);
      expect((await c.segments.byIds(before.map((r) => r.id))).size).toBe(0);
    });

    it('a revision may give a new vector; one missing for a segment, or for an idx the video lacks, rejects and changes nothing', async () => {
      const col = await collection();
      const v = await video(col);
      await c.segments.replaceForVideo(v, col, DIM, [seg(0, vec(1, 0, 0, 0)), seg(1, vec(0, 1, 0, 0))]);
      const ids = (await c.segments.listForVideo(v)).map((r) => r.id);
      await expect(c.transaction((tx) => tx.segments.reviseForVideo(v, col, DIM, [{ idx: 0, keywords: 'x' }]))).rejects.toThrow(/no revision for segment 1/);
      await expect(
        c.transaction((tx) => tx.segments.reviseForVideo(v, col, DIM, [{ idx: 0, keywords: 'x' }, { idx: 1, keywords: 'y' }, { idx: 2, keywords: 'z' }])),
      ).rejects.toThrow(/has no segment 2/);
      expect((await c.segments.listForVideo(v)).map((r) => r.id)).toEqual(ids);
      await c.transaction((tx) =>
        tx.segments.reviseForVideo(v, col, DIM, [
          { idx: 0, keywords: 'a', vector: vec(0, 0, 1, 0) },
          { idx: 1, keywords: 'b' },
        ]),
      );
      const after = await c.segments.listForVideo(v);
      const vectors = await c.segments.vectors(DIM, after.map((r) => r.id));
      expect([...vectors.get(after[0].id)!]).toEqual([0, 0, 1, 0]);
      expect([...vectors.get(after[1].id)!]).toEqual([0, 1, 0, 0]);
      const near = await c.segments.candidates(col, DIM, vec(0, 0, 1, 0), 1, {}, []);
      expect([...near.keys()]).toEqual([after[0].id]);
    });
  });
}

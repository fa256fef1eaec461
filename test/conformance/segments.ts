import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Catalog, NewSegment, SegmentRow, TagFilter } from '../../src/store/catalog/types.js';

/*
 * The rules of SegmentsCatalog, SignaturesCatalog and Catalog.transaction (src/store/catalog/types.ts),
 * run against both backends with real databases. Vectors have 4 dimensions; the expected
 * similarities are computed here from the same float32 numbers.
 */

export interface Backend {
  /** Another catalog on the same store: a connection (SQLite) or a pool, i.e. another machine (PostgreSQL). */
  open(): Promise<Catalog>;
}

export const DIM = 4;
const SEGMENT_FIELDS: (keyof SegmentRow)[] = [
  'id',
  'video_id',
  'collection_id',
  'idx',
  'start',
  'end',
  'description',
  'details_json',
  'facts_json',
  'tags_json',
  'labels',
  'phash',
];

export const vec = (...xs: number[]) => Float32Array.from(xs);

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return dot / Math.sqrt(aa * bb);
}

export const seg = (idx: number, vector: Float32Array, more: Partial<NewSegment> = {}): NewSegment => ({
  idx,
  start: idx * 2,
  end: idx * 2 + 2,
  description: `segment ${idx}`,
  vector,
  ...more,
});

export const sortedIds = (m: Map<number, unknown>) => [...m.keys()].sort((a, b) => a - b);
export const segmentIds = async (on: Catalog, videoId: string) => (await on.segments.listForVideo(videoId)).map((r) => r.id);

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
  const another = async () => {
    const x = await backend().open();
    open.push(x);
    return x;
  };

  let n = 0;
  const collection = async (name = `col${++n}`) => (await c.collections.insert({ name, description: '', model: 'test', dim: DIM })).id;
  const video = async (collectionId: string, on: Catalog = c) => {
    const id = `vid_${++n}`;
    await on.videos.insert({ id, collection_id: collectionId, filename: 'a.mp4', blob_key: `videos/${id}.mp4`, size_bytes: 1 });
    return id;
  };
  const idsOf = (videoId: string, on: Catalog = c) => segmentIds(on, videoId);

  describe('rows', () => {
    it('replaceForVideo stores the rows (exactly the row fields, JSON as text, absent fields null), listForVideo by idx, byIds those that exist', async () => {
      const col = await collection();
      const v = await video(col);
      await c.segments.replaceForVideo(v, col, DIM, [
        seg(1, vec(0, 1, 0, 0)),
        seg(0, vec(1, 0, 0, 0), {
          description: 'a dog on a beach',
          details: { who: 'a dog' },
          facts: { objects: ['dog'] },
          tags: { shot_size: { label: 'wide', confidence: 0.9 }, camera_movement: 'static', shooting_angle: { label: 'eye' }, mood: 'calm', score: 3 },
          phash: '00ff00ff00ff00ff',
        }),
      ]);
      const rows = await c.segments.listForVideo(v);
      expect(rows.map((r) => r.idx)).toEqual([0, 1]);
      for (const r of rows) expect(Object.keys(r).sort()).toEqual([...SEGMENT_FIELDS].sort());
      expect(rows[0]).toEqual({
        id: expect.any(Number),
        video_id: v,
        collection_id: col,
        idx: 0,
        start: 0,
        end: 2,
        description: 'a dog on a beach',
        details_json: '{"who":"a dog"}',
        facts_json: '{"objects":["dog"]}',
        tags_json: '{"shot_size":{"label":"wide","confidence":0.9},"camera_movement":"static","shooting_angle":{"label":"eye"},"mood":"calm","score":3}',
        labels: { camera_movement: 'static', mood: 'calm', shooting_angle: 'eye', shot_size: 'wide' },
        phash: '00ff00ff00ff00ff',
      });
      expect(rows[1]).toMatchObject({ idx: 1, start: 2, end: 4, description: 'segment 1', details_json: null, facts_json: null, tags_json: null, labels: {}, phash: null });
      for (const r of rows) expect(Number.isInteger(r.id)).toBe(true);

      const byIds = await c.segments.byIds([rows[1].id, rows[0].id, 987654321]);
      expect(sortedIds(byIds)).toEqual(rows.map((r) => r.id).sort((a, b) => a - b));
      expect(byIds.get(rows[0].id)).toEqual(rows[0]);
      expect(byIds.get(rows[1].id)).toEqual(rows[1]);
      expect((await c.segments.byIds([])).size).toBe(0);
      expect(await c.segments.listForVideo('vid_none')).toEqual([]);
    });

    it('a replace takes the place of every earlier segment of the video, with new ids larger than any before; other videos keep theirs', async () => {
      const col = await collection();
      const v = await video(col);
      const w = await video(col);
      await c.segments.replaceForVideo(v, col, DIM, [seg(0, vec(1, 0, 0, 0)), seg(1, vec(0, 1, 0, 0)), seg(2, vec(0, 0, 1, 0))]);
      await c.segments.replaceForVideo(w, col, DIM, [seg(0, vec(1, 1, 0, 0))]);
      const first = await idsOf(v);
      const other = await idsOf(w);
      expect(Math.min(...other)).toBeGreaterThan(Math.max(...first));
      await c.segments.replaceForVideo(v, col, DIM, [seg(0, vec(0, 0, 0, 1), { description: 'again' }), seg(1, vec(1, 0, 0, 1))]);
      const second = await idsOf(v);
      expect(second).toHaveLength(2);
      expect(Math.min(...second)).toBeGreaterThan(Math.max(...first, ...other));
      expect((await c.segments.byIds(first)).size).toBe(0);
      expect((await c.segments.listForVideo(v))[0].description).toBe('again');
      expect(await idsOf(w)).toEqual(other);
      expect(await c.segments.countForCollection(col)).toBe(3);
      await c.segments.replaceForVideo(v, col, DIM, []);
      expect(await c.segments.listForVideo(v)).toEqual([]);
      expect(await c.segments.countForCollection(col)).toBe(1);
    });

    it('a vector of the wrong dimension rejects the whole replace and changes nothing', async () => {
      const col = await collection();
      const v = await video(col);
      await c.segments.replaceForVideo(v, col, DIM, [seg(0, vec(1, 0, 0, 0)), seg(1, vec(0, 1, 0, 0))]);
      const before = await c.segments.listForVideo(v);
      await expect(c.segments.replaceForVideo(v, col, DIM, [seg(0, vec(0, 0, 1, 0)), seg(1, vec(1, 2, 3))])).rejects.toThrow();
      expect(await c.segments.listForVideo(v)).toEqual(before);
      expect(await c.segments.countForCollection(col)).toBe(2);
      const q = vec(1, 0, 0, 0);
      expect(sortedIds(await c.segments.candidates(col, DIM, q, 10, {}, []))).toEqual(before.map((r) => r.id).sort((a, b) => a - b));
    });

    it('deleteForVideo deletes the video\'s segments only (and of a video without segments does nothing); countForCollection counts per collection', async () => {
      const col = await collection();
      const other = await collection();
      const v = await video(col);
      const w = await video(col);
      const x = await video(other);
      await c.segments.replaceForVideo(v, col, DIM, [seg(0, vec(1, 0, 0, 0)), seg(1, vec(0, 1, 0, 0))]);
      await c.segments.replaceForVideo(w, col, DIM, [seg(0, vec(0, 0, 1, 0))]);
      await c.segments.replaceForVideo(x, other, DIM, [seg(0, vec(0, 0, 0, 1))]);
      expect(await c.segments.countForCollection(col)).toBe(3);
      expect(await c.segments.countForCollection(other)).toBe(1);
      expect(await c.segments.countForCollection('col_none')).toBe(0);
      const gone = await idsOf(v);
      await c.segments.deleteForVideo(v, DIM);
      expect(await c.segments.listForVideo(v)).toEqual([]);
      expect((await c.segments.byIds(gone)).size).toBe(0);
      expect(await c.segments.countForCollection(col)).toBe(1);
      expect(await c.segments.countForCollection(other)).toBe(1);
      await c.segments.deleteForVideo(v, DIM);
      await c.segments.deleteForVideo('vid_none', DIM);
      expect(await c.segments.countForCollection(col)).toBe(1);
    });

    it('vectors hand back the stored float32 numbers of the ids that exist; videosOf the video of each id that exists', async () => {
      const col = await collection();
      const v = await video(col);
      const w = await video(col);
      const a = vec(0.1, -0.2, 1e-7, 3.4028e38);
      const b = vec(-1.5, 0.333, 2, 0);
      await c.segments.replaceForVideo(v, col, DIM, [seg(0, a)]);
      await c.segments.replaceForVideo(w, col, DIM, [seg(0, b)]);
      const [ia] = await idsOf(v);
      const [ib] = await idsOf(w);
      const got = await c.segments.vectors(DIM, [ia, ib, 987654321]);
      expect(sortedIds(got)).toEqual([ia, ib].sort((x, y) => x - y));
      expect(got.get(ia)).toBeInstanceOf(Float32Array);
      expect([...got.get(ia)!]).toEqual([...a]);
      expect([...got.get(ib)!]).toEqual([...b]);
      const videos = await c.segments.videosOf(col, [ib, ia, 987654321]);
      expect(videos).toEqual(
        new Map([
          [ib, w],
          [ia, v],
        ]),
      );
    });
  });

  describe('vector search', () => {
    /** Ten segments over three videos, tagged, with distinct similarities to the query below (and one exact tie). */
    async function scene() {
      const col = await collection();
      const other = await collection();
      const v1 = await video(col);
      const v2 = await video(col);
      const vo = await video(other);
      const list: Array<{ video: string; s: NewSegment }> = [];
      const vectors = [
        vec(1, 0, 0, 0),
        vec(0.9, 0.1, 0, 0),
        vec(0.7, 0.7, 0.1, 0),
        vec(0, 1, 0, 0),
        vec(0.5, 0.2, 0.8, 0.1),
        vec(-1, 0, 0, 0),
      ];
      const shots = ['wide', 'close', 'wide', 'close', 'wide', 'close'];
      const s1 = vectors.map((v, i) => seg(i, v, { tags: { shot_size: { label: shots[i] }, camera_movement: i % 2 ? 'pan' : 'static' } }));
      // v2: an exact copy of v1's second vector (a tie), and two more.
      const s2 = [seg(0, vec(0.6, 0.3, 0.3, 0.3), { tags: { shot_size: 'close', audio: 'speech' } }), seg(1, vec(0.9, 0.1, 0, 0), { tags: { shot_size: 'wide', audio: 'music' } }), seg(2, vec(0.2, 0.2, 0.2, 0.9))];
      await c.segments.replaceForVideo(v1, col, DIM, s1);
      await c.segments.replaceForVideo(v2, col, DIM, s2);
      // Nearest of all, but in another collection: never a candidate of `col`.
      await c.segments.replaceForVideo(vo, other, DIM, [seg(0, vec(1, 0.05, 0, 0))]);
      const rows = [...(await c.segments.listForVideo(v1)), ...(await c.segments.listForVideo(v2))];
      for (const r of rows) list.push({ video: r.video_id, s: (r.video_id === v1 ? s1 : s2)[r.idx] });
      const otherId = (await idsOf(vo))[0];
      return { col, other, rows, all: rows.map((r, i) => ({ row: r, vector: list[i].s.vector })), otherId };
    }

    /** The exact top k by cosine (ties to the smaller id), of the rows matching `filter`. */
    function expected(all: Array<{ row: SegmentRow; vector: Float32Array }>, q: Float32Array, k: number, filter: TagFilter = {}) {
      return all
        .filter(({ row }) => Object.entries(filter).every(([kind, label]) => !label || row.labels[kind] === label))
        .map(({ row, vector }) => ({ id: row.id, similarity: cosine(vector, q) }))
        .sort((a, b) => b.similarity - a.similarity || a.id - b.id)
        .slice(0, k);
    }

    function expectSame(got: Map<number, { similarity: number; margin: number }>, want: Array<{ id: number; similarity: number }>) {
      expect(sortedIds(got)).toEqual(want.map((w) => w.id).sort((a, b) => a - b));
      for (const w of want) {
        const g = got.get(w.id)!;
        expect(g.margin).toBeGreaterThanOrEqual(0);
        expect(Math.abs(g.similarity - w.similarity)).toBeLessThanOrEqual(g.margin + 1e-5);
      }
    }

    it('candidates: the exact top k of the collection by cosine, exact ties to the smaller id', async () => {
      const { col, all } = await scene();
      const q = vec(1, 0.1, 0, 0);
      for (const k of [1, 2, 3, 5, 8, 20]) {
        const got = await c.segments.candidates(col, DIM, q, k, {}, []);
        expectSame(got, expected(all, q, k));
      }
      // The two identical vectors (v1 idx 1 and v2 idx 1) tie; with room for one of them, the smaller id.
      const tie = all.filter(({ vector }) => vector[0] === Math.fround(0.9) && vector[1] === Math.fround(0.1)).map(({ row }) => row.id);
      expect(tie).toHaveLength(2);
      const top2 = expected(all, vec(0.9, 0.1, 0, 0), 2);
      expect(top2.map((t) => t.id).sort((a, b) => a - b)).toEqual(tie.sort((a, b) => a - b));
      const one = await c.segments.candidates(col, DIM, vec(0.9, 0.1, 0, 0), 1, {}, []);
      expect([...one.keys()]).toEqual([Math.min(...tie)]);
      expect(one.get(Math.min(...tie))!.similarity).toBeCloseTo(1, 5);
      expect((await c.segments.candidates('col_none', DIM, q, 5, {}, [])).size).toBe(0);
    });

    it('candidates: tag filters keep to the matching segments; `also` adds the given segments that exist, in any collection, with their similarity', async () => {
      const { col, all, otherId } = await scene();
      const q = vec(0.2, 1, 0.1, 0);
      expectSame(await c.segments.candidates(col, DIM, q, 2, { shot_size: 'wide' }, []), expected(all, q, 2, { shot_size: 'wide' }));
      expectSame(await c.segments.candidates(col, DIM, q, 3, { shot_size: 'close', camera_movement: 'pan' }, []), expected(all, q, 3, { shot_size: 'close', camera_movement: 'pan' }));
      expect((await c.segments.candidates(col, DIM, q, 3, { shooting_angle: 'overhead' }, [])).size).toBe(0);

      const top = expected(all, q, 2);
      const worst = expected(all, q, 100).at(-1)!;
      const got = await c.segments.candidates(col, DIM, q, 2, {}, [worst.id, top[0].id, otherId, 987654321]);
      expectSame(got, [...top, worst, { id: otherId, similarity: cosine(vec(1, 0.05, 0, 0), q) }]);
    });

    it('candidates: `exclude` leaves segments out inside the search, so k counts the others; an excluded `also` id is left out too', async () => {
      const { col, all, otherId } = await scene();
      const q = vec(1, 0.1, 0, 0);
      // Leave out v1's segments (the video of the nearest ones): the k nearest of v2 come back.
      const v1 = all[0].row.video_id;
      const exclude = all.filter(({ row }) => row.video_id === v1).map(({ row }) => row.id);
      const others = all.filter(({ row }) => row.video_id !== v1);
      for (const k of [1, 2, 3]) expectSame(await c.segments.candidates(col, DIM, q, k, {}, [], exclude), expected(others, q, k));
      // With a filter too; and an `also` id that is excluded never comes back, another one does.
      expectSame(await c.segments.candidates(col, DIM, q, 5, { shot_size: 'wide' }, [], exclude), expected(others, q, 5, { shot_size: 'wide' }));
      const got = await c.segments.candidates(col, DIM, q, 1, {}, [exclude[0], otherId], exclude);
      expectSame(got, [...expected(others, q, 1), { id: otherId, similarity: cosine(vec(1, 0.05, 0, 0), q) }]);
      // Excluding everything leaves nothing of the collection; an empty list changes nothing.
      expect((await c.segments.candidates(col, DIM, q, 5, {}, [], all.map(({ row }) => row.id))).size).toBe(0);
      expectSame(await c.segments.candidates(col, DIM, q, 3, {}, [], []), expected(all, q, 3));
    });

    it('candidates with `videos`: at least every one of the k nearest up to the first that brings the count of videos to `videos`, never one outside the k', async () => {
      // Eight videos of twelve moments each, each video around a direction of its own.
      const col = await collection();
      const all: Array<{ row: SegmentRow; vector: Float32Array }> = [];
      for (let v = 0; v < 8; v++) {
        const id = await video(col);
        const a = (v * Math.PI) / 9;
        const vectors = Array.from({ length: 12 }, (_, i) => vec(Math.cos(a) + 0.01 * i, Math.sin(a), 0.05 * ((i * 7) % 5), 0.03 * v));
        await c.segments.replaceForVideo(id, col, DIM, vectors.map((x, i) => seg(i, x)));
        (await c.segments.listForVideo(id)).forEach((row) => all.push({ row, vector: vectors[row.idx] }));
      }
      const q = vec(1, 0.05, 0, 0);
      const k = 60;
      const nearest = all.map(({ row, vector }) => ({ id: row.id, video: row.video_id, similarity: cosine(vector, q) })).sort((a, b) => b.similarity - a.similarity || a.id - b.id);
      const topK = new Set(nearest.slice(0, k).map((h) => h.id));
      for (const videos of [1, 2, 3, 5, 8, 20]) {
        const seen = new Set<string>();
        const upTo = nearest.findIndex((h) => seen.add(h.video).size === Math.min(videos, 8));
        const needed = nearest.slice(0, Math.min(k, videos > 8 ? k : upTo + 1));
        const got = await c.segments.candidates(col, DIM, q, k, {}, [], [], videos);
        for (const h of needed) {
          expect(got.has(h.id)).toBe(true);
          expect(Math.abs(got.get(h.id)!.similarity - h.similarity)).toBeLessThanOrEqual(got.get(h.id)!.margin + 1e-5);
        }
        for (const id of got.keys()) expect(topK.has(id)).toBe(true);
        if (videos > 8) expect(got.size).toBe(k); // fewer videos than asked for: all k
      }
      // With `also`, `exclude` and a filter as without `videos`.
      const far = nearest.at(-1)!.id;
      const got = await c.segments.candidates(col, DIM, q, k, {}, [far], [nearest[0].id], 2);
      expect(got.has(far)).toBe(true);
      expect(got.has(nearest[0].id)).toBe(false);
      expect(got.has(nearest[1].id)).toBe(true);
    });

    it('similarities: exact cosine of the ids that exist, agreeing with candidates', async () => {
      const { col, all, otherId } = await scene();
      const q = vec(0.3, -0.2, 0.9, 0.1);
      const ids = all.map(({ row }) => row.id);
      const sims = await c.segments.similarities(DIM, [...ids, otherId, 987654321], q);
      expect(sortedIds(sims)).toEqual([...ids, otherId].sort((a, b) => a - b));
      for (const { row, vector } of all) expect(sims.get(row.id)).toBeCloseTo(cosine(vector, q), 5);
      const cands = await c.segments.candidates(col, DIM, q, ids.length, {}, []);
      for (const [id, { similarity, margin }] of cands) expect(Math.abs(similarity - sims.get(id)!)).toBeLessThanOrEqual(margin + 1e-5);
      expect((await c.segments.similarities(DIM, [], q)).size).toBe(0);
    });

    it('at a real model\'s dimension (512): the exact top k, ties to the smaller id, `also` and similarities agreeing', async () => {
      const D = 512;
      let seed = 7;
      const rnd = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32) - 0.5;
      const col = (await c.collections.insert({ name: `wide${++n}`, description: '', model: 'test-512', dim: D })).id;
      const vectors = new Map<number, Float32Array>();
      for (let v = 0; v < 6; v++) {
        const id = await video(col);
        const segs = Array.from({ length: 50 }, (_, i) => ({ idx: i, start: i, end: i + 1, description: 'x', vector: new Float32Array(D).map(rnd) }));
        segs[7].vector = segs[3].vector; // an exact tie within the video
        await c.segments.replaceForVideo(id, col, D, segs);
        (await c.segments.listForVideo(id)).forEach((row, i) => vectors.set(row.id, segs[i].vector));
      }
      const q = new Float32Array(D).map(rnd);
      const exact = [...vectors].map(([id, v]) => ({ id, similarity: cosine(v, q) })).sort((x, y) => y.similarity - x.similarity || x.id - y.id);
      const tieIds = [...vectors].filter(([, v]) => v === [...vectors.values()][3]).map(([id]) => id);
      // Ask with the tied pair's score as the k-th: the smaller id must be the one kept.
      const tiePos = exact.findIndex((h) => h.id === Math.min(...tieIds));
      const got = await c.segments.candidates(col, D, q, tiePos + 1, {}, [exact[exact.length - 1].id]);
      const want = [...exact.slice(0, tiePos + 1), exact[exact.length - 1]];
      expect(sortedIds(got)).toEqual(want.map((h) => h.id).sort((x, y) => x - y));
      for (const h of want) expect(Math.abs(got.get(h.id)!.similarity - h.similarity)).toBeLessThanOrEqual(got.get(h.id)!.margin + 1e-5);
      const sims = await c.segments.similarities(D, want.map((h) => h.id), q);
      for (const [id, { similarity, margin }] of got) expect(Math.abs(similarity - sims.get(id)!)).toBeLessThanOrEqual(margin + 1e-6);
    });
  });

  describe('generic tags', () => {
    /** Four segments: tag kinds mixed, one kind (audio) that the first tagger never knew, one untagged. */
    async function tagged() {
      const col = await collection();
      const v = await video(col);
      await c.segments.replaceForVideo(v, col, DIM, [
        seg(0, vec(1, 0, 0, 0), { keywords: 'horse', tags: { shot_size: { label: 'wide', confidence: 0.8 }, audio: { label: 'speech', confidence: 0.7 } } }),
        seg(1, vec(0.9, 0.1, 0, 0), { keywords: 'horse', tags: { shot_size: 'wide', audio: 'music' } }),
        seg(2, vec(0.8, 0.2, 0, 0), { keywords: 'horse', tags: { shot_size: 'close', audio: 'music', lighting: { label: 'night' } } }),
        seg(3, vec(0.7, 0.3, 0, 0), { keywords: 'horse' }),
      ]);
      return { col, ids: await idsOf(v) };
    }
    const q = vec(1, 0, 0, 0);
    const found = async (col: string, filter: TagFilter) => {
      const vector = sortedIds(await c.segments.candidates(col, DIM, q, 10, filter, []));
      const keyword = [...(await c.segments.termMatches(col, ['horse'], 10, filter)).get('horse')!].sort((a, b) => a - b);
      expect(keyword).toEqual(vector); // vector and keyword search filter alike
      return vector;
    };

    it('any tag kind is stored and filters: a kind no column was made for (audio) as well as the old three', async () => {
      const { col, ids } = await tagged();
      const rows = await c.segments.listForVideo((await c.segments.byIds([ids[0]])).get(ids[0])!.video_id);
      expect(rows.map((r) => r.labels)).toEqual([
        { audio: 'speech', shot_size: 'wide' },
        { audio: 'music', shot_size: 'wide' },
        { audio: 'music', lighting: 'night', shot_size: 'close' },
        {},
      ]);
      expect(await found(col, { audio: 'music' })).toEqual([ids[1], ids[2]]);
      expect(await found(col, { lighting: 'night' })).toEqual([ids[2]]);
      expect(await found(col, { shot_size: 'wide' })).toEqual([ids[0], ids[1]]);
      expect(await found(col, {})).toEqual(ids);
    });

    it('a filter of two kinds matches only segments that carry both labels', async () => {
      const { col, ids } = await tagged();
      expect(await found(col, { shot_size: 'wide', audio: 'music' })).toEqual([ids[1]]);
      expect(await found(col, { shot_size: 'close', audio: 'speech' })).toEqual([]);
    });

    it('a kind a segment lacks never matches it; an entry without a label filters nothing; a bad kind is refused', async () => {
      const { col, ids } = await tagged();
      expect(await found(col, { lighting: 'day' })).toEqual([]);
      expect(await found(col, { speech: 'yes' })).toEqual([]);
      expect(await found(col, { shot_size: 'wide', audio: undefined, lighting: '' })).toEqual([ids[0], ids[1]]);
      await expect(c.segments.candidates(col, DIM, q, 10, { "shot_size') OR 1=1 --": 'x' }, [])).rejects.toThrow(/bad tag kind/);
      await expect(c.segments.termMatches(col, ['horse'], 10, { 'Shot Size': 'wide' })).rejects.toThrow(/bad tag kind/);
    });
  });

  describe('one search', () => {
    it('forSearch (where a backend has it) sees every write committed before the search began, another machine\'s too', async () => {
      const col = await collection();
      const v = await video(col);
      await c.segments.replaceForVideo(v, col, DIM, [seg(0, vec(1, 0, 0, 0), { keywords: 'horse' })]);
      const q = vec(1, 0, 0, 0);
      const first = c.segments.forSearch?.() ?? c.segments;
      expect((await first.candidates(col, DIM, q, 5, {}, [])).size).toBe(1);
      const elsewhere = await another();
      const w = await video(col, elsewhere);
      await elsewhere.segments.replaceForVideo(w, col, DIM, [seg(0, vec(0.9, 0.1, 0, 0), { keywords: 'horse' })]);
      const next = c.segments.forSearch?.() ?? c.segments;
      expect((await next.candidates(col, DIM, q, 5, {}, [])).size).toBe(2);
      expect((await next.termMatches(col, ['horse'], 10)).get('horse')).toHaveLength(2);
      expect(await next.countForCollection(col)).toBe(2);
      expect((await next.videosOf(col, [...(await next.candidates(col, DIM, q, 5, {}, [])).keys()])).size).toBe(2);
    });
  });

  describe('keywords', () => {
    it('terms are stemmed ("dogs" finds "dog", "running" finds "runs"); keywords replace the description in the index; each collection its own', async () => {
      const col = await collection();
      const other = await collection();
      const v = await video(col);
      const w = await video(other);
      await c.segments.replaceForVideo(v, col, DIM, [
        seg(0, vec(1, 0, 0, 0), { description: 'a dog on the beach' }),
        seg(1, vec(0, 1, 0, 0), { description: 'a cat on a sofa', keywords: 'kitten runs indoors' }),
        seg(2, vec(0, 0, 1, 0), { description: 'two dogs running' }),
      ]);
      await c.segments.replaceForVideo(w, other, DIM, [seg(0, vec(1, 0, 0, 0), { description: 'a dog again' })]);
      const [s0, s1, s2] = await idsOf(v);
      const m = await c.segments.termMatches(col, ['dogs', 'running', 'cat', 'kitten', 'zebra'], 10);
      expect([...m.keys()]).toEqual(['dogs', 'running', 'cat', 'kitten', 'zebra']);
      expect([...m.get('dogs')!].sort((a, b) => a - b)).toEqual([s0, s2]);
      expect([...m.get('running')!].sort((a, b) => a - b)).toEqual([s1, s2]);
      expect(m.get('cat')).toEqual([]); // the description is not indexed when keywords are given
      expect(m.get('kitten')).toEqual([s1]);
      expect(m.get('zebra')).toEqual([]);
      expect((await c.segments.termMatches(other, ['dog'], 10)).get('dog')).toEqual(await idsOf(w));
    });

    it('termMatches: best first (more occurrences in keywords of one length), at most `limit`, only segments matching the filter', async () => {
      const col = await collection();
      const v = await video(col);
      await c.segments.replaceForVideo(v, col, DIM, [
        seg(0, vec(1, 0, 0, 0), { keywords: 'horse field grass tree', tags: { shot_size: { label: 'wide' } } }),
        seg(1, vec(0, 1, 0, 0), { keywords: 'horse horse horse tree', tags: { shot_size: { label: 'close' } } }),
        seg(2, vec(0, 0, 1, 0), { keywords: 'horse field fence tree', tags: { shot_size: { label: 'wide' } } }),
        seg(3, vec(0, 0, 0, 1), { keywords: 'river field fence tree', tags: { shot_size: { label: 'wide' } } }),
      ]);
      const [s0, s1, s2] = await idsOf(v);
      const all = (await c.segments.termMatches(col, ['horse'], 10)).get('horse')!;
      expect(all).toHaveLength(3);
      expect(all[0]).toBe(s1);
      expect([...all].sort((a, b) => a - b)).toEqual([s0, s1, s2]);
      expect((await c.segments.termMatches(col, ['horse'], 1)).get('horse')).toEqual([s1]);
      const wide = (await c.segments.termMatches(col, ['horse'], 10, { shot_size: 'wide' })).get('horse')!;
      expect([...wide].sort((a, b) => a - b)).toEqual([s0, s2]);
      expect((await c.segments.termMatches(col, ['horse'], 10, { shot_size: 'medium' })).get('horse')).toEqual([]);
      expect((await c.segments.termMatches(col, ['horse'], 10, { shot_size: 'wide', camera_movement: 'pan' })).get('horse')).toEqual([]);
    });

    it('termLists: a word held by at most `limit` segments of the collection listed whole (total whatever the filter, ids matching it, best first), a commoner one null; termsAmong: which of the ids given hold each word', async () => {
      const col = await collection();
      const other = await collection();
      const v = await video(col);
      const w = await video(other);
      await c.segments.replaceForVideo(v, col, DIM, [
        seg(0, vec(1, 0, 0, 0), { keywords: 'horse field grass tree', tags: { shot_size: { label: 'wide' } } }),
        seg(1, vec(0, 1, 0, 0), { keywords: 'horse horse horse tree', tags: { shot_size: { label: 'close' } } }),
        seg(2, vec(0, 0, 1, 0), { keywords: 'horse field fence tree', tags: { shot_size: { label: 'wide' } } }),
        seg(3, vec(0, 0, 0, 1), { keywords: 'river field fence tree', tags: { shot_size: { label: 'wide' } } }),
      ]);
      await c.segments.replaceForVideo(w, other, DIM, [seg(0, vec(1, 0, 0, 0), { keywords: 'river horse tree' })]);
      const [s0, s1, s2, s3] = await idsOf(v);
      const [w0] = await idsOf(w);
      const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);
      const lists = await c.segments.termLists(col, ['horse', 'tree', 'zebra', 'field fence', 'river'], 3);
      expect([...lists.keys()]).toEqual(['horse', 'tree', 'zebra', 'field fence', 'river']);
      const horse = lists.get('horse')!;
      expect(horse.total).toBe(3);
      expect(horse.ids).toEqual((await c.segments.termMatches(col, ['horse'], 10)).get('horse'));
      expect(horse.ids[0]).toBe(s1);
      expect(lists.get('tree')).toBeNull(); // held by 4 > 3 (the other collection's holder does not count)
      expect(lists.get('zebra')).toEqual({ total: 0, ids: [] });
      expect(lists.get('field fence')!.total).toBe(2);
      expect(sorted(lists.get('field fence')!.ids)).toEqual([s2, s3]);
      expect(lists.get('river')).toEqual({ total: 1, ids: [s3] });
      expect((await c.segments.termLists(col, ['tree'], 4)).get('tree')!.total).toBe(4);
      const wide = (await c.segments.termLists(col, ['horse'], 3, { shot_size: 'wide' })).get('horse')!;
      expect(wide.total).toBe(3);
      expect(sorted(wide.ids)).toEqual([s0, s2]);
      expect((await c.segments.termLists(col, ['horse'], 3, { shot_size: 'medium' })).get('horse')).toEqual({ total: 3, ids: [] });
      expect((await c.segments.termLists(col, [], 3)).size).toBe(0);

      const among = await c.segments.termsAmong(col, ['tree', 'horse', 'river', 'zebra', 'field fence'], [s0, s3, w0, s3 + 1_000_000]);
      expect(sorted(among.get('tree')!)).toEqual([s0, s3]);
      expect(among.get('horse')).toEqual([s0]);
      expect(among.get('river')).toEqual([s3]); // w0 holds it, in another collection
      expect(among.get('zebra')).toEqual([]);
      expect(among.get('field fence')).toEqual([s3]);
      expect((await c.segments.termsAmong(col, ['tree'], [s0, s1, s3], { shot_size: 'close' })).get('tree')).toEqual([s1]);
      expect((await c.segments.termsAmong(col, ['tree'], [])).get('tree')).toEqual([]);
    });

    it('selectiveTerms keeps the terms found in at most max(floor, maxShare × all segments) segments', async () => {
      const col = await collection();
      const v = await video(col);
      // 10 segments: "tree" in all, "field" in 3, "horse" in 1.
      const segs = Array.from({ length: 10 }, (_, i) =>
        seg(i, vec(1, i, 0, 0), { keywords: ['tree', i < 3 ? 'field' : 'sky', i === 0 ? 'horse' : 'cloud'].join(' ') }),
      );
      await c.segments.replaceForVideo(v, col, DIM, segs);
      const terms = ['tree', 'field', 'horse', 'zebra'];
      expect(await c.segments.selectiveTerms(terms, 0.3, 1)).toEqual(['field', 'horse', 'zebra']);
      expect(await c.segments.selectiveTerms(terms, 0.2, 1)).toEqual(['horse', 'zebra']);
      expect(await c.segments.selectiveTerms(terms, 0.2, 5)).toEqual(['field', 'horse', 'zebra']);
      // While the store has no more segments than the floor, every term is kept.
      expect(await c.segments.selectiveTerms(terms, 0.1, 10)).toEqual(terms);
      expect(await c.segments.selectiveTerms(terms)).toEqual(terms);
    });

    it('selectiveTerms follows a video rewritten and a video deleted; a word of only stopwords is kept, a phrase is counted whole', async () => {
      const col = await collection();
      const v = await video(col);
      const w = await video(col);
      const of = (k: number, field: number) => Array.from({ length: k }, (_, i) => seg(i, vec(1, i, 0, 0), { keywords: `${i < field ? 'field' : 'sky'} tree` }));
      await c.segments.replaceForVideo(v, col, DIM, of(6, 3));
      await c.segments.replaceForVideo(w, col, DIM, of(4, 0));
      // 10 segments: field 3, sky 7 (limit 3).
      expect(await c.segments.selectiveTerms(['field', 'sky'], 0.3, 1)).toEqual(['field']);
      // v rewritten: field 5, sky 1 + 4.
      await c.segments.replaceForVideo(v, col, DIM, of(6, 5));
      expect(await c.segments.selectiveTerms(['field', 'sky'], 0.3, 1)).toEqual([]);
      // w deleted: 6 segments (limit 1.8): field 5, sky 1.
      await c.segments.deleteForVideo(w, DIM);
      expect(await c.segments.selectiveTerms(['field', 'sky'], 0.3, 1)).toEqual(['sky']);
      // "the" matches nothing anywhere; "field tree" (5 as a phrase) and "sky tree" (1).
      expect(await c.segments.selectiveTerms(['the', 'field tree', 'sky tree'], 0.3, 1)).toEqual(['the', 'sky tree']);
    });
  });

  describe('signatures and deletion', () => {
    it('put inserts or replaces; forCollection oldest video first; delete; segmentKeys by video id then idx', async () => {
      const col = await collection();
      const other = await collection();
      const v1 = await video(col);
      const v2 = await video(col);
      const vo = await video(other);
      await c.signatures.put(v2, 1, 10, Buffer.from([1, 2, 3]));
      await c.signatures.put(v1, 1, 4, Buffer.from([9]));
      await c.signatures.put(vo, 1, 1, Buffer.from([7]));
      await c.signatures.put(v2, 2, 12, Buffer.from([4, 5, 6, 0, 255]));
      const sigs = await c.signatures.forCollection(col);
      expect(sigs.map((s) => s.video_id)).toEqual([v1, v2]);
      expect(sigs[1]).toEqual({ video_id: v2, version: 2, frames: 12, data: Buffer.from([4, 5, 6, 0, 255]) });
      expect(Buffer.isBuffer(sigs[0].data)).toBe(true);
      await c.signatures.delete(v1);
      expect((await c.signatures.forCollection(col)).map((s) => s.video_id)).toEqual([v2]);
      expect((await c.signatures.forCollection(other)).map((s) => s.video_id)).toEqual([vo]);

      // Ids chosen so that byte order differs from a dictionary order ('B' < '_' < 'a' in bytes).
      const va = 'vid_a';
      const vB = 'vid_B';
      for (const id of [va, vB]) await c.videos.insert({ id, collection_id: col, filename: 'x.mp4', blob_key: `videos/${id}`, size_bytes: 1 });
      await c.segments.replaceForVideo(va, col, DIM, [seg(1, vec(1, 0, 0, 0)), seg(0, vec(0, 1, 0, 0), { phash: 'abcdef0123456789' })]);
      await c.segments.replaceForVideo(vB, col, DIM, [seg(0, vec(1, 0, 0, 0))]);
      expect(await c.signatures.segmentKeys(col)).toEqual([
        { video_id: vB, idx: 0, start: 0, end: 2, phash: null },
        { video_id: va, idx: 0, start: 0, end: 2, phash: 'abcdef0123456789' },
        { video_id: va, idx: 1, start: 2, end: 4, phash: null },
      ]);
      expect(await c.signatures.segmentKeys(other)).toEqual([]);
    });

    it('deleting a video deletes its segments and signature (search no longer finds them); deleting the collection likewise', async () => {
      const col = await collection();
      const v = await video(col);
      const w = await video(col);
      await c.segments.replaceForVideo(v, col, DIM, [seg(0, vec(1, 0, 0, 0), { description: 'lighthouse' })]);
      await c.segments.replaceForVideo(w, col, DIM, [seg(0, vec(0, 1, 0, 0), { description: 'lighthouse' })]);
      await c.signatures.put(v, 1, 1, Buffer.from([1]));
      await c.signatures.put(w, 1, 1, Buffer.from([2]));
      const q = vec(1, 0, 0, 0);
      expect((await c.segments.candidates(col, DIM, q, 10, {}, [])).size).toBe(2); // an index, if any, now holds both
      const [sv] = await idsOf(v);
      const [sw] = await idsOf(w);
      await c.videos.delete(v);
      expect(await c.segments.listForVideo(v)).toEqual([]);
      expect((await c.segments.byIds([sv])).size).toBe(0);
      expect(await c.segments.countForCollection(col)).toBe(1);
      expect([...(await c.segments.candidates(col, DIM, q, 10, {}, [sv])).keys()]).toEqual([sw]);
      expect((await c.segments.termMatches(col, ['lighthouse'], 10)).get('lighthouse')).toEqual([sw]);
      expect((await c.signatures.forCollection(col)).map((s) => s.video_id)).toEqual([w]);
      await c.collections.delete(col);
      expect((await c.segments.byIds([sw])).size).toBe(0);
      expect((await c.segments.candidates(col, DIM, q, 10, {}, [])).size).toBe(0);
      expect(await c.signatures.forCollection(col)).toEqual([]);
    });
  });

  describe('transaction', () => {
    it('commits every write when fn resolves, and hands back its value', async () => {
      const col = await collection();
      const out = await c.transaction(async (tx) => {
        await tx.videos.insert({ id: 'vid_tx', collection_id: col, filename: 'a.mp4', blob_key: 'videos/tx', size_bytes: 1 });
        await tx.segments.replaceForVideo('vid_tx', col, DIM, [seg(0, vec(1, 0, 0, 0), { description: 'harbour' })]);
        await tx.signatures.put('vid_tx', 1, 1, Buffer.from([5]));
        await tx.videos.markProcessed('vid_tx', null);
        // Inside, the transaction sees its own writes.
        expect(await tx.segments.countForCollection(col)).toBe(1);
        expect((await tx.segments.candidates(col, DIM, vec(1, 0, 0, 0), 5, {}, [])).size).toBe(1);
        return tx.queue.enqueue('video.process', 'vid_tx');
      });
      expect(out).toMatch(/^job_/);
      expect((await c.videos.byId('vid_tx'))?.status).toBe('processed');
      expect(await c.segments.countForCollection(col)).toBe(1);
      expect((await c.segments.termMatches(col, ['harbour'], 5)).get('harbour')).toHaveLength(1);
      expect((await c.signatures.forCollection(col)).map((s) => s.video_id)).toEqual(['vid_tx']);
      expect(await c.queue.get(out)).toMatchObject({ refId: 'vid_tx', status: 'queued' });
    });

    it('rolls back every write when fn rejects (the rejection passes through), and the catalog works on', async () => {
      const col = await collection();
      const v = await video(col);
      await c.segments.replaceForVideo(v, col, DIM, [seg(0, vec(1, 0, 0, 0))]);
      const before = await c.segments.listForVideo(v);
      const queued = await c.queue.enqueue('video.process', v);
      let jobInside = '';
      const boom = new Error('boom');
      await expect(
        c.transaction(async (tx) => {
          await tx.segments.replaceForVideo(v, col, DIM, [seg(0, vec(0, 1, 0, 0)), seg(1, vec(0, 0, 1, 0))]);
          await tx.videos.markFailed(v, 'nope');
          await tx.signatures.put(v, 1, 1, Buffer.from([1]));
          await tx.collections.update(col, { description: 'changed' });
          expect(await tx.queue.cancelFor(v)).toBe(1);
          jobInside = await tx.queue.enqueue('video.process', v);
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(await c.segments.listForVideo(v)).toEqual(before);
      expect((await c.videos.byId(v))?.status).toBe('uploaded');
      expect(await c.signatures.forCollection(col)).toEqual([]);
      expect((await c.collections.byId(col))?.description).toBe('');
      expect(await c.queue.get(queued)).toMatchObject({ status: 'queued' });
      expect(jobInside).toMatch(/^job_/);
      expect(await c.queue.get(jobInside)).toBeUndefined();
      expect([...(await c.segments.candidates(col, DIM, vec(0, 1, 0, 0), 5, {}, [])).keys()]).toEqual(before.map((r) => r.id));
      // A failed write inside rejects the transaction too, and nothing of it stays.
      await expect(
        c.transaction(async (tx) => {
          await tx.segments.deleteForVideo(v, DIM);
          await tx.segments.replaceForVideo(v, col, DIM, [seg(0, vec(1, 2, 3))]);
        }),
      ).rejects.toThrow();
      expect(await c.segments.listForVideo(v)).toEqual(before);
      await c.segments.replaceForVideo(v, col, DIM, []);
      expect(await c.segments.countForCollection(col)).toBe(0);
    });

    it('queue.holds: true for the claim that holds the job, false after another claim took it, or once it is settled', async () => {
      const col = await collection();
      const v = await video(col);
      const jobId = await c.queue.enqueue('video.process', v);
      expect(await c.transaction((tx) => tx.queue.holds(jobId, 0))).toBe(false); // queued: nobody holds it
      const first = (await c.queue.claim('w1', 60_000))!;
      expect(first.id).toBe(jobId);
      expect(await c.transaction((tx) => tx.queue.holds(jobId, first.token))).toBe(true);
      expect(await c.transaction((tx) => tx.queue.holds(jobId, first.token + 1))).toBe(false);
      expect(await c.transaction((tx) => tx.queue.holds('job_none', first.token))).toBe(false);
      expect(await c.queue.expireLeasesOf('w1')).toBe(1);
      const second = (await c.queue.claim('w2', 60_000))!;
      expect(second.id).toBe(jobId);
      expect(second.token).toBeGreaterThan(first.token);
      // The fencing check: the first worker's results are refused, the second's land.
      const write = (token: number, description: string) =>
        c.transaction(async (tx) => {
          if (!(await tx.queue.holds(jobId, token))) return false;
          await tx.segments.replaceForVideo(v, col, DIM, [seg(0, vec(1, 0, 0, 0), { description })]);
          return true;
        });
      expect(await write(first.token, 'stale')).toBe(false);
      expect(await write(second.token, 'fresh')).toBe(true);
      expect((await c.segments.listForVideo(v)).map((r) => r.description)).toEqual(['fresh']);
      expect(await c.queue.holds(jobId, second.token)).toBe(true);
      expect(await c.queue.complete(jobId, second.token)).toBe(true);
      expect(await c.transaction((tx) => tx.queue.holds(jobId, second.token))).toBe(false);
      expect(await c.queue.holds(jobId, second.token)).toBe(false);
    });

    it('queue.complete in a transaction: the job is done exactly when the results commit, and only under the token that holds it', async () => {
      const col = await collection();
      const v = await video(col);
      const jobId = await c.queue.enqueue('video.process', v);
      const job = (await c.queue.claim('w1', 60_000))!;
      const settle = (token: number, fail: boolean) =>
        c.transaction(async (tx) => {
          if (!(await tx.queue.complete(jobId, token))) return false;
          await tx.segments.replaceForVideo(v, col, DIM, [seg(0, vec(0, 1, 0, 0))]);
          if (fail) throw new Error('the write failed');
          return true;
        });
      expect(await settle(job.token + 1, false)).toBe(false); // not its claim: nothing written, nothing settled
      expect((await c.queue.get(jobId))?.status).toBe('running');
      await expect(settle(job.token, true)).rejects.toThrow('the write failed');
      expect((await c.queue.get(jobId))?.status).toBe('running'); // rolled back with the results
      expect(await c.segments.listForVideo(v)).toEqual([]);
      expect(await settle(job.token, false)).toBe(true);
      expect((await c.queue.get(jobId))?.status).toBe('done');
      expect((await c.segments.listForVideo(v)).length).toBe(1);
      expect(await c.queue.complete(jobId, job.token)).toBe(false); // once
    });
  });

  describe('several processes', () => {
    it('a segment written through one catalog is found by another already searching, without reopening it; a deletion likewise disappears', async () => {
      const col = await collection();
      const reader = await another();
      const q = vec(1, 0, 0, 0);
      const v = await video(col);
      await c.segments.replaceForVideo(v, col, DIM, [seg(0, vec(1, 0.2, 0, 0), { description: 'windmill' })]);
      const first = await idsOf(v);
      expect([...(await reader.segments.candidates(col, DIM, q, 5, {}, [])).keys()]).toEqual(first);

      // Written elsewhere after the reader loaded the collection.
      const w = await video(col);
      await c.segments.replaceForVideo(w, col, DIM, [seg(0, vec(1, 0, 0, 0)), seg(1, vec(0, 1, 0, 0))]);
      const [near, far] = await idsOf(w);
      let got = await reader.segments.candidates(col, DIM, q, 2, {}, []);
      expect([...got.keys()].sort((a, b) => a - b)).toEqual([first[0], near].sort((a, b) => a - b));
      expect(got.get(near)!.similarity).toBeCloseTo(1, 5);
      expect(sortedIds(await reader.segments.candidates(col, DIM, q, 10, {}, []))).toEqual([...first, near, far].sort((a, b) => a - b));
      expect((await reader.segments.termMatches(col, ['windmill'], 5)).get('windmill')).toEqual(first);

      // Replaced and deleted elsewhere.
      await c.segments.replaceForVideo(w, col, DIM, [seg(0, vec(0, 0, 1, 0))]);
      const [replaced] = await idsOf(w);
      await c.segments.deleteForVideo(v, DIM);
      got = await reader.segments.candidates(col, DIM, q, 10, {}, []);
      expect([...got.keys()]).toEqual([replaced]);
      await c.segments.deleteForVideo(w, DIM);
      expect((await reader.segments.candidates(col, DIM, q, 10, {}, [])).size).toBe(0);
      expect(await reader.segments.countForCollection(col)).toBe(0);
    });
  });
}

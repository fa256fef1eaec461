import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TaskKind } from '../../src/api/types.js';
import {
  API_KEY_FIELDS,
  COLLECTION_FIELDS,
  CollectionNameTakenError,
  TASK_FIELDS,
  VIDEO_FIELDS,
  type Catalog,
  type CollectionRow,
} from '../../src/store/catalog/types.js';
import { hashKey } from '../../src/store/keys.js';
import type { JobKind, JobQueue } from '../../src/store/queue/types.js';

export interface Handle {
  catalog: Catalog;
  /** The job queue of the same store (the stranded rules are about the catalog's rows and the queue's jobs). */
  queue: JobQueue;
  close(): Promise<void>;
}

export interface Backend {
  /** A new connection (SQLite) or pool (PostgreSQL) on the same store. */
  open(): Promise<Handle>;
}

const LONG = 60_000;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** An ISO time as Date#toISOString writes it (and a real instant, not just the right shape). */
function expectIso(value: string | null): void {
  expect(value).toMatch(ISO);
  expect(new Date(value!).toISOString()).toBe(value);
}

const sortedKeys = (row: object) => Object.keys(row).sort();

/**
 * Returns once this process's clock has moved to the next millisecond. SQLite rows are stamped
 * with it at millisecond resolution, and the one order by time that has no tie-breaker (the job
 * whose error `stranded` reports) leaves same-millisecond rows in any order: the tests that check
 * it make the times differ. Nothing asserts how long anything took.
 */
function nextMillisecond(): void {
  const t = Date.now();
  while (Date.now() === t) {
    /* spin: at most a millisecond */
  }
}

/**
 * The rules of src/store/catalog/types.ts, run against one backend. `backend()` is read in each
 * test (the describe block sets it up in a hook), and every test starts from an empty store.
 */
export function conformance(backend: () => Backend): void {
  let h: Handle;
  let c: Catalog;
  const extra: Handle[] = [];
  beforeEach(async () => {
    h = await backend().open();
    c = h.catalog;
  });
  afterEach(async () => {
    for (const x of extra.splice(0)) await x.close();
    await h.close();
  });
  const another = async () => {
    const x = await backend().open();
    extra.push(x);
    return x;
  };

  const collection = (name: string, owner?: string) => c.collections.insert({ name, description: '', model: 'clip-vit-b32', dim: 512, owner });
  let vids = 0;
  const video = (collectionId: string, more: { content_sha256?: string; id?: string } = {}) => {
    const n = ++vids;
    return c.videos.insert({ id: `vid_${n}`, collection_id: collectionId, filename: 'a.mp4', blob_key: `videos/${n}.mp4`, size_bytes: 1000, ...more });
  };

  describe('collections', () => {
    it('insert hands back the row byId reads: exactly the row fields, owner "default", video_count 0, recipe null, an ISO time', async () => {
      const row = await c.collections.insert({ name: 'trips', description: 'summer', model: 'clip-vit-b32', dim: 512 });
      expect(row).toEqual({
        id: expect.stringMatching(/^col_/),
        owner: 'default',
        name: 'trips',
        description: 'summer',
        model: 'clip-vit-b32',
        dim: 512,
        created_at: expect.any(String),
        video_count: 0,
        recipe_json: null,
      });
      expect(sortedKeys(row)).toEqual([...COLLECTION_FIELDS].sort());
      expectIso(row.created_at);
      expect(await c.collections.byId(row.id)).toEqual(row);
      expect(await c.collections.byId('col_missing')).toBeUndefined();
      const other = await collection('trips', 'alice');
      expect(other.owner).toBe('alice');
      expect(other.id).not.toBe(row.id);
    });

    it('names are unique per owner: another owner may reuse a name, the same owner may not (insert or rename), and a refused write changes nothing', async () => {
      const mine = await collection('trips');
      const theirs = await collection('trips', 'alice');
      expect(theirs.name).toBe('trips');
      const dup = await c.collections.insert({ name: 'trips', description: 'again', model: 'm', dim: 3 }).catch((e: unknown) => e);
      expect(dup).toBeInstanceOf(CollectionNameTakenError);
      expect(dup).toMatchObject({ collectionName: 'trips', owner: 'default' });
      await expect(collection('trips', 'alice')).rejects.toBeInstanceOf(CollectionNameTakenError);
      expect(await c.collections.byName('trips')).toEqual([mine]);
      expect(await c.collections.byName('trips', 'alice')).toEqual([theirs]);
      expect((await c.collections.list(10, 0)).map((r) => r.id)).toEqual([theirs.id, mine.id]);

      const other = await collection('other');
      const renamed = await c.collections.update(other.id, { name: 'trips', description: 'changed' }).catch((e: unknown) => e);
      expect(renamed).toBeInstanceOf(CollectionNameTakenError);
      expect(renamed).toMatchObject({ collectionName: 'trips', owner: 'default' });
      expect(await c.collections.byId(other.id)).toEqual(other);
      // Alice's "trips" does not stand in the way of a default-owner rename to a free name, nor the reverse.
      await c.collections.update(theirs.id, { name: 'other' });
      expect((await c.collections.byId(theirs.id))?.name).toBe('other');
      await c.collections.update(mine.id, { name: 'trips' }); // its own name: no conflict
      expect((await c.collections.byId(mine.id))?.name).toBe('trips');
    });

    it('owner = null means every owner\'s: byName defaults to the owner "default", null finds them all, oldest first', async () => {
      const alice = await collection('x', 'alice');
      const def = await collection('x');
      const bob = await collection('x', 'bob');
      await collection('y', 'alice');
      expect(await c.collections.byName('x')).toEqual([def]);
      expect(await c.collections.byName('x', 'bob')).toEqual([bob]);
      expect(await c.collections.byName('x', 'carol')).toEqual([]);
      expect(await c.collections.byName('x', null)).toEqual([alice, def, bob]);
      expect(await c.collections.byName('nothing', null)).toEqual([]);
    });

    it('list: newest first by creation order (also within one millisecond), paged, of every owner unless one is given', async () => {
      const made: CollectionRow[] = [];
      for (let i = 0; i < 6; i++) made.push(await collection(`c${i}`, i % 2 ? 'alice' : 'bob'));
      const newest = [...made].reverse();
      expect(await c.collections.list(100, 0)).toEqual(newest);
      expect(await c.collections.list(100, 0, null)).toEqual(newest);
      expect(await c.collections.list(2, 1)).toEqual(newest.slice(1, 3));
      expect(await c.collections.list(2, 5)).toEqual(newest.slice(5));
      expect(await c.collections.list(5, 6)).toEqual([]);
      expect((await c.collections.list(100, 0, 'alice')).map((r) => r.name)).toEqual(['c5', 'c3', 'c1']);
      expect((await c.collections.list(1, 1, 'bob')).map((r) => r.name)).toEqual(['c2']);
      expect(await c.collections.list(100, 0, 'default')).toEqual([]);
    });

    it('update changes only the fields given; setRecipe stores the recipe as JSON text', async () => {
      const row = await c.collections.insert({ name: 'a', description: 'first', model: 'm', dim: 8 });
      await c.collections.update(row.id, { description: 'second' });
      expect(await c.collections.byId(row.id)).toEqual({ ...row, description: 'second' });
      await c.collections.update(row.id, { name: 'b' });
      expect(await c.collections.byId(row.id)).toEqual({ ...row, name: 'b', description: 'second' });
      await c.collections.update(row.id, {});
      expect(await c.collections.byId(row.id)).toEqual({ ...row, name: 'b', description: 'second' });
      expect(await c.collections.byName('a')).toEqual([]);

      const recipe = { embedder: 'clip-vit-b32@2', tagger: 'tags@5' };
      await c.collections.setRecipe(row.id, recipe);
      const after = await c.collections.byId(row.id);
      expect(after?.recipe_json).toBe(JSON.stringify(recipe));
      expect(JSON.parse(after!.recipe_json!)).toEqual(recipe);
    });

    it('video_count is the number of its videos now, in every row handed back; delete takes the videos along', async () => {
      const full = await collection('full', 'alice');
      const empty = await collection('empty', 'alice');
      const v1 = await video(full.id);
      await video(full.id);
      await video(full.id);
      expect((await c.collections.byId(full.id))?.video_count).toBe(3);
      expect((await c.collections.byName('full', 'alice'))[0].video_count).toBe(3);
      expect((await c.collections.byName('full', null))[0].video_count).toBe(3);
      expect((await c.collections.list(10, 0)).map((r) => [r.name, r.video_count])).toEqual([
        ['empty', 0],
        ['full', 3],
      ]);
      await c.videos.delete(v1.id);
      expect((await c.collections.byId(full.id))?.video_count).toBe(2);
      expect((await c.collections.byId(empty.id))?.video_count).toBe(0);

      await c.collections.delete(full.id);
      expect(await c.collections.byId(full.id)).toBeUndefined();
      expect(await c.videos.listByCollection(full.id)).toEqual([]);
      expect(await c.videos.byId(v1.id)).toBeUndefined();
      expect(await c.collections.list(10, 0)).toEqual([{ ...empty, video_count: 0 }]);
      await c.collections.delete('col_missing'); // nothing to do, no error
      expect(await c.collections.byId(empty.id)).toEqual(empty);
    });
  });

  describe('videos', () => {
    it('insert: by blob key or by path, exactly one; a new video is uploaded, with exactly the row fields', async () => {
      const col = await collection('c');
      const byKey = await c.videos.insert({ id: 'vid_key', collection_id: col.id, filename: 'big.mp4', blob_key: 'videos/big.mp4', size_bytes: 5_000_000_000, content_sha256: 'ab' });
      expect(byKey).toEqual({
        id: 'vid_key',
        collection_id: col.id,
        filename: 'big.mp4',
        path: '',
        blob_key: 'videos/big.mp4',
        size_bytes: 5_000_000_000,
        status: 'uploaded',
        progress: null,
        error_message: null,
        duration: null,
        width: null,
        height: null,
        fps: null,
        codec: null,
        playback: null,
        tags_json: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        fingerprint: null,
        file_mtime: null,
      });
      expect(sortedKeys(byKey)).toEqual([...VIDEO_FIELDS].sort());
      expectIso(byKey.created_at);
      expect(byKey.updated_at).toBe(byKey.created_at);
      expect(await c.videos.byId('vid_key')).toEqual(byKey);

      const byPath = await c.videos.insert({ id: 'vid_path', collection_id: col.id, filename: 'old.mp4', path: '/data/old.mp4', size_bytes: 10 });
      expect(byPath).toMatchObject({ path: '/data/old.mp4', blob_key: null, size_bytes: 10, status: 'uploaded' });
      expect(sortedKeys(byPath)).toEqual([...VIDEO_FIELDS].sort());

      await expect(c.videos.insert({ id: 'vid_none', collection_id: col.id, filename: 'x', size_bytes: 1 })).rejects.toThrow(/exactly one of path and blob_key/);
      await expect(c.videos.insert({ id: 'vid_both', collection_id: col.id, filename: 'x', path: '/x', blob_key: 'x', size_bytes: 1 })).rejects.toThrow(
        /exactly one of path and blob_key/,
      );
      await expect(c.videos.insert({ id: 'vid_empty', collection_id: col.id, filename: 'x', path: '', blob_key: '', size_bytes: 1 })).rejects.toThrow(
        /exactly one of path and blob_key/,
      );
      await expect(c.videos.insert({ id: 'vid_orphan', collection_id: 'col_missing', filename: 'x', blob_key: 'x', size_bytes: 1 })).rejects.toThrow();
      for (const id of ['vid_none', 'vid_both', 'vid_empty', 'vid_orphan']) expect(await c.videos.byId(id)).toBeUndefined();
      expect((await c.videos.listByCollection(col.id)).map((v) => v.id)).toEqual(['vid_key', 'vid_path']);
      expect(await c.videos.byId('vid_missing')).toBeUndefined();
    });

    it('byIds: exactly what byId reads for each id that exists, missing ids left out, a repeated id once', async () => {
      const col = await collection('c');
      const a = await c.videos.insert({ id: 'vid_a', collection_id: col.id, filename: 'a.mp4', blob_key: 'videos/a', size_bytes: 1 });
      const b = await c.videos.insert({ id: 'vid_b', collection_id: col.id, filename: 'b.mp4', path: '/data/b.mp4', size_bytes: 2 });
      await c.videos.markProcessed(b.id, '{"cuts":[]}');
      const got = await c.videos.byIds(['vid_b', 'vid_missing', 'vid_a', 'vid_b']);
      expect([...got.keys()].sort()).toEqual(['vid_a', 'vid_b']);
      expect(got.get('vid_a')).toEqual(await c.videos.byId(a.id));
      expect(got.get('vid_b')).toEqual(await c.videos.byId(b.id));
      expect(got.get('vid_b')?.tags_json).toBe('{"cuts":[]}');
      expect((await c.videos.byIds([])).size).toBe(0);
      expect([...(await c.videos.byIds(['vid_a'])).values()]).toEqual([await c.videos.byId(a.id)]);
      expect((await c.videos.byIds(['vid_missing'])).size).toBe(0);
    });

    it('byContent: the oldest video of that collection with those bytes, and only of that collection', async () => {
      const a = await collection('a');
      const b = await collection('b');
      const inB = await video(b.id, { content_sha256: 'f00d' });
      const first = await video(a.id, { content_sha256: 'f00d' });
      await video(a.id, { content_sha256: 'f00d' });
      await video(a.id, { content_sha256: 'beef' });
      await video(a.id);
      expect(await c.videos.byContent(a.id, 'f00d')).toEqual(first);
      expect(await c.videos.byContent(b.id, 'f00d')).toEqual(inB);
      expect((await c.videos.byContent(a.id, 'beef'))?.id).not.toBe(first.id);
      expect(await c.videos.byContent(a.id, 'cafe')).toBeUndefined();
      expect(await c.videos.byContent(b.id, 'beef')).toBeUndefined();
    });

    it('page: newest first (later insert first within a millisecond), optionally of one status, paged; listByCollection and idsForCollection oldest first', async () => {
      const col = await collection('c');
      const other = await collection('other');
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await video(col.id)).id);
      const elsewhere = await video(other.id);
      const [v0, v1, v2, v3, v4] = ids;
      await c.videos.markProcessed(v1, null);
      await c.videos.markProcessed(v3, null);
      await c.videos.markFailed(v4, 'bad');

      const page = async (opts: Parameters<Catalog['videos']['page']>[1]) => (await c.videos.page(col.id, opts)).map((v) => v.id);
      expect(await page({ limit: 100, offset: 0 })).toEqual([v4, v3, v2, v1, v0]);
      expect(await page({ limit: 2, offset: 1 })).toEqual([v3, v2]);
      expect(await page({ limit: 10, offset: 5 })).toEqual([]);
      expect(await page({ status: 'processed', limit: 10, offset: 0 })).toEqual([v3, v1]);
      expect(await page({ status: 'processed', limit: 1, offset: 1 })).toEqual([v1]);
      expect(await page({ status: 'uploaded', limit: 10, offset: 0 })).toEqual([v2, v0]);
      expect(await page({ status: 'processing', limit: 10, offset: 0 })).toEqual([]);
      const rows = await c.videos.page(col.id, { limit: 1, offset: 0 });
      expect(rows).toEqual([await c.videos.byId(v4)]);

      expect((await c.videos.listByCollection(col.id)).map((v) => v.id)).toEqual(ids);
      expect(await c.videos.listByCollection(other.id)).toEqual([elsewhere]);
      expect(await c.videos.idsForCollection(col.id, ['uploaded'])).toEqual([v0, v2]);
      expect(await c.videos.idsForCollection(col.id, ['processed', 'failed'])).toEqual([v1, v3, v4]);
      expect(await c.videos.idsForCollection(col.id, ['uploaded', 'processing', 'processed', 'failed'])).toEqual(ids);
      expect(await c.videos.idsForCollection(col.id, [])).toEqual([]);
      expect(await c.videos.idsForCollection(other.id, ['processed'])).toEqual([]);

      await c.videos.delete(v2);
      expect(await c.videos.byId(v2)).toBeUndefined();
      expect(await page({ limit: 100, offset: 0 })).toEqual([v4, v3, v1, v0]);
    });

    it('lifecycle: processing resets progress and error; progress counts only while processing, clamped and to one decimal; processed; failed', async () => {
      const col = await collection('c');
      const v = await video(col.id);
      const get = async () => (await c.videos.byId(v.id))!;

      await c.videos.setProgress(v.id, 50); // not processing yet: ignored
      expect((await get()).progress).toBeNull();

      await c.videos.markFailed(v.id, 'no decoder');
      expect(await get()).toMatchObject({ status: 'failed', progress: null, error_message: 'no decoder' });

      await c.videos.markProcessing(v.id);
      expect(await get()).toMatchObject({ status: 'processing', progress: 0, error_message: null });
      await c.videos.setProgress(v.id, 33.333);
      expect((await get()).progress).toBe(33.3);
      await c.videos.setProgress(v.id, 66.66);
      expect((await get()).progress).toBe(66.7);
      await c.videos.setProgress(v.id, 150);
      expect((await get()).progress).toBe(100);
      await c.videos.setProgress(v.id, -5);
      expect((await get()).progress).toBe(0);

      await c.videos.setMediaInfo(v.id, { duration: 12.5, width: 1080, height: 1920, fps: 29.97 });
      expect(await get()).toMatchObject({ duration: 12.5, width: 1080, height: 1920, fps: 29.97, codec: null, status: 'processing' });
      await c.videos.setMediaInfo(v.id, { duration: 3, width: 640, height: 360, fps: 25, codec: 'hevc', playback: 'proxy' });
      expect(await get()).toMatchObject({ duration: 3, width: 640, height: 360, fps: 25, codec: 'hevc', playback: 'proxy' });
      // The tags alone, while still processing (the picture lane is done, speech is not).
      await c.videos.setTags(v.id, '{"early":true}');
      expect(await get()).toMatchObject({ status: 'processing', tags_json: '{"early":true}', progress: 0 });

      const tags = JSON.stringify({ tags: ['beach', 'sunset'], score: 0.5 });
      await c.videos.markProcessed(v.id, tags);
      const done = await get();
      expect(done).toMatchObject({ status: 'processed', progress: 100, error_message: null, tags_json: tags, codec: 'hevc' });
      expectIso(done.updated_at);
      expect(Date.parse(done.updated_at)).toBeGreaterThanOrEqual(Date.parse(done.created_at));
      await c.videos.setProgress(v.id, 10); // processed: ignored
      expect((await get()).progress).toBe(100);

      await c.videos.markProcessing(v.id);
      await c.videos.markFailed(v.id, 'worker died');
      expect(await get()).toMatchObject({ status: 'failed', progress: null, error_message: 'worker died' });
      await c.videos.markProcessed(v.id, null);
      expect(await get()).toMatchObject({ status: 'processed', progress: 100, error_message: null, tags_json: null });
    });

    it('countsByStatus: every status, 0 for those without videos, of this collection only; countWaiting: uploaded + processing', async () => {
      const col = await collection('c');
      const other = await collection('other');
      expect(await c.videos.countsByStatus(col.id)).toEqual({ uploaded: 0, processing: 0, processed: 0, failed: 0 });
      expect(await c.videos.countWaiting(col.id)).toBe(0);
      const vs = [];
      for (let i = 0; i < 6; i++) vs.push(await video(col.id));
      await video(other.id);
      await c.videos.markProcessing(vs[0].id);
      await c.videos.markProcessed(vs[1].id, null);
      await c.videos.markProcessed(vs[2].id, null);
      await c.videos.markFailed(vs[3].id, 'x');
      expect(await c.videos.countsByStatus(col.id)).toEqual({ uploaded: 2, processing: 1, processed: 2, failed: 1 });
      expect(await c.videos.countsByStatus(other.id)).toEqual({ uploaded: 1, processing: 0, processed: 0, failed: 0 });
      expect(await c.videos.countsByStatus('col_missing')).toEqual({ uploaded: 0, processing: 0, processed: 0, failed: 0 });
      expect(await c.videos.countWaiting(col.id)).toBe(3);
      expect(await c.videos.countWaiting(other.id)).toBe(1);
      expect(await c.videos.countWaiting('col_missing')).toBe(0);
      await c.videos.markProcessed(vs[0].id, null);
      expect(await c.videos.countWaiting(col.id)).toBe(2);
    });

    it('bytesOfOwner: the sizes of the videos in the owner\'s collections, summed; 0 for none', async () => {
      const mine = await c.collections.insert({ name: 'm1', description: '', model: 'm', dim: 4, owner: 'ann' });
      const mine2 = await c.collections.insert({ name: 'm2', description: '', model: 'm', dim: 4, owner: 'ann' });
      const theirs = await c.collections.insert({ name: 't', description: '', model: 'm', dim: 4, owner: 'ben' });
      expect(await c.videos.bytesOfOwner('ann')).toBe(0);
      await c.videos.insert({ id: 'vid_q1', collection_id: mine.id, filename: 'a.mp4', blob_key: 'videos/a.mp4', size_bytes: 3_000_000_000 });
      await c.videos.insert({ id: 'vid_q2', collection_id: mine2.id, filename: 'b.mp4', blob_key: 'videos/b.mp4', size_bytes: 5 });
      await c.videos.insert({ id: 'vid_q3', collection_id: theirs.id, filename: 'c.mp4', blob_key: 'videos/c.mp4', size_bytes: 7 });
      expect(await c.videos.bytesOfOwner('ann')).toBe(3_000_000_005);
      expect(await c.videos.bytesOfOwner('ben')).toBe(7);
      expect(await c.videos.bytesOfOwner('nobody')).toBe(0);
      await c.videos.delete('vid_q1');
      expect(await c.videos.bytesOfOwner('ann')).toBe(5);
    });

    it('failedWith: failed videos of every collection with exactly that message, least recently updated first, limited', async () => {
      const a = await collection('a');
      const b = await collection('b');
      const vs = [await video(a.id), await video(b.id), await video(a.id), await video(a.id), await video(b.id)];
      const full = 'storage full';
      await c.videos.markFailed(vs[1].id, full);
      await c.videos.markFailed(vs[0].id, full);
      await c.videos.markFailed(vs[2].id, 'storage full!'); // another message
      await c.videos.markProcessing(vs[3].id); // not failed
      await c.videos.markFailed(vs[4].id, full);
      await c.videos.markProcessed(vs[4].id, null); // failed once, processed now
      const got = await c.videos.failedWith(full, 10);
      expect([...got].sort()).toEqual([vs[0].id, vs[1].id].sort());
      const rows = await Promise.all(got.map(async (id) => (await c.videos.byId(id))!.updated_at));
      expect(rows).toEqual([...rows].sort());
      expect(await c.videos.failedWith(full, 1)).toEqual(got.slice(0, 1));
      expect(await c.videos.failedWith('nothing failed so', 10)).toEqual([]);
    });

    it('in place: path with fingerprint and file_mtime (both or neither, never with a blob key); byFingerprint the oldest of the collection; fileSeen moves it', async () => {
      const col = await collection('c');
      const other = await collection('other');
      const mtime = '2026-05-01T10:00:00.123Z';
      const v = await c.videos.insert({ id: 'vid_here', collection_id: col.id, filename: 'a b é.mov', path: '/footage/a b é.mov', size_bytes: 7, fingerprint: 'fp1:aa', file_mtime: mtime });
      expect(v).toMatchObject({ path: '/footage/a b é.mov', blob_key: null, fingerprint: 'fp1:aa', file_mtime: mtime, status: 'uploaded' });
      expect(sortedKeys(v)).toEqual([...VIDEO_FIELDS].sort());
      expect(await c.videos.byId(v.id)).toEqual(v);
      for (const bad of [
        { id: 'vid_nomtime', fingerprint: 'fp1:bb', path: '/x' },
        { id: 'vid_nofp', file_mtime: mtime, path: '/x' },
        { id: 'vid_key', fingerprint: 'fp1:bb', file_mtime: mtime, blob_key: 'videos/x' },
      ]) {
        await expect(c.videos.insert({ collection_id: col.id, filename: 'x', size_bytes: 1, ...bad })).rejects.toThrow(/in place|exactly one/);
        expect(await c.videos.byId(bad.id)).toBeUndefined();
      }
      nextMillisecond();
      const copy = await c.videos.insert({ id: 'vid_copy', collection_id: col.id, filename: 'c.mov', path: '/elsewhere/c.mov', size_bytes: 7, fingerprint: 'fp1:aa', file_mtime: mtime });
      await c.videos.insert({ id: 'vid_there', collection_id: other.id, filename: 'a.mov', path: '/footage/a.mov', size_bytes: 7, fingerprint: 'fp1:cc', file_mtime: mtime });
      expect((await c.videos.byFingerprint(col.id, 'fp1:aa'))?.id).toBe(v.id);
      expect(await c.videos.byFingerprint(col.id, 'fp1:cc')).toBeUndefined();
      expect((await c.videos.byFingerprint(other.id, 'fp1:cc'))?.id).toBe('vid_there');

      nextMillisecond();
      const seen = { path: '/footage/day 2/renamed.mov', filename: 'renamed.mov', size_bytes: 9, fingerprint: 'fp1:dd', file_mtime: '2026-05-02T11:00:00.000Z' };
      await c.videos.fileSeen(v.id, seen);
      const moved = (await c.videos.byId(v.id))!;
      expect(moved).toMatchObject(seen);
      expect(moved.updated_at > v.updated_at).toBe(true);
      expect((await c.videos.byFingerprint(col.id, 'fp1:aa'))?.id).toBe(copy.id);
      // A video the library holds is not in place: fileSeen leaves it alone.
      const held = await video(col.id);
      await c.videos.fileSeen(held.id, seen);
      expect(await c.videos.byId(held.id)).toEqual(held);
    });

    it('byFilename: exactly that name (case and all) in the collections given, oldest first, limited', async () => {
      const a = await collection('a');
      const b = await collection('b');
      const elsewhere = await collection('elsewhere');
      const mtime = '2026-05-01T10:00:00.000Z';
      const first = await c.videos.insert({ id: 'vid_card1', collection_id: a.id, filename: 'C0001.MP4', path: '/cards/card-01/C0001.MP4', size_bytes: 7, fingerprint: 'fp1:01', file_mtime: mtime });
      nextMillisecond();
      const second = await c.videos.insert({ id: 'vid_card2', collection_id: b.id, filename: 'C0001.MP4', blob_key: 'videos/vid_card2.mp4', size_bytes: 7 });
      nextMillisecond();
      await c.videos.insert({ id: 'vid_card3', collection_id: elsewhere.id, filename: 'C0001.MP4', blob_key: 'videos/vid_card3.mp4', size_bytes: 7 });
      await c.videos.insert({ id: 'vid_lower', collection_id: a.id, filename: 'c0001.mp4', blob_key: 'videos/vid_lower.mp4', size_bytes: 7 });
      expect((await c.videos.byFilename([a.id, b.id], 'C0001.MP4', 10)).map((v) => v.id)).toEqual([first.id, second.id]);
      expect(await c.videos.byFilename([a.id, b.id], 'C0001.MP4', 10)).toEqual([first, second]);
      expect((await c.videos.byFilename([a.id, b.id], 'C0001.MP4', 1)).map((v) => v.id)).toEqual([first.id]);
      expect((await c.videos.byFilename([a.id], 'c0001.mp4', 10)).map((v) => v.id)).toEqual(['vid_lower']);
      expect(await c.videos.byFilename([a.id, b.id], 'C0002.MP4', 10)).toEqual([]);
      expect(await c.videos.byFilename([], 'C0001.MP4', 10)).toEqual([]);
    });

    it('folders in place: added once per collection, listed in the order added, forgotten with the collection', async () => {
      const col = await collection('c');
      const other = await collection('other');
      await c.folders.add(col.id, '/footage/b');
      await c.folders.add(col.id, '/footage/a');
      await c.folders.add(col.id, '/footage/b');
      await c.folders.add(other.id, '/footage/b');
      expect(await c.folders.list(col.id)).toEqual(['/footage/b', '/footage/a']);
      expect(await c.folders.list(other.id)).toEqual(['/footage/b']);
      await expect(c.folders.add('col_missing', '/x')).rejects.toThrow();
      await c.collections.delete(col.id);
      expect(await c.folders.list(col.id)).toEqual([]);
      expect(await c.folders.list(other.id)).toEqual(['/footage/b']);
    });

    it('files deleted in place: excluded by fingerprint per collection, the path updated, included again, forgotten with the collection', async () => {
      const col = await collection('c');
      const other = await collection('other');
      await c.folders.exclude(col.id, 'fp1:aa', '/footage/a.mp4');
      await c.folders.exclude(col.id, 'fp1:bb', '/footage/b.mp4');
      await c.folders.exclude(col.id, 'fp1:aa', '/footage/moved/a.mp4');
      await c.folders.exclude(other.id, 'fp1:aa', '/elsewhere/a.mp4');
      expect(await c.folders.excluded(col.id)).toEqual(new Map([['fp1:aa', '/footage/moved/a.mp4'], ['fp1:bb', '/footage/b.mp4']]));
      await c.folders.include(col.id, 'fp1:bb');
      await c.folders.include(col.id, 'fp1:zz'); // nothing to forget: no error
      expect(await c.folders.excluded(col.id)).toEqual(new Map([['fp1:aa', '/footage/moved/a.mp4']]));
      await expect(c.folders.exclude('col_missing', 'fp1:aa', '/x')).rejects.toThrow();
      await c.collections.delete(col.id);
      expect(await c.folders.excluded(col.id)).toEqual(new Map());
      expect(await c.folders.excluded(other.id)).toEqual(new Map([['fp1:aa', '/elsewhere/a.mp4']]));
    });
  });

  describe('tasks', () => {
    it('insert: pending, owner "default", the request as JSON text, exactly the row fields', async () => {
      const request = { texts: ['a cat', 'a dog'], model: 'clip' };
      const row = await c.tasks.insert('req_1', 'embedding', request);
      expect(row).toEqual({
        id: 'req_1',
        kind: 'embedding',
        owner: 'default',
        status: 'pending',
        request_json: JSON.stringify(request),
        result_json: null,
        error_message: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      expect(sortedKeys(row)).toEqual([...TASK_FIELDS].sort());
      expectIso(row.created_at);
      expect(row.updated_at).toBe(row.created_at);
      expect(await c.tasks.byId('req_1')).toEqual(row);
      expect(await c.tasks.insert('req_2', 'tagging', { video: 'v' }, 'alice')).toMatchObject({ kind: 'tagging', owner: 'alice', status: 'pending' });
      await expect(c.tasks.insert('req_3', 'translation' as TaskKind, {})).rejects.toThrow();
      expect(await c.tasks.byId('req_3')).toBeUndefined();
      expect(await c.tasks.byId('req_missing')).toBeUndefined();
    });

    it('processing, complete (result as JSON text, error cleared), fail (message stored, an earlier result kept)', async () => {
      await c.tasks.insert('req_1', 'tagging', {});
      await c.tasks.markProcessing('req_1');
      expect(await c.tasks.byId('req_1')).toMatchObject({ status: 'processing', result_json: null, error_message: null });
      await c.tasks.fail('req_1', 'oom');
      expect(await c.tasks.byId('req_1')).toMatchObject({ status: 'failed', error_message: 'oom', result_json: null });
      const result = { tags: [{ name: 'beach', score: 0.9 }] };
      await c.tasks.complete('req_1', result);
      const done = await c.tasks.byId('req_1');
      expect(done).toMatchObject({ status: 'completed', error_message: null, result_json: JSON.stringify(result) });
      expectIso(done!.updated_at);
      await c.tasks.fail('req_1', 'late failure');
      expect(await c.tasks.byId('req_1')).toMatchObject({ status: 'failed', error_message: 'late failure', result_json: JSON.stringify(result) });
    });

    it('delete removes the task (a missing id: nothing); settledBefore: completed and failed ones updated before the time, least recent first, limited', async () => {
      for (const id of ['req_a', 'req_b', 'req_c', 'req_d', 'req_e']) await c.tasks.insert(id, 'embedding', {});
      await c.tasks.complete('req_b', {});
      await c.tasks.fail('req_c', 'x');
      await c.tasks.markProcessing('req_d'); // unsettled: never listed
      await c.tasks.complete('req_e', {});
      const rows = await Promise.all(['req_b', 'req_c', 'req_e'].map(async (id) => (await c.tasks.byId(id))!));
      const latest = rows.map((r) => r.updated_at).sort().at(-1)!;
      const after = new Date(Date.parse(latest) + 1000).toISOString();
      const settled = await c.tasks.settledBefore(after, 10);
      expect(settled.map((t) => t.id).sort()).toEqual(['req_b', 'req_c', 'req_e']);
      for (const t of settled) expect(sortedKeys(t)).toEqual([...TASK_FIELDS].sort());
      expect(settled.map((t) => t.updated_at)).toEqual(settled.map((t) => t.updated_at).sort());
      expect(await c.tasks.settledBefore(after, 2)).toEqual(settled.slice(0, 2));
      expect(await c.tasks.settledBefore(new Date(Date.parse(rows[0].created_at) - 60_000).toISOString(), 10)).toEqual([]);
      await c.tasks.delete('req_c');
      await c.tasks.delete('req_missing');
      expect(await c.tasks.byId('req_c')).toBeUndefined();
      expect((await c.tasks.settledBefore(after, 10)).map((t) => t.id).sort()).toEqual(['req_b', 'req_e']);
      expect(await c.tasks.byId('req_a')).toMatchObject({ status: 'pending' });
    });
  });

  it('stranded videos and tasks: waiting, with no queued or running job; with the last error of the job updated last', async () => {
    const col = await collection('c');
    const ids = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'];
    for (const id of ids) await video(col.id, { id: `vid_${id}` });
    const claimAndFail = async (kind: JobKind, ref: string, error: string) => {
      const id = await h.queue.enqueue(kind, ref);
      const job = await h.queue.claim('W', LONG, [kind]);
      expect(job?.id).toBe(id);
      expect(await h.queue.fail(id, job!.token, error)).toBe(true);
    };
    // C: its only job failed. G: two jobs failed, the second one last. H: its job is done but the video never moved.
    await claimAndFail('video.process', 'vid_C', 'decoder said no');
    await claimAndFail('video.process', 'vid_G', 'first error');
    nextMillisecond();
    await claimAndFail('video.process', 'vid_G', 'second error');
    const h1 = await h.queue.enqueue('video.process', 'vid_H');
    const hJob = (await h.queue.claim('W', LONG, ['video.process']))!;
    expect(hJob.id).toBe(h1);
    expect(await h.queue.complete(h1, hJob.token)).toBe(true);
    // B: its job is running. A: its job is queued.
    const b = await h.queue.enqueue('video.process', 'vid_B');
    expect((await h.queue.claim('W', LONG, ['video.process']))?.id).toBe(b);
    await h.queue.enqueue('video.process', 'vid_A');
    await c.videos.markProcessing('vid_B');
    await c.videos.markProcessing('vid_D'); // processing, and no job at all
    await c.videos.markProcessed('vid_E', null);
    await c.videos.markFailed('vid_F', 'already failed');

    await c.tasks.insert('req_T1', 'embedding', {}); // pending, no job
    await c.tasks.insert('req_T2', 'embedding', {});
    await claimAndFail('task.embedding', 'req_T2', 'oom');
    await c.tasks.markProcessing('req_T2');
    await c.tasks.insert('req_T3', 'tagging', {});
    await c.tasks.complete('req_T3', {});
    await c.tasks.insert('req_T4', 'tagging', {});
    await h.queue.enqueue('task.tagging', 'req_T4');
    await c.tasks.insert('req_T5', 'tagging', {});
    await c.tasks.fail('req_T5', 'bad request');

    const byId = (a: { id: string }, z: { id: string }) => a.id.localeCompare(z.id);
    expect((await c.videos.stranded()).sort(byId)).toEqual([
      { id: 'vid_C', last_error: 'decoder said no' },
      { id: 'vid_D', last_error: null },
      { id: 'vid_G', last_error: 'second error' },
      { id: 'vid_H', last_error: null },
    ]);
    expect((await c.tasks.stranded()).sort(byId)).toEqual([
      { id: 'req_T1', last_error: null },
      { id: 'req_T2', last_error: 'oom' },
    ]);

    // A new job for D and T1: no longer stranded. C settled as failed: no longer waiting.
    await h.queue.enqueue('video.process', 'vid_D');
    await h.queue.enqueue('task.embedding', 'req_T1');
    await c.videos.markFailed('vid_C', 'decoder said no');
    expect((await c.videos.stranded()).map((s) => s.id).sort()).toEqual(['vid_G', 'vid_H']);
    expect(await c.tasks.stranded()).toEqual([{ id: 'req_T2', last_error: 'oom' }]);
  });

  describe('API keys', () => {
    it('create: the raw key only in the answer; stored as its SHA-256 and a 7-character prefix; owner = name, role user, no quota by default', async () => {
      const { row, key } = await c.keys.create({ name: 'ci', qps: 2.5 });
      expect(key).toMatch(/^vk_[A-Za-z0-9_-]{32}$/);
      expect(row).toEqual({
        id: expect.stringMatching(/^key_/),
        name: 'ci',
        key_hash: hashKey(key),
        prefix: key.slice(0, 7),
        qps: 2.5,
        quota: null,
        used: 0,
        created_at: expect.any(String),
        revoked_at: null,
        owner: 'ci',
        role: 'user',
        limits_json: null,
      });
      expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(sortedKeys(row)).toEqual([...API_KEY_FIELDS].sort());
      expectIso(row.created_at);
      expect(await c.keys.byId(row.id)).toEqual(row);
      expect(await c.keys.byKey(key)).toEqual(row);
      expect(await c.keys.byKey(row.key_hash)).toBeUndefined(); // the hash is not a key
      expect(await c.keys.byKey(`${key}x`)).toBeUndefined();
      expect(await c.keys.byId('key_missing')).toBeUndefined();
      expect(JSON.stringify(await c.keys.list())).not.toContain(key);

      const admin = await c.keys.create({ name: 'ops', qps: 10, quota: 3_000_000_000, owner: 'team', role: 'admin' });
      expect(admin.row).toMatchObject({ name: 'ops', owner: 'team', role: 'admin', quota: 3_000_000_000, used: 0 });
      expect(admin.key).not.toBe(key);
      expect(await c.keys.byKey(admin.key)).toEqual(admin.row);

      // Limits are stored as given (only what was set) and read back as stored.
      const limited = await c.keys.create({ name: 'limited', qps: 1, limits: { max_jobs: 2, max_upload_bytes: 1048576 } });
      expect(JSON.parse(limited.row.limits_json!)).toEqual({ max_jobs: 2, max_upload_bytes: 1048576 });
      expect(await c.keys.byKey(limited.key)).toEqual(limited.row);
      expect((await c.keys.create({ name: 'unlimited', qps: 1, limits: {} })).row.limits_json).toBeNull();
    });

    it('byName oldest first, list newest first (same millisecond: insertion order); revoke by id or by name (every key of the name), once', async () => {
      const a1 = await c.keys.create({ name: 'shared', qps: 1 });
      const solo = await c.keys.create({ name: 'solo', qps: 1 });
      const a2 = await c.keys.create({ name: 'shared', qps: 1, owner: 'other' });
      expect((await c.keys.list()).map((k) => k.id)).toEqual([a2.row.id, solo.row.id, a1.row.id]);
      expect((await c.keys.byName('shared')).map((k) => k.id)).toEqual([a1.row.id, a2.row.id]);
      expect(await c.keys.byName('nobody')).toEqual([]);

      expect(await c.keys.revoke(solo.row.id)).toBe(1);
      const revoked = await c.keys.byId(solo.row.id);
      expectIso(revoked!.revoked_at);
      expect(await c.keys.revoke(solo.row.id)).toBe(0);
      expect((await c.keys.byId(solo.row.id))?.revoked_at).toBe(revoked!.revoked_at); // not stamped again
      // A revoked key is still found by its key: the caller refuses it by revoked_at.
      expect((await c.keys.byKey(solo.key))?.revoked_at).toBe(revoked!.revoked_at);
      expect((await c.keys.byId(a1.row.id))?.revoked_at).toBeNull();

      expect(await c.keys.revoke('shared')).toBe(2);
      expect(await c.keys.revoke('shared')).toBe(0);
      expect(await c.keys.revoke('nobody')).toBe(0);
      for (const k of await c.keys.list()) expectIso(k.revoked_at);
    });

    it('charge: counted when used + units stays within the quota, else refused with nothing counted; no quota, no limit', async () => {
      const { row } = await c.keys.create({ name: 'metered', qps: 1, quota: 5 });
      expect(await c.keys.charge(row.id, 3)).toBe(true);
      expect((await c.keys.byId(row.id))?.used).toBe(3);
      expect(await c.keys.charge(row.id, 3)).toBe(false);
      expect((await c.keys.byId(row.id))?.used).toBe(3);
      expect(await c.keys.charge(row.id, 2)).toBe(true);
      expect(await c.keys.charge(row.id, 1)).toBe(false);
      expect((await c.keys.byId(row.id))?.used).toBe(5);

      const free = await c.keys.create({ name: 'free', qps: 1 });
      expect(await c.keys.charge(free.row.id, 1000)).toBe(true);
      expect(await c.keys.charge(free.row.id, 1)).toBe(true);
      expect((await c.keys.byId(free.row.id))?.used).toBe(1001);
      expect((await c.keys.byId(row.id))?.used).toBe(5); // charging one key leaves the others alone
      expect(await c.keys.charge('key_missing', 1)).toBe(false);
      // Units are a positive integer: nothing given back, nothing fractional.
      for (const bad of [0, -3, 1.5, Number.NaN]) await expect(c.keys.charge(free.row.id, bad)).rejects.toThrow(RangeError);
      expect((await c.keys.byId(free.row.id))?.used).toBe(1001);
    });

    it('charge is atomic: separate connections charging one key at once pass exactly quota times', async () => {
      const quota = 25;
      const { row } = await c.keys.create({ name: 'contended', qps: 1, quota });
      const handles = [h, ...(await Promise.all([another(), another(), another()]))];
      const results = await Promise.all(Array.from({ length: 60 }, (_, i) => handles[i % handles.length].catalog.keys.charge(row.id, 1)));
      expect(results.filter(Boolean)).toHaveLength(quota);
      expect((await c.keys.byId(row.id))?.used).toBe(quota);
    });
  });

  describe('transaction', () => {
    it('commits every write when fn resolves (and hands back its value); rolls every write back when it rejects, passing the rejection on', async () => {
      const col = await collection('kept');
      const jobId = await c.transaction(async (tx) => {
        await tx.collections.update(col.id, { description: 'in a transaction' });
        await tx.videos.insert({ id: 'vid_tx1', collection_id: col.id, filename: 'a.mp4', blob_key: 'videos/tx1', size_bytes: 1 });
        await tx.tasks.insert('task_tx1', 'embedding', { text: 'x' });
        expect((await tx.collections.byId(col.id))?.video_count).toBe(1); // its own writes, inside
        return tx.queue.enqueue('video.process', 'vid_tx1');
      });
      expect((await c.collections.byId(col.id))?.description).toBe('in a transaction');
      expect((await c.videos.byId('vid_tx1'))?.status).toBe('uploaded');
      expect((await c.tasks.byId('task_tx1'))?.status).toBe('pending');
      expect(await h.queue.get(jobId)).toMatchObject({ refId: 'vid_tx1', status: 'queued' });

      const boom = new Error('boom');
      let inside = '';
      await expect(
        c.transaction(async (tx) => {
          await tx.collections.update(col.id, { description: 'rolled back' });
          await tx.videos.markFailed('vid_tx1', 'nope');
          await tx.videos.insert({ id: 'vid_tx2', collection_id: col.id, filename: 'b.mp4', blob_key: 'videos/tx2', size_bytes: 1 });
          await tx.tasks.complete('task_tx1', { ok: true });
          expect(await tx.queue.cancelFor('vid_tx1')).toBe(1);
          inside = await tx.queue.enqueue('video.process', 'vid_tx2');
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect((await c.collections.byId(col.id))?.description).toBe('in a transaction');
      expect((await c.videos.byId('vid_tx1'))?.status).toBe('uploaded');
      expect(await c.videos.byId('vid_tx2')).toBeUndefined();
      expect((await c.tasks.byId('task_tx1'))?.status).toBe('pending');
      expect(await h.queue.get(jobId)).toMatchObject({ status: 'queued' });
      expect(inside).toMatch(/^job_/);
      expect(await h.queue.get(inside)).toBeUndefined();
      // A write refused inside (a name taken) rejects the transaction as well: nothing of it stays.
      await collection('taken');
      await expect(
        c.transaction(async (tx) => {
          await tx.tasks.insert('task_tx2', 'tagging', {});
          await tx.collections.update(col.id, { name: 'taken' });
        }),
      ).rejects.toBeInstanceOf(CollectionNameTakenError);
      expect(await c.tasks.byId('task_tx2')).toBeUndefined();
      expect((await c.collections.byId(col.id))?.name).toBe('kept');
    });
  });
}

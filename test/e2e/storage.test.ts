/**
 * Videos and thumbnails kept by key in the blob store that VIDEMBED_STORAGE_URL names (a directory
 * every node mounts), never by this machine's path; videos stored before keys still work.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEngine } from '../../src/runtime/engine.js';
import { pathsFor, storageRoot } from '../../src/config.js';
import { Worker } from '../../src/runtime/worker.js';
import { LocalBlobStore } from '../../src/store/blobs.js';
import { evalPhotos, makeStillClip, removeDir, tempDir } from '../helpers/clips.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';

describe('VIDEMBED_STORAGE_URL', () => {
  const p = pathsFor('/home/u/.vidembed');
  it('defaults to blobs/ under the home; takes file:///dir; refuses other schemes and hosts in one line', () => {
    expect(storageRoot(p, {})).toBe('/home/u/.vidembed/blobs');
    expect(storageRoot(p, { VIDEMBED_STORAGE_URL: 'file:///mnt/shared%20media/lib' })).toBe('/mnt/shared media/lib');
    expect(() => storageRoot(p, { VIDEMBED_STORAGE_URL: 's3://bucket/lib' })).toThrow(/s3 storage is not supported; use file:\/\/\/a\/directory/);
    expect(() => storageRoot(p, { VIDEMBED_STORAGE_URL: '/mnt/shared' })).toThrow(/not a URL: \/mnt\/shared \(expected file:\/\/\//);
    expect(() => storageRoot(p, { VIDEMBED_STORAGE_URL: 'file://nas/lib' })).toThrow(/name no host/);
  });
});

describe('LocalBlobStore files', () => {
  const dir = tempDir('vidembed-blobs-');
  afterAll(() => removeDir(dir));
  it('stores a file by copy or by move, hands out a local file, deletes; refuses keys that climb out', async () => {
    const store = new LocalBlobStore(path.join(dir, 'root'));
    const src = path.join(dir, 'a.bin');
    writeFileSync(src, 'abc');
    await store.putFile('videos/a.mp4', src);
    expect(existsSync(src)).toBe(true);
    await store.putFile('videos/b.mp4', src, { move: true });
    expect(existsSync(src)).toBe(false);
    const local = await store.localFile('videos/b.mp4');
    expect(local.path).toBe(path.join(dir, 'root', 'videos', 'b.mp4'));
    expect((await store.get('videos/a.mp4')).toString()).toBe('abc');
    await local.release();
    await store.delete('videos/a.mp4');
    expect(await store.has('videos/a.mp4')).toBe(false);
    await store.delete('videos/a.mp4'); // gone already: no error
    await expect(store.putFile('../x', path.join(dir, 'root', 'videos', 'b.mp4'))).rejects.toThrow(/bad blob key/);
    expect(readdirSync(path.join(dir, 'root', 'videos'))).toEqual(['b.mp4']);
  });
});

describe('a library whose files live in shared storage', () => {
  const dir = tempDir('vidembed-storage-');
  const shared = path.join(dir, 'shared');
  let engine: LocalEngine;
  let clip: string;
  let collectionId: string;
  beforeAll(async () => {
    clip = await makeStillClip(evalPhotos()[0], path.join(dir, 'still.mp4'), { seconds: 2 });
    const before = process.env.VIDEMBED_STORAGE_URL;
    process.env.VIDEMBED_STORAGE_URL = `file://${shared}`;
    try {
      const fake = new FakeEmbedder();
      engine = new LocalEngine({ home: path.join(dir, 'home'), embedderFor: () => fake });
      collectionId = (await engine.createCollection({ name: 'c', model: fake.id })).collection_id;
    } finally {
      if (before === undefined) delete process.env.VIDEMBED_STORAGE_URL;
      else process.env.VIDEMBED_STORAGE_URL = before;
    }
  });
  afterAll(async () => {
    await engine?.close();
    removeDir(dir);
  });

  it('stores the upload under its key in the storage, processes it from there, and deletes it there', async () => {
    const { video_id: id } = await engine.uploadVideo(collectionId, { path: clip, filename: 'holiday.mp4' });
    const row = engine.store.videos.byId(id)!;
    // The catalog names the key, never a path of this machine.
    expect(row).toMatchObject({ blob_key: `videos/${id}.mp4`, path: '' });
    expect(existsSync(path.join(shared, 'videos', `${id}.mp4`))).toBe(true);
    expect(existsSync(path.join(dir, 'home', 'videos'))).toBe(false);
    expect((await engine.videoFile(id)).path).toBe(path.join(shared, 'videos', `${id}.mp4`));
    await new Worker(engine, { idleExitMs: 200, pollMs: 50 }).run(new AbortController().signal);
    expect((await engine.videoStatus(id)).status).toBe('processed');
    expect(existsSync(path.join(shared, 'thumbs', id, 'poster.jpg'))).toBe(true);
    await engine.deleteVideo(id);
    expect(existsSync(path.join(shared, 'videos', `${id}.mp4`))).toBe(false);
    expect(existsSync(path.join(shared, 'thumbs', id))).toBe(false);
  });

  it('still reads and deletes a video stored by path before keys', async () => {
    const old = path.join(dir, 'old-library-file.mp4');
    writeFileSync(old, await (await import('node:fs/promises')).readFile(clip));
    engine.store.videos.insert({ id: 'vid_old', collection_id: collectionId, filename: 'old.mp4', path: old, size_bytes: 1 });
    expect(engine.store.videos.byId('vid_old')!.blob_key).toBeNull();
    expect((await engine.videoFile('vid_old')).path).toBe(old);
    await engine.reprocessVideo('vid_old');
    await new Worker(engine, { idleExitMs: 200, pollMs: 50 }).run(new AbortController().signal);
    expect((await engine.videoStatus('vid_old')).status).toBe('processed');
    await engine.deleteVideo('vid_old');
    expect(existsSync(old)).toBe(false);
    expect(() => engine.store.videos.insert({ id: 'x', collection_id: collectionId, filename: 'x.mp4', size_bytes: 1 })).toThrow(/exactly one of path and blob_key/);
  });
});

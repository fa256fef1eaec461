import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ForbiddenError, NotFoundError } from '../../src/api/errors.js';
import { fingerprintFile, FINGERPRINT_CHUNK } from '../../src/services/footage-files.js';
import { libraryFolder, rootGuard } from '../../src/services/in-place.js';
import { memoryEngine, type MemoryEngine } from '../helpers/memory-engine.js';
import { anyFileIsVideo } from '../helpers/server.js';

/*
 * Footage in place (src/services/in-place.ts) on the in-memory catalog and real files in a temp
 * dir: what rescan makes of renames, moves, deletions, changes and copies; the fingerprint; the
 * library roots of a server. The video check is a stand-in that takes any file (test/e2e/in-place
 * runs ffmpeg's).
 */

let dir: string;
let m: MemoryEngine;
let cid: string;
beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'vidembed-in-place-unit-'));
  m = memoryEngine({ checkVideo: anyFileIsVideo });
  cid = (await m.engine.createCollection({ name: 'card', model: m.embedder.id })).collection_id;
});
afterEach(async () => {
  await m.engine.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A file of `size` bytes whose content depends on `seed`. */
function put(rel: string, seed: number, size = 2048): string {
  const file = path.join(dir, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  const buf = Buffer.alloc(size);
  for (let i = 0; i < size; i++) buf[i] = (i * 31 + seed * 97) & 0xff;
  writeFileSync(file, buf);
  return file;
}

describe('rescan', () => {
  it('follows renames and moves by fingerprint, reports deletions, re-processes changes, adds new files, and skips what is not a video by name', async () => {
    const card = path.join(dir, 'card');
    put('card/a.mp4', 1);
    put('card/DCIM/b.MOV', 2);
    put('card/DCIM/c.mkv', 3);
    put('card/notes.txt', 4);
    put('card/.hidden.mp4', 5);
    const first = await m.engine.scanLibrary(cid, { path: card });
    const id = Object.fromEntries(first.added.map((a) => [path.basename(a.file), a.video_id]));
    expect(Object.keys(id).sort()).toEqual(['a.mp4', 'b.MOV', 'c.mkv']);
    expect(first.skipped).toEqual([{ file: path.join(card, 'notes.txt'), reason: expect.stringMatching(/^not a video file/) }]);
    // Nothing copied; each new video queued for processing.
    for (const v of Object.values(id)) expect(await m.blobs.has(`videos/${v}.mp4`)).toBe(false);
    expect(await m.catalog.queue.pendingCount()).toBe(3);

    renameSync(path.join(card, 'a.mp4'), path.join(card, 'renamed.mp4'));
    mkdirSync(path.join(card, 'selects'));
    renameSync(path.join(card, 'DCIM/b.MOV'), path.join(card, 'selects/b.MOV'));
    unlinkSync(path.join(card, 'DCIM/c.mkv'));
    put('card/DCIM/d.mp4', 6);
    const scan = await m.engine.scanLibrary(cid);
    expect(scan.moved.sort((x, y) => x.to.localeCompare(y.to))).toEqual([
      { video_id: id['a.mp4'], from: path.join(card, 'a.mp4'), to: path.join(card, 'renamed.mp4') },
      { video_id: id['b.MOV'], from: path.join(card, 'DCIM/b.MOV'), to: path.join(card, 'selects/b.MOV') },
    ]);
    expect(scan.missing).toEqual([{ video_id: id['c.mkv'], file: path.join(card, 'DCIM/c.mkv') }]);
    expect(scan.added.map((a) => a.file)).toEqual([path.join(card, 'DCIM/d.mp4')]);
    expect([scan.changed, scan.unchanged]).toEqual([[], 0]);
    const listed = await m.engine.listVideos(cid);
    expect(listed.find((v) => v.video_id === id['c.mkv'])).toMatchObject({ in_place: true, missing: true });
    expect(listed.find((v) => v.video_id === id['a.mp4'])).toMatchObject({ in_place: true, filename: 'renamed.mp4' });
    expect(listed.find((v) => v.video_id === id['a.mp4'])?.missing).toBeUndefined();

    // New bytes at the same path: the same video, queued again; a touch without new bytes: unchanged.
    put('card/renamed.mp4', 7);
    utimesSync(path.join(card, 'renamed.mp4'), new Date(), new Date(Date.now() + 10_000));
    utimesSync(path.join(card, 'selects/b.MOV'), new Date(), new Date(Date.now() + 10_000));
    const before = (await m.catalog.videos.byId(id['a.mp4']))!;
    const pending = await m.catalog.queue.pendingCount();
    const again = await m.engine.scanLibrary(cid);
    expect(again.changed).toEqual([{ video_id: id['a.mp4'], file: path.join(card, 'renamed.mp4') }]);
    expect([again.added, again.moved, again.unchanged]).toEqual([[], [], 2]);
    expect((await m.catalog.videos.byId(id['a.mp4']))!.fingerprint).not.toBe(before.fingerprint);
    // Its queued job was replaced by one for the new bytes (one job per video).
    expect(await m.catalog.queue.pendingCount()).toBe(pending);
  });

  it('the same bytes twice in a folder are one video; the file found again after it was gone is followed', async () => {
    const card = path.join(dir, 'card');
    put('card/one.mp4', 1);
    put('card/copy of one.mp4', 1);
    const first = await m.engine.scanLibrary(cid, { path: card });
    expect(first.added).toHaveLength(1);
    expect(first.skipped.map((s) => s.reason)).toEqual([`the same file as ${first.added[0].video_id}`]);
    // Uploading a file in place whose bytes are there already answers with that video.
    const dup = await m.engine.uploadVideo(cid, { path: path.join(card, 'copy of one.mp4'), filename: 'x', inPlace: true });
    expect(dup).toMatchObject({ video_id: first.added[0].video_id, duplicate: true });
  });

  it('a folder that is not there is refused; deleting a video in place leaves the file', async () => {
    await expect(m.engine.scanLibrary(cid, { path: path.join(dir, 'nope') })).rejects.toBeInstanceOf(NotFoundError);
    const f = put('keep/me.mp4', 9);
    const up = await m.engine.uploadVideo(cid, { path: f, filename: 'me.mp4', inPlace: true });
    await m.engine.deleteVideo(up.video_id);
    expect((await import('node:fs')).existsSync(f)).toBe(true);
  });
});

describe('fingerprint', () => {
  it('reads size and the first, middle and last MiB: a rename keeps it, a change there or in size changes it', async () => {
    const size = 5 * FINGERPRINT_CHUNK;
    const f = put('big.mov', 1, size);
    const fp = await fingerprintFile(f, size);
    expect(fp).toMatch(/^fp1:[0-9a-f]{64}$/);
    renameSync(f, path.join(dir, 'big renamed.mov'));
    expect(await fingerprintFile(path.join(dir, 'big renamed.mov'), size)).toBe(fp);
    const middle = put('mid.mov', 1, size);
    const fd = await (await import('node:fs/promises')).open(middle, 'r+');
    await fd.write(Buffer.from([0xff ^ ((Math.floor(size / 2) * 31 + 97) & 0xff)]), 0, 1, Math.floor(size / 2));
    await fd.close();
    expect(await fingerprintFile(middle, size)).not.toBe(fp);
    const small = put('small.mp4', 1, 1000);
    expect(await fingerprintFile(small, 1000)).not.toBe(await fingerprintFile(put('small2.mp4', 1, 999), 999));
  });
});

describe('library roots (serve --library)', () => {
  it('takes folders inside a root, relative or absolute; refuses .., paths elsewhere and links out', async () => {
    const root = path.join(dir, 'library');
    mkdirSync(path.join(root, 'card'), { recursive: true });
    mkdirSync(path.join(dir, 'private'));
    symlinkSync(path.join(dir, 'private'), path.join(root, 'out'));
    symlinkSync(path.join(root, 'card'), path.join(root, 'alias'));
    expect(await libraryFolder([root], 'card')).toBe(path.join(root, 'card'));
    expect(await libraryFolder([root], path.join(root, 'card'))).toBe(path.join(root, 'card'));
    expect(await libraryFolder([root], 'alias')).toBe(path.join(root, 'card')); // a link that stays inside
    for (const p of ['../private', 'out', path.join(dir, 'private'), '/', path.join(root, 'card', '..', '..')]) {
      await expect(libraryFolder([root], p), p).rejects.toBeInstanceOf(ForbiddenError);
    }
    await expect(libraryFolder([], 'card')).rejects.toThrow(/--library/);
    const inside = await rootGuard([root]);
    expect(await inside(path.join(root, 'card'))).toBe(true);
    expect(await inside(path.join(root, 'out'))).toBe(false);
    expect(await inside(`${root}-other`)).toBe(false);
  });
});

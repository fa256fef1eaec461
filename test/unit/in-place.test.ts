import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ForbiddenError, NotFoundError } from '../../src/api/errors.js';
import { fingerprintFile, FINGERPRINT_CHUNK, FootageUnavailableError, openFootage } from '../../src/services/footage-files.js';
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
    expect(scan.missing).toEqual([{ video_id: id['c.mkv'], file: path.join(card, 'DCIM/c.mkv'), reason: expect.stringMatching(/^is not there any more/) }]);
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

/** Swaps `file` for a symbolic link to `target` (what an attacker with write access to a library folder does). */
function swapForLink(file: string, target: string): void {
  unlinkSync(file);
  symlinkSync(target, file);
}

async function drain(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

describe('footage opened and checked (issue 30: no file outside the library is ever read)', () => {
  it('reads the file indexed; refuses a link swapped in, a file outside the roots or inside the data folder, a changed size or content, a FIFO', async () => {
    const f = put('lib/card/a.mp4', 1);
    const secret = put('home/vidembed.db', 2);
    const want = { path: f, size: 2048, roots: [path.join(dir, 'lib')], forbidden: [path.join(dir, 'home')] };
    const fp = await fingerprintFile(f, 2048);
    const ok = await openFootage({ ...want, fingerprint: fp, content: true });
    expect(ok.realPath).toBe(f);
    expect(await drain(ok.stream({ start: 0, end: 9 }))).toEqual(readFileSync(f).subarray(0, 10));

    const reason = (p: Promise<unknown>) => p.then(() => 'opened', (err: unknown) => (err instanceof FootageUnavailableError ? err.reason : `other: ${String(err)}`));
    // Outside the roots, inside the data folder.
    expect(await reason(openFootage({ ...want, roots: [path.join(dir, 'elsewhere')] }))).toMatch(/outside the library folders/);
    const inData = put('home/clip.mp4', 3);
    expect(await reason(openFootage({ path: inData, forbidden: [path.join(dir, 'home')] }))).toMatch(/library's own data/);
    // Changed size; same size, other bytes (with the content check).
    expect(await reason(openFootage({ ...want, size: 999 }))).toMatch(/changed since it was indexed/);
    put('lib/card/a.mp4', 7);
    expect(await reason(openFootage({ ...want, fingerprint: fp, content: true }))).toMatch(/changed since it was indexed/);
    expect(await reason(openFootage({ ...want, fingerprint: fp }))).toBe('opened'); // no content check: a list's cheap look

    // The attack: the indexed file swapped for a link to the catalog (or to anything the server can read).
    swapForLink(f, secret);
    expect(await reason(openFootage({ ...want, size: undefined }))).toMatch(/replaced by a link/);
    swapForLink(f, path.join(dir, 'lib/card/other.mp4'));
    put('lib/card/other.mp4', 1);
    expect(await reason(openFootage({ ...want }))).toMatch(/replaced by a link/); // even to a file inside the roots
    // A folder on the way swapped for a link out: outside the roots.
    const g = put('lib/card2/b.mp4', 4);
    rmSync(path.join(dir, 'lib/card2'), { recursive: true });
    mkdirSync(path.join(dir, 'home/card2'));
    writeFileSync(path.join(dir, 'home/card2/b.mp4'), readFileSync(secret));
    symlinkSync(path.join(dir, 'home/card2'), path.join(dir, 'lib/card2'));
    expect(await reason(openFootage({ ...want, path: g, size: undefined }))).toMatch(/outside the library folders|library's own data/);
    // A device is refused (a FIFO too, without waiting on it: test/e2e/in-place.test.ts).
    expect(await reason(openFootage({ path: '/dev/null' }))).toMatch(/not a regular file/);
    await ok.close();
  });

  it('what is read is the file that was opened and checked, even when the path is swapped after the check', async () => {
    const f = put('lib/a.mp4', 1);
    const original = readFileSync(f);
    const secret = put('home/vidembed.db', 2);
    const opened = await openFootage({ path: f, size: 2048, fingerprint: await fingerprintFile(f, 2048), content: true });
    swapForLink(f, secret);
    expect(await drain(opened.stream())).toEqual(original);
    const again = await openFootage({ path: f, size: 2048 }).catch((err: unknown) => err);
    expect(again).toBeInstanceOf(FootageUnavailableError);
  });

  it("the path handed to another process names the opened file with the file's own name", async () => {
    if (process.platform !== 'linux') return;
    const f = put('lib/clip one.mp4', 1);
    const original = readFileSync(f);
    const opened = await openFootage({ path: f });
    const p = await opened.processPath();
    expect(path.basename(p)).toBe('clip one.mp4');
    swapForLink(f, put('home/secret', 3));
    expect(readFileSync(p)).toEqual(original);
    await opened.close();
    expect(() => readFileSync(p)).toThrow(/ENOENT/); // the private link is gone with the handle
  });
});

describe('rescan and the server with links and swaps (issue 30)', () => {
  it('follows links that stay inside the folders, lists the others as skipped; a swapped file is missing with its reason, never changed', async () => {
    const card = path.join(dir, 'card');
    put('card/a.mp4', 1);
    put('card/sub/b.mp4', 2);
    put('outside/c.mp4', 3);
    symlinkSync(path.join(card, 'sub/b.mp4'), path.join(card, 'alias-of-b.mp4')); // inside: the same file
    symlinkSync(path.join(dir, 'outside/c.mp4'), path.join(card, 'c.mp4')); // out
    symlinkSync(path.join(dir, 'outside'), path.join(card, 'more')); // a folder out
    symlinkSync(path.join(dir, 'nowhere.mp4'), path.join(card, 'dangling.mp4'));
    const first = await m.engine.scanLibrary(cid, { path: card });
    expect(first.added.map((a) => path.relative(card, a.file)).sort()).toEqual(['a.mp4', 'sub/b.mp4']);
    expect(first.skipped.map((s) => [path.relative(card, s.file), s.reason]).sort()).toEqual([
      ['c.mp4', 'a link out of the library folders'],
      ['dangling.mp4', 'a link that leads nowhere'],
      ['more', 'a link out of the library folders'],
    ]);
    const a = first.added.find((x) => x.file.endsWith('a.mp4'))!.video_id;

    // The attack: the indexed file replaced by a link to a file the user must not read.
    const secret = put('private/vidembed.db', 9);
    swapForLink(path.join(card, 'a.mp4'), secret);
    const scan = await m.engine.scanLibrary(cid);
    expect(scan.changed).toEqual([]);
    expect(scan.added).toEqual([]);
    expect(scan.missing).toEqual([{ video_id: a, file: path.join(card, 'a.mp4'), reason: expect.stringMatching(/replaced by a link/) }]);
    expect(scan.skipped).toContainEqual({ file: path.join(card, 'a.mp4'), reason: 'a link out of the library folders' });
    expect((await m.catalog.videos.byId(a))!.size_bytes).toBe(2048); // what was indexed is kept as it was
    const listed = (await m.engine.listVideos(cid)).find((v) => v.video_id === a);
    expect(listed).toMatchObject({ missing: true, missing_reason: expect.stringMatching(/replaced by a link/) });
    await expect(m.engine.videoFile(a)).rejects.toBeInstanceOf(FootageUnavailableError);
  });

  it('a video deleted from the collection stays out of later scans until it is added again', async () => {
    const card = path.join(dir, 'card');
    put('card/a.mp4', 1);
    put('card/b.mp4', 2);
    const first = await m.engine.scanLibrary(cid, { path: card });
    const a = first.added.find((x) => x.file.endsWith('a.mp4'))!.video_id;
    await m.engine.deleteVideo(a);
    const again = await m.engine.scanLibrary(cid);
    expect(again.added).toEqual([]);
    expect(again.skipped).toEqual([{ file: path.join(card, 'a.mp4'), reason: expect.stringMatching(/^deleted from this collection/) }]);
    // Moved or renamed, it is still the file the user deleted.
    renameSync(path.join(card, 'a.mp4'), path.join(card, 'a-renamed.mp4'));
    expect((await m.engine.scanLibrary(cid)).added).toEqual([]);
    // --include-deleted takes it back; so does naming the file.
    const back = await m.engine.scanLibrary(cid, { include_deleted: true });
    expect(back.added.map((x) => path.basename(x.file))).toEqual(['a-renamed.mp4']);
    await m.engine.deleteVideo(back.added[0].video_id);
    const named = await m.engine.uploadVideo(cid, { path: path.join(card, 'a-renamed.mp4'), filename: 'a-renamed.mp4', inPlace: true });
    expect(named.status).toBe('uploaded');
    expect((await m.engine.scanLibrary(cid)).skipped).toEqual([]);
  });

  it('GET /videos/{id}/file serves the file indexed, and not one byte of a file swapped in (whole or by range)', async () => {
    const { startTestServer, http } = await import('../helpers/server.js');
    const root = path.join(dir, 'library');
    put('library/card/a.mp4', 1, 4096);
    const srv = await startTestServer({ engine: { checkVideo: anyFileIsVideo, libraryRoots: [root] }, server: { libraryRoots: [root] } });
    try {
      const col = await http(srv.url, 'POST', '/collections', { key: srv.key, json: { name: 'footage' } });
      const scan = await http(srv.url, 'POST', `/collections/${col.body.collection_id}/library-scan`, { key: srv.key, json: { path: 'card' } });
      expect(scan.status).toBe(200);
      const id = scan.body.added[0].video_id as string;
      const whole = await http(srv.url, 'GET', `/videos/${id}/file`, { key: srv.key });
      expect(whole.status).toBe(200);
      const ranged = await http(srv.url, 'GET', `/videos/${id}/file`, { key: srv.key, headers: { range: 'bytes=0-15' } });
      expect(ranged.status).toBe(206);

      swapForLink(path.join(root, 'card/a.mp4'), path.join(srv.home, 'vidembed.db'));
      for (const headers of [{}, { range: 'bytes=0-15' }, { range: 'bytes=-100' }]) {
        const res = await http(srv.url, 'GET', `/videos/${id}/file`, { key: srv.key, headers });
        expect(res.status, JSON.stringify(headers)).toBe(404);
        expect(JSON.stringify(res.body)).not.toMatch(/SQLite format/);
        expect(res.body.detail).toMatch(/replaced by a link/);
        expect(res.body.detail).not.toContain(srv.home);
      }
      const rescan = await http(srv.url, 'POST', `/collections/${col.body.collection_id}/library-scan`, { key: srv.key, json: {} });
      expect(rescan.body.changed).toEqual([]);
      expect(rescan.body.missing).toEqual([{ video_id: id, file: path.join(root, 'card/a.mp4'), reason: expect.stringMatching(/replaced by a link/) }]);
    } finally {
      await srv.close();
    }
  });
});

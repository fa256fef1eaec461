import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEngine } from '../../src/runtime/engine.js';
import { Worker } from '../../src/runtime/worker.js';
import { runCli } from '../helpers/cli.js';
import { makeTestPatternClip, removeDir, tempDir } from '../helpers/clips.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { http, startTestServer, type TestServer } from '../helpers/server.js';

/*
 * Footage indexed in place (issue 22), end to end: real ffmpeg clips in a folder, the real CLI on a
 * real SQLite home (no background worker: nothing here needs a model), then the files renamed,
 * moved and deleted outside the tool, then `rescan`; a server indexes only its --library folders.
 */

const clip = makeTestPatternClip;

const blobFiles = (home: string) => (existsSync(path.join(home, 'blobs')) ? readdirSync(path.join(home, 'blobs'), { recursive: true }).map(String) : []);

describe('upload DIR --in-place, then rescan after renames, moves and deletions outside vidembed', () => {
  const dir = tempDir('vidembed-in-place-');
  const home = path.join(dir, 'home');
  const card = path.join(dir, 'card');
  const env = { VIDEMBED_HOME: home, VIDEMBED_NO_AUTO_WORKER: '1' };
  const cli = (...args: string[]) => runCli(args, env, 120_000);
  afterAll(() => removeDir(dir));

  it('indexes a folder where it lies, follows moved and renamed files, lists missing ones, and never touches the files', async () => {
    await clip(path.join(card, 'plage été.mp4'), 1);
    await clip(path.join(card, 'DCIM', 'C0001.MP4'), 2);
    await clip(path.join(card, 'DCIM', 'C0002.mov'), 3);
    writeFileSync(path.join(card, 'notes.txt'), 'shot list\n');
    writeFileSync(path.join(card, 'DCIM', 'fake.mp4'), 'not a video at all\n');
    expect((await cli('collection', 'create', 'card')).code).toBe(0);

    const up = await cli('upload', card, '--in-place', '--collection', 'card', '--json');
    expect(up.code, up.stderr).toBe(0);
    expect(up.json).toMatchObject({ collection_name: 'card', folders: [card], changed: [], moved: [], missing: [], unchanged: 0 });
    expect(up.json.added.map((a: { file: string }) => path.relative(card, a.file)).sort()).toEqual(['DCIM/C0001.MP4', 'DCIM/C0002.mov', 'plage été.mp4']);
    const skipped = Object.fromEntries(up.json.skipped.map((s: { file: string; reason: string }) => [path.relative(card, s.file), s.reason]));
    expect(skipped['notes.txt']).toMatch(/not a video file/);
    expect(skipped['DCIM/fake.mp4']).toMatch(/^not a video: /);
    const id = Object.fromEntries(up.json.added.map((a: { file: string; video_id: string }) => [path.basename(a.file), a.video_id]));
    // Nothing was copied into the library.
    expect(blobFiles(home).filter((f) => f.startsWith('videos'))).toEqual([]);

    // Listed as the user's files; the same folder again adds nothing.
    const list = await cli('video', 'list', '--collection', 'card', '--json');
    expect(list.json.map((v: { in_place?: boolean }) => v.in_place)).toEqual([true, true, true]);
    expect(list.json.some((v: { missing?: boolean }) => v.missing)).toBe(false);
    const again = await cli('rescan', '--collection', 'card', '--json');
    expect(again.json).toMatchObject({ added: [], changed: [], moved: [], missing: [], unchanged: 3 });

    // Outside the tool: one file renamed, one moved to another subfolder, one deleted, one new, one changed.
    renameSync(path.join(card, 'plage été.mp4'), path.join(card, 'beach day.mp4'));
    mkdirSync(path.join(card, 'selects'));
    renameSync(path.join(card, 'DCIM', 'C0001.MP4'), path.join(card, 'selects', 'C0001.MP4'));
    unlinkSync(path.join(card, 'DCIM', 'C0002.mov'));
    await clip(path.join(card, 'DCIM', 'C0003.mp4'), 2, '192x108');

    const listed = await cli('video', 'list', '--collection', 'card');
    expect(listed.stdout).toMatch(/│ DCIM\/C0002\.mov\s+│ missing, uploaded/);
    expect(listed.stderr).toMatch(/^3 files are missing \(moved, renamed or deleted outside vidembed\): `vidembed rescan` follows moved files$/m);
    const scan = await cli('rescan', '--collection', 'card', '--json');
    expect(scan.code, scan.stderr).toBe(0);
    expect(scan.json.moved).toEqual(
      expect.arrayContaining([
        { video_id: id['plage été.mp4'], from: path.join(card, 'plage été.mp4'), to: path.join(card, 'beach day.mp4') },
        { video_id: id['C0001.MP4'], from: path.join(card, 'DCIM', 'C0001.MP4'), to: path.join(card, 'selects', 'C0001.MP4') },
      ]),
    );
    expect(scan.json.moved).toHaveLength(2);
    expect(scan.json.missing).toEqual([{ video_id: id['C0002.mov'], file: path.join(card, 'DCIM', 'C0002.mov'), reason: expect.stringMatching(/^is not there any more/) }]);
    expect(scan.json.added.map((a: { file: string }) => a.file)).toEqual([path.join(card, 'DCIM', 'C0003.mp4')]);
    expect(scan.json.unchanged).toBe(0);

    // A moved video keeps its id and says where it is now.
    const shown = await cli('video', 'show', id['plage été.mp4'], '--json');
    expect(shown.json).toMatchObject({ video_id: id['plage été.mp4'], filename: 'beach day.mp4', in_place: true, file: path.join(card, 'beach day.mp4') });

    // Changed bytes at the same path: processed again (the same video).
    await clip(path.join(card, 'beach day.mp4'), 2, '320x180');
    utimesSync(path.join(card, 'beach day.mp4'), new Date(), new Date(Date.now() + 5000));
    const changed = await cli('rescan', '--collection', 'card', '--json');
    expect(changed.json.changed).toEqual([{ video_id: id['plage été.mp4'], file: path.join(card, 'beach day.mp4') }]);
    expect(changed.json.missing.map((m: { video_id: string }) => m.video_id)).toEqual([id['C0002.mov']]);

    // Deleting videos never deletes the user's files.
    const del = await cli('video', 'delete', id['C0001.MP4'], id['C0002.mov'], '--yes');
    expect(del.code, del.stderr).toBe(0);
    expect(existsSync(path.join(card, 'selects', 'C0001.MP4'))).toBe(true);
    const after = await cli('video', 'list', '--collection', 'card', '--json');
    expect(after.json.map((v: { video_id: string }) => v.video_id)).not.toContain(id['C0001.MP4']);
  });

  it('indexes one file in place; a non-video file is refused with one line and a non-zero exit', async () => {
    const one = await clip(path.join(dir, 'single', 'one.mp4'), 1, '128x72');
    expect((await cli('collection', 'create', 'single')).code).toBe(0);
    const up = await cli('upload', one, '--in-place', '--collection', 'single', '--json');
    expect(up.code, up.stderr).toBe(0);
    expect((await cli('video', 'show', up.json.video_id, '--json')).json).toMatchObject({ in_place: true, file: one });
    const text = path.join(dir, 'single', 'notes.txt');
    writeFileSync(text, 'hello\n');
    for (const extra of [['--in-place'], []]) {
      const bad = await cli('upload', text, '--collection', 'single', ...extra);
      expect(bad.code).toBe(6);
      expect(bad.stderr.trim().split('\n')).toEqual([`vidembed: error: ${extra.length ? text : 'notes.txt'} is not a video: a text file, not a video`]);
    }
    // Deleting the collection takes its videos, never the user's file.
    expect((await cli('collection', 'delete', 'single', '--yes')).code).toBe(0);
    expect(existsSync(one)).toBe(true);
  });
});

describe('processing reads the file where it lies', () => {
  const dir = tempDir('vidembed-in-place-run-');
  afterAll(() => removeDir(dir));

  it('makes thumbnails and segments from the user file; a file gone before processing fails naming it', async () => {
    const fake = new FakeEmbedder();
    const engine = new LocalEngine({ home: path.join(dir, 'home'), embedderFor: () => fake, analyzers: [] });
    try {
      const c = await engine.createCollection({ name: 'here', model: fake.id, speech: 'off' });
      const f = await clip(path.join(dir, 'footage', 'take 1.mp4'), 2);
      const gone = await clip(path.join(dir, 'footage', 'take 2.mp4'), 1);
      const a = await engine.uploadVideo(c.collection_id, { path: f, filename: 'take 1.mp4', inPlace: true });
      const b = await engine.uploadVideo(c.collection_id, { path: gone, filename: 'take 2.mp4', inPlace: true });
      unlinkSync(gone);
      await new Worker(engine, { idleExitMs: 0, pollMs: 20 }).run(new AbortController().signal);
      const d = await engine.videoDetails(a.video_id);
      expect(d).toMatchObject({ status: 'processed', in_place: true, filename: 'take 1.mp4' });
      expect(d.segments.length).toBeGreaterThan(0);
      expect((await engine.videoThumbnail(a.video_id)).length).toBeGreaterThan(0);
      const st = await engine.videoStatus(b.video_id);
      expect(st.status).toBe('failed');
      expect(st.error_message).toMatch(/^take 2\.mp4 is not there any more .*vidembed rescan/);
      expect(blobFiles(path.join(dir, 'home')).filter((x) => x.startsWith('videos'))).toEqual([]);
    } finally {
      await engine.close();
    }
  });

  it('a file swapped for a link (to the catalog) or for a FIFO is never read: its processing fails at once, naming the user file', async () => {
    const fake = new FakeEmbedder();
    const home = path.join(dir, 'home-swap');
    const engine = new LocalEngine({ home, embedderFor: () => fake, analyzers: [] });
    try {
      const c = await engine.createCollection({ name: 'swap', model: fake.id, speech: 'off' });
      const a = await clip(path.join(dir, 'swap', 'a.mp4'), 1);
      const b = await clip(path.join(dir, 'swap', 'b.mp4'), 2);
      const va = await engine.uploadVideo(c.collection_id, { path: a, filename: 'a.mp4', inPlace: true });
      const vb = await engine.uploadVideo(c.collection_id, { path: b, filename: 'b.mp4', inPlace: true });
      unlinkSync(a);
      symlinkSync(path.join(home, 'vidembed.db'), a);
      unlinkSync(b);
      execFileSync('mkfifo', [b]); // opening it for reading would wait for a writer forever
      await new Worker(engine, { idleExitMs: 0, pollMs: 20 }).run(new AbortController().signal);
      const sa = await engine.videoStatus(va.video_id);
      expect(sa).toMatchObject({ status: 'failed', error_message: expect.stringMatching(/^a\.mp4 was replaced by a link/) });
      expect(sa.error_message).not.toContain(home);
      expect(await engine.videoStatus(vb.video_id)).toMatchObject({ status: 'failed', error_message: expect.stringMatching(/^b\.mp4 is not a regular file/) });
      // Nothing was read from the catalog: no segments, no thumbnails for either.
      expect((await engine.videoDetails(va.video_id)).segments).toEqual([]);
      expect(blobFiles(home).filter((x) => x.startsWith('thumbs'))).toEqual([]);
    } finally {
      await engine.close();
    }
  });
});

describe('a server indexes in place only inside its --library folders', () => {
  const dir = tempDir('vidembed-in-place-srv-');
  const root = path.join(dir, 'library');
  const outside = path.join(dir, 'private');
  let s: TestServer;
  let cid: string;
  beforeAll(async () => {
    await clip(path.join(root, 'card', 'a.mp4'), 1);
    await clip(path.join(outside, 'secret.mp4'), 1, '128x72');
    symlinkSync(outside, path.join(root, 'link-out'));
    symlinkSync(path.join(outside, 'secret.mp4'), path.join(root, 'card', 'secret-link.mp4'));
    const fake = new FakeEmbedder();
    s = await startTestServer({ engine: { embedderFor: () => fake, analyzers: [] }, server: { libraryRoots: [root] } });
    cid = (await http(s.url, 'POST', '/collections', { key: s.key, json: { name: 'lib', model: fake.id } })).body.collection_id;
  });
  afterAll(async () => {
    await s?.close();
    removeDir(dir);
  });

  it('takes a folder inside a root (relative or absolute); refuses .., paths elsewhere and links out with 403', async () => {
    const scan = (json: unknown) => http(s.url, 'POST', `/collections/${cid}/library-scan`, { key: s.key, json });
    const ok = await scan({ path: 'card' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.added.map((a: { file: string }) => path.basename(a.file))).toEqual(['a.mp4']);
    expect(ok.body.folders).toEqual([path.join(root, 'card')]);
    for (const p of ['../private', outside, path.join(root, 'link-out'), 'link-out', '/etc', path.join(root, '..', 'private')]) {
      const r = await scan({ path: p });
      expect([p, r.status, r.body.code]).toEqual([p, 403, 'forbidden']);
    }
    // The link to a file outside is not followed; the folder's scan again (a body or none) adds nothing.
    const again = await scan({});
    expect([again.status, again.body.added, again.body.unchanged]).toEqual([200, [], 1]);
    const bare = await http(s.url, 'POST', `/collections/${cid}/library-scan`, { key: s.key });
    expect([bare.status, bare.body.unchanged]).toEqual([200, 1]);
    const videos = await http(s.url, 'GET', `/collections/${cid}/videos`, { key: s.key });
    expect(videos.body.map((v: { filename: string }) => v.filename)).toEqual(['a.mp4']);
  });

  it('a server without --library folders reads no path a client sends; a scan reports a deleted file as missing', async () => {
    const plain = await startTestServer();
    try {
      const c = await http(plain.url, 'POST', '/collections', { key: plain.key, json: { name: 'x' } });
      const r = await http(plain.url, 'POST', `/collections/${c.body.collection_id}/library-scan`, { key: plain.key, json: { path: root } });
      expect([r.status, r.body.code]).toEqual([403, 'forbidden']);
      expect(r.body.detail).toMatch(/--library/);
    } finally {
      await plain.close();
    }
    rmSync(path.join(root, 'card', 'a.mp4'));
    const gone = await http(s.url, 'POST', `/collections/${cid}/library-scan`, { key: s.key, json: {} });
    expect(gone.body.missing.map((m: { file: string }) => path.basename(m.file))).toEqual(['a.mp4']);
    const listed = await http(s.url, 'GET', `/collections/${cid}/videos`, { key: s.key });
    expect(listed.body[0]).toMatchObject({ filename: 'a.mp4', in_place: true, missing: true });
  });
});

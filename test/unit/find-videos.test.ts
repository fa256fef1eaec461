/**
 * Videos found by name (issue 33): an id, a file name, or a path in place relative to the folder it
 * was indexed from — locally, over HTTP (GET /videos?name=, checked against /openapi.json) and
 * through the remote client; `video list` shows the relative path and a missing file.
 */
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError } from '../../src/api/errors.js';
import type { VideoSummary } from '../../src/api/types.js';
import { RemoteService } from '../../src/client/remote.js';
import { deleteQuestion } from '../../src/cli/commands/videos.js';
import type { CliContext } from '../../src/cli/context.js';
import { lookupVideo, resolveVideo } from '../../src/cli/video-ref.js';
import { normalizeName } from '../../src/services/find-videos.js';
import { relativePath } from '../../src/services/video-summary.js';
import { anyFileIsVideo, http, startTestServer, type TestServer } from '../helpers/server.js';

describe('videos by name', () => {
  let s: TestServer;
  /** A key of the local library's owner ("default"), who made everything here. */
  let key: string;
  let footage: string;
  const ids: Record<string, string> = {};
  let copyId = '';
  let demo = '';
  const names = (list: VideoSummary[]) => list.map((v) => v.relative_path ?? v.filename);

  beforeAll(async () => {
    s = await startTestServer({ engine: { checkVideo: anyFileIsVideo } });
    key = s.engine.store.keys.create({ name: 'mine', owner: 'default', qps: 1000 }).key;
    footage = mkdtempSync(path.join(os.tmpdir(), 'vidembed-names-'));
    const file = (rel: string, bytes: string) => {
      mkdirSync(path.dirname(path.join(footage, rel)), { recursive: true });
      writeFileSync(path.join(footage, rel), bytes);
    };
    file('card-01/C0001.MP4', 'first card, first clip');
    file('card-01/INTERVIEW_01.mp4', 'an interview');
    file('card-02/C0001.MP4', 'second card, first clip');
    file('loose/C0001.MP4', 'a copy kept by the library');
    demo = (await s.engine.createCollection({ name: 'demo' })).collection_id;
    const scan = await s.engine.scanLibrary(demo, { path: footage });
    for (const a of scan.added) ids[path.relative(footage, a.file).split(path.sep).join('/')] = a.video_id;
    // loose/ is in the folder too: the copy goes to another collection.
    const other = (await s.engine.createCollection({ name: 'other' })).collection_id;
    copyId = (await s.engine.uploadVideo(other, { path: path.join(footage, 'loose/C0001.MP4'), filename: 'C0001.MP4' })).video_id;
  });
  afterAll(async () => {
    await s?.close();
    if (footage) rmSync(footage, { recursive: true, force: true });
  });

  it('a path in place is relative to the outermost folder that holds it, with / between names', () => {
    const v = { fingerprint: 'fp', path: path.join('/srv', 'footage', 'card-01', 'C0001.MP4') };
    expect(relativePath(v, ['/srv/footage/card-01', '/srv/footage', '/elsewhere'])).toBe('card-01/C0001.MP4');
    expect(relativePath(v, ['/srv/foot'])).toBeUndefined();
    expect(relativePath({ fingerprint: null, path: '' }, ['/srv'])).toBeUndefined();
    expect(normalizeName('.\\card-01\\\\C0001.MP4')).toBe('card-01/C0001.MP4');
    expect(normalizeName('./card-01//C0001.MP4/')).toBe('card-01/C0001.MP4');
  });

  it('finds by id, by name (every match, oldest first), by path in place (relative, a longer end, absolute), in one collection', async () => {
    const find = (name: string, collection?: string) => s.engine.findVideos({ name, collection });
    expect(names(await find('INTERVIEW_01.mp4'))).toEqual(['card-01/INTERVIEW_01.mp4']);
    const all = await find('C0001.MP4');
    expect(all.map((v) => v.video_id)).toEqual([ids['card-01/C0001.MP4'], ids['card-02/C0001.MP4'], ids['loose/C0001.MP4'], copyId]);
    expect(all.slice(0, 3).every((v) => v.in_place)).toBe(true);
    expect(all[3]).not.toHaveProperty('relative_path');
    expect(names(await find('card-02/C0001.MP4'))).toEqual(['card-02/C0001.MP4']);
    expect(names(await find(`${path.basename(footage)}/card-02/C0001.MP4`))).toEqual(['card-02/C0001.MP4']);
    expect(names(await find(path.join(footage, 'card-02', 'C0001.MP4')))).toEqual(['card-02/C0001.MP4']);
    expect(names(await find('./card-02/C0001.MP4'))).toEqual(['card-02/C0001.MP4']);
    // At a boundary between names only; case counts.
    expect(await find('rd-02/C0001.MP4')).toEqual([]);
    expect(await find('card-03/C0001.MP4')).toEqual([]);
    expect(await find('c0001.mp4')).toEqual([]);
    expect((await find('C0001.MP4', 'other')).map((v) => v.video_id)).toEqual([copyId]);
    expect((await find(copyId)).map((v) => v.video_id)).toEqual([copyId]);
    expect(await find(copyId, 'demo')).toEqual([]);
    await expect(find('   ')).rejects.toThrow(/needed|must/);
  });

  it('is a documented route: GET /videos?name= answers what the document says, only of what the key may see', async () => {
    const r = await http(s.url, 'GET', `/videos?name=${encodeURIComponent('card-01/C0001.MP4')}`, { key });
    expect(r.status).toBe(200);
    expect(r.body.map((v: VideoSummary) => v.video_id)).toEqual([ids['card-01/C0001.MP4']]);
    expect((await http(s.url, 'GET', `/videos?name=C0001.MP4&collection=other`, { key })).body).toHaveLength(1);
    expect((await http(s.url, 'GET', '/videos', { key })).status).toBe(422);
    const doc = (await http(s.url, 'GET', '/openapi.json')).body;
    expect(doc.paths['/videos'].get.operationId).toBe('findVideos');
    expect(doc.paths['/videos'].get.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['collection', 'name']);
    // Another owner's key sees none of these.
    const bob = s.engine.store.keys.create({ name: 'bob', owner: 'bob', qps: 1000 });
    expect((await http(s.url, 'GET', `/videos?name=C0001.MP4`, { key: bob.key })).body).toEqual([]);
    expect((await http(s.url, 'GET', `/videos?name=${copyId}`, { key: bob.key })).body).toEqual([]);
  });

  it('the remote client asks the server and gets what the local engine answers', async () => {
    const remote = new RemoteService({ baseUrl: s.url, apiKey: key });
    for (const name of ['C0001.MP4', 'card-02/C0001.MP4', 'INTERVIEW_01.mp4']) expect(await remote.findVideos({ name })).toEqual(await s.engine.findVideos({ name }));
  });

  it('the CLI: one match is its id, none is "not found", several are listed by path and collection, and fail', async () => {
    const ctx = { service: s.engine, local: s.engine, paths: s.engine.paths, close: async () => {} } as unknown as CliContext;
    expect(await resolveVideo(ctx, 'card-02/C0001.MP4')).toBe(ids['card-02/C0001.MP4']);
    expect(await resolveVideo(ctx, 'vid_notlookedup1')).toBe('vid_notlookedup1');
    expect(await resolveVideo(ctx, 'C0001.MP4', { collection: 'other' })).toBe(copyId);
    await expect(resolveVideo(ctx, 'nothing.mov')).rejects.toThrow(NotFoundError);
    const err = await resolveVideo(ctx, 'C0001.MP4').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    const lines = (err as Error).message.split('\n');
    expect(lines[0]).toBe('"C0001.MP4" is 4 videos: name one by its id, by a longer path, or with --collection:');
    expect(lines.slice(1)).toEqual([
      `  ${ids['card-01/C0001.MP4']}  card-01/C0001.MP4  (collection demo)`,
      `  ${ids['card-02/C0001.MP4']}  card-02/C0001.MP4  (collection demo)`,
      `  ${ids['loose/C0001.MP4']}  loose/C0001.MP4  (collection demo)`,
      `  ${copyId}  C0001.MP4  (collection other)`,
    ]);
  });

  it('a file gone shows as missing in the list and the details; delete says whose file is kept and whose copy goes', async () => {
    unlinkSync(path.join(footage, 'card-01/INTERVIEW_01.mp4'));
    const listed = await s.engine.listVideos(demo);
    expect(listed.find((v) => v.video_id === ids['card-01/INTERVIEW_01.mp4'])).toMatchObject({ relative_path: 'card-01/INTERVIEW_01.mp4', in_place: true, missing: true });
    expect(listed.filter((v) => v.missing)).toHaveLength(1);
    expect(await s.engine.videoDetails(ids['card-01/INTERVIEW_01.mp4'])).toMatchObject({ missing: true, relative_path: 'card-01/INTERVIEW_01.mp4' });
    const ctx = { service: s.engine, local: s.engine, paths: s.engine.paths, close: async () => {} } as unknown as CliContext;
    const inPlace = await lookupVideo(ctx, 'INTERVIEW_01.mp4');
    const copy = await lookupVideo(ctx, copyId);
    expect(deleteQuestion([inPlace])).toBe(
      `Delete ${inPlace.video_id} (card-01/INTERVIEW_01.mp4) from the library? Your file stays where it is: only its index, thumbnails and transcript are deleted.`,
    );
    expect(deleteQuestion([copy])).toBe(`Delete ${copyId} (C0001.MP4) with the library's copy of the file? (The file you uploaded it from is not touched.)`);
    expect(deleteQuestion([inPlace, copy])).toBe("Delete 2 videos from the library: 1 indexed in place (your files stay where they are), 1 uploaded (the library's copies are deleted)?");
  });
});

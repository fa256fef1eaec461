/**
 * Nothing written for a video outlives it (issue 30, item 3): staged files move into place only
 * with a settled job and are removed when it is refused (src/services/artifacts.ts); housekeeping
 * removes staged folders of jobs that stopped and files of videos that are gone; and this
 * program's temp dirs left by a killed process (src/util/temp.ts), by name and age, never another's.
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, existsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StagedArtifacts, stagingPrefix, sweepArtifacts, VIDEO_ARTIFACTS } from '../../src/services/artifacts.js';
import { MemoryBlobStore } from '../../src/store/memory/blobs.js';
import { MemoryCatalog } from '../../src/store/memory/catalog.js';
import { sweepTempDirs, makeTempDir } from '../../src/util/temp.js';

const base = mkdtempSync(path.join(os.tmpdir(), 'vidembed-leftovers-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

async function library() {
  const catalog = new MemoryCatalog();
  const col = await catalog.collections.insert({ name: 'c', description: '', model: 'm', dim: 2 });
  await catalog.videos.insert({ id: 'vid_here', collection_id: col.id, filename: 'a.mp4', blob_key: 'videos/vid_here.mp4', size_bytes: 1 });
  return { catalog, col };
}

describe('staged artefacts', () => {
  it('move into place on commit (the old thumbnails replaced, a dropped proxy gone); discard leaves nothing', async () => {
    const blobs = new MemoryBlobStore();
    await blobs.put('thumbs/vid_here/7.jpg', Buffer.from('old'));
    await blobs.put('playback/vid_here.mp4', Buffer.from('old proxy'));
    const staged = new StagedArtifacts(blobs, stagingPrefix({ id: 'job_1', token: 3 }));
    expect(staged.prefix).toMatch(/^staging\/job_1\.3\.[0-9a-f]{8}$/);
    staged.replaceFolder(VIDEO_ARTIFACTS.thumbs('vid_here'));
    staged.drop(VIDEO_ARTIFACTS.playback('vid_here'));
    await staged.put('thumbs/vid_here/0.jpg', Buffer.from('new'));
    await staged.put(VIDEO_ARTIFACTS.transcript('vid_here'), Buffer.from('{}'));
    expect(blobs.keys().filter((k) => k.startsWith('staging/'))).toHaveLength(2);
    await staged.commit();
    expect(blobs.keys()).toEqual(['thumbs/vid_here/0.jpg', 'transcripts/vid_here.json']);

    const refused = new StagedArtifacts(blobs, stagingPrefix({ id: 'job_2', token: 1 }));
    await refused.put('thumbs/vid_here/0.jpg', Buffer.from('never'));
    await refused.discard();
    expect(blobs.keys()).toEqual(['thumbs/vid_here/0.jpg', 'transcripts/vid_here.json']);
    expect((await blobs.get('thumbs/vid_here/0.jpg')).toString()).toBe('new');
  });

  it('a video deleted between the settle and the move: what moved in is removed again', async () => {
    const blobs = new MemoryBlobStore();
    const { catalog } = await library();
    const staged = new StagedArtifacts(blobs, stagingPrefix(undefined));
    staged.replaceFolder('thumbs/vid_gone');
    await staged.put('thumbs/vid_gone/0.jpg', Buffer.from('x'));
    await staged.put(VIDEO_ARTIFACTS.transcript('vid_gone'), Buffer.from('x'));
    await staged.commit();
    expect(await staged.keepIfVideo(catalog, 'vid_gone')).toBe(false);
    expect(blobs.keys()).toEqual([]);
  });

  it('housekeeping removes staged folders of jobs no longer running and files of videos that are gone, once past the grace', async () => {
    let now = 1_000_000;
    const blobs = new MemoryBlobStore(() => now);
    const { catalog } = await library();
    const jobId = await catalog.queue.enqueue('video.pictures', 'vid_here');
    const running = (await catalog.queue.claim('w', 600_000))!;
    expect(running.id).toBe(jobId);
    await blobs.put(`staging/${jobId}.${running.token}.aaaaaaaa/thumbs/vid_here/0.jpg`, Buffer.from('in flight'));
    await blobs.put('staging/job_dead.1.bbbbbbbb/thumbs/vid_here/0.jpg', Buffer.from('killed between work and settle'));
    await blobs.put('thumbs/vid_here/0.jpg', Buffer.from('kept'));
    await blobs.put('thumbs/vid_gone/0.jpg', Buffer.from('orphan'));
    await blobs.put('keyframes/vid_gone/frames.bin', Buffer.from('orphan'));
    await blobs.put('transcripts/vid_gone.json', Buffer.from('orphan'));
    await blobs.put('videos/vid_here.mp4', Buffer.from('the video'));
    // Within the grace: nothing goes (a job may be writing, a video being uploaded).
    expect(await sweepArtifacts(blobs, catalog, { graceMs: 60_000, now: now + 10_000 })).toBe(0);
    now += 0;
    const removed = await sweepArtifacts(blobs, catalog, { graceMs: 60_000, now: now + 120_000 });
    expect(removed).toBe(4);
    expect(blobs.keys()).toEqual([`staging/${jobId}.${running.token}.aaaaaaaa/thumbs/vid_here/0.jpg`, 'thumbs/vid_here/0.jpg', 'videos/vid_here.mp4']);
  });
});

describe('temp dirs of stopped processes', () => {
  const aged = (dir: string, secondsAgo: number) => {
    const t = Date.now() / 1000 - secondsAgo;
    utimesSync(dir, t, t);
    return dir;
  };

  it('removes ours whose process is gone or older than a day; keeps a live one, one younger than the grace, and other names', async () => {
    const root = mkdtempSync(path.join(base, 'tmp-'));
    const dead = 2 ** 22 + 12345; // above pid_max's default: no such process
    const gone = path.join(root, `vidembed-proxy-${dead}-abcdef`);
    const young = path.join(root, `vidembed-proxy-${dead}-ghijkl`);
    const mine = path.join(root, `vidembed-blob-${process.pid}-mnopqr`);
    const ancient = path.join(root, `vidembed-src-${process.pid}-stuvwx`);
    const cluster = path.join(root, 'vidembed-pg-abcdef');
    const other = path.join(root, `someone-proxy-${dead}-abcdef`);
    for (const d of [gone, young, mine, ancient, cluster, other]) mkdirSync(d, { recursive: true });
    writeFileSync(path.join(gone, 'playback.mp4'), 'half an encode');
    for (const d of [gone, young, mine, ancient, cluster, other]) aged(d, d === young ? 5 : d === ancient ? 2 * 86400 : d === gone || d === mine ? 600 : 10 * 86400);
    const removed = await sweepTempDirs({ base: root, goneAfterMs: 60_000 });
    expect(removed.sort()).toEqual([ancient, gone].sort());
    expect([young, mine, cluster, other].every((d) => existsSync(d))).toBe(true);
  });

  it('makeTempDir names a dir so that a sweep can tell whose it is', async () => {
    const root = mkdtempSync(path.join(base, 'mk-'));
    const d = await makeTempDir('proxy', root);
    expect(path.basename(d)).toMatch(new RegExp(`^vidembed-proxy-${process.pid}-[A-Za-z0-9]{6}$`));
    expect(await sweepTempDirs({ base: root, goneAfterMs: 0 })).toEqual([]); // its process (this one) is alive
  });
});

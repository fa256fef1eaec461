/**
 * Near-duplicates end to end, on the check half of ../shared/eval (the thresholds were chosen on
 * the tuning half: eval/duplicates.ts): real ffmpeg variants (re-encode, resize, 1 s trim) of eval
 * clips and of pans over eval photos, ingested by the real engine (a fake embedder: duplicates do
 * not depend on embeddings), found by `duplicates` through the engine, the HTTP API, the remote
 * client and the CLI, and skipped by `upload --skip-duplicates`.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Analyzer } from '../../src/analysis/types.js';
import type { DuplicatesResponse } from '../../src/api/types.js';
import { RemoteService } from '../../src/client/remote.js';
import { DUPLICATE_THRESHOLDS } from '../../src/duplicates/duplicates.js';
import { Worker } from '../../src/runtime/worker.js';
import { makeVariant, type VariantKind } from '../../eval/duplicates.js';
import { halfOf } from '../../eval/split.js';
import { runCli } from '../helpers/cli.js';
import { evalPhoto, evalPhotosDir, evalVideos, evalVideosDir, makePanClip, removeDir, requireSharedData, tempDir } from '../helpers/clips.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { http, startTestServer, type TestServer } from '../helpers/server.js';

const have = requireSharedData([evalVideosDir, evalPhotosDir]);

describe.skipIf(!have)('near-duplicates (check half of ../shared/eval)', () => {
  let s: TestServer;
  let dir: string;
  let collectionId: string;
  /** name → video id; sources are eval clips and pans, variants are `<source>~<kind>`. */
  const ids = new Map<string, string>();
  const files = new Map<string, string>();
  const figures: Record<string, unknown> = {};

  const drain = async () => new Worker(s.engine, { idleExitMs: 0, pollMs: 20 }).run(new AbortController().signal);
  const upload = async (name: string, file: string, extra: { skipDuplicates?: boolean } = {}) => {
    files.set(name, file);
    const res = await s.engine.uploadVideo(collectionId, { path: file, filename: path.basename(file), ...extra });
    if (!res.duplicate) ids.set(name, res.video_id);
    return res;
  };
  const nameOf = (videoId: string) => [...ids].find(([, id]) => id === videoId)?.[0] ?? videoId;

  const CHECK_VIDEOS = evalVideos().filter((f) => halfOf(f) === 'check');
  const PAN_PHOTOS = ['kphotoalbum__bar55.jpg', 'python3-skimage__rocket.jpg', 'opencv-doc__home.jpg'];
  /** Which sources get which copies: the long clip and a pan get all three, a 1.2 s clip the two that keep its length. */
  const VARIANTS: Record<string, VariantKind[]> = {
    'node-opencv__motion.mov': ['reencode', 'resize', 'trim'],
    'pan:kphotoalbum__bar55.jpg': ['reencode', 'resize', 'trim'],
    'python3-imageio__realshort.mp4': ['reencode', 'resize'],
  };

  beforeAll(async () => {
    for (const p of [...PAN_PHOTOS]) expect(halfOf(p), p).toBe('check');
    dir = tempDir('vidembed-e2e-dups-');
    const fake = new FakeEmbedder();
    // Frames as large as production decodes them (the perception analyzer asks for 512 px), no facts.
    const frames512: Analyzer = { name: 'frames-512', version: '1', frameMaxSide: 512, load: async () => {}, analyzeSegment: async () => ({ facts: [] }), dispose: async () => {} };
    s = await startTestServer({ engine: { embedderFor: () => fake, analyzers: [frames512] } });
    // Owned by the test key's owner, as if made over HTTP; the local engine (full rights) sees it too.
    collectionId = (await s.engine.as({ owner: 'test', admin: false }).createCollection({ name: 'dups', model: fake.id })).collection_id;
    for (const f of CHECK_VIDEOS) await upload(path.basename(f), f);
    for (const p of PAN_PHOTOS.slice(0, 2)) {
      await upload(`pan:${p}`, await makePanClip(evalPhoto(p), path.join(dir, `pan-${p.replace(/\.jpg$/, '')}.mp4`), { direction: 'right', seconds: 6 }));
    }
    for (const [source, kinds] of Object.entries(VARIANTS)) {
      for (const k of kinds) await upload(`${source}~${k}`, await makeVariant(files.get(source)!, path.join(dir, `${source.replace(/\W/g, '_')}-${k}.mp4`), k));
    }
    await drain();
  });
  afterAll(async () => {
    if (Object.keys(figures).length) process.stderr.write(`near-duplicate figures (check half): ${JSON.stringify(figures)}\n`);
    await s?.close();
    if (dir) removeDir(dir);
  });

  it('processes every clip and stores a signature for each', async () => {
    expect(CHECK_VIDEOS.length).toBeGreaterThanOrEqual(5);
    for (const [name, id] of ids) expect((await s.engine.videoStatus(id)).status, name).toBe('processed');
    const res = await s.engine.findDuplicates(collectionId);
    expect(res.compared).toBe(ids.size);
    expect(res.missing_signature).toBe(0);
    expect(res.warnings).toBeUndefined();
    // Segment keyframes carry a pHash too.
    const rows = s.engine.store.signatures.segmentKeys(collectionId);
    expect(rows.length).toBeGreaterThanOrEqual(ids.size);
    expect(rows.filter((r) => r.phash && /^[0-9a-f]{16}$/.test(r.phash)).length).toBe(rows.length);
  });

  it('finds every re-encode, resize and 1 s trim with its source, and no group among distinct clips', async () => {
    const res = await s.engine.findDuplicates(collectionId);
    const groups = res.groups.map((g) => g.videos.map((v) => nameOf(v.video_id)).sort());
    const expected = Object.entries(VARIANTS).map(([source, kinds]) => [source, ...kinds.map((k) => `${source}~${k}`)].sort());
    expect(groups.sort()).toEqual(expected.sort());
    for (const g of res.groups) {
      expect(nameOf(g.videos[0].video_id)).not.toContain('~'); // the source was added first
      expect(g.similarity).toBeGreaterThanOrEqual(DUPLICATE_THRESHOLDS.minSimilarity);
      for (const v of g.videos.slice(1)) {
        const kind = nameOf(v.video_id).split('~')[1];
        figures[nameOf(v.video_id)] = v.similarity;
        // A re-encode or a resize holds all the pictures; a trim loses a second's worth of its source's.
        expect(v.similarity!, nameOf(v.video_id)).toBeGreaterThanOrEqual(kind === 'trim' ? 0.8 : 0.9);
      }
    }
    // How close distinct clips come: group at the lowest similarity there is and look at what joins.
    const loose = await s.engine.findDuplicates(collectionId, { min_similarity: 0.001 });
    let closest = 0;
    for (const g of loose.groups) {
      const sources = new Set(g.videos.map((v) => nameOf(v.video_id).split('~')[0]));
      if (sources.size > 1) closest = Math.max(closest, g.similarity);
    }
    figures.closest_distinct = closest;
    expect(closest).toBeLessThan(DUPLICATE_THRESHOLDS.minSimilarity);
  });

  it('says where each segment of the source is in its copies (the trim one second earlier)', async () => {
    const res = await s.engine.findDuplicates(collectionId, { segments: true });
    const g = res.groups.find((x) => nameOf(x.videos[0].video_id) === 'node-opencv__motion.mov')!;
    expect(g.segments!.length).toBeGreaterThanOrEqual(2);
    const trimId = ids.get('node-opencv__motion.mov~trim')!;
    const reencodeId = ids.get('node-opencv__motion.mov~reencode')!;
    for (const seg of g.segments!) {
      const re = seg.matches.find((m) => m.video_id === reencodeId)!;
      expect(re, `${seg.start}-${seg.end}`).toMatchObject({ start: seg.start, end: seg.end });
      expect(re.similarity).toBeGreaterThanOrEqual(0.8);
      if (seg.start < 1) continue; // its first second is not in the trim
      const tr = seg.matches.find((m) => m.video_id === trimId)!;
      // Overlaps where the segment's pictures are in the trim: one second earlier.
      expect(Math.min(tr.end, seg.end - 1) - Math.max(tr.start, seg.start - 1), `${seg.start}-${seg.end} → ${tr.start}-${tr.end}`).toBeGreaterThan(0);
    }
  });

  it('upload --skip-duplicates skips a copy whose pictures are there and names the video; other files are stored', async () => {
    const before = (await s.engine.listVideos(collectionId)).length;
    // A copy made differently from the stored ones: the trimmed pan, resized.
    const copy = await makeVariant(await makeVariant(files.get('pan:kphotoalbum__bar55.jpg')!, path.join(dir, 'pan-trim2.mp4'), 'trim'), path.join(dir, 'pan-trim-resize.mp4'), 'resize');
    const res = await s.engine.uploadVideo(collectionId, { path: copy, filename: 'pan-trim-resize.mp4', skipDuplicates: true });
    const group = [...ids].filter(([n]) => n.startsWith('pan:kphotoalbum__bar55.jpg')).map(([, id]) => id);
    expect(res.duplicate).toBe(true);
    expect(group).toContain(res.video_id);
    expect(res.near_duplicate!.coverage).toBeGreaterThanOrEqual(DUPLICATE_THRESHOLDS.minCoverage);
    expect(res.near_duplicate!.filename).toBe((await s.engine.videoDetails(res.video_id)).filename);
    figures.skipped_copy = res.near_duplicate;
    expect((await s.engine.listVideos(collectionId)).length).toBe(before);

    // A new clip is stored; its own copy, uploaded before the clip is processed, is already recognised.
    const fresh = await makePanClip(evalPhoto(PAN_PHOTOS[2]), path.join(dir, 'fresh.mp4'), { direction: 'right', seconds: 5 });
    const added = await s.engine.uploadVideo(collectionId, { path: fresh, filename: 'fresh.mp4', skipDuplicates: true });
    expect(added).toEqual({ video_id: expect.stringMatching(/^vid_/), status: 'uploaded' });
    const again = await s.engine.uploadVideo(collectionId, { path: await makeVariant(fresh, path.join(dir, 'fresh-small.mp4'), 'resize'), filename: 'fresh-small.mp4', skipDuplicates: true });
    expect(again).toMatchObject({ video_id: added.video_id, duplicate: true, near_duplicate: { filename: 'fresh.mp4' } });
    // Without the flag the same copy is stored (near-duplicates are only skipped when asked).
    const kept = await s.engine.uploadVideo(collectionId, { path: path.join(dir, 'fresh-small.mp4'), filename: 'fresh-small.mp4' });
    expect(kept.duplicate).toBeUndefined();
    await s.engine.deleteVideo(kept.video_id);
    await s.engine.deleteVideo(added.video_id);
  });

  it('answers the same over HTTP (GET /collections/{id}/duplicates, documented) and through the remote client', async () => {
    const local = await s.engine.findDuplicates(collectionId, { segments: true });
    const r = await http(s.url, 'GET', `/collections/${collectionId}/duplicates?segments=true`, { key: s.key });
    expect(r.status).toBe(200);
    expect(r.body as DuplicatesResponse).toEqual(local);
    expect((await http(s.url, 'GET', `/collections/${collectionId}/duplicates?min_similarity=2`, { key: s.key })).status).toBe(422);
    expect((await http(s.url, 'GET', `/collections/${collectionId}/duplicates`, { key: null })).status).toBe(401);
    // Another owner's key does not see the collection.
    const other = s.engine.store.keys.create({ name: 'bob', qps: 1000 }).key;
    expect((await http(s.url, 'GET', `/collections/${collectionId}/duplicates`, { key: other })).status).toBe(404);

    const remote = new RemoteService({ baseUrl: s.url, apiKey: s.key });
    expect(await remote.findDuplicates('dups', { segments: true })).toEqual(local);
    const copy = path.join(dir, 'remote-copy.mp4');
    // Not byte-equal to anything stored (ffmpeg is deterministic: the same recipe would be an exact duplicate).
    await makeVariant(files.get('node-opencv__motion.mov~trim')!, copy, 'reencode');
    const res = await remote.uploadVideo(collectionId, { path: copy, filename: 'remote-copy.mp4', skipDuplicates: true });
    expect(res).toMatchObject({ duplicate: true, near_duplicate: { filename: expect.any(String) } });
    expect([...ids].filter(([n]) => n.startsWith('node-opencv__motion.mov')).map(([, id]) => id)).toContain(res.video_id);
  });

  it('the CLI lists the groups (table and --json) and says which video a skipped upload matched', async () => {
    const env = { VIDEMBED_HOME: s.home, VIDEMBED_NO_AUTO_WORKER: '1' };
    const json = await runCli(['duplicates', '--collection', 'dups', '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    expect(json.json).toEqual(await s.engine.findDuplicates(collectionId));
    const text = await runCli(['duplicates', '--collection', 'dups'], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(ids.get('node-opencv__motion.mov~trim')!);
    expect(text.stdout).toContain('first added');
    expect(text.stderr).toMatch(/3 groups \(\d+ videos\) among \d+ compared/);
    const up = await runCli(['upload', path.join(dir, 'remote-copy.mp4'), '--collection', 'dups', '--skip-duplicates'], env);
    expect(up.code, up.stderr).toBe(0);
    expect(up.stderr).toMatch(/skipped .*remote-copy\.mp4: its pictures are already in the collection as vid_[\w-]+ \(.+: \d+% of its pictures, similarity [\d.]+/);
    expect(up.stdout).toMatch(/near-duplicate of .+ \(similarity [\d.]+\): not added/);
    const bad = await runCli(['duplicates', '--collection', 'dups', '--min-similarity', '0'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('min_similarity');
  });
});

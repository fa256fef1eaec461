import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEngine } from '../../src/runtime/engine.js';
import { Worker } from '../../src/runtime/worker.js';
import { probe } from '../../src/media/index.js';
import { BIN, runCli } from '../helpers/cli.js';
import {
  evalPhoto,
  makeAudioOnlyFile,
  makeEmptyFile,
  makePanClip,
  makeStillClip,
  makeTextFileAsMp4,
  makeTruncatedMp4,
  makeWebmClip,
  makeRotatedClip,
  makeZoomClip,
  removeDir,
  tempDir,
} from '../helpers/clips.js';

/** Drains the queue in this process (the CLI tests below use the detached worker instead). */
async function drain(engine: LocalEngine): Promise<void> {
  const stop = new AbortController();
  await new Worker(engine, { idleExitMs: 0, pollMs: 20 }).run(stop.signal);
}

describe('local engine end to end: upload, process, search', () => {
  let dir: string;
  let engine: LocalEngine;
  let collectionId: string;
  const clips: Record<string, string> = {};
  const ids: Record<string, string> = {};

  // Clearly different content, each query naming what is visible.
  const CASES: { name: string; photo: string; query: string }[] = [
    { name: 'dog', photo: 'opencv-doc__chicky_512.jpg', query: 'a dog' },
    { name: 'cat', photo: 'labelme-examples__0001.jpg', query: 'a cat lying down' },
    { name: 'airport', photo: 'kphotoalbum__snow.jpg', query: 'airplanes at an airport in the snow' },
    { name: 'boats', photo: 'plasma-workspace-wallpapers__EveningGlow_1920x1080.jpg', query: 'boats on a lake at sunset' },
    { name: 'football', photo: 'opencv-doc__messi5.jpg', query: 'a football player kicking a ball' },
    { name: 'coffee', photo: 'python3-skimage__coffee.jpg', query: 'a cup of coffee' },
    { name: 'face', photo: 'kphotoalbum__jesper_2.jpg', query: "a close-up of a man's face" },
    { name: 'canyon', photo: 'kphotoalbum__grand_canyon_3.jpg', query: 'a rocky canyon landscape under a blue sky' },
    { name: 'car', photo: 'opencv-doc__licenseplate_motion.jpg', query: 'the back of a car' },
    { name: 'sofa', photo: 'labelme-examples__2011_000006.jpg', query: 'three women sitting on a sofa' },
  ];

  beforeAll(async () => {
    dir = tempDir('vidembed-e2e-engine-');
    engine = new LocalEngine({ home: path.join(dir, 'home') });
    collectionId = (await engine.createCollection({ name: 'retrieval', description: 'e2e' })).collection_id;
    for (const c of CASES) {
      // Keep the photo's own aspect ratio: the whole picture is in frame, as it would be in a video of it.
      const { width, height } = await probe(evalPhoto(c.photo));
      const h = Math.round((640 * height) / width / 2) * 2;
      clips[c.name] = await makeStillClip(evalPhoto(c.photo), path.join(dir, `${c.name}.mp4`), { seconds: 5, width: 640, height: h });
      ids[c.name] = (await engine.uploadVideo(collectionId, { path: clips[c.name], filename: `${c.name}.mp4` })).video_id;
    }
    await drain(engine);
  });
  afterAll(async () => {
    await engine?.close();
    removeDir(dir);
  });

  it('processes every clip into segments with descriptions', async () => {
    for (const c of CASES) {
      const st = await engine.videoStatus(ids[c.name]);
      expect(st, c.name).toMatchObject({ status: 'processed', progress: 100 });
      const d = await engine.videoDetails(ids[c.name]);
      expect(d.segments.length).toBe(2); // 5 s at 4 s segments: [0,4) and [4,5]
      expect(d.segments[1].end).toBeCloseTo(5, 0);
      expect(d.segments[0].description.length).toBeGreaterThan(10);
    }
    expect((await engine.listCollections())[0]).toMatchObject({ id: collectionId, video_count: CASES.length });
  });

  it('ranks the clip showing what the query names first for most queries (threshold 7/10)', async () => {
    const ranks: string[] = [];
    let firsts = 0;
    for (const c of CASES) {
      const res = await engine.search(collectionId, { text: c.query, top_k: 10 });
      expect(res.results.length).toBe(CASES.length);
      const rank = res.results.findIndex((r) => r.video_id === ids[c.name]) + 1;
      if (rank === 1) firsts++;
      ranks.push(`${c.name}:${rank}`);
      const top = res.results[0];
      // Ordered by the relevance shown (0–1: the combined probability); similarities are real cosines.
      const rel = res.results.map((r) => r.relevance!);
      expect(rel).toEqual([...rel].sort((a, b) => b - a));
      for (const r of res.results) {
        expect(Number.isFinite(r.similarity), `${r.filename}: similarity ${r.similarity}`).toBe(true);
        expect(Math.abs(r.similarity)).toBeLessThanOrEqual(1 + 1e-6);
        expect(r.relevance).toBeGreaterThanOrEqual(0);
        expect(r.relevance).toBeLessThanOrEqual(1);
        expect(r.kinds).not.toContain('said'); // nothing is said in these clips
      }
      expect(top.end).toBeGreaterThan(top.start);
      expect(top.filename).toMatch(/\.mp4$/);
    }
    console.log(`retrieval ranks: ${ranks.join(' ')} (top-1 ${firsts}/${CASES.length})`);
    expect(firsts).toBeGreaterThanOrEqual(7);
  });

  it('returns one result per video with its best moment, and honours top_k', async () => {
    const res = await engine.search(collectionId, { text: 'a dog', top_k: 3 });
    expect(res.results).toHaveLength(3);
    expect(new Set(res.results.map((r) => r.video_id)).size).toBe(3);
    const explained = await engine.search(collectionId, { text: 'a dog', top_k: 1 }, { explain: true });
    expect(explained.results[0].description).toBeTruthy();
  });

  it('embeds text and video with the same model and dimension', async () => {
    const t = await engine.encodeText({ text: 'sunset over the sea' });
    expect(t.dim).toBe(512);
    expect(t.embedding).toHaveLength(512);
    expect(Math.hypot(...t.embedding)).toBeCloseTo(1, 4);
    const v = await engine.encodeVideo({ video_path: clips.dog, segment_seconds: 2 });
    expect(v.model).toBe(t.model);
    expect(v.embeddings.length).toBe(v.segments.length);
    expect(v.segments[0]).toEqual({ start: 0, end: 2 });
    expect(v.video_embedding).toHaveLength(512);
    expect(Math.hypot(...v.embeddings[0])).toBeCloseTo(1, 4);
  });
});

describe('bad input fails that input only, with a clear message', () => {
  let dir: string;
  let engine: LocalEngine;
  let cid: string;
  beforeAll(async () => {
    dir = tempDir('vidembed-e2e-bad-');
    engine = new LocalEngine({ home: path.join(dir, 'home') });
    cid = (await engine.createCollection({ name: 'bad' })).collection_id;
  });
  afterAll(async () => {
    await engine?.close();
    removeDir(dir);
  });

  it('refuses empty, audio-only and non-video files before storing them, processes short and webm clips, and leaves the good ones alone', async () => {
    const refused = {
      text: makeTextFileAsMp4(path.join(dir, 'notes.mp4')),
      empty: makeEmptyFile(path.join(dir, 'empty.mp4')),
      audio: await makeAudioOnlyFile(path.join(dir, 'sound.m4a')),
    };
    await expect(engine.uploadVideo(cid, { path: refused.text, filename: 'notes.mp4' })).rejects.toThrow(/^notes\.mp4 is not a video: /);
    await expect(engine.uploadVideo(cid, { path: refused.empty, filename: 'empty.mp4' })).rejects.toThrow(/^empty\.mp4 is not a video: .*empty/);
    await expect(engine.uploadVideo(cid, { path: refused.audio, filename: 'sound.m4a' })).rejects.toThrow(/^sound\.m4a is not a video: audio only/);
    expect(await engine.listVideos(cid)).toEqual([]);
    const files = {
      truncated: await makeTruncatedMp4(evalPhoto('opencv-doc__fruits.jpg'), path.join(dir, 'truncated.mp4')),
      short: await makePanClip(evalPhoto('opencv-doc__home.jpg'), path.join(dir, 'short.mp4'), { direction: 'left', seconds: 2 }),
      webm: await makeWebmClip(evalPhoto('kphotoalbum__skagen.jpg'), path.join(dir, 'sea.webm'), { seconds: 3 }),
      zoom: await makeZoomClip(evalPhoto('opencv-doc__apple.jpg'), path.join(dir, 'zoom.mkv'), { direction: 'in', seconds: 3 }),
      // A phone clip held upright: stored 320x180 with rotation 90, shown 180x320.
      portrait: await makeRotatedClip(await makePanClip(evalPhoto('opencv-doc__home.jpg'), path.join(dir, 'landscape.mp4'), { direction: 'left', seconds: 2 }), path.join(dir, 'portrait.mp4'), 90),
    };
    const vids: Record<string, string> = {};
    for (const [k, f] of Object.entries(files)) vids[k] = (await engine.uploadVideo(cid, { path: f, filename: path.basename(f) })).video_id;
    await drain(engine);
    const st = async (k: string) => engine.videoStatus(vids[k]);
    // A truncated mp4 whose index is at the front (faststart; half of a 4 s clip kept) yields what
    // decodes: processed, with segments (their times follow the container's 4 s duration).
    const tr = await st('truncated');
    expect(tr.status, tr.error_message ?? '').toBe('processed');
    expect((await engine.videoDetails(vids.truncated)).segments.length).toBeGreaterThanOrEqual(1);
    for (const k of ['short', 'webm', 'zoom', 'portrait']) expect((await st(k)).status, k).toBe('processed');
    // Sizes are what a player shows (after rotation), with the codec.
    expect(await engine.videoDetails(vids.portrait)).toMatchObject({ width: 180, height: 320, codec: 'h264' });
    expect(await engine.videoDetails(vids.webm)).toMatchObject({ width: 320, height: 180, codec: 'vp9' });
    const short = await engine.videoDetails(vids.short);
    expect(short.segments).toHaveLength(1);
    expect(short.segments[0].end).toBeCloseTo(2, 0);
    // Search still works and finds only processed videos.
    const res = await engine.search(cid, { text: 'the sea', top_k: 100 });
    const found = new Set(res.results.map((r) => r.video_id));
    expect(found.size).toBeGreaterThan(0);
    expect(found.has(vids.webm)).toBe(true);
  });

  it('refuses missing files, directories, unknown collections and bad search parameters', async () => {
    await expect(engine.uploadVideo(cid, { path: path.join(dir, 'nope.mp4'), filename: 'nope.mp4' })).rejects.toThrow(/not found/);
    mkdirSync(path.join(dir, 'folder.mp4'), { recursive: true });
    await expect(engine.uploadVideo(cid, { path: path.join(dir, 'folder.mp4'), filename: 'folder.mp4' })).rejects.toThrow(/directory/);
    await expect(engine.uploadVideo('nope', { path: path.join(dir, 'notes.mp4'), filename: 'x' })).rejects.toThrow(/collection not found/);
    await expect(engine.createCollection({ name: 'bad' })).rejects.toThrow(/already exists/);
    await expect(engine.search(cid, { text: '   ' })).rejects.toThrow(/text: must not be empty/);
    await expect(engine.search(cid, { text: 'x', top_k: 0 })).rejects.toThrow(/top_k/);
    await expect(engine.search(cid, { text: 'x', top_k: 101 })).rejects.toThrow(/top_k/);
    await expect(engine.encodeText({ text: '' })).rejects.toThrow(/must not be empty/);
  });
});

describe('the CLI, as a user types it', () => {
  let dir: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    dir = tempDir('vidembed-e2e-cli-');
    env = { VIDEMBED_HOME: path.join(dir, 'home'), VIDEMBED_WORKER_IDLE_MS: '3000' };
  });
  afterAll(() => removeDir(dir));

  it('creates a collection, uploads with --wait (a background worker processes it), searches, shows status', async () => {
    const clip = await makeStillClip(evalPhoto('opencv-doc__chicky_512.jpg'), path.join(dir, 'dog.mp4'), { seconds: 4 });
    const other = await makeStillClip(evalPhoto('kphotoalbum__grand_canyon_3.jpg'), path.join(dir, 'canyon.mp4'), { seconds: 4 });
    const created = await runCli(['collection', 'create', 'demo', '--description', 'first try', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    expect(created.json).toMatchObject({ name: 'demo', description: 'first try' });

    const up = await runCli(['upload', clip, '--collection', 'demo', '--wait', '--json'], env);
    expect(up.code, up.stderr).toBe(0);
    expect(up.json).toMatchObject({ status: 'processed' });
    expect(up.json.video_id).toMatch(/^vid_/);
    // No --collection: the first collection became the default.
    const up2 = await runCli(['upload', other, '--wait'], env);
    expect(up2.code, up2.stderr).toBe(0);
    expect(up2.stdout).toMatch(/processed/);

    const search = await runCli(['search', 'a dog', '--json'], env);
    expect(search.code, search.stderr).toBe(0);
    expect(search.json.results[0]).toMatchObject({ video_id: up.json.video_id, filename: 'dog.mp4' });
    const table = await runCli(['search', 'a dog', '--collection', 'demo', '--top-k', '1'], env);
    expect(table.stdout).toMatch(/rank/);
    expect(table.stdout).toMatch(/dog\.mp4/);

    // `open` plays the last search's result at its moment, or prints where it is.
    const printed = await runCli(['open', '1', '--print'], env);
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toMatch(/\/videos\/vid_[^ ]+\.mp4 {2}\(dog\.mp4\) {2}at 0:00\.0–0:04\.0 \(0 s\)\n$/);
    const bin = path.join(dir, 'bin');
    mkdirSync(bin);
    // No video player exists on this machine: a stand-in mpv records how it was started.
    writeFileSync(path.join(bin, 'mpv'), `#!/bin/sh\necho "$@" > ${path.join(dir, 'mpv-args')}\n`, { mode: 0o755 });
    const played = await runCli(['open', `${up.json.video_id}@1.5`], { ...env, PATH: `${bin}:${process.env.PATH}` });
    expect(played.code, played.stderr).toBe(0);
    expect(played.stderr).toMatch(/playing dog\.mp4 from 0:01\.5 in mpv/);
    await expect.poll(() => (existsSync(path.join(dir, 'mpv-args')) ? readFileSync(path.join(dir, 'mpv-args'), 'utf8') : '')).toMatch(/^--start=1\.5 \/.+\.mp4\n$/);
    // By example: a picture, a moment; and an EDL an editor can load.
    const byImage = await runCli(['search', '--image', evalPhoto('opencv-doc__chicky_512.jpg'), '--json'], env);
    expect(byImage.code, byImage.stderr).toBe(0);
    expect(byImage.json.results[0].video_id).toBe(up.json.video_id);
    const like = await runCli(['search', '--like', `${up.json.video_id}@1`, '--json'], env);
    expect(like.code, like.stderr).toBe(0);
    expect(like.json.results.map((r: { video_id: string }) => r.video_id)).not.toContain(up.json.video_id);
    const edl = await runCli(['search', 'a dog', '--export', 'edl'], env);
    expect(edl.code, edl.stderr).toBe(0);
    const event = /^001 {2}AX {7}V {5}C {8}(\d\d:\d\d:\d\d:\d\d) (\d\d:\d\d:\d\d:\d\d) 01:00:00:00 \S+\r?$/m.exec(edl.stdout);
    expect(event, edl.stdout).not.toBeNull();
    expect(edl.stdout).toMatch(/^\* FROM CLIP NAME: dog\.mp4\r?$/m);
    expect(event![1]).toBe('00:00:00:00'); // the still clip (25 fps) matches from its start…
    expect(event![2]).toBe('00:00:04:00'); // …to its end, 4 s
    const none = await runCli(['open', '7'], env);
    expect(none.code).toBe(2);
    expect(none.stderr.trim()).toBe('vidembed: error: the last search ("a dog") showed results 1–2, not 7');

    const status = await runCli(['video', 'status', up.json.video_id, '--json'], env);
    expect(status.json).toMatchObject({ video_id: up.json.video_id, status: 'processed', progress: 100, searchable: true });
    // Each capability's state: done, or skipped with why (ImageNet is not pulled here).
    for (const [name, a] of Object.entries(status.json.analysis as Record<string, { status: string; reason?: string }>)) expect(['done', 'skipped'], name).toContain(a.status);
    expect(status.json.analysis.perception).toMatchObject({ status: 'done', lane: 'pictures' });
    expect(status.json.analysis.speech.lane).toBe('speech');
    const list = await runCli(['collection', 'list', '--json'], env);
    expect(list.json[0]).toMatchObject({ name: 'demo', video_count: 2 });
    const text = await runCli(['embed', 'text', 'sunset over the sea', '--json'], env);
    expect(text.json.dim).toBe(512);
    expect(text.json.embedding).toHaveLength(512);
    const video = await runCli(['embed', 'video', clip, '--json'], env);
    expect(video.json.embeddings).toHaveLength(1);
    expect(video.json.segments).toEqual([{ start: 0, end: 4 }]);
    expect(readFileSync(path.join(dir, 'home', 'logs', 'worker.log'), 'utf8')).toMatch(/job .* done/);
  });

  it('gives one-line errors and non-zero exit codes for bad input', async () => {
    const emptyDir = path.join(dir, 'empty');
    mkdirSync(emptyDir, { recursive: true });
    const cases: [string[], RegExp][] = [
      [['upload', path.join(dir, 'missing.mp4'), '--collection', 'demo'], /file not found/],
      [['upload', emptyDir, '--collection', 'demo'], /no video files in/],
      [['upload', path.join(dir, 'dog.mp4'), '--collection', 'nope'], /collection not found: nope/],
      [['collection', 'create', 'demo'], /already exists/],
      [['collection', 'create'], /name is required/],
      [['search', '', '--collection', 'demo'], /text must not be empty/],
      [['search', 'x', '--collection', 'demo', '--top-k', '0'], /top_k must be between 1 and 100/],
      [['search', 'x', '--collection', 'demo', '--top-k', '101'], /top_k must be between 1 and 100/],
      [['video', 'status', 'vid_nope'], /video not found/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(args, env);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stderr).not.toMatch(/at .*\.js:\d+/); // no stack trace without --debug
    }
  });

  it('lists every command with an example in --help', async () => {
    const help = await runCli(['--help'], env);
    for (const cmd of ['collection', 'upload', 'search', 'serve', 'embed', 'tag', 'tensors', 'video', 'keys', 'worker']) expect(help.stdout).toContain(cmd);
    expect(help.stdout).toMatch(/Quick start/);
    const upload = await runCli(['upload', '--help'], env);
    expect(upload.stdout).toMatch(/Examples?:/);
    // Piped into a reader that stops early (`| head`): a quiet exit, not an EPIPE crash.
    const { spawnSync } = await import('node:child_process');
    const piped = spawnSync('bash', ['-c', `"${process.execPath}" "${BIN}" --help | head -1`], { encoding: 'utf8', env: { ...process.env, ...env } });
    expect(piped.stderr).not.toMatch(/EPIPE/);
  });
});

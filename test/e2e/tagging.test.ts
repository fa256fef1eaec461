import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEngine } from '../../src/runtime/engine.js';
import { Worker } from '../../src/runtime/worker.js';
import { runCli } from '../helpers/cli.js';
import { evalPhoto, ffmpeg, makeConcatClip, makePanClip, makeStillClip, removeDir, tempDir } from '../helpers/clips.js';
import { http, startTestServer, type TestServer } from '../helpers/server.js';

describe('tagging end to end', () => {
  let dir: string;
  let clips: Record<string, string>;
  let server: TestServer;
  beforeAll(async () => {
    dir = tempDir('vidembed-e2e-tag-');
    const home = evalPhoto('opencv-doc__home.jpg');
    clips = {
      panLeft: await makePanClip(home, path.join(dir, 'pan-left.mp4'), { direction: 'left', seconds: 4 }),
      still: await makeStillClip(home, path.join(dir, 'still.mp4'), { seconds: 4 }),
      face: await makeStillClip(evalPhoto('kphotoalbum__jesper_2.jpg'), path.join(dir, 'face.mp4'), { seconds: 3 }),
    };
    clips.cuts = await makeConcatClip([clips.panLeft, clips.face], path.join(dir, 'cuts.mp4'));
    clips.short = path.join(dir, 'short.mp4');
    await ffmpeg(['-y', '-i', clips.still, '-t', '0.6', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', clips.short]);
    clips.black = path.join(dir, 'black.mp4');
    await ffmpeg(['-y', '-f', 'lavfi', '-i', 'color=c=black:s=320x180:d=2:r=25', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', clips.black]);
    clips.single = path.join(dir, 'single.mp4');
    await ffmpeg(['-y', '-i', clips.still, '-frames:v', '1', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', clips.single]);
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
    removeDir(dir);
  });

  it('`vidembed tag` measures the camera movement and follows the cut', async () => {
    const env = { VIDEMBED_HOME: path.join(dir, 'home') };
    const pan = await runCli(['tag', clips.panLeft, '--json'], env);
    expect(pan.code, pan.stderr).toBe(0);
    expect(pan.json.tags.camera_movement.label).toBe('pan_left');
    expect(pan.json.tags.camera_movement.confidence).toBeGreaterThan(0.5);
    expect(pan.json.tags.duration).toBeCloseTo(4, 0);
    expect(pan.json.tags.segments[0].camera_movement.label).toBe('pan_left');
    const cut = await runCli(['tag', clips.cuts, '--json'], env);
    const { segments, cuts } = cut.json.tags;
    expect(cuts.length).toBe(1);
    expect(Math.abs(cuts[0].t - 4)).toBeLessThan(0.5);
    // Segments follow the shot: one boundary sits at the cut.
    expect(segments.some((s: { end: number }) => Math.abs(s.end - cuts[0].t) < 1e-6)).toBe(true);
    expect(segments[segments.length - 1].camera_movement.label).toBe('static');
    const table = await runCli(['tag', clips.panLeft], env);
    expect(table.stdout).toMatch(/pan_left/);
    // Shot size from the perception keyframes (face geometry): the portrait is a close shot.
    const face = await runCli(['tag', clips.face, '--json'], env);
    expect(['close_up', 'medium_close_up', 'extreme_close_up'], face.stderr).toContain(face.json?.tags?.shot_size?.label);
  });

  it('POST /video_tagging answers tags; the async task carries the same tags', async () => {
    const b64 = readFileSync(clips.panLeft).toString('base64');
    const sync = await http(server.url, 'POST', '/video_tagging', { key: server.key, json: { video_base64: b64 } });
    expect(sync.status).toBe(200);
    expect(sync.body.tags.camera_movement.label).toBe('pan_left');
    const sub = await http(server.url, 'POST', '/video_tagging/async', { key: server.key, json: { video_base64: b64 } });
    expect(sub.status).toBe(202);
    await new Worker(server.engine, { idleExitMs: 0, pollMs: 20 }).run(new AbortController().signal);
    const st = await http(server.url, 'GET', `/async_status/${sub.body.request_id}`, { key: server.key });
    expect(st.body.status).toBe('completed');
    expect(st.body.tags.camera_movement.label).toBe('pan_left');
    expect(st.body.tags.segments.length).toBeGreaterThan(0);
  });

  it('stores tags with processed videos and filters search by them', async () => {
    const engine = new LocalEngine({ home: path.join(dir, 'filter-home') });
    try {
      const cid = (await engine.createCollection({ name: 'filters' })).collection_id;
      const pan = (await engine.uploadVideo(cid, { path: clips.panLeft, filename: 'pan.mp4' })).video_id;
      const still = (await engine.uploadVideo(cid, { path: clips.still, filename: 'still.mp4' })).video_id;
      await new Worker(engine, { idleExitMs: 0, pollMs: 20 }).run(new AbortController().signal);
      const details = await engine.videoDetails(pan);
      expect(details.tags.camera_movement.label).toBe('pan_left');
      expect(details.segments[0].tags.camera_movement.label).toBe('pan_left');
      const all = await engine.search(cid, { text: 'a building' });
      expect(all.results.map((r) => r.video_id).sort()).toEqual([pan, still].sort());
      const panned = await engine.search(cid, { text: 'a building', camera_movement: 'pan_left' });
      expect(panned.results.map((r) => r.video_id)).toEqual([pan]);
      const stat = await engine.search(cid, { text: 'a building', camera_movement: 'static' });
      expect(stat.results.map((r) => r.video_id)).toEqual([still]);
      expect((await engine.search(cid, { text: 'a building', camera_movement: 'zoom_in' })).results).toEqual([]);
    } finally {
      await engine.close();
    }
  });

  it('copes with a 0.6 s clip, a single frame and black frames', async () => {
    const env = { VIDEMBED_HOME: path.join(dir, 'home') };
    for (const name of ['short', 'single', 'black']) {
      const r = await runCli(['tag', clips[name], '--json'], env);
      expect(r.code, `${name}: ${r.stderr}`).toBe(0);
      const t = r.json.tags;
      expect(t.segments.length, name).toBe(1);
      expect(t.camera_movement.label, name).toBe('static');
      expect(t.camera_movement.confidence).toBeGreaterThanOrEqual(0);
      expect(t.camera_movement.confidence).toBeLessThanOrEqual(1);
    }
    const black = await runCli(['tag', clips.black, '--json'], env);
    expect(black.json.tags.lighting.label).toBe('low_key');
  });
});

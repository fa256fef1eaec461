import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { evalPhoto, ffmpeg, makeStillClip, removeDir, tempDir } from '../helpers/clips.js';
import { FileServer } from '../helpers/http-fixture.js';
import { writeTinyClip } from '../helpers/tiny-clip.js';
import { SHOOTING_ANGLE_LABELS, SHOT_SIZE_LABELS } from '../../src/tagging/framing.js';

/**
 * The CLIP tier end to end through the real CLI, with the generated CLIP-shaped model standing in
 * for the hub's weights: pull from a loopback "hub" (through VIDEMBED_MODELS_MIRROR), a collection
 * that remembers its model, upload, process, search — next to a perception collection.
 */
describe('CLIP tier through the engine', () => {
  let dir: string;
  let srv: FileServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    dir = tempDir('vidembed-e2e-clip-');
    srv = await FileServer.start();
    const tiny = writeTinyClip(path.join(dir, 'src'));
    srv.addFile(tiny.urlPaths.vision, tiny.vision);
    srv.addFile(tiny.urlPaths.text, tiny.text);
    const manifests = path.join(dir, 'manifests');
    mkdirSync(manifests);
    writeFileSync(path.join(manifests, 'clip-tiny-test.json'), JSON.stringify(tiny.manifest));
    env = {
      VIDEMBED_HOME: path.join(dir, 'home'),
      VIDEMBED_MODELS_DIR: path.join(dir, 'models'),
      VIDEMBED_MODELS_MIRROR: srv.url,
      VIDEMBED_MANIFESTS_DIR: manifests,
      VIDEMBED_WORKER_IDLE_MS: '3000',
    };
  });
  afterAll(async () => {
    await srv?.close();
    removeDir(dir);
  });

  it('pulls, creates a collection on the model, and searches it by colour words', async () => {
    const pulled = await runCli(['models', 'pull', 'clip-tiny-test', '--json'], env);
    expect(pulled.code, pulled.stderr).toBe(0);
    const created = await runCli(['collection', 'create', 'colours', '--model', 'clip-tiny-test', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    expect(created.json).toMatchObject({ model: 'clip-tiny-test', dim: 512 });
    const perception = await runCli(['collection', 'create', 'photos', '--json'], env);
    expect(perception.json.model).toBe('perception-use-v1');

    const ids: Record<string, string> = {};
    for (const colour of ['red', 'green', 'blue']) {
      const file = path.join(dir, `${colour}.mp4`);
      await ffmpeg(['-y', '-f', 'lavfi', '-i', `color=c=${colour}:s=320x180:d=3:r=25`, '-c:v', 'libx264', '-pix_fmt', 'yuv420p', file]);
      const up = await runCli(['upload', file, '--collection', 'colours', '--wait', '--json'], env);
      expect(up.code, up.stderr).toBe(0);
      expect(up.json.status).toBe('processed');
      ids[colour] = up.json.video_id;
    }
    for (const colour of ['red', 'green', 'blue']) {
      const res = await runCli(['search', `something ${colour}`, '--collection', 'colours', '--json'], env);
      expect(res.code, res.stderr).toBe(0);
      expect(res.json.model).toBe('clip-tiny-test');
      expect(res.json.results[0].video_id, colour).toBe(ids[colour]);
    }
    // Tags do not depend on the embedder: the CLIP collection's segments have shot size and angle
    // (from the perception analyzer), and the tag filters find them.
    const shown = await runCli(['video', 'show', ids.red, '--json'], env);
    expect(shown.code, shown.stderr).toBe(0);
    const segTags = shown.json.segments[0].tags;
    expect(SHOT_SIZE_LABELS).toContain(segTags.shot_size.label);
    expect(SHOOTING_ANGLE_LABELS).toContain(segTags.shooting_angle.label);
    expect(shown.json.tags.shot_size.label).toBeTruthy();
    const filtered = await runCli(['search', 'something red', '--collection', 'colours', '--shot', segTags.shot_size.label, '--json'], env);
    expect(filtered.code, filtered.stderr).toBe(0);
    expect(filtered.json.results.map((r: { video_id: string }) => r.video_id)).toContain(ids.red);

    // The perception collection keeps its own embedder and its own vectors.
    const clip = await makeStillClip(evalPhoto('opencv-doc__messi5.jpg'), path.join(dir, 'ball.mp4'), { seconds: 2 });
    expect((await runCli(['upload', clip, '--collection', 'photos', '--wait', '--json'], env)).json.status).toBe('processed');
    const res = await runCli(['search', 'red', '--collection', 'photos', '--json'], env);
    expect(res.json.model).toBe('perception-use-v1');
    expect(res.json.results.map((r: { filename: string }) => r.filename)).toEqual(['ball.mp4']);
  });

  it('refuses a collection on a model that is not installed, and fails uploads if its files vanish later', async () => {
    const empty = { ...env, VIDEMBED_MODELS_DIR: path.join(dir, 'empty-models') };
    const refused = await runCli(['collection', 'create', 'nomodel', '--model', 'clip-tiny-test'], empty);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/model clip-tiny-test is not installed: run `vidembed models pull clip-tiny-test`/);
    // Created while installed, then the model directory goes away: the video fails with the fix in
    // its message. A home of its own, so no worker started earlier (with the model) takes the job.
    const later = { ...env, VIDEMBED_HOME: path.join(dir, 'home-vanish') };
    expect((await runCli(['collection', 'create', 'nomodel', '--model', 'clip-tiny-test', '--json'], later)).code).toBe(0);
    const file = path.join(dir, 'red.mp4');
    const up = await runCli(['upload', file, '--collection', 'nomodel', '--wait', '--json'], { ...later, VIDEMBED_MODELS_DIR: empty.VIDEMBED_MODELS_DIR });
    expect(up.json.status).toBe('failed');
    expect(up.json.error_message).toMatch(/models pull clip-tiny-test/);
  });
});

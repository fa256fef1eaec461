import { writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { FormData } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { ffmpeg, makeTestPatternClip, removeDir, tempDir } from '../helpers/clips.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { http, startTestServer, type TestServer } from '../helpers/server.js';

/*
 * Only videos are videos (issue 22), with ffmpeg's real probe: text, a still image and audio only
 * are refused over HTTP (422 invalid_media naming the file, nothing stored) and by the CLI (one
 * line, exit 6: upload and tag); a real clip is taken.
 */

describe('files that are not videos are refused before they are stored', () => {
  const dir = tempDir('vidembed-non-video-');
  const files: Record<string, string> = {};
  let s: TestServer;
  let cid: string;
  beforeAll(async () => {
    files.text = path.join(dir, 'notes.txt');
    writeFileSync(files.text, 'shot list: beach, harbour, sunset\n');
    files.photo = path.join(dir, 'IMG_0001.JPG');
    await ffmpeg(['-f', 'lavfi', '-i', 'testsrc=size=320x180', '-frames:v', '1', files.photo]);
    files.audio = path.join(dir, 'interview.m4a');
    await ffmpeg(['-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', '-c:a', 'aac', files.audio]);
    files.clip = await makeTestPatternClip(path.join(dir, 'clip.mp4'), 1);
    const fake = new FakeEmbedder();
    s = await startTestServer({ engine: { embedderFor: () => fake, analyzers: [] } });
    cid = (await http(s.url, 'POST', '/collections', { key: s.key, json: { name: 'card', model: fake.id } })).body.collection_id;
  });
  afterAll(async () => {
    await s?.close();
    removeDir(dir);
  });

  const upload = async (file: string) => {
    const form = new FormData();
    form.set('file', new Blob([await readFile(file)]), path.basename(file));
    return http(s.url, 'POST', `/collections/${cid}/videos/upload`, { key: s.key, form });
  };

  it('over HTTP: 422 invalid_media, in the list form, naming the file and why; a clip is taken', async () => {
    // An upload arrives without its extension, so ffmpeg does not read the text as text: it says it cannot read it.
    const why = {
      text: /^notes\.txt is not a video: not a readable media file \(Invalid data found when processing input\)$/,
      photo: /^IMG_0001\.JPG is not a video: a still image \(mjpeg\), not a video$/,
      audio: /^interview\.m4a is not a video: audio only \(aac\): no video stream$/,
    };
    for (const [k, msg] of Object.entries(why)) {
      const r = await upload(files[k]);
      expect([k, r.status, r.body.code]).toEqual([k, 422, 'invalid_media']);
      expect(r.body.detail[0].msg).toMatch(msg);
    }
    expect((await http(s.url, 'GET', `/collections/${cid}/videos`, { key: s.key })).body).toEqual([]);
    const ok = await upload(files.clip);
    expect([ok.status, ok.body.status]).toEqual([202, 'uploaded']);
  });

  it('the CLI: upload and tag say so in one line and exit 6', async () => {
    const env = { VIDEMBED_HOME: path.join(dir, 'home'), VIDEMBED_NO_AUTO_WORKER: '1' };
    expect((await runCli(['collection', 'create', 'card'], env)).code).toBe(0);
    for (const [args, line] of [
      [['upload', files.photo], 'IMG_0001.JPG is not a video: a still image (mjpeg), not a video'],
      [['upload', files.audio, '--collection', 'card'], 'interview.m4a is not a video: audio only (aac): no video stream'],
      [['tag', files.text], 'notes.txt is not a video: a text file, not a video'],
    ] as const) {
      const r = await runCli([...args], env);
      expect([args[0], r.code, r.stderr.trim().split('\n')]).toEqual([args[0], 6, [`vidembed: error: ${line}`]]);
    }
    expect((await runCli(['video', 'list', '--json'], env)).json).toEqual([]);
  });
});

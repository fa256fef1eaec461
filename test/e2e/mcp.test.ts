/**
 * `vidembed mcp` driven by the official SDK's client over stdio (issue 34): it lists its tools,
 * searches a real library (a clip whose soundtrack is a LibriVox reading, heard by pocketsphinx,
 * and a silent one, processed by the real engine), reads a transcript, finds similar moments,
 * exports an EDL (read-only) and an MP4 (--allow-writes), and answers bad input with the API
 * schemas' issues; then the same tools against `vidembed serve` with a key (the remote face).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSpeechClip } from '../../eval/speech-data.js';
import { probeDetails } from '../../src/media/probe.js';
import { findPocketsphinx } from '../../src/speech/pocketsphinx.js';
import { BIN, runCli } from '../helpers/cli.js';
import { ffmpeg, isCI, removeDir, tempDir } from '../helpers/clips.js';

const SPEECH_WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav';
const runnable = findPocketsphinx() !== undefined && existsSync(SPEECH_WAV);
if (!runnable && !isCI) process.stderr.write('\n!!! SKIPPING the MCP e2e test: pocketsphinx or its test recordings not found (apt-get install pocketsphinx pocketsphinx-en-us pocketsphinx-testdata) !!!\n\n');

type Result = { isError?: boolean; content: { type: string; text: string }[]; structuredContent?: any };

/** An SDK client connected to `vidembed [globals] mcp [flags]` on stdio. */
async function connect(env: Record<string, string>, args: string[] = []): Promise<{ client: Client; call(name: string, a?: Record<string, unknown>): Promise<Result>; close(): Promise<void> }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, ...args], env, stderr: 'pipe' });
  const client = new Client({ name: 'vidembed-e2e', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    call: async (name, a = {}) => (await client.callTool({ name, arguments: a })) as Result,
    close: () => client.close(),
  };
}

describe.skipIf(!runnable && !isCI)('vidembed mcp over stdio (SDK client, real library)', () => {
  let dir: string;
  let home: string;
  let env: Record<string, string>;
  let reading: string;
  let silent: string;
  let mcp: Awaited<ReturnType<typeof connect>>;

  beforeAll(async () => {
    dir = tempDir('vidembed-mcp-');
    home = path.join(dir, 'home');
    env = { ...(process.env as Record<string, string>), VIDEMBED_HOME: home, VIDEMBED_WARM_IDLE_MS: '0', VIDEMBED_WORKER_IDLE_MS: '1000' };
    const speech = await makeSpeechClip(SPEECH_WAV, path.join(dir, 'reading.mp4'));
    const quiet = path.join(dir, 'silent.mp4');
    await ffmpeg(['-f', 'lavfi', '-i', 'smptebars=size=320x180:rate=25', '-t', '4', '-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p', quiet]);
    expect((await runCli(['--home', home, 'collection', 'create', 'talks'], env)).code).toBe(0);
    const up = await runCli(['--home', home, '--json', 'upload', speech, quiet, '--collection', 'talks', '--wait'], env, 280_000);
    expect(up.code, up.stderr).toBe(0);
    mcp = await connect(env, ['mcp']);
    const videos = (await mcp.call('list_videos', { collection: 'talks' })).structuredContent.videos as { video_id: string; filename: string; status: string }[];
    reading = videos.find((v) => v.filename === 'reading.mp4')!.video_id;
    silent = videos.find((v) => v.filename === 'silent.mp4')!.video_id;
  });
  afterAll(async () => {
    await mcp?.close();
    removeDir(dir);
  });

  it('lists its six tools, each with an object input schema and whether it only reads', async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['export_clip', 'find_similar', 'get_transcript', 'list_collections', 'list_videos', 'search']);
    for (const t of tools) {
      expect(t.inputSchema.type, t.name).toBe('object');
      expect(t.description!.length, t.name).toBeGreaterThan(40);
      expect(t.annotations?.readOnlyHint, t.name).toBe(t.name !== 'export_clip');
    }
    const search = tools.find((t) => t.name === 'search')!;
    expect(Object.keys(search.inputSchema.properties!)).toEqual(expect.arrayContaining(['collection', 'text', 'said', 'image_path', 'top_k', 'min_confidence', 'shot_size']));
    expect(mcp.client.getInstructions()).toMatch(/list_collections/);
  });

  it('lists collections and videos', async () => {
    const c = await mcp.call('list_collections');
    expect(c.isError).toBeFalsy();
    expect(c.structuredContent.collections.map((x: { name: string }) => x.name)).toEqual(['talks']);
    const v = await mcp.call('list_videos', { collection: 'talks', status: 'processed' });
    expect(v.structuredContent.videos.map((x: { filename: string }) => x.filename).sort()).toEqual(['reading.mp4', 'silent.mp4']);
  });

  it('searches what is said: the reading, the moment, how sure, the words around it', async () => {
    const r = await mcp.call('search', { collection: 'talks', said: 'to consider', top_k: 3 });
    expect(r.isError, r.content[0].text).toBeFalsy();
    const [first] = r.structuredContent.results;
    expect(first).toMatchObject({ video_id: reading, filename: 'reading.mp4', confidence_label: expect.stringMatching(/high|medium|low/) });
    expect(first.end).toBeGreaterThan(first.start);
    expect(first.confidence).toBeGreaterThan(0);
    expect(first.said.matched).toEqual(['to', 'consider']);
    expect(first.said.text).toMatch(/\bto\b.*\bconsider\b/);
    expect(JSON.parse(r.content[0].text).results[0].video_id).toBe(reading);
    // The only collection is the default: `collection` may be left out.
    const again = await mcp.call('search', { said: 'to consider', top_k: 1 });
    expect(again.structuredContent.results[0].video_id).toBe(reading);
  });

  it('reads a transcript (words with times, and text), a stretch of it, and says why a silent video has none', async () => {
    const t = await mcp.call('get_transcript', { video_id: reading });
    expect(t.isError).toBeFalsy();
    const words = t.structuredContent.words as { w: string; start: number; end: number }[];
    expect(words.length).toBeGreaterThan(10);
    expect(words.map((w) => w.w)).toEqual(expect.arrayContaining(['consider']));
    expect(t.content[0].text).toMatch(/^\[0:\d\d\] /);
    expect(t.content[0].text).toContain('consider');
    const part = await mcp.call('get_transcript', { video_id: reading, start: words[3].start, end: words[6].end });
    expect(part.structuredContent.words.length).toBeLessThan(words.length);
    expect(part.structuredContent.words.length).toBeGreaterThanOrEqual(4);
    const none = await mcp.call('get_transcript', { video_id: silent });
    expect(none.structuredContent.words).toEqual([]);
    expect(none.structuredContent.reason).toMatch(/audio/);
    expect(none.content[0].text).toMatch(/no words/);
  });

  it("finds similar moments, leaving the video's own out", async () => {
    const r = await mcp.call('find_similar', { video_id: reading, t: 1 });
    expect(r.isError, r.content[0].text).toBeFalsy();
    expect(r.structuredContent.results.map((x: { video_id: string }) => x.video_id)).not.toContain(reading);
  });

  it('exports an EDL as text when read-only, and refuses to write a file', async () => {
    const e = await mcp.call('export_clip', { clips: [{ video_id: reading, start: 2, end: 4, confidence: 0.9 }], title: 'picks' });
    expect(e.isError, e.content[0].text).toBeFalsy();
    expect(e.content[0].text).toMatch(/^TITLE: picks/);
    expect(e.content[0].text).toContain('* FROM CLIP NAME: reading.mp4');
    const w = await mcp.call('export_clip', { clips: [{ video_id: reading, start: 2, end: 4 }], output: path.join(dir, 'picks.edl') });
    expect(w.isError).toBe(true);
    expect(w.content[0].text).toMatch(/read-only.*--allow-writes/);
    expect(existsSync(path.join(dir, 'picks.edl'))).toBe(false);
  });

  it('answers bad input with the schemas’ issues, field by field', async () => {
    const cases: [string, Record<string, unknown>, (string | number)[]][] = [
      ['search', { said: 42 }, ['said']],
      ['search', { text: 'x', top_k: 0 }, ['top_k']],
      ['search', { text: 'x', shot_size: 'enormous' }, ['shot_size']],
      ['list_videos', { collection: 'talks', limit: 0 }, ['limit']],
      ['list_collections', { offset: -1 }, ['offset']],
      ['get_transcript', {}, ['video_id']],
      ['find_similar', { video_id: reading, t: -1 }, ['like', 't']],
      ['export_clip', { clips: [] }, ['clips']],
      ['export_clip', { clips: [{ video_id: reading, start: 1 }] }, ['clips', 0, 'end']],
    ];
    for (const [tool, args, loc] of cases) {
      const r = await mcp.call(tool, args);
      expect(r.isError, `${tool} ${JSON.stringify(args)}`).toBe(true);
      expect(r.structuredContent.code, `${tool} ${JSON.stringify(args)}`).toBe('validation_error');
      expect(r.structuredContent.detail.map((d: { loc: unknown[] }) => d.loc), `${tool} ${JSON.stringify(args)}`).toContainEqual(loc);
      expect(r.content[0].text).toMatch(/^invalid input: /);
    }
    const nothing = await mcp.call('search', { collection: 'talks' });
    expect(nothing.isError).toBe(true);
    expect(nothing.structuredContent.code).toBe('validation_error');
    const missing = await mcp.call('get_transcript', { video_id: 'vid_nope' });
    expect(missing).toMatchObject({ isError: true, structuredContent: { code: 'not_found' } });
    await expect(mcp.client.callTool({ name: 'delete_everything', arguments: {} })).rejects.toThrow(/no tool named delete_everything/);
  });

  it('with --allow-writes, cuts a moment out as an MP4 file and writes an EDL', async () => {
    const rw = await connect(env, ['mcp', '--allow-writes']);
    try {
      const out = path.join(dir, 'cut.mp4');
      const r = await rw.call('export_clip', { clips: [{ video_id: reading, start: 2, end: 4 }], format: 'mp4', output: out, handles: 0, min_length: 0 });
      expect(r.isError, r.content[0].text).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ format: 'mp4', output: out, start: 2, end: 4 });
      const cut = await probeDetails(out);
      expect(cut.durationSec).toBeGreaterThan(1.8);
      expect(cut.durationSec).toBeLessThan(2.3);
      const edl = path.join(dir, 'picks.edl');
      expect((await rw.call('export_clip', { clips: [{ video_id: reading, start: 2, end: 4 }, { video_id: silent, start: 0, end: 1 }], output: edl })).isError).toBeFalsy();
      expect(readFileSync(edl, 'utf8').match(/^\d{3} {2}AX/gm)).toHaveLength(2);
    } finally {
      await rw.close();
    }
  });

  it('serves the same tools against a server with a key (the remote face)', async () => {
    const key = (await runCli(['--home', home, '--json', 'keys', 'create', '--name', 'assistant'], env)).json.key as string;
    const serve: ChildProcess = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--no-worker'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const base = await new Promise<string>((resolve, reject) => {
        let out = '';
        serve.stderr!.on('data', (d: Buffer) => {
          out += d;
          const m = /serving on (http:\/\/[^\s]+)/.exec(out);
          if (m) resolve(m[1]);
        });
        serve.on('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
      });
      const remote = await connect({ ...env, VIDEMBED_HOME: path.join(dir, 'elsewhere'), VIDEMBED_API_KEY: key }, ['--base-url', base, 'mcp', '--allow-writes']);
      try {
        const r = await remote.call('search', { collection: 'talks', said: 'to consider', top_k: 1 });
        expect(r.isError, r.content[0].text).toBeFalsy();
        expect(r.structuredContent.results[0].video_id).toBe(reading);
        expect((await remote.call('get_transcript', { video_id: reading })).structuredContent.words.length).toBeGreaterThan(10);
        const bad = await remote.call('list_videos', { collection: 'talks', limit: 5000 });
        expect(bad.structuredContent.code).toBe('validation_error');
        const out = path.join(dir, 'remote-cut.mp4');
        const cut = await remote.call('export_clip', { clips: [{ video_id: reading, start: 1, end: 3 }], format: 'mp4', output: out, handles: 0, min_length: 0 });
        expect(cut.isError, cut.content[0].text).toBeFalsy();
        expect((await probeDetails(out)).durationSec).toBeGreaterThan(1.8);
      } finally {
        await remote.close();
      }
    } finally {
      serve.kill('SIGTERM');
      await new Promise((resolve) => (serve.exitCode === null ? serve.once('exit', resolve) : resolve(undefined)));
    }
  });
});

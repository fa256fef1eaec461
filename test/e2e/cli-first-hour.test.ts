/**
 * A newcomer's first hour with the CLI (issue 33), as real processes against a real server and a
 * local library: videos found by file name or by their path in a folder indexed in place, locally
 * and remotely (ambiguity lists the candidates and fails); a folder upload, copied or in place,
 * ends with one summary line after naming each failed file and why; Ctrl-C says in one line what it
 * stopped and what was kept; `video delete` says whose file stays.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from '../../src/runtime/worker.js';
import { BIN, runCli } from '../helpers/cli.js';
import { makeTestPatternClip, removeDir, tempDir } from '../helpers/clips.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { anyFileIsVideo, startTestServer, type TestServer } from '../helpers/server.js';

/** Starts the CLI, resolves once `ready` appears in its stderr, then sends SIGINT; its exit code and stderr. */
function interruptWhen(args: string[], env: Record<string, string>, ready: (stderr: string) => boolean): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, CI: '1', VIDEMBED_POLL_MS: '250', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let sent = false;
  return new Promise((resolve) => {
    const check = () => {
      if (!sent && ready(stderr)) {
        sent = true;
        setTimeout(() => child.kill('SIGINT'), 300);
      }
    };
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      check();
    });
    const poll = setInterval(check, 100);
    child.on('exit', (code) => {
      clearInterval(poll);
      resolve({ code, stderr });
    });
  });
}

describe('names, summaries and Ctrl-C against a server (its worker in this process)', () => {
  const dir = tempDir('vidembed-first-hour-');
  const root = path.join(dir, 'library');
  let s: TestServer;
  const stop = new AbortController();
  let working: Promise<void>;
  let env: Record<string, string>;
  beforeAll(async () => {
    await makeTestPatternClip(path.join(root, 'card-01', 'C0001.MP4'), 1);
    await makeTestPatternClip(path.join(root, 'card-02', 'C0001.MP4'), 2);
    // Passes the server's video check (this one takes any file), then fails processing.
    writeFileSync(path.join(root, 'card-02', 'truncated.mp4'), 'not really a video');
    const fake = new FakeEmbedder();
    s = await startTestServer({ engine: { embedderFor: () => fake, analyzers: [], checkVideo: anyFileIsVideo }, server: { libraryRoots: [root] } });
    working = new Worker(s.engine, { pollMs: 50 }).run(stop.signal);
    env = { VIDEMBED_HOME: path.join(dir, 'client-home'), VIDEMBED_BASE_URL: s.url, VIDEMBED_API_KEY: s.key };
    expect((await runCli(['collection', 'create', 'cards', '--model', fake.id, '--speech', 'off'], env)).code).toBe(0);
  });
  afterAll(async () => {
    stop.abort();
    await working;
    await s?.close();
    removeDir(dir);
  });

  it('a folder in place, waited for: each file that failed is named with its reason, then one summary line; exit 6', async () => {
    const r = await runCli(['upload', '.', '--in-place', '--wait', '--collection', 'cards'], env);
    expect(r.code, r.stderr).toBe(6);
    const lines = r.stderr.trim().split('\n');
    expect(lines.filter((l) => l.startsWith('failed '))).toEqual([expect.stringMatching(/^failed card-02\/truncated\.mp4: not a readable media file/)]);
    expect(lines.at(-1)).toBe('collection cards: 3 indexed in place, 2 processed, 1 failed');
    // The table says each file's end.
    expect(r.stdout).toMatch(/│ card-01\/C0001\.MP4 +│ processed/);
    expect(r.stdout).toMatch(/truncated\.mp4 +│ failed: truncated\.mp4/);
  });

  it('finds videos by name through the server: the path in the folder, ambiguity listed with exit 4, the list shows paths', async () => {
    const list = await runCli(['video', 'list', '--collection', 'cards', '--json'], env);
    expect(list.json.map((v: { relative_path: string }) => v.relative_path).sort()).toEqual(['card-01/C0001.MP4', 'card-02/C0001.MP4', 'card-02/truncated.mp4']);
    const table = await runCli(['video', 'list', '--collection', 'cards'], env);
    expect(table.stdout).toMatch(/│ card-02\/C0001\.MP4 +│ processed/);
    const one = await runCli(['video', 'show', 'card-02/C0001.MP4', '--json'], env);
    expect(one.code, one.stderr).toBe(0);
    expect(one.json).toMatchObject({ relative_path: 'card-02/C0001.MP4', status: 'processed', in_place: true });
    const st = await runCli(['video', 'status', 'truncated.mp4'], env);
    expect([st.code, st.stdout]).toEqual([6, expect.stringMatching(/^vid_\S+ {2}failed: truncated\.mp4/)]);
    const two = await runCli(['video', 'show', 'C0001.MP4'], env);
    expect(two.code).toBe(4);
    expect(two.stderr.trim().split('\n')).toEqual([
      'vidembed: error: "C0001.MP4" is 2 videos: name one by its id, by a longer path, or with --collection:',
      expect.stringMatching(/^ {2}vid_\S+ {2}card-01\/C0001\.MP4 {2}\(collection cards\)$/),
      expect.stringMatching(/^ {2}vid_\S+ {2}card-02\/C0001\.MP4 {2}\(collection cards\)$/),
    ]);
    const none = await runCli(['video', 'transcript', 'card-03/C0001.MP4'], env);
    expect([none.code, none.stderr]).toEqual([3, expect.stringMatching(/^vidembed: error: video not found: card-03\/C0001\.MP4 /)]);
    const like = await runCli(['search', '--like', 'card-02/C0001.MP4@0.5', '--collection', 'cards', '--json'], env);
    expect(like.code, like.stderr).toBe(0);
    expect(like.json.results.map((x: { video_id: string }) => x.video_id)).not.toContain(one.json.video_id);
  });

  it('copies of a folder, waited for: the same summary; delete says the library copy goes, or the file in place stays', async () => {
    const copies = path.join(dir, 'copies');
    await makeTestPatternClip(path.join(copies, 'a.mp4'), 3);
    writeFileSync(path.join(copies, 'b.mp4'), 'bytes no decoder reads');
    writeFileSync(path.join(copies, 'notes.txt'), 'not a video');
    const r = await runCli(['upload', copies, '--wait', '--collection', 'cards'], env);
    expect(r.code, r.stderr).toBe(6);
    const lines = r.stderr.trim().split('\n');
    expect(lines.filter((l) => /^(failed|skipped) /.test(l))).toEqual([expect.stringMatching(/^skipped \S*notes\.txt: not a video file/), expect.stringMatching(/^failed \S*b\.mp4: not a readable media file/)]);
    expect(lines.at(-1)).toBe('collection cards: 2 uploaded, 1 processed, 1 failed, 1 file skipped (not videos)');

    const refused = await runCli(['video', 'delete', 'a.mp4'], env);
    expect([refused.code, refused.stderr.trim()]).toEqual([2, expect.stringMatching(/^vidembed: error: Delete vid_\S+ \(a\.mp4\) with the library's copy of the file\? .*Pass --yes to confirm/)]);
    const copy = await runCli(['video', 'delete', 'a.mp4', '--yes'], env);
    expect(copy.stdout).toMatch(/^deleted vid_\S+ {2}a\.mp4: the library's copy is deleted$/m);
    const kept = await runCli(['video', 'delete', 'card-01/C0001.MP4', '--yes'], env);
    expect(kept.stdout).toMatch(/^deleted vid_\S+ {2}card-01\/C0001\.MP4: your file is kept where it is \(it was indexed in place\)$/m);
    expect(existsSync(path.join(root, 'card-01', 'C0001.MP4'))).toBe(true);
  });
});

describe('Ctrl-C says what it stopped and what was kept', () => {
  const dir = tempDir('vidembed-first-hour-int-');
  let stall: Server;
  afterAll(() => {
    stall?.close();
    removeDir(dir);
  });

  it('while waiting for a folder: stops the waiting, keeps every video, in one line; exit 130', async () => {
    const env = { VIDEMBED_HOME: path.join(dir, 'home'), VIDEMBED_NO_AUTO_WORKER: '1' };
    const card = path.join(dir, 'card');
    await makeTestPatternClip(path.join(card, 'a.mp4'), 1);
    await makeTestPatternClip(path.join(card, 'b.mp4'), 2);
    expect((await runCli(['collection', 'create', 'card'], env)).code).toBe(0);
    const r = await interruptWhen(['upload', card, '--wait'], env, (e) => e.includes('1/2 a.mp4: waiting'));
    expect(r.code).toBe(130);
    const after = r.stderr.slice(r.stderr.indexOf('1/2 a.mp4: waiting'));
    expect(after.trim().split('\n')).toEqual([
      '1/2 a.mp4: waiting (Ctrl-C stops the waiting, not the work)',
      'stopped waiting (0 of 2 done); kept: all 2 in the library, processing goes on in the background (vidembed video list --collection card)',
    ]);
    expect((await runCli(['video', 'list', '--json'], env)).json).toHaveLength(2);
  });

  it('while sending a file to a server: says which file, that nothing of it is kept; exit 130', async () => {
    // A server that takes the request and reads no more than the connection holds: the upload stalls.
    let started: () => void;
    const uploading = new Promise<void>((r) => (started = r));
    stall = createServer((req, res) => {
      if (req.method === 'GET') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify([{ id: 'col_stall', name: 'demo', description: '', video_count: 0, created_at: '2026-01-01T00:00:00.000Z', model: 'm', dim: 2 }]));
        return;
      }
      req.pause();
      started();
    });
    await new Promise<void>((r) => stall.listen(0, '127.0.0.1', r));
    const big = path.join(dir, 'big.mp4');
    writeFileSync(big, Buffer.alloc(64 * 2 ** 20, 1));
    mkdirSync(path.join(dir, 'client'), { recursive: true });
    const env = { VIDEMBED_HOME: path.join(dir, 'client'), VIDEMBED_BASE_URL: `http://127.0.0.1:${(stall.address() as AddressInfo).port}` };
    let seen = false;
    void uploading.then(() => (seen = true));
    const r = await interruptWhen(['upload', big, '--collection', 'demo'], env, () => seen);
    expect(r.code).toBe(130);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^stopped uploading \S*big\.mp4 \(1 of 1 after \d+% of all bytes\): nothing of it is kept; nothing was added$/)]);
  });
});

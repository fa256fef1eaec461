import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runCli } from '../helpers/cli.js';
import { evalPhoto, makeStillClip, makePanClip, removeDir, tempDir } from '../helpers/clips.js';
import { http as call } from '../helpers/server.js';

interface Served {
  proc: ChildProcess;
  url: string;
  stderr: () => string;
}

async function serve(home: string, extra: string[] = []): Promise<Served> {
  const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...extra], { env: { ...process.env, VIDEMBED_HOME: home }, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    proc.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /serving on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]);
    });
    proc.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
  return { proc, url, stderr: () => err };
}

function stop(s: Served, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  return new Promise((resolve) => {
    if (s.proc.exitCode !== null) return resolve(s.proc.exitCode);
    s.proc.once('exit', (code) => resolve(code));
    s.proc.kill(signal);
  });
}

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 180_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out; last: ${JSON.stringify(v).slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Pids of the processes whose parent is `pid` (named `name`, if given). */
function childrenOf(pid: number, name?: string): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid), ...(name ? [name] : [])]).toString().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Pids of ffmpeg processes under `pid`: its own, and those of its children (serve's worker is one). */
function ffmpegChildren(pid: number): number[] {
  return [...childrenOf(pid, 'ffmpeg'), ...childrenOf(pid).flatMap((c) => childrenOf(c, 'ffmpeg'))];
}

/** True while the process exists and is not a zombie (state Z: dead, waiting to be reaped). */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

describe('the CLI behaves the same against the local engine and a real vidembed serve', () => {
  let dir: string;
  let server: Served;
  let localEnv: Record<string, string>;
  let remoteEnv: Record<string, string>;
  let clips: { dog: string; sea: string };

  beforeAll(async () => {
    dir = tempDir('vidembed-e2e-parity-');
    const serverHome = path.join(dir, 'server-home');
    const key = await runCli(['keys', 'create', '--name', 'parity', '--qps', '50', '--json'], { VIDEMBED_HOME: serverHome });
    expect(key.code, key.stderr).toBe(0);
    expect(key.json).toMatchObject({ name: 'parity', qps: 50, quota: null });
    expect(key.json.key).toMatch(/^vk_/);
    server = await serve(serverHome);
    localEnv = { VIDEMBED_HOME: path.join(dir, 'local-home'), VIDEMBED_WORKER_IDLE_MS: '3000' };
    // The remote face keeps its own (empty) home: only the server's data is used.
    remoteEnv = { VIDEMBED_HOME: path.join(dir, 'client-home'), VIDEMBED_BASE_URL: server.url, VIDEMBED_API_KEY: key.json.key };
    clips = {
      dog: await makeStillClip(evalPhoto('opencv-doc__chicky_512.jpg'), path.join(dir, 'dog.mp4'), { seconds: 4 }),
      sea: await makeStillClip(evalPhoto('kphotoalbum__skagen.jpg'), path.join(dir, 'sea.mp4'), { seconds: 6 }),
    };
  });
  afterAll(async () => {
    if (server) expect(await stop(server)).toBe(0);
    removeDir(dir);
  });

  async function scenario(env: Record<string, string>) {
    const out: Record<string, any> = {};
    out.create = (await runCli(['collection', 'create', 'parity', '--description', 'p', '--json'], env)).json;
    out.dup = await runCli(['collection', 'create', 'parity'], env);
    out.uploadDog = (await runCli(['upload', clips.dog, '--collection', 'parity', '--wait', '--json'], env)).json;
    out.uploadSea = (await runCli(['upload', clips.sea, '--collection', 'parity', '--wait', '--json'], env)).json;
    out.list = (await runCli(['collection', 'list', '--json'], env)).json;
    out.search = (await runCli(['search', 'the sea under a cloudy sky', '--collection', 'parity', '--json'], env)).json;
    out.badTopK = await runCli(['search', 'x', '--collection', 'parity', '--top-k', '0'], env);
    out.text = (await runCli(['embed', 'text', 'sunset over the sea', '--json'], env)).json;
    out.video = (await runCli(['embed', 'video', clips.dog, '--json'], env)).json;
    out.task = (await runCli(['embed', 'video', clips.sea, '--async', '--json'], env)).json;
    out.status = (await runCli(['video', 'status', out.uploadDog.video_id, '--json'], env)).json;
    out.missing = await runCli(['video', 'status', 'vid_missing'], env);
    return out;
  }

  it('runs the same scenario through both faces with the same results', async () => {
    const [local, remote] = [await scenario(localEnv), await scenario(remoteEnv)];
    for (const r of [local, remote]) {
      expect(r.create).toMatchObject({ name: 'parity', description: 'p', model: 'perception-use-v1', dim: 512 });
      expect(r.dup.code).toBe(4);
      expect(r.dup.stderr).toMatch(/already exists/);
      expect(r.uploadDog).toMatchObject({ status: 'processed' });
      expect(r.list[0]).toMatchObject({ name: 'parity', video_count: 2 });
      expect(r.badTopK.code).toBe(2);
      expect(r.badTopK.stderr).toMatch(/top_k must be between 1 and 100/);
      expect(r.task).toMatchObject({ status: 'completed' });
      expect(r.status).toMatchObject({ video_id: r.uploadDog.video_id, status: 'processed', progress: 100, searchable: true });
      expect(r.missing.code).toBe(3);
    }
    // Same models, same inputs: the same numbers, whichever face computed them.
    expect(remote.search.results.map((x: any) => x.filename)).toEqual(local.search.results.map((x: any) => x.filename));
    remote.search.results.forEach((x: any, i: number) => expect(x.similarity).toBeCloseTo(local.search.results[i].similarity, 4));
    expect(remote.search.results[0]).toMatchObject({ filename: 'sea.mp4', start: local.search.results[0].start, end: local.search.results[0].end });
    remote.text.embedding.forEach((x: number, i: number) => expect(x).toBeCloseTo(local.text.embedding[i], 5));
    expect(remote.video.segments).toEqual(local.video.segments);
    remote.video.embeddings[0].forEach((x: number, i: number) => expect(x).toBeCloseTo(local.video.embeddings[0][i], 5));
    expect(remote.task.embedding).toHaveLength(512);
    remote.task.embedding.forEach((x: number, i: number) => expect(x).toBeCloseTo(local.task.embedding[i], 5));
  });

  it('serves tensors made by `vidembed tensors` exactly like the file they came from', async () => {
    const payloadFile = path.join(dir, 'payload.json');
    const made = await runCli(['tensors', clips.dog, '--service', 'embedding', '--size', '416', '--request-id', 'dogtensor', '--out', payloadFile], remoteEnv);
    expect(made.code, made.stderr).toBe(0);
    const payload = JSON.parse(readFileSync(payloadFile, 'utf8'));
    expect(payload.video_input.shape.slice(0, 3)).toEqual([1, 4, 3]);
    expect(payload.video_input.dtype).toBe('uint8');
    const up = await runCli(['upload-tensors', payloadFile, '--json'], remoteEnv);
    expect(up.code, up.stderr).toBe(0);
    // Tensor keys are namespaced by the key's owner ("default": `keys create` without --owner makes a key on the server machine's own library).
    expect(up.json.r2_keys.video_input).toBe('tensors/default/dogtensor/video_input');
    const viaTensor = await runCli(['embed', 'video', '--tensor-keys', up.json.r2_keys.video_input, '--json'], remoteEnv);
    expect(viaTensor.code, viaTensor.stderr).toBe(0);
    expect(viaTensor.json.status).toBe('completed');
    const viaFile = await runCli(['embed', 'video', clips.dog, '--json'], remoteEnv);
    const cos = viaTensor.json.embedding.reduce((a: number, x: number, i: number) => a + x * viaFile.json.video_embedding[i], 0);
    expect(cos).toBeGreaterThan(0.95);
  });
});

describe('server failures and limits that need real media', () => {
  let dir: string;
  let home: string;
  let key: string;
  let clip: string;
  let fileServer: http.Server;
  let fileUrl: string;
  beforeAll(async () => {
    dir = tempDir('vidembed-e2e-srv-');
    home = path.join(dir, 'home');
    key = (await runCli(['keys', 'create', '--name', 'k', '--qps', '100', '--json'], { VIDEMBED_HOME: home })).json.key;
    clip = await makePanClip(evalPhoto('opencv-doc__home.jpg'), path.join(dir, 'pan.mp4'), { direction: 'left', seconds: 12, width: 640, height: 360 });
    // A loopback "external" host: /ok.mp4 serves the clip, anything else is 404.
    fileServer = http.createServer((req, res) => {
      if (req.url === '/ok.mp4') res.end(readFileSync(clip));
      else res.writeHead(404).end('no');
    });
    await new Promise<void>((r) => fileServer.listen(0, '127.0.0.1', () => r()));
    fileUrl = `http://127.0.0.1:${(fileServer.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    fileServer?.close();
    removeDir(dir);
  });

  it('finishes every accepted task after a SIGKILL mid-processing', async () => {
    let s = await serve(home);
    const b64 = readFileSync(clip).toString('base64');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await call(s.url, 'POST', '/video_embedding/encode_video/async', { key, json: { video_base64: b64, fps: 2 } });
      expect(r.status).toBe(202);
      expect(r.body.status).toBe('pending');
      ids.push(r.body.request_id);
    }
    await until(() => call(s.url, 'GET', `/async_status/${ids[0]}`, { key }), (r) => r.body.status === 'processing');
    // Kill it while ffmpeg decodes for it (in its worker process): no decoder may run on without it.
    const decoders = await until(async () => ffmpegChildren(s.proc.pid!), (pids) => pids.length > 0, 60_000);
    s.proc.kill('SIGKILL');
    await new Promise((r) => s.proc.once('exit', r));
    const alive = await until(async () => decoders.filter(isRunning), (left) => left.length === 0, 10_000).catch(() => decoders.filter(isRunning));
    // Dead is what the server controls; reaping an orphan is init's job (zombies here mean it does not reap).
    expect(alive).toEqual([]);
    s = await serve(home);
    try {
      for (const id of ids) {
        const r = await until(() => call(s.url, 'GET', `/async_status/${id}`, { key }), (x) => x.body.status === 'completed' || x.body.status === 'failed');
        expect(r.body.status).toBe('completed');
        expect(r.body.embedding).toHaveLength(512);
      }
    } finally {
      expect(await stop(s)).toBe(0);
    }
  });

  it('answers 502 for an unreachable video_url (sync) and fails the task (async), 504 over the time budget', async () => {
    const s = await serve(home, ['--allow-private-urls', '--sync-timeout', '1']);
    try {
      const bad = await call(s.url, 'POST', '/video_embedding/encode_video', { key, json: { video_url: `${fileUrl}/missing.mp4` } });
      expect(bad.status).toBe(502);
      expect(bad.body.code).toBe('upstream_error');
      const sub = await call(s.url, 'POST', '/video_embedding/encode_video/async', { key, json: { video_url: `${fileUrl}/missing.mp4` } });
      const done = await until(() => call(s.url, 'GET', `/async_status/${sub.body.request_id}`, { key }), (x) => x.body.status === 'failed' || x.body.status === 'completed');
      expect(done.status).toBe(200);
      expect(done.body.status).toBe('failed');
      // Same wording as the sync 502: the upstream's status (404 here) is not echoed (SSRF probe).
      expect(done.body.error_message).toBe('could not fetch video_url: the server did not return the video');

      const slow = await call(s.url, 'POST', '/video_embedding/encode_video', { key, json: { video_url: `${fileUrl}/ok.mp4`, fps: 8 } });
      expect(slow.status).toBe(504);
      expect(slow.body.code).toBe('timeout');
      // The work was cancelled, not left running: no ffmpeg child survives.
      await new Promise((r) => setTimeout(r, 1000));
      let children = '';
      try {
        children = execFileSync('pgrep', ['-P', String(s.proc.pid), 'ffmpeg']).toString();
      } catch {
        children = '';
      }
      expect(children.trim()).toBe('');
      const corrupt = await call(s.url, 'POST', '/video_embedding/encode_video', { key, json: { video_base64: Buffer.from('not a video at all').toString('base64') } });
      expect(corrupt.status).toBe(422);
      expect(corrupt.body.code).toBe('invalid_media');
    } finally {
      expect(await stop(s)).toBe(0);
    }
  });
});

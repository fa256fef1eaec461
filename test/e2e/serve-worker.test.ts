/**
 * Issue 30 item 2: `serve`'s own worker is a process of its own (src/runtime/launcher.ts
 * startAttachedWorker), so no job's model inference or ffmpeg piping runs on the server's event
 * loop. A real `vidembed serve`: its worker is a child process that runs the jobs under the
 * server's settings (here --allow-private-urls: a task's video_url on loopback is fetched, and its
 * 404 fails the task, where a worker without the setting would refuse the address); a worker
 * killed is started again; the server killed (SIGKILL, no chance to clean up) takes its worker with it.
 * No model is loaded (the task fails at its fetch). The /healthz figures are in `npm run bench -- serve_worker`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { removeDir, tempDir } from '../helpers/clips.js';
import { http } from '../helpers/server.js';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

let log = '';

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; the server's log:\n${log}`);
    await sleep(100);
  }
}

describe("serve's own worker runs in a child process", () => {
  const dir = tempDir('vidembed-serve-worker-');
  let serve: ChildProcess;
  let url = '';
  let upstream: Server;
  let missing = '';

  /** The pids of the workers the log says started for the server, in order. */
  const workerPids = () => [...log.matchAll(/worker wrk_\S+ pid (\d+) started for the server \(pid (\d+)\)/g)].map((m) => ({ pid: Number(m[1]), server: Number(m[2]) }));

  beforeAll(async () => {
    upstream = createServer((_req, res) => res.writeHead(404).end('no such video'));
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    missing = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/missing.mp4`;
    serve = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--no-auth', '--allow-private-urls'], {
      env: { ...process.env, VIDEMBED_HOME: path.join(dir, 'home'), VIDEMBED_WARM_IDLE_MS: '0' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    serve.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    url = await until('the server to listen', () => /serving on (http:\/\/\S+)/.exec(log)?.[1]);
  });

  afterAll(async () => {
    if (serve.exitCode === null) serve.kill('SIGKILL');
    for (const { pid } of workerPids()) if (alive(pid)) process.kill(pid, 'SIGKILL');
    upstream?.close();
    removeDir(dir);
  });

  it('runs jobs in a child process, under the server settings', async () => {
    const [first] = await until('the worker to start', () => (workerPids().length ? workerPids() : undefined));
    expect(first.server).toBe(serve.pid);
    expect(first.pid).not.toBe(serve.pid);
    const task = await http(url, 'POST', '/video_embedding/encode_video/async', { json: { video_url: missing } });
    expect(task.status).toBe(202);
    const done = await until('the task to fail', async () => {
      const s = await http(url, 'GET', `/async_status/${task.body.request_id}`);
      return s.body.status === 'failed' ? s.body : undefined;
    });
    // Fetched (and its 404 refused), not refused as a private address: the worker has --allow-private-urls.
    expect(done.error_message).toMatch(/could not fetch video_url/);
    expect(log).toMatch(new RegExp(`job \\S+ task\\.embedding ${task.body.request_id} attempt 1`));
  });

  it('starts another worker when its worker dies', async () => {
    const [first] = workerPids();
    process.kill(first.pid, 'SIGKILL');
    await until('the worker to be started again', () => workerPids().length === 2);
    expect(log).toMatch(/the worker process exited \(SIGKILL\); starting another in 1 s/);
    const [, second] = workerPids();
    expect(second.server).toBe(serve.pid);
    expect(alive(second.pid)).toBe(true);
    // The server kept answering throughout.
    expect((await http(url, 'GET', '/healthz')).status).toBe(200);
  });

  it('takes its worker with it when it is killed', async () => {
    const { pid } = workerPids().at(-1)!;
    serve.kill('SIGKILL');
    await until('the server to exit', () => serve.exitCode !== null || serve.signalCode !== null);
    await until('its worker to exit', () => !alive(pid));
  });
});

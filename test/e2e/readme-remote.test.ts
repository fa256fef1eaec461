import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { makeTestPatternClip, removeDir, repoRoot, tempDir } from '../helpers/clips.js';

/*
 * The README's remote example, run as written (issue 22): on a machine with a local library (the
 * quick start's collection and clip), `keys create --name me --qps 5`, `serve --port 8080`, then a
 * remote `search` with VIDEMBED_BASE_URL and VIDEMBED_API_KEY in the same home — the key must work
 * on that library and the CLI must not send the local default collection's id. The commands are
 * read from README.md; only what it leaves to the reader is filled in: the port (a free one instead
 * of 8080), the key it printed (vk_...) and the clip (./clip.mp4: a real test-pattern clip). Loads
 * the real models in `serve` (a model suite).
 */

const README = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');

/** The README's line that runs `vidembed <command…>` (the first one), as written. */
function readmeLine(re: RegExp): string {
  const line = README.split('\n').find((l) => re.test(l));
  if (!line) throw new Error(`README.md has no line matching ${re}`);
  return line.replace(/\s+#.*$/, '').trim();
}

/** A shell line → env assignments and argv after `vidembed` (double-quoted words kept whole). */
function parse(line: string): { env: Record<string, string>; args: string[] } {
  const words = [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]);
  const env: Record<string, string> = {};
  while (/^[A-Z_]+=/.test(words[0])) {
    const [k, ...v] = words.shift()!.split('=');
    env[k] = v.join('=');
  }
  expect(words[0]).toBe('vidembed');
  return { env, args: words.slice(1) };
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

describe("the README's remote example, as written", () => {
  const dir = tempDir('vidembed-readme-remote-');
  const home = path.join(dir, 'home');
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const c of children) {
      if (c.exitCode !== null) continue;
      c.kill('SIGTERM');
      await new Promise((r) => c.once('exit', r));
    }
    removeDir(dir);
  });

  /** Runs `vidembed` (the installed command; `npx vidembed` in a clone) in the folder the reader is in, with this home. */
  const run = (args: string[], env: Record<string, string> = {}) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args], { cwd: dir, env: { ...process.env, CI: '1', VIDEMBED_HOME: home, VIDEMBED_NO_AUTO_WORKER: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d: Buffer) => (stdout += d));
      child.stderr!.on('data', (d: Buffer) => (stderr += d));
      child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });

  it('keys create, serve, then a remote search on the local library', async () => {
    // The local library the quick start makes (its clip left for the server's worker to process).
    await makeTestPatternClip(path.join(dir, 'clip.mp4'), 3);
    const create = await run(parse(readmeLine(/^vidembed collection create demo /)).args);
    expect(create.code, create.stderr).toBe(0);
    const upload = parse(readmeLine(/^vidembed upload \.\/clip\.mp4 /)).args.filter((a) => a !== '--wait');
    const up = await run(upload);
    expect(up.code, up.stderr).toBe(0);

    // The remote example.
    const keys = await run(parse(readmeLine(/^vidembed keys create --name me --qps 5/)).args);
    expect(keys.code, keys.stderr).toBe(0);
    expect(keys.stdout).toMatch(/for owner default/);
    const key = /^vk_\S+$/m.exec(keys.stdout)![0];
    const serveLine = readmeLine(/^vidembed serve --port 8080/);
    const port = await freePort();
    const serveArgs = parse(serveLine).args.map((a) => (a === '8080' ? String(port) : a));
    const server = spawn(process.execPath, [BIN, ...serveArgs], { cwd: dir, env: { ...process.env, CI: '1', VIDEMBED_HOME: home }, stdio: ['ignore', 'ignore', 'pipe'] });
    children.push(server);
    let serverLog = '';
    await new Promise<void>((resolve, reject) => {
      server.stderr!.on('data', (d: Buffer) => {
        serverLog += d;
        if (serverLog.includes('vidembed serving on')) resolve();
      });
      server.once('exit', (code) => reject(new Error(`serve exited ${code}: ${serverLog}`)));
    });

    const remote = parse(readmeLine(/^VIDEMBED_BASE_URL=\S+ VIDEMBED_API_KEY=vk_\.\.\. vidembed search /));
    expect(remote.env.VIDEMBED_BASE_URL).toBe('http://127.0.0.1:8080');
    const env = { ...remote.env, VIDEMBED_BASE_URL: `http://127.0.0.1:${port}`, VIDEMBED_API_KEY: key };
    // The server's worker processes the clip; the remote CLI finds the default collection by name.
    await expect
      .poll(async () => (await run(['video', 'list', '--json'], env)).stdout, { timeout: 240_000, interval: 1000 })
      .toMatch(/"status":\s*"(processed|failed)"/);
    const listed = JSON.parse((await run(['video', 'list', '--json'], env)).stdout);
    expect(listed).toEqual([expect.objectContaining({ filename: 'clip.mp4', status: 'processed' })]);

    const search = await run(remote.args, env);
    expect(search.code, search.stderr).toBe(0);
    expect(search.stderr).not.toMatch(/error/);
    expect(search.stdout).toMatch(/clip\.mp4/);
  });
});

import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { LocalEngine } from '../../src/runtime/engine.js';
import { BIN, runCli } from '../helpers/cli.js';
import { startTestServer } from '../helpers/server.js';
import { makeTestPatternClip, removeDir, repoRoot, tempDir } from '../helpers/clips.js';

describe('CLI basics', () => {
  const home = tempDir('vidembed-cli-basics-');
  afterAll(() => removeDir(home));

  it('prints its version with --version and -V', async () => {
    const version = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
    for (const flag of ['--version', '-V']) {
      const r = await runCli([flag], { VIDEMBED_HOME: home });
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe(version);
    }
  });

  it('serve on a busy port exits at once with one line, leaving nothing running', async () => {
    const busy = net.createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()));
    const port = (busy.address() as net.AddressInfo).port;
    try {
      const r = await runCli(['serve', '--port', String(port)], { VIDEMBED_HOME: home }, 60_000);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toEqual([`vidembed: error: port ${port} on 127.0.0.1 is already in use: pick another with --port`]);
    } finally {
      busy.close();
    }
  });

  it('login checks the key against the server before saving it', async () => {
    const s = await startTestServer();
    const loginHome = path.join(home, 'login');
    try {
      const wrong = await runCli(['login', '--base-url', s.url, '--api-key', 'vk_wrong'], { VIDEMBED_HOME: loginHome });
      expect(wrong.code).toBe(77);
      expect(wrong.stderr).toMatch(/invalid API key/);
      expect(existsSync(path.join(loginHome, 'config.json'))).toBe(false);
      const right = await runCli(['login', '--base-url', s.url, '--api-key', s.key], { VIDEMBED_HOME: loginHome });
      expect(right.code, right.stderr).toBe(0);
      expect(JSON.parse(readFileSync(path.join(loginHome, 'config.json'), 'utf8'))).toMatchObject({ base_url: s.url, api_key: s.key });
    } finally {
      await s.close();
    }
  });

  it('keys: names are unique; revoking a name several old keys share is refused in a script', async () => {
    const keysHome = path.join(home, 'keys');
    expect((await runCli(['keys', 'create', '--name', 'ci'], { VIDEMBED_HOME: keysHome })).code).toBe(0);
    const again = await runCli(['keys', 'create', '--name', 'ci'], { VIDEMBED_HOME: keysHome });
    expect(again.code).toBe(4);
    expect(again.stderr).toMatch(/already exists/);
    // Two keys of one name, as libraries from before unique names may hold.
    const engine = new LocalEngine({ home: keysHome });
    const a = engine.store.keys.create({ name: 'old', qps: 1 }).row.id;
    const b = engine.store.keys.create({ name: 'old', qps: 1 }).row.id;
    await engine.close();
    const ambiguous = await runCli(['keys', 'revoke', 'old'], { VIDEMBED_HOME: keysHome });
    expect(ambiguous.code).toBe(4);
    expect(ambiguous.stderr).toContain(a);
    expect(ambiguous.stderr).toContain(b);
    const listed = await runCli(['keys', 'list', '--json'], { VIDEMBED_HOME: keysHome });
    expect(listed.json.filter((k: { name: string; revoked: boolean }) => k.name === 'old' && !k.revoked)).toHaveLength(2);
    expect((await runCli(['keys', 'revoke', a], { VIDEMBED_HOME: keysHome })).code).toBe(0);
  });

  it('with a server configured, local-only commands say so (and refuse an explicit --remote)', async () => {
    const keysHome = path.join(home, 'local-only');
    const env = { VIDEMBED_HOME: keysHome, VIDEMBED_BASE_URL: 'http://127.0.0.1:9' };
    expect((await runCli(['keys', 'create', '--name', 'here'], { VIDEMBED_HOME: keysHome })).code).toBe(0);
    const listed = await runCli(['keys', 'list', '--json'], env);
    expect(listed.code).toBe(0);
    expect(listed.json.map((k: { name: string }) => k.name)).toEqual(['here']);
    expect(listed.stderr.trim()).toBe("note: `vidembed keys list` is local-only: it works on this machine's library, not on http://127.0.0.1:9 (--local hides this note)");
    const models = await runCli(['models', 'list'], env);
    expect(models.code).toBe(0);
    expect(models.stderr).toMatch(/^note: `vidembed models list` is local-only/);
    expect((await runCli(['keys', 'list', '--local'], env)).stderr).toBe('');
    const explicit = await runCli(['keys', 'list', '--remote'], env);
    expect(explicit.code).toBe(2);
    expect(explicit.stderr.trim().split('\n')).toEqual(["vidembed: error: `vidembed keys list` works on this machine's library only; run it on the server's machine (drop --remote/--base-url)"]);
  });

  it('Ctrl-C while waiting stops the waiting at once, says how to follow, exits 130; the video stays queued', async () => {
    const waitHome = path.join(home, 'wait');
    const env = { VIDEMBED_HOME: waitHome, VIDEMBED_NO_AUTO_WORKER: '1' };
    expect((await runCli(['collection', 'create', 'w'], env)).code).toBe(0);
    const clip = await makeTestPatternClip(path.join(home, 'x.mp4'), 1);
    const up = await runCli(['upload', clip, '--json'], env);
    const id = up.json.video_id as string;
    const child = spawn(process.execPath, [BIN, 'video', 'status', id, '--wait'], { env: { ...process.env, ...env, VIDEMBED_POLL_MS: '100' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // Once it says it is waiting (its Ctrl-C handler is in place), let it poll a few times: the video stays uploaded (no worker).
    await new Promise<void>((resolve, reject) => {
      const seen = () => stderr.includes(`${id}: waiting (Ctrl-C stops the waiting, not the work)`) && (child.stderr.off('data', seen), resolve());
      child.stderr.on('data', seen);
      child.once('exit', (c) => reject(new Error(`exited (${String(c)}) before waiting: ${stderr}`)));
      seen();
    });
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGINT');
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    expect(code).toBe(130);
    expect(stderr).toContain(`stopped waiting; the work goes on in the background: vidembed video status ${id} --wait`);
    expect((await runCli(['video', 'status', id, '--json'], env)).json.status).toBe('uploaded');
  });

  it('uploads folders (recursive) and globs, skips other files and bytes already in the collection', async () => {
    const h = path.join(home, 'folder');
    const env = { VIDEMBED_HOME: h, VIDEMBED_NO_AUTO_WORKER: '1' };
    const card = path.join(home, 'card');
    mkdirSync(path.join(card, 'sub'), { recursive: true });
    await makeTestPatternClip(path.join(card, 'a.mp4'), 1);
    await makeTestPatternClip(path.join(card, 'b.MOV'), 2);
    writeFileSync(path.join(card, 'notes.txt'), 'not a video');
    writeFileSync(path.join(card, 'fake.mp4'), 'not a video either, whatever its name says');
    await makeTestPatternClip(path.join(card, 'sub', 'c.mkv'), 3);
    expect((await runCli(['collection', 'create', 'card'], env)).code).toBe(0);
    const first = await runCli(['upload', card], env);
    expect(first.code, first.stderr).toBe(0);
    // It names the collection, lists what it skipped and why, and counts.
    expect(first.stderr).toMatch(/^uploading 4 files to collection card$/m);
    expect(first.stderr).toMatch(/^skipped \S*notes\.txt: not a video file \(by its extension/m);
    expect(first.stderr).toMatch(/^skipped \S*fake\.mp4: not a video: not a readable media file/m);
    expect(first.stderr).toMatch(/^collection card: 3 uploaded, .*2 files skipped \(not videos\)$/m);
    const again = await runCli(['upload', card, '--json'], env);
    expect(again.json.map((r: { duplicate?: boolean }) => r.duplicate)).toEqual([true, true, true]);
    const one = await runCli(['upload', path.join(card, 'a.mp4')], env);
    expect(one.stderr).toMatch(/already in the collection as vid_/);
    const forced = await runCli(['upload', path.join(card, 'a.mp4'), '--force', '--json'], env);
    expect(forced.json.duplicate).toBeUndefined();
    const listed = await runCli(['video', 'list', '--json'], env);
    expect(listed.json).toHaveLength(4);
    const glob = await runCli(['upload', `${card}/**/*.mkv`, '--json'], env);
    expect(glob.json).toMatchObject({ duplicate: true });
    expect((await runCli(['upload', path.join(card, '*.webm')], env)).stderr).toMatch(/no video files in/);
  });
});

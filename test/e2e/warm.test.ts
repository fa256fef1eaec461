/**
 * The warm CLI: a long-running process answers search and encode_text over the home's unix socket
 * (0600), with the same results and the same error classes as the engine itself; one host per home;
 * a socket left by a killed process is replaced; the real CLI uses the socket when it answers and
 * runs the call itself when it does not.
 */
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadRequestError, NotFoundError, ValidationError } from '../../src/api/errors.js';
import { LocalEngine } from '../../src/runtime/engine.js';
import { callWarm, startWarmHost, warmSocketPath, type WarmHost } from '../../src/runtime/warm.js';
import { Worker } from '../../src/runtime/worker.js';
import { runCli } from '../helpers/cli.js';
import { removeDir, tempDir } from '../helpers/clips.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';

describe('warm process for the CLI', () => {
  const dir = tempDir('vidembed-warm-');
  const home = path.join(dir, 'home');
  const fake = new FakeEmbedder();
  let engine: LocalEngine;
  let host: WarmHost | undefined;
  let cid: string;

  beforeAll(async () => {
    engine = new LocalEngine({ home, embedderFor: () => fake, analyzers: [] });
    cid = (await engine.createCollection({ name: 'warm', model: fake.id })).collection_id;
    const videos = ['a.mp4', 'b.mp4'].map((f) => engine.store.videos.insert({ id: `vid_${f[0]}`, collection_id: cid, filename: f, path: path.join(home, f), size_bytes: 1 }));
    for (const [i, v] of videos.entries()) {
      const vector = (await fake.embedText(i ? 'a red car' : 'a green tree')).vector;
      engine.store.segments.replaceForVideo(v.id, cid, fake.dim, [{ idx: 0, start: 0, end: 4, description: 'x', keywords: '', vector }]);
      engine.store.videos.markProcessed(v.id, '{}');
    }
    host = await startWarmHost(engine, home);
  });
  afterAll(async () => {
    await host?.close();
    await engine.close();
    removeDir(dir);
  });

  it('answers search and encode_text exactly as the engine does, on a socket only this user can open', async () => {
    expect(host).toBeDefined();
    expect(statSync(warmSocketPath(home)).mode & 0o777).toBe(0o600);
    const direct = await engine.search(cid, { text: 'a red car' });
    const warm = await callWarm(home, 'search', [cid, { text: 'a red car' }, {}]);
    expect(warm).toEqual({ answered: true, result: direct });
    expect(direct.results[0].video_id).toBe('vid_b');
    const enc = await callWarm(home, 'encodeText', [{ text: 'hello', model: fake.id }]);
    expect(enc).toEqual({ answered: true, result: await engine.encodeText({ text: 'hello', model: fake.id } as { text: string }) });
    expect(host!.lastRequestAt).toBeGreaterThan(0);
  });

  it('gives back the engine’s errors as the same classes (so exit codes stay the same)', async () => {
    await expect(callWarm(home, 'search', ['col_nope', { text: 'x' }, {}])).rejects.toBeInstanceOf(NotFoundError);
    const bad = await callWarm(home, 'search', [cid, { text: 'x', top_k: 1000 }, {}]).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ValidationError);
    expect((bad as ValidationError).issues[0].loc).toEqual(['body', 'top_k']);
    await expect(callWarm(home, 'deleteVideo' as never, ['vid_a'])).rejects.toBeInstanceOf(BadRequestError);
    expect(await engine.videoStatus('vid_a')).toMatchObject({ status: 'processed' }); // nothing was deleted
  });

  it('is one host per home; a socket left by a killed process is replaced', async () => {
    expect(await startWarmHost(engine, home)).toBeUndefined(); // the first still answers
    const other = path.join(dir, 'other');
    const sock = warmSocketPath(other);
    const { mkdirSync } = await import('node:fs');
    mkdirSync(other, { recursive: true });
    // A process that listens on the socket and dies without cleaning up.
    const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(sock)}, () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'ignore'] });
    await new Promise((r) => child.stdout.once('data', r));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(existsSync(sock)).toBe(true);
    expect(await callWarm(other, 'listCollections', [])).toEqual({ answered: false });
    const e2 = new LocalEngine({ home: other, embedderFor: () => fake, analyzers: [] });
    const h2 = await startWarmHost(e2, other);
    try {
      expect(h2).toBeDefined();
      expect(await callWarm(other, 'listCollections', [])).toEqual({ answered: true, result: [] });
    } finally {
      await h2?.close();
      await e2.close();
    }
    expect(existsSync(sock)).toBe(false); // closing removes it
  });

  it('the real CLI goes through the socket when it answers (the collection’s model exists only in the host)', async () => {
    const env = { VIDEMBED_HOME: home, VIDEMBED_NO_AUTO_WORKER: '1', VIDEMBED_WARM_IDLE_MS: '60000' };
    const r = await runCli(['search', 'a red car', '--collection', 'warm', '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toEqual(await engine.search(cid, { text: 'a red car' }));
    // With warm processes off, the CLI runs the search itself, where the fake model does not exist.
    const cold = await runCli(['search', 'a red car', '--collection', 'warm'], { ...env, VIDEMBED_WARM_IDLE_MS: '0' });
    expect(cold.code).not.toBe(0);
    expect(cold.stderr).toMatch(/fake-16/);
  });

  it('a worker that answered the CLI recently does not retire while idle', async () => {
    const stop = new AbortController();
    let polls = 0;
    const w = new Worker(engine, {
      idleExitMs: 0,
      pollMs: 5,
      busyGraceMs: 60_000,
      lastActiveAt: () => {
        if (++polls === 20) stop.abort(); // plenty of idle polls; then stop it from outside
        return Date.now();
      },
    });
    await w.run(stop.signal);
    expect(polls).toBeGreaterThanOrEqual(20); // it kept polling: it never retired on its own
    const idle = new Worker(engine, { idleExitMs: 0, pollMs: 5, busyGraceMs: 60_000, lastActiveAt: () => 0 });
    await idle.run(new AbortController().signal); // returns by retiring: nothing answered recently
  });
});

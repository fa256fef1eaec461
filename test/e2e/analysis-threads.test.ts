import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnalysisThreads } from '../../src/runtime/analysis-thread.js';
import { evalPhoto, ffmpeg, makePanClip, removeDir, tempDir } from '../helpers/clips.js';
import { http, startTestServer, type TestServer } from '../helpers/server.js';

/*
 * The server's synchronous analyses on worker threads (src/runtime/analysis-thread.ts; issue 21:
 * heavy work never runs on the event loop) answer what the same analysis on the event loop does.
 * Two real servers with the default models: one with a pool of one thread, one without. The
 * threads run the compiled worker (dist/, built by `npm test`'s pretest).
 */

function maxAbsDiff(a: number[], b: number[]): number {
  expect(a.length).toBe(b.length);
  return a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
}

/** An mp4 whose index is intact but whose pictures are cut away: it probes as a video, nothing decodes. */
async function indexOnly(clip: string, out: string): Promise<string> {
  const front = `${out}.faststart.mp4`;
  await ffmpeg(['-i', clip, '-c', 'copy', '-movflags', '+faststart', front]);
  const buf = readFileSync(front);
  const mdat = buf.indexOf('mdat');
  expect(mdat).toBeGreaterThan(0);
  writeFileSync(out, buf.subarray(0, mdat + 4 + 16));
  return out;
}

async function until(ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1200 && !ok(); i++) await new Promise((r) => setTimeout(r, 100));
  if (!ok()) throw new Error(`never happened: ${what}`);
}

describe('synchronous analyses on worker threads (real models)', () => {
  let dir: string;
  let pool: AnalysisThreads;
  let threaded: TestServer;
  let inProcess: TestServer;
  let clip: string;
  beforeAll(async () => {
    dir = tempDir('vidembed-e2e-threads-');
    clip = await makePanClip(evalPhoto('opencv-doc__home.jpg'), path.join(dir, 'pan.mp4'), { direction: 'left', seconds: 6 });
    pool = new AnalysisThreads({ threads: 1 });
    threaded = await startTestServer({ server: { analysisThreads: pool } });
    inProcess = await startTestServer();
  });
  afterAll(async () => {
    await threaded?.close();
    await inProcess?.close();
    removeDir(dir);
  });

  it('encode_video through the thread gives the in-process embeddings, segments and descriptions', async () => {
    const json = { video_base64: readFileSync(clip).toString('base64'), segment_seconds: 2 };
    const a = await http(threaded.url, 'POST', '/video_embedding/encode_video', { key: threaded.key, json });
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(pool.jobsAnswered).toBe(1);
    const b = await http(inProcess.url, 'POST', '/video_embedding/encode_video', { key: inProcess.key, json });
    expect(b.status, JSON.stringify(b.body)).toBe(200);
    expect(pool.jobsAnswered).toBe(1); // the other server analysed on its own thread, not the pool's
    const { embeddings: ea, video_embedding: va, ...restA } = a.body;
    const { embeddings: eb, video_embedding: vb, ...restB } = b.body;
    expect(restA).toEqual(restB);
    expect(ea.length).toBeGreaterThanOrEqual(3);
    expect(maxAbsDiff(ea.flat(), eb.flat())).toBeLessThan(1e-5);
    expect(maxAbsDiff(va, vb)).toBeLessThan(1e-5);
  });

  it('tag_video through the thread gives the in-process tags', async () => {
    const json = { video_base64: readFileSync(clip).toString('base64') };
    const before = pool.jobsAnswered;
    const a = await http(threaded.url, 'POST', '/video_tagging', { key: threaded.key, json });
    const b = await http(inProcess.url, 'POST', '/video_tagging', { key: inProcess.key, json });
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(pool.jobsAnswered).toBe(before + 1);
    expect(a.body.tags.segments.length).toBeGreaterThanOrEqual(1);
    expect(a.body).toEqual(b.body);
  });

  it('an error inside the thread is the same HTTP status and message, naming the request\'s source, never a server path', async () => {
    const broken = await indexOnly(clip, path.join(dir, 'broken.mp4'));
    const json = { video_base64: readFileSync(broken).toString('base64') };
    const before = pool.jobsAnswered;
    const a = await http(threaded.url, 'POST', '/video_embedding/encode_video', { key: threaded.key, json });
    expect(pool.jobsAnswered).toBe(before + 1); // it passed the probe: the thread failed it
    const b = await http(inProcess.url, 'POST', '/video_embedding/encode_video', { key: inProcess.key, json });
    expect(a.status).toBe(422);
    expect([a.status, a.body]).toEqual([b.status, b.body]);
    expect(a.body.code).toBe('invalid_media');
    expect(JSON.stringify(a.body)).not.toContain(os.tmpdir());
    expect(JSON.stringify(a.body)).not.toContain(threaded.home);
  });

  it('a client that goes away stops the analysis on its thread, which then serves the next request', async () => {
    const json = JSON.stringify({ video_base64: readFileSync(clip).toString('base64') });
    const before = pool.jobsAnswered;
    const gone = new AbortController();
    const call = request(`${threaded.url}/video_embedding/encode_video`, { method: 'POST', headers: { 'x-api-key': threaded.key, 'content-type': 'application/json' }, body: json, signal: gone.signal });
    call.catch(() => {});
    await until(() => pool.busyThreads === 1, 'the analysis reached the thread');
    gone.abort();
    await expect(call).rejects.toThrow();
    await until(() => pool.jobsAnswered === before + 1 && pool.busyThreads === 0, 'the thread stopped the analysis');
    const next = await http(threaded.url, 'POST', '/video_tagging', { key: threaded.key, json: JSON.parse(json) });
    expect(next.status).toBe(200);
    expect(pool.liveThreads).toBe(1);
  });
});

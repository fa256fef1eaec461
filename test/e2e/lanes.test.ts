/**
 * Lanes end to end, with real media (ffmpeg) and the real recognizer (Debian's pocketsphinx), the
 * fake embedder keeping the models' cost out: a video with speech answers searches by its
 * pictures before its transcript exists and gains `said` hits once the speech lane lands; a
 * capability that crashes fails only itself; deleting a video at any point of its processing
 * leaves no file of it; a worker killed during a playback-copy encode leaves a temp dir that the
 * next worker removes when it starts. The suite needs pocketsphinx (.ci/run installs it).
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSpeechClip } from '../../eval/speech-data.js';
import type { JobKind } from '../../src/api/defaults.js';
import type { AnalyzerContext, AnalyzerOutput } from '../../src/analysis/types.js';
import type { Frame } from '../../src/media/types.js';
import { LocalEngine } from '../../src/runtime/engine.js';
import { Worker } from '../../src/runtime/worker.js';
import { findPocketsphinx } from '../../src/speech/pocketsphinx.js';
import { FakeAnalyzer } from '../helpers/fake-analyzer.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { ffmpeg, makeStillClip, evalPhoto, removeDir, repoRoot, tempDir } from '../helpers/clips.js';

const LIBRIVOX = '/usr/share/pocketsphinx/test/data/librivox';
/** "and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them" */
const TALK = `${LIBRIVOX}/sense_and_sensibility_01_austen_64kb-0870.wav`;

/** Runs one job of these kinds to its end, as a worker would; false when none is queued. */
async function step(engine: LocalEngine, kinds: JobKind[]): Promise<boolean> {
  const job = await engine.catalog.queue.claim('e2e', 300_000, kinds);
  if (!job) return false;
  const ctx = { signal: new AbortController().signal, job: { id: job.id, token: job.token }, settled: false };
  const outcome = await engine.runJob(job, ctx);
  if (outcome === 'done' && !ctx.settled) await engine.catalog.queue.complete(job.id, job.token);
  return true;
}

/** Every file under a directory, as paths relative to it. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

describe('lanes end to end', () => {
  let dir: string;
  let engine: LocalEngine;
  let col: string;

  beforeAll(async () => {
    expect(findPocketsphinx(), 'pocketsphinx_continuous must be installed (apt-get install pocketsphinx pocketsphinx-en-us)').toBeDefined();
    dir = tempDir('vidembed-e2e-lanes-');
    engine = new LocalEngine({ home: path.join(dir, 'home'), embedderFor: () => new FakeEmbedder(), analyzers: [new FakeAnalyzer()] });
    col = (await engine.createCollection({ name: 'talks' })).collection_id;
  }, 120_000);

  afterAll(async () => {
    await engine?.close();
    removeDir(dir);
  });

  it('a video with speech answers searches by its pictures before its transcript exists, then gains what was said', async () => {
    const clip = await makeSpeechClip(TALK, path.join(dir, 'talk.mp4'), { lead: 2 });
    const id = (await engine.uploadVideo(col, { path: clip, filename: 'talk.mp4' })).video_id;
    expect(await step(engine, ['video.process'])).toBe(true);
    expect(await step(engine, ['video.pictures'])).toBe(true);
    const early = await engine.videoStatus(id);
    expect(early).toMatchObject({ status: 'processing', searchable: true });
    expect(early.analysis!.speech.status).toBe('pending');
    expect(early.analysis!.pixels.status).toBe('done');
    const before = await engine.search(col, { said: 'john dashwood', top_k: 5 });
    expect(before.results.some((r) => r.said)).toBe(false);
    expect((await engine.videoTranscript(id)).words).toEqual([]);

    expect(await step(engine, ['video.speech'])).toBe(true);
    expect(await engine.videoStatus(id)).toMatchObject({ status: 'processed', searchable: true, analysis: expect.objectContaining({ speech: expect.objectContaining({ status: 'done' }) }) });
    expect((await engine.videoTranscript(id)).words.length).toBeGreaterThan(5);
    // A said search (matching by sound belongs there: a plain two-word query counts only rare words
    // heard as themselves, docs/speech.md).
    const after = await engine.search(col, { said: 'john dashwood', top_k: 5 });
    expect(after.results[0]).toMatchObject({ video_id: id, said: expect.objectContaining({ matched: expect.arrayContaining(['john']) }) }); // heard by its sounds ("john guess would")
    const segments = (await engine.videoDetails(id)).segments;
    expect(segments.some((s) => (s.tags as Record<string, { label: string }>).audio?.label === 'speech')).toBe(true);
  }, 300_000);

  it('a capability that crashes fails only itself: the video is processed and searchable by the others', async () => {
    class Crashy extends FakeAnalyzer {
      override async analyzeSegment(frames: Frame[], ctx: AnalyzerContext): Promise<AnalyzerOutput> {
        if (ctx.start > 0) throw new Error('the model crashed');
        return super.analyzeSegment(frames, ctx);
      }
    }
    const crashing = new LocalEngine({ home: path.join(dir, 'home-crash'), embedderFor: () => new FakeEmbedder(), analyzers: [new FakeAnalyzer(), new Crashy('crashy')] });
    try {
      const c = (await crashing.createCollection({ name: 'crash', speech: 'off' })).collection_id;
      const clip = await makeStillClip(evalPhoto('opencv-doc__chicky_512.jpg'), path.join(dir, 'crash.mp4'), { seconds: 10, width: 320, height: 180 });
      const id = (await crashing.uploadVideo(c, { path: clip, filename: 'crash.mp4' })).video_id;
      await new Worker(crashing, { idleExitMs: 0, pollMs: 20 }).run(new AbortController().signal);
      const d = await crashing.videoDetails(id);
      expect(d).toMatchObject({ status: 'processed', searchable: true });
      expect(d.analysis!.crashy).toMatchObject({ status: 'failed', message: 'the model crashed' });
      expect(d.analysis!.fake.status).toBe('done');
      expect(d.segments.length).toBeGreaterThan(1);
      expect(d.segments.every((s) => s.facts && 'fake' in s.facts && !('crashy' in s.facts))).toBe(true);
      expect((await crashing.search(c, { text: 'a fake segment', top_k: 3 })).results[0]?.video_id).toBe(id);
    } finally {
      await crashing.close();
    }
  }, 300_000);

  it('deleting a video at 10, 50, 90 and 99 % of its processing leaves none of its files after housekeeping', async () => {
    const home = path.join(dir, 'home-delete');
    const e = new LocalEngine({ home, embedderFor: () => new FakeEmbedder(), analyzers: [new FakeAnalyzer()] });
    try {
      const c = (await e.createCollection({ name: 'gone' })).collection_id;
      // An AVI needs a playback copy: the lane also encodes one.
      const clip = path.join(dir, 'long.avi');
      await ffmpeg(['-y', '-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25:duration=24', '-f', 'lavfi', '-i', 'sine=frequency=300:duration=24', '-c:v', 'mpeg4', '-q:v', '5', '-c:a', 'mp2', clip]);
      const stop = new AbortController();
      const worker = new Worker(e, { pollMs: 20 }).run(stop.signal);
      const ids: string[] = [];
      for (const pct of [10, 50, 90, 99]) {
        const id = (await e.uploadVideo(c, { path: clip, filename: `at-${pct}.avi`, force: true })).video_id;
        ids.push(id);
        for (let i = 0; i < 6000; i++) {
          const st = await e.videoStatus(id);
          if ((st.progress ?? 0) >= pct || st.status !== 'uploaded' && st.status !== 'processing') break;
          await sleep(10);
        }
        await e.deleteVideo(id);
      }
      // The worker finishes (or drops) what it was doing, then housekeeping runs.
      for (let i = 0; i < 600 && (await e.catalog.queue.pendingCount()) > 0; i++) await sleep(100);
      stop.abort();
      await worker;
      await e.services.jobs.sweepLeftovers({ graceMs: 0, artifactsEveryMs: 0 });
      const left = filesUnder(path.join(home, 'blobs')).filter((f) => ids.some((id) => f.includes(id)) || f.startsWith('staging'));
      expect(left).toEqual([]);
    } finally {
      await e.close();
    }
  }, 600_000);

  it('a worker killed during a playback-copy encode leaves its temp dir; the next worker removes it when it starts', async () => {
    const home = path.join(dir, 'home-kill');
    const tmp = path.join(dir, 'tmp-kill');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(tmp, { recursive: true });
    const e = new LocalEngine({ home, embedderFor: () => new FakeEmbedder(), analyzers: [] });
    const c = (await e.createCollection({ name: 'kill', speech: 'off' })).collection_id;
    const clip = path.join(dir, 'kill.avi');
    await ffmpeg(['-y', '-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=960x540:rate=25:duration=30', '-c:v', 'mpeg4', '-q:v', '3', clip]);
    await e.uploadVideo(c, { path: clip, filename: 'kill.avi' });
    await e.close();
    const script = path.join(repoRoot, 'test/helpers/fake-engine-worker.mjs');
    const first = spawn(process.execPath, [script, home], { env: { ...process.env, TMPDIR: tmp }, stdio: 'ignore' });
    const proxyDir = () => readdirSync(tmp).find((n) => n.startsWith(`vidembed-proxy-${first.pid}-`));
    for (let i = 0; i < 3000 && !proxyDir(); i++) await sleep(20);
    expect(proxyDir(), 'the worker started a playback-copy encode').toBeDefined();
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    const left = path.join(tmp, proxyDir()!);
    expect(statSync(left).isDirectory()).toBe(true);
    const second = spawn(process.execPath, [script, home, '--idle-exit-ms', '500'], { env: { ...process.env, TMPDIR: tmp }, stdio: 'ignore' });
    for (let i = 0; i < 3000 && existsSync(left); i++) await sleep(20);
    expect(existsSync(left)).toBe(false);
    second.kill('SIGTERM');
    await new Promise((r) => second.once('exit', r));
  }, 300_000);
});

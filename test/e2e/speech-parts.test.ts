/**
 * Hearing a long soundtrack in parts, end to end, with the real recognizer: a 51 s talk (the
 * LibriVox recordings back to back, twice) under footage goes through the engine's speech lane,
 * which hears it as two pieces at once (two pocketsphinx processes, counted by a wrapper program);
 * the transcript is one, in time order, and what is said in either half is found where it is said.
 * Cancelling a hearing in parts leaves no recognizer running. Needs pocketsphinx and
 * pocketsphinx-testdata (.ci/run installs them).
 */
import { chmodSync, existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSpeechClip } from '../../eval/speech-data.js';
import { runFfmpeg } from '../../src/media/ffmpeg.js';
import { streamPcm } from '../../src/media/audio.js';
import { LocalEngine } from '../../src/runtime/engine.js';
import { Worker } from '../../src/runtime/worker.js';
import { SpeechAnalyzer } from '../../src/speech/analyzer.js';
import { findPocketsphinx, PocketsphinxEngine } from '../../src/speech/pocketsphinx.js';
import type { SpokenWord } from '../../src/speech/types.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { removeDir, tempDir } from '../helpers/clips.js';

const LIBRIVOX = '/usr/share/pocketsphinx/test/data/librivox';
const LEAD = 1;

/** Processes whose command line names `marker`. */
function processesNaming(marker: string): number {
  let n = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) n++;
    } catch {
      /* gone */
    }
  }
  return n;
}

describe('speech in parts (pocketsphinx)', () => {
  let dir: string;
  let talk: string;
  let program: string;
  let starts: string;
  const env = { ...process.env };

  beforeAll(async () => {
    const real = findPocketsphinx();
    expect(real, 'pocketsphinx_continuous must be installed (apt-get install pocketsphinx pocketsphinx-en-us)').toBeDefined();
    expect(existsSync(LIBRIVOX), 'pocketsphinx-testdata must be installed').toBe(true);
    dir = tempDir('vidembed-e2e-speech-parts-');
    // The recognizer under a name of this test's own (so its processes can be found), behind a
    // wrapper that counts its starts.
    const named = path.join(dir, `ps-parts-${process.pid}`);
    symlinkSync(real!, named);
    starts = path.join(dir, 'starts.log');
    program = path.join(dir, 'pocketsphinx_continuous');
    writeFileSync(program, `#!/bin/sh\necho start >> "${starts}"\nexec "${named}" "$@"\n`);
    chmodSync(program, 0o755);
    const wavs = readdirSync(LIBRIVOX).filter((f) => f.endsWith('.wav')).sort();
    const list = path.join(dir, 'talk.txt');
    writeFileSync(list, [...wavs, ...wavs].map((w) => `file '${path.join(LIBRIVOX, w)}'`).join('\n'));
    talk = path.join(dir, 'talk.wav');
    const res = await runFfmpeg(['-y', '-v', 'error', '-f', 'concat', '-safe', '0', '-i', list, '-ac', '1', '-ar', '16000', talk], { stdout: false });
    expect(res.code, res.stderr).toBe(0);
  }, 120_000);

  afterAll(() => {
    process.env = env;
    removeDir(dir);
  });

  it('hears a long soundtrack as pieces at once through the speech lane, into one transcript in time order', async () => {
    process.env.VIDEMBED_POCKETSPHINX = program;
    process.env.VIDEMBED_SPEECH_PARTS = '2';
    writeFileSync(starts, '');
    const engine = new LocalEngine({ home: path.join(dir, 'home'), embedderFor: () => new FakeEmbedder(), analyzers: [] });
    try {
      const col = (await engine.createCollection({ name: 'talks' })).collection_id;
      const clip = await makeSpeechClip(talk, path.join(dir, 'talk.mp4'), { lead: LEAD });
      const { video_id } = await engine.uploadVideo(col, { path: clip, filename: 'talk.mp4' });
      await new Worker(engine, { idleExitMs: 0, pollMs: 20 }).run(new AbortController().signal);
      // Two pieces, each its own recognizer.
      expect(readFileSync(starts, 'utf8').trim().split('\n')).toHaveLength(2);
      const words: SpokenWord[] = (await engine.videoTranscript(video_id)).words;
      expect(words.length).toBeGreaterThan(120);
      for (let i = 1; i < words.length; i++) expect(words[i].start).toBeGreaterThanOrEqual(words[i - 1].start);
      const duration = LEAD + 51;
      expect(words[words.length - 1].end).toBeGreaterThan(duration - 6);
      expect(words[words.length - 1].end).toBeLessThanOrEqual(duration + 0.5);
      // The talk is said twice: "consider" once in each half (each piece heard its own), and a
      // `said` search points at one of them.
      const consider = words.filter((w) => w.w === 'consider').map((w) => w.start);
      expect(consider, words.map((w) => w.w).join(' ')).toHaveLength(2);
      expect(consider[0]).toBeLessThan(LEAD + 25.6);
      expect(consider[1]).toBeGreaterThan(LEAD + 25.6);
      const hit = (await engine.search(col, { said: 'leisure to consider', top_k: 5 })).results[0];
      expect(hit?.video_id).toBe(video_id);
      expect(Math.min(...consider.map((c) => Math.abs(hit.start - c)))).toBeLessThan(2);
    } finally {
      await engine.close();
      delete process.env.VIDEMBED_POCKETSPHINX;
      delete process.env.VIDEMBED_SPEECH_PARTS;
    }
  }, 300_000);

  it('leaves no recognizer running when a hearing in parts is cancelled', async () => {
    writeFileSync(starts, '');
    const analyzer = new SpeechAnalyzer(new PocketsphinxEngine(program));
    const stop = new AbortController();
    const hearing = analyzer.listen(streamPcm(talk, { signal: stop.signal }), { signal: stop.signal, parts: { durationS: 51, cores: 2, slots: () => 2 } });
    // Both pieces started (the second once the first's cut is read), then cancel.
    for (let i = 0; i < 200 && processesNaming(`ps-parts-${process.pid}`) < 2; i++) await sleep(50);
    expect(readFileSync(starts, 'utf8').trim().split('\n')).toHaveLength(2);
    expect(processesNaming(`ps-parts-${process.pid}`)).toBe(2);
    stop.abort(new Error('cancelled'));
    await expect(hearing).rejects.toThrow('cancelled');
    for (let i = 0; i < 40 && processesNaming(`ps-parts-${process.pid}`) > 0; i++) await sleep(50);
    expect(processesNaming(`ps-parts-${process.pid}`)).toBe(0);
  }, 120_000);
});

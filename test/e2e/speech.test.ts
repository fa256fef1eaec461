/**
 * Speech end to end: real recordings under generated footage, ingested by the real engine with the
 * real recognizer (Debian's pocketsphinx); what is said is searchable and points at the moment it
 * is said; odd soundtracks and a recognizer that crashes or hangs cost a video its transcript,
 * never its visual results. The suite needs pocketsphinx and fails without it (.ci/run installs it).
 */
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSpeechClip } from '../../eval/speech-data.js';
import { runFfmpeg } from '../../src/media/ffmpeg.js';
import { LocalEngine } from '../../src/runtime/engine.js';
import { Worker } from '../../src/runtime/worker.js';
import { findPocketsphinx } from '../../src/speech/pocketsphinx.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { makeStillClip, evalPhoto, removeDir, tempDir } from '../helpers/clips.js';

const LIBRIVOX = '/usr/share/pocketsphinx/test/data/librivox';
/** "and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them" */
const TALK = `${LIBRIVOX}/sense_and_sensibility_01_austen_64kb-0870.wav`;
/** Where "consider" starts in TALK (2.9 s; the recording's word times from pocketsphinx on the file itself). */
const CONSIDER_AT = 2.9;
const LEAD = 5;

/** 4 s of footage with an audio track of digital silence. */
async function silentTrackClip(out: string): Promise<string> {
  const res = await runFfmpeg(['-y', '-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=5:duration=4', '-f', 'lavfi', '-i', 'anullsrc=r=44100:cl=stereo', '-t', '4', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', out], { stdout: false });
  if (res.code !== 0) throw new Error(res.stderr);
  return out;
}

async function drain(engine: LocalEngine): Promise<void> {
  await new Worker(engine, { idleExitMs: 0, pollMs: 20 }).run(new AbortController().signal);
}

describe('speech end to end (pocketsphinx)', () => {
  let dir: string;
  let engine: LocalEngine;
  let col: string;
  const ids: Record<string, string> = {};
  const env = { ...process.env };

  beforeAll(async () => {
    expect(findPocketsphinx(), 'pocketsphinx_continuous must be installed (apt-get install pocketsphinx pocketsphinx-en-us)').toBeDefined();
    dir = tempDir('vidembed-e2e-speech-');
    // The fake embedder keeps the pictures' cost out of it; the speech analyzer and search are real.
    engine = new LocalEngine({ home: path.join(dir, 'home'), embedderFor: () => new FakeEmbedder(), analyzers: [] });
    col = (await engine.createCollection({ name: 'talks' })).collection_id;
    const clips: Record<string, string> = {
      talk: await makeSpeechClip(TALK, path.join(dir, 'talk.mp4'), { lead: LEAD }),
      six: await makeSpeechClip(`${LIBRIVOX}/sense_and_sensibility_01_austen_64kb-0880.wav`, path.join(dir, 'six.mp4'), { channels: 6, sampleRate: 48000 }),
      hi: await makeSpeechClip(`${LIBRIVOX}/sense_and_sensibility_01_austen_64kb-0930.wav`, path.join(dir, 'hi.mp4'), { sampleRate: 96000 }),
      phone: await makeSpeechClip(`${LIBRIVOX}/sense_and_sensibility_01_austen_64kb-0890.wav`, path.join(dir, 'phone.mp4'), { sampleRate: 8000 }),
      mute: await makeStillClip(evalPhoto('opencv-doc__chicky_512.jpg'), path.join(dir, 'mute.mp4'), { seconds: 3, width: 160, height: 120 }),
      quiet: await silentTrackClip(path.join(dir, 'quiet.mp4')),
    };
    for (const [name, file] of Object.entries(clips)) ids[name] = (await engine.uploadVideo(col, { path: file, filename: `${name}.mp4` })).video_id;
    await drain(engine);
  }, 600_000);

  afterAll(async () => {
    process.env = env;
    await engine?.close();
    removeDir(dir);
  });

  it('transcribes what is said, at the times it is said', async () => {
    const t = await engine.videoTranscript(ids.talk);
    expect(t.engine).toMatch(/^pocketsphinx\//);
    expect(t.words.length).toBeGreaterThan(10);
    const consider = t.words.find((w) => w.w === 'consider');
    expect(consider, t.words.map((w) => w.w).join(' ')).toBeDefined();
    expect(Math.abs(consider!.start - (LEAD + CONSIDER_AT))).toBeLessThan(1);
    // Nothing is said in the first seconds of silence.
    expect(t.words[0].start).toBeGreaterThan(LEAD - 0.5);
  });

  it('finds a phrase by what is said, pointing at the moment it is said', async () => {
    const res = await engine.search(col, { said: 'consider how much' });
    expect(res.results[0]?.video_id).toBe(ids.talk);
    const hit = res.results[0];
    expect(Math.abs(hit.start - (LEAD + CONSIDER_AT))).toBeLessThan(1);
    expect(hit.said?.matched).toContain('consider');
    expect(hit.said?.text).toMatch(/\*consider/);
    // The clips that say something else do not rank above it, and the silent one is not there.
    expect(res.results.map((r) => r.video_id)).not.toContain(ids.mute);
  });

  it('lets a phrase said verbatim lead a plain text search, with what was said attached', async () => {
    const res = await engine.search(col, { text: 'to consider how much there might be' });
    expect(res.results[0].video_id).toBe(ids.talk);
    expect(res.results[0].said).toBeDefined();
    expect(res.results[0].start).toBeGreaterThanOrEqual(LEAD - 1);
  });

  it('hears 6-channel, 96 kHz and 8 kHz soundtracks', async () => {
    for (const name of ['six', 'hi', 'phone']) {
      const t = await engine.videoTranscript(ids[name]);
      expect(t.words.length, `${name}: ${t.reason ?? ''}`).toBeGreaterThan(2);
    }
    // "he was not an ill disposed young man": the recording (64 kb/s MP3 at its source) is heard as
    // telephone band, and the narrowband adaptation hears the 6-channel AAC copy's last words as
    // "…goes to men" (the file itself: "…those young man"); its first words are the check.
    expect((await engine.videoTranscript(ids.six)).words.map((w) => w.w)).toEqual(expect.arrayContaining(['he', 'was', 'not']));
  });

  it('tags the soundtrack of each moment, and says why a video without audio has no transcript', async () => {
    const talk = await engine.videoDetails(ids.talk);
    const audio = talk.segments.map((s) => (s.tags as Record<string, { label: string }>).audio?.label);
    expect(audio[0]).toBe('silence'); // the first 4 s of the 5 s lead
    expect(audio).toContain('speech');
    expect((talk.tags as Record<string, { label: string }>).audio.label).toBe('speech');
    const mute = await engine.videoDetails(ids.mute);
    expect(mute.status).toBe('processed');
    expect(mute.segments.every((s) => (s.tags as Record<string, { label: string }>).audio?.label === 'silence')).toBe(true);
    expect((await engine.videoTranscript(ids.mute)).reason).toBe('no audio track');
    // A track of digital silence: heard, nothing said, every moment silent.
    expect((await engine.videoTranscript(ids.quiet)).reason).toBe('silent');
    const quiet = await engine.videoDetails(ids.quiet);
    expect(quiet.segments.every((s) => (s.tags as Record<string, { label: string }>).audio?.label === 'silence')).toBe(true);
    // The audio filter: only moments whose soundtrack is silent (the talk's lead and tail, the mute clip).
    const silent = await engine.search(col, { text: 'consider', audio: 'silence' });
    expect(silent.results.length).toBeGreaterThan(0);
    for (const r of silent.results) {
      const seg = (await engine.videoDetails(r.video_id)).segments.find((s) => r.start >= s.start && r.start < s.end);
      expect((seg?.tags as Record<string, { label: string }>).audio.label).toBe('silence');
    }
    // (A phrase, not one common word: "consider" alone is not counted by what is said, docs/speech.md.)
    const spoken = await engine.search(col, { text: 'consider how much', audio: 'speech' });
    expect(spoken.results[0].video_id).toBe(ids.talk);
    expect(spoken.results[0].kinds).toContain('said');
    expect(spoken.results.map((r) => r.video_id)).not.toContain(ids.mute);
  });

  it('keeps the visual results when the recognizer crashes, hangs or is missing, and says why', async () => {
    const crash = path.join(dir, 'crash.sh');
    writeFileSync(crash, '#!/bin/sh\necho "model not found" >&2\nexit 3\n');
    const hang = path.join(dir, 'hang.sh');
    writeFileSync(hang, '#!/bin/sh\nsleep 600\n');
    chmodSync(crash, 0o755);
    chmodSync(hang, 0o755);
    const cases: [string, Record<string, string>, RegExp][] = [
      ['crash', { VIDEMBED_POCKETSPHINX: crash }, /speech recognition failed: .*exit code 3.*model not found/],
      ['hang', { VIDEMBED_POCKETSPHINX: hang, VIDEMBED_SPEECH_TIMEOUT_S: '2' }, /stopped responding/],
      ['missing', { VIDEMBED_POCKETSPHINX: path.join(dir, 'nowhere') }, /no speech engine installed/],
    ];
    for (const [name, vars, why] of cases) {
      process.env = { ...env, ...vars };
      const clip = await makeSpeechClip(`${LIBRIVOX}/sense_and_sensibility_01_austen_64kb-0930.wav`, path.join(dir, `${name}.mp4`), { lead: 0.2 });
      const id = (await engine.uploadVideo(col, { path: clip, filename: `${name}.mp4`, force: true })).video_id;
      await drain(engine);
      const v = await engine.videoDetails(id);
      expect(v.status, `${name}: ${v.error_message ?? ''}`).toBe('processed');
      expect(v.segments.length).toBeGreaterThan(0);
      expect((await engine.videoTranscript(id)).reason).toMatch(why);
    }
    process.env = env;
  }, 300_000);

  it('transcribes nothing for a collection with speech off, and still tags its soundtrack', async () => {
    const off = (await engine.createCollection({ name: 'quiet', speech: 'off' })).collection_id;
    expect((await engine.getCollection(off)).speech).toBe('off');
    const clip = await makeSpeechClip(TALK, path.join(dir, 'off.mp4'));
    const id = (await engine.uploadVideo(off, { path: clip, filename: 'off.mp4' })).video_id;
    await drain(engine);
    expect((await engine.videoTranscript(id)).reason).toBe('speech off for this collection');
    const tags = (await engine.videoDetails(id)).segments.map((s) => (s.tags as Record<string, { label: string }>).audio?.label);
    expect(tags.every((l) => l !== undefined)).toBe(true);
    const recipe = (await engine.getCollection(off)).recipe!;
    expect(recipe.speech_setting).toBe('off');
  }, 300_000);
});

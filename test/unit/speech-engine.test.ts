/**
 * The API's audio, used: a task on an uploaded `audio_input` tensor hears it (a deterministic
 * fake engine here): the segments say what the soundtrack is (the `audio` tag), and the vectors
 * stay the picture's — speech never changes a vector. In-memory stores, fake models.
 */
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { framesToTensor } from '../../src/pipeline/tensors.js';
import { Worker } from '../../src/runtime/worker.js';
import type { Frame } from '../../src/media/types.js';
import { SpeechAnalyzer } from '../../src/speech/analyzer.js';
import { resolveSpeech } from '../../src/speech/engines.js';
import type { SpeechEngine, SpokenWord } from '../../src/speech/types.js';
import { memoryEngine } from '../helpers/memory-engine.js';

/** Says "quarterly revenue grew" once per second of audio it is given. */
class SayingEngine implements SpeechEngine {
  static words = 0;
  readonly name = 'fake';
  readonly version = 'fake-1';
  readonly language = 'en';
  async transcribe(chunks: AsyncIterable<Buffer>, onWord: (w: SpokenWord) => void): Promise<void> {
    let t = 0;
    for await (const c of chunks) {
      for (const [i, w] of ['quarterly', 'revenue', 'grew'].entries()) {
        SayingEngine.words++;
        onWord({ w, start: t + i * 0.3, end: t + i * 0.3 + 0.25, conf: 0.9 });
      }
      t += c.length / 32000;
    }
  }
}

function frames(n: number): Frame[] {
  return Array.from({ length: n }, (_, i) => ({ t: i, width: 16, height: 16, data: new Uint8Array(16 * 16 * 3).fill(120) }));
}

/** `seconds` of a 300 Hz tone as an audio_input tensor ([1, 1, samples] float32, 16 kHz). */
function audioTensor(seconds: number) {
  const samples = Float32Array.from({ length: seconds * 16000 }, (_, i) => 0.3 * Math.sin((2 * Math.PI * 300 * i) / 16000));
  return { data: Buffer.from(samples.buffer).toString('base64'), shape: [1, 1, samples.length], dtype: 'float32' };
}

async function run(kind: 'embedding' | 'tagging', withAudio: boolean): Promise<{ embeddings: number[][]; tags: { segments: Array<Record<string, { label: string }>> }; text: string[] }> {
  const m = memoryEngine({ speechFor: () => new SpeechAnalyzer(new SayingEngine()) });
  const up = await m.engine.uploadTensors({
    service: kind,
    request_id: 'r1',
    video_input: framesToTensor(frames(4)),
    ...(withAudio ? { audio_input: audioTensor(4) } : {}),
    video_kwargs: { fps: 1 },
  });
  const sub = await m.engine.submitTask(kind, { tensor: { video_input_key: up.r2_keys.video_input, audio_input_key: up.r2_keys.audio_input, video_kwargs_key: up.r2_keys.video_kwargs } });
  await new Worker(m.engine, { idleExitMs: 0, pollMs: 5 }).run(new AbortController().signal);
  const status = (await m.engine.taskStatus(sub.request_id)) as unknown as { status: string; embeddings: number[][]; tags: { segments: Array<Record<string, { label: string }>> } };
  expect(status.status).toBe('completed');
  return { embeddings: status.embeddings, tags: status.tags, text: m.embedder.texts };
}

describe('a task hears the audio_input tensor', () => {
  it("tags each segment by what its soundtrack is; the vectors are the picture's, with or without audio", async () => {
    SayingEngine.words = 0;
    const heard = await run('embedding', true);
    expect(SayingEngine.words).toBeGreaterThan(0); // the audio reached the recognizer
    const words = SayingEngine.words;
    const silent = await run('embedding', false);
    expect(SayingEngine.words).toBe(words); // no audio, nothing heard
    // What was said never reached the text encoder, and never moved a vector.
    expect(heard.text).toEqual([]);
    expect(heard.embeddings).toEqual(silent.embeddings);
    for (const v of heard.embeddings) expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    const tagged = await run('tagging', true);
    const quiet = await run('tagging', false);
    expect(tagged.tags.segments.map((s) => s.audio?.label)).toEqual(tagged.tags.segments.map(() => 'speech'));
    expect(quiet.tags.segments.map((s) => s.audio?.label)).toEqual(quiet.tags.segments.map(() => 'silence'));
  });
});

describe('a collection in a language no engine knows', () => {
  const env = { PATH: '', VIDEMBED_POCKETSPHINX: process.execPath, VIDEMBED_MODELS_DIR: path.join(os.tmpdir(), 'vidembed-no-models-here') };

  it('gets no engine and a reason, instead of English words for German speech', () => {
    expect(resolveSpeech('auto', env).engine?.name).toBe('pocketsphinx');
    expect(resolveSpeech('auto', env, 'en-GB').engine?.name).toBe('pocketsphinx');
    const de = resolveSpeech('auto', env, 'de');
    expect(de.engine).toBeUndefined();
    expect(de.reason).toBe('no installed speech engine transcribes "de" (installed: pocketsphinx (en))');
    expect(resolveSpeech('pocketsphinx', env, 'de').reason).toBe(de.reason);
  });

  it('records its language; a malformed one is refused', async () => {
    const m = memoryEngine();
    const made = await m.engine.createCollection({ name: 'interviews', language: 'de' });
    expect(made.language).toBe('de');
    expect((await m.engine.getCollection(made.collection_id)).language).toBe('de');
    expect((await m.engine.getCollection((await m.engine.createCollection({ name: 'plain' })).collection_id)).language).toBe('en');
    await expect(m.engine.createCollection({ name: 'x', language: 'German!' })).rejects.toThrow(/language/);
  });
});

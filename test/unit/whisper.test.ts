/**
 * The whisper engine's logic around the native binding: windows of at most 30 s cut where it is
 * quiet, silent windows skipped, word times shifted to the video's clock, tokens joined into words,
 * a stalled or aborted binding stopped and the model released every time — against a deterministic
 * fake binding. The ggml header reader runs on whisper.cpp's own test file (../shared/models) and on
 * files that are not models. The manifests: pinned URL, sha256, kind `speech`.
 */
import { appendFileSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ModelError } from '../../src/api/errors.js';
import { loadManifests, validateManifest } from '../../src/models/manifest.js';
import { readGgmlWhisperHeader } from '../../src/speech/ggml.js';
import type { SpokenWord } from '../../src/speech/types.js';
import { findWhisperModel, loudestDb, quietestCut, WhisperEngine, WordJoiner, type WhisperBinding } from '../../src/speech/whisper.js';
import { removeDir, sharedModelsDir, tempDir } from '../helpers/clips.js';

const TEST_MODEL = path.join(sharedModelsDir, 'whisper-for-tests', 'for-tests-ggml-tiny.en.bin');
const RATE = 16000;
const tmp = tempDir('vidembed-whisper-unit-');
afterAll(() => removeDir(tmp));

/** s16le PCM: `seconds` of a tone (or of silence with amp 0). */
function tone(seconds: number, amp = 8000): Buffer {
  const b = Buffer.alloc(Math.round(seconds * RATE) * 2);
  for (let i = 0; i < b.length >> 1; i++) b.writeInt16LE(Math.round(amp * Math.sin(i / 7)), i * 2);
  return b;
}

async function* chunks(buf: Buffer, size = 32000): AsyncGenerator<Buffer> {
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

interface Call {
  samples: number;
  opts: Record<string, unknown>;
}

/** A binding whose context "hears" one word per window: ` w<n>` at 0.5–0.9 s of the window. */
function fakeBinding(behaviour: { hang?: boolean; failInit?: boolean } = {}) {
  const calls: Call[] = [];
  const state = { released: 0, stopped: 0 };
  class Ctx {
    constructor(opts: { filePath: string }) {
      if (behaviour.failInit) throw new Error(`Failed to initialize whisper context (${path.basename(opts.filePath)})`);
    }
    transcribeData(data: ArrayBuffer, opts: Record<string, unknown>) {
      calls.push({ samples: data.byteLength / 2, opts });
      const n = calls.length;
      let resolve!: (r: { result: string; segments: { text: string; t0: number; t1: number }[]; isAborted: boolean }) => void;
      const promise = new Promise<{ result: string; segments: { text: string; t0: number; t1: number }[]; isAborted: boolean }>((r) => (resolve = r));
      if (!behaviour.hang) resolve({ result: ` w${n}`, segments: [{ text: ` W${n}`, t0: 500, t1: 700 }, { text: 'x.', t0: 700, t1: 900 }], isAborted: false });
      return {
        promise,
        stop: async () => {
          state.stopped++;
          resolve({ result: '', segments: [], isAborted: true });
        },
      };
    }
    async release() {
      state.released++;
    }
  }
  return { binding: { WhisperContext: Ctx } as unknown as WhisperBinding, calls, state };
}

function engine(binding: WhisperBinding, stallMs = 60_000) {
  return new WhisperEngine({ file: '/models/ggml-base.en.bin', modelId: 'whisper-base-en', sha256: 'a'.repeat(64), language: 'en', binding, threads: 1, stallMs });
}

describe('WhisperEngine (fake binding)', () => {
  it('hears a long recording in windows of at most 30 s, cut where it is quiet, on the video clock', async () => {
    // 70 s of tone with a pause at 27.0–27.4 s: the first window is cut inside the pause.
    const audio = Buffer.concat([tone(27), tone(0.4, 0), tone(42.6)]);
    const { binding, calls, state } = fakeBinding();
    const words: SpokenWord[] = [];
    await engine(binding).transcribe(chunks(audio), (w) => words.push(w));
    expect(calls.every((c) => c.samples <= 30 * RATE)).toBe(true);
    expect(calls.reduce((s, c) => s + c.samples, 0)).toBe(audio.length / 2);
    const first = calls[0].samples / RATE;
    expect(first).toBeGreaterThanOrEqual(27);
    expect(first).toBeLessThanOrEqual(27.4);
    expect(calls[0].opts).toMatchObject({ language: 'en', tokenTimestamps: true, maxLen: 1, maxThreads: 1 });
    // One word per window, " W1" + "x." joined into "w1x", shifted by where its window starts.
    expect(words.map((w) => w.w)).toEqual(calls.map((_, i) => `w${i + 1}x`));
    expect(words[0].start).toBeCloseTo(0.5, 3);
    expect(words[1].start).toBeCloseTo(first + 0.5, 3);
    expect(words[1].end).toBeCloseTo(first + 0.9, 3);
    expect(state.released).toBe(1);
  });

  it('skips windows without sound (whisper invents words in silence)', async () => {
    const { binding, calls } = fakeBinding();
    const words: SpokenWord[] = [];
    await engine(binding).transcribe(chunks(Buffer.concat([tone(35, 0), tone(5)])), (w) => words.push(w));
    expect(calls).toHaveLength(1);
    expect(words[0].start).toBeGreaterThan(25);
  });

  it('a binding that hangs is stopped and the engine rejects; the model is still released', async () => {
    const { binding, state } = fakeBinding({ hang: true });
    await expect(engine(binding, 50).transcribe(chunks(tone(3)), () => {})).rejects.toThrow(/whisper stopped responding/);
    expect(state.stopped).toBe(1);
    expect(state.released).toBe(1);
  });

  it('an abort stops the running window', async () => {
    const { binding, state } = fakeBinding({ hang: true });
    const ac = new AbortController();
    const run = engine(binding).transcribe(chunks(tone(3)), () => {}, { signal: ac.signal });
    setTimeout(() => ac.abort(new Error('cancelled')), 10);
    await expect(run).rejects.toThrow(/cancelled/);
    expect(state.stopped).toBe(1);
    expect(state.released).toBe(1);
  });

  it('a model the binding cannot load is a ModelError naming the file', async () => {
    const { binding } = fakeBinding({ failInit: true });
    await expect(engine(binding).transcribe(chunks(tone(1)), () => {})).rejects.toThrow(ModelError);
    await expect(engine(binding).transcribe(chunks(tone(1)), () => {})).rejects.toThrow(/whisper cannot load ggml-base\.en\.bin/);
  });
});

describe('words from whisper tokens', () => {
  it('joins sub-word tokens, drops punctuation and bracketed notes, splits hyphens', () => {
    const out: SpokenWord[] = [];
    const j = new WordJoiner((w) => out.push(w));
    const toks: [string, number, number][] = [
      [' [BLANK_AUDIO]', 0, 1],
      [' Dash', 1, 1.2],
      ['wood', 1.2, 1.5],
      [',', 1.5, 1.5],
      [' well-known', 2, 2.5],
      [' (music)', 3, 4],
      [" Don't", 4, 4.3],
    ];
    for (const [t, a, b] of toks) j.push(t, a, b);
    j.flush();
    expect(out.map((w) => [w.w, w.start, w.end])).toEqual([
      ['dashwood', 1, 1.5],
      ['well', 2, 2.5],
      ['known', 2, 2.5],
      ["don't", 4, 4.3],
    ]);
  });

  it('cuts at the quietest 100 ms of the last 5 s and measures loudness', () => {
    const win = Buffer.concat([tone(26), tone(0.3, 0), tone(3.7)]);
    const cut = quietestCut(win) / 2 / RATE;
    expect(cut).toBeGreaterThanOrEqual(26);
    expect(cut).toBeLessThanOrEqual(26.3);
    expect(loudestDb(tone(1, 0))).toBe(-Infinity);
    expect(loudestDb(tone(1, 16384))).toBeCloseTo(-9, 0); // a sine at half scale: −6 dB peak, −9 dB RMS
  });
});

describe('ggml model files', () => {
  it("reads whisper.cpp's test file: English-only tiny, vocabulary, no weights", () => {
    const h = readGgmlWhisperHeader(TEST_MODEL);
    expect(h.hparams).toMatchObject({ n_vocab: 51864, n_audio_state: 384, n_audio_layer: 4, n_text_layer: 4, n_mels: 80 });
    expect(h.vocabTokens).toBe(50257); // GPT-2 byte-level BPE; whisper.cpp adds the 1607 special tokens
    expect(h.languages).toBe('en');
    expect(h.hasWeights).toBe(false);
  });

  it('sees weights after the vocabulary, and refuses what is not a model', () => {
    const withTensors = path.join(tmp, 'with-tensors.bin');
    copyFileSync(TEST_MODEL, withTensors);
    appendFileSync(withTensors, Buffer.alloc(64));
    expect(readGgmlWhisperHeader(withTensors).hasWeights).toBe(true);
    const text = path.join(tmp, 'notes.bin');
    writeFileSync(text, 'these are my notes, not a model');
    expect(() => readGgmlWhisperHeader(text, 'notes.bin')).toThrow(/^notes\.bin is not a whisper\.cpp model: no ggml magic$/);
    const cut = path.join(tmp, 'cut.bin');
    writeFileSync(cut, readFileSync(TEST_MODEL).subarray(0, 300_000));
    expect(() => readGgmlWhisperHeader(cut, 'cut.bin')).toThrow(/cut\.bin is not a whisper\.cpp model: .*(cut short|inside its header)/);
  });
});

describe('whisper manifests and model discovery', () => {
  it('ships whisper-tiny-en and whisper-base-en pinned to a whisper.cpp model commit, with sha256', () => {
    const ms = loadManifests().filter((m) => m.kind === 'speech');
    expect(ms.map((m) => [m.id, m.speech, m.files[0].bytes, m.files[0].sha256])).toEqual([
      ['whisper-base-en', { engine: 'whisper', language: 'en', format: 'ggml' }, 147964211, 'a03779c86df3323075f5e796cb2ce5029f00ec8869eee3fdfb897afe36c6d002'],
      ['whisper-tiny-en', { engine: 'whisper', language: 'en', format: 'ggml' }, 77704715, '921e4cf8686fdd993dcd081a5da5b6c365bfde1162e72b08d75ac75289920b1f'],
    ]);
    for (const m of ms) expect(m.files[0].url).toMatch(/^https:\/\/huggingface\.co\/ggerganov\/whisper\.cpp\/resolve\/[0-9a-f]{40}\/ggml-(tiny|base)\.en\.bin$/);
  });

  it('refuses a speech manifest without its speech section or language', () => {
    const base = { id: 'w', kind: 'speech', dimension: 1, files: [{ role: 'model', path: 'm.bin', url: 'https://x/m.bin', bytes: 1, sha256: '0'.repeat(64) }] };
    expect(() => validateManifest(base, 'w.json')).toThrow(/w\.json: a speech model needs a "speech" section/);
    expect(() => validateManifest({ ...base, speech: { engine: 'whisper', format: 'ggml', language: 'English' } }, 'w.json')).toThrow(/BCP 47/);
  });

  it('finds no model where none is pulled, and will not use a file without weights', () => {
    const env = { VIDEMBED_MODELS_DIR: path.join(tmp, 'models') };
    expect(findWhisperModel(env)).toEqual({ reason: 'no whisper model pulled (vidembed models pull whisper-tiny-en)' });
    expect(findWhisperModel(env, 'de').reason).toBe('no whisper model is known for this language');
    // A user's manifest for the test file, installed as `models pull --from` would.
    const manifests = path.join(tmp, 'manifests');
    mkdirSync(manifests, { recursive: true });
    const sha = 'dd6b7796204a1cdf7164666423034e6e1a7a3e9f5c22327b4b7974c4584bd82d';
    writeFileSync(
      path.join(manifests, 'whisper-for-tests.json'),
      JSON.stringify({
        id: 'whisper-for-tests',
        kind: 'speech',
        dimension: 51864,
        files: [{ role: 'model', path: 'for-tests-ggml-tiny.en.bin', url: 'https://example.org/m.bin', bytes: 586836, sha256: sha }],
        speech: { engine: 'whisper', language: 'en', format: 'ggml' },
      }),
    );
    mkdirSync(path.join(tmp, 'models', 'whisper-for-tests'), { recursive: true });
    copyFileSync(TEST_MODEL, path.join(tmp, 'models', 'whisper-for-tests', 'for-tests-ggml-tiny.en.bin'));
    expect(findWhisperModel({ ...env, VIDEMBED_MANIFESTS_DIR: manifests }).reason).toBe(
      'whisper-for-tests/for-tests-ggml-tiny.en.bin has no weights (a test file): it cannot hear anything',
    );
  });
});

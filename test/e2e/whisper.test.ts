/**
 * whisper, as far as it can be tried here (real weights cannot be fetched: docs/models.md):
 * - pulling a whisper model from a loopback mirror, sha256-checked: whisper.cpp's own test model
 *   (../shared/models/whisper-for-tests, a real ggml header and vocabulary without weights) under a
 *   user manifest installs; a corrupted copy and a wrong file for the shipped whisper-tiny-en are
 *   refused and nothing is installed;
 * - the real native binding (@fugood/node-whisper-linux-x64): it loads, runs the engine's whole
 *   path on the test model (which hears nothing) and releases it; a file it cannot load is a clear
 *   error; a binding that cannot be loaded is a reason, never a crash;
 * - choosing engines: a model without weights is never offered, so `auto` stays on pocketsphinx and
 *   `whisper` says why it cannot be used.
 */
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelManager } from '../../src/models/manager.js';
import { resolveSpeech } from '../../src/speech/engines.js';
import { loadWhisperBinding, resetWhisperBinding, WhisperEngine } from '../../src/speech/whisper.js';
import { FileServer } from '../helpers/http-fixture.js';
import { removeDir, sharedModelsDir, tempDir } from '../helpers/clips.js';

const TEST_FILE = 'for-tests-ggml-tiny.en.bin';
const TEST_MODEL = path.join(sharedModelsDir, 'whisper-for-tests', TEST_FILE);
const TEST_SHA = 'dd6b7796204a1cdf7164666423034e6e1a7a3e9f5c22327b4b7974c4584bd82d';
/** Where whisper.cpp publishes its test model (the mirror keeps the path). */
const TEST_URL_PATH = `/ggerganov/whisper.cpp/f0d2bfbfb77e01df6160f64d249bd43e75e11660/models/${TEST_FILE}`;

let tmp: string;
let srv: FileServer;
let manifests: string;

beforeAll(async () => {
  tmp = tempDir('vidembed-whisper-');
  srv = await FileServer.start({ root: tmp });
  srv.addFile(TEST_URL_PATH, readFileSync(TEST_MODEL));
  manifests = path.join(tmp, 'manifests');
  mkdirSync(manifests);
  writeFileSync(
    path.join(manifests, 'whisper-for-tests.json'),
    JSON.stringify({
      id: 'whisper-for-tests',
      name: "whisper.cpp's tokenizer test model (no weights)",
      kind: 'speech',
      dimension: 51864,
      licence: 'MIT',
      files: [{ role: 'model', path: TEST_FILE, url: `https://raw.githubusercontent.com${TEST_URL_PATH}`, bytes: 586836, sha256: TEST_SHA }],
      speech: { engine: 'whisper', language: 'en', format: 'ggml' },
    }),
  );
});
afterAll(async () => {
  await srv?.close();
  resetWhisperBinding();
  removeDir(tmp);
});

function manager(dir: string): ModelManager {
  return new ModelManager({ dir, mirror: srv.url, env: { VIDEMBED_MANIFESTS_DIR: manifests }, retries: 0 });
}

async function* tone(seconds: number): AsyncGenerator<Buffer> {
  const b = Buffer.alloc(seconds * 16000 * 2);
  for (let i = 0; i < b.length >> 1; i++) b.writeInt16LE(Math.round(6000 * Math.sin(i / 9)), i * 2);
  yield b;
}

describe('pulling whisper models (loopback mirror)', () => {
  it('installs a whisper model from the mirror after checking its sha256', async () => {
    const dir = path.join(tmp, 'models-ok');
    const m = manager(dir);
    try {
      const res = await m.pull('whisper-for-tests');
      expect(res.files.map((f) => [f.path, f.source])).toEqual([[TEST_FILE, 'downloaded']]);
      expect(m.isInstalled('whisper-for-tests')).toBe(true);
      expect(m.list().find((x) => x.id === 'whisper-for-tests')).toMatchObject({ kind: 'speech', installed: true });
    } finally {
      await m.close();
    }
    expect(srv.requests.some((r) => r.path === TEST_URL_PATH && r.status === 200)).toBe(true);
  });

  it('refuses a corrupted download and installs nothing', async () => {
    const dir = path.join(tmp, 'models-bad');
    srv.fault(TEST_URL_PATH, { corruptAt: 300_000 });
    const m = manager(dir);
    try {
      await expect(m.pull('whisper-for-tests')).rejects.toThrow(new RegExp(`sha256 mismatch for whisper-for-tests/${TEST_FILE.replace(/\./g, '\\.')} .*expected ${TEST_SHA}`));
      expect(m.isInstalled('whisper-for-tests')).toBe(false);
    } finally {
      await m.close();
    }
    expect(existsSync(path.join(dir, 'whisper-for-tests', TEST_FILE))).toBe(false);
  });

  it('refuses a wrong file for the shipped whisper-tiny-en at its pinned path', async () => {
    const pinned = '/ggerganov/whisper.cpp/resolve/5359861c739e955e79d9a303bcbc70fb988958b1/ggml-tiny.en.bin';
    srv.addFile(pinned, readFileSync(TEST_MODEL)); // the right name, the wrong bytes
    const dir = path.join(tmp, 'models-tiny');
    const m = manager(dir);
    try {
      await expect(m.pull('whisper-tiny-en')).rejects.toThrow(/whisper-tiny-en\/ggml-tiny\.en\.bin/);
      expect(m.isInstalled('whisper-tiny-en')).toBe(false);
    } finally {
      await m.close();
    }
    expect(srv.requests.some((r) => r.path === pinned)).toBe(true);
    expect(existsSync(path.join(dir, 'whisper-tiny-en', 'ggml-tiny.en.bin'))).toBe(false);
  });
});

describe('the native binding', () => {
  it('loads, runs the engine on the test model (it hears nothing) and releases it', async () => {
    resetWhisperBinding();
    const { binding, reason } = loadWhisperBinding({});
    expect(reason).toBeUndefined();
    const engine = new WhisperEngine({ file: TEST_MODEL, modelId: 'whisper-for-tests', sha256: TEST_SHA, language: 'en', binding: binding!, threads: 2, stallMs: 600_000 });
    const words: string[] = [];
    await engine.transcribe(tone(2), (w) => words.push(w.w));
    expect(words).toEqual([]);
  });

  it('a file the binding cannot load is an error naming it, not a crash', async () => {
    const { binding } = loadWhisperBinding({});
    const junk = path.join(tmp, 'ggml-junk.bin');
    writeFileSync(junk, Buffer.alloc(4096, 7));
    const engine = new WhisperEngine({ file: junk, modelId: 'junk', sha256: '0'.repeat(64), language: 'en', binding: binding!, stallMs: 60_000 });
    await expect(engine.transcribe(tone(1), () => {})).rejects.toThrow(/^whisper cannot load ggml-junk\.bin: invalid model data \(bad magic\)$/);
  });

  it('a binding that cannot be loaded is a reason', () => {
    resetWhisperBinding();
    const r = loadWhisperBinding({ VIDEMBED_WHISPER_BINDING: path.join(tmp, 'nowhere', 'index.node') });
    expect(r.binding).toBeUndefined();
    expect(r.reason).toMatch(/^the whisper\.cpp binding VIDEMBED_WHISPER_BINDING \(.*nowhere\/index\.node\) cannot be loaded: /);
    resetWhisperBinding();
  });
});

describe('choosing the engine', () => {
  it('never offers a model without weights: auto keeps pocketsphinx, whisper says why', async () => {
    const dir = path.join(tmp, 'models-choose');
    const m = manager(dir);
    try {
      await m.pull('whisper-for-tests', { from: path.dirname(TEST_MODEL) });
    } finally {
      await m.close();
    }
    const env = { ...process.env, VIDEMBED_MODELS_DIR: dir, VIDEMBED_MANIFESTS_DIR: manifests };
    expect(resolveSpeech('auto', env).engine?.name).toBe('pocketsphinx');
    const w = resolveSpeech('whisper', env);
    expect(w.engine).toBeUndefined();
    expect(w.reason).toBe(
      'whisper is not usable: whisper-for-tests/for-tests-ggml-tiny.en.bin has no weights (a test file): it cannot hear anything — pull a whisper model (`vidembed models pull whisper-base-en`; docs/models.md)',
    );
  });
});

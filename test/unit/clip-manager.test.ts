import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ModelError, NotFoundError, UpstreamError } from '../../src/api/errors.js';
import { ModelManager, type PullProgress } from '../../src/models/manager.js';
import { applyMirror, BUILTIN_MODEL_ID, loadManifests, modelsDir, type ModelManifest } from '../../src/models/manifest.js';
import { FileServer } from '../helpers/http-fixture.js';
import { writeTinyClip, type TinyClip } from '../helpers/tiny-clip.js';

let tmp: string;
let srv: FileServer;
let tiny: TinyClip;
const managers: ModelManager[] = [];

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'vidembed-clip-mgr-'));
  srv = await FileServer.start();
  tiny = writeTinyClip(path.join(tmp, 'src'), { origin: srv.url });
  srv.addFile(tiny.urlPaths.vision, tiny.vision);
  srv.addFile(tiny.urlPaths.text, tiny.text);
});
afterAll(async () => {
  await srv.close();
  rmSync(tmp, { recursive: true, force: true });
});
afterEach(async () => {
  for (const m of managers.splice(0)) await m.close();
});

let n = 0;
function manager(opts: { manifest?: ModelManifest; mirror?: string; retries?: number } = {}): ModelManager {
  const m = new ModelManager({ dir: path.join(tmp, `models-${++n}`), manifests: [opts.manifest ?? tiny.manifest], mirror: opts.mirror, retries: opts.retries, retryDelayMs: 10 });
  managers.push(m);
  return m;
}
const installed = (m: ModelManager, file: string) => path.join(m.dir, tiny.manifest.id, file);
const V = 'vision_model_quantized.onnx';
const T = 'text_model_quantized.onnx';

describe('models pull from HTTP', () => {
  it('downloads every file with progress, verifies, installs atomically', async () => {
    const m = manager();
    expect(m.isInstalled(tiny.manifest.id)).toBe(false);
    const progress: PullProgress[] = [];
    const res = await m.pull(tiny.manifest.id, { onProgress: (p) => progress.push(p) });
    expect(res.files.map((f) => [f.path, f.source])).toEqual([
      [V, 'downloaded'],
      [T, 'downloaded'],
    ]);
    expect(sameBytes(installed(m, V), tiny.vision)).toBe(true);
    expect(sameBytes(installed(m, T), tiny.text)).toBe(true);
    expect(existsSync(installed(m, V) + '.part')).toBe(false);
    expect(m.isInstalled(tiny.manifest.id)).toBe(true);
    const done = progress.filter((p) => p.done);
    expect(done.map((p) => [p.file, p.received, p.total])).toEqual([
      [V, tiny.vision.length, tiny.vision.length],
      [T, tiny.text.length, tiny.text.length],
    ]);
    for (const p of progress) expect(p.received).toBeLessThanOrEqual(p.total);
    const [status] = m.list({ defaultModel: tiny.manifest.id });
    expect(status).toMatchObject({ id: tiny.manifest.id, installed: true, default: true, dim: 512, size_bytes: tiny.vision.length + tiny.text.length });

    // A second pull re-verifies and downloads nothing.
    const before = srv.requests.length;
    const again = await m.pull(tiny.manifest.id);
    expect(again.files.every((f) => f.source === 'already-installed')).toBe(true);
    expect(srv.requests.length).toBe(before);
  });

  it('a dropped connection leaves a .part that the next pull resumes with a Range request', async () => {
    const m = manager({ retries: 0 });
    srv.fault(tiny.urlPaths.text, { dropAfterBytes: 100_000 });
    const err = await m.pull(tiny.manifest.id).catch((e) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err.message).toMatch(/run `vidembed models pull clip-tiny-test` again to resume/);
    const part = installed(m, T) + '.part';
    expect(statSync(part).size).toBe(100_000);
    expect(existsSync(installed(m, T))).toBe(false);
    expect(m.isInstalled(tiny.manifest.id)).toBe(false);
    expect(m.list()[0].files[1]).toMatchObject({ present: false, partial_bytes: 100_000 });

    const res = await m.pull(tiny.manifest.id);
    expect(res.files.map((f) => f.source)).toEqual(['already-installed', 'resumed']);
    const last = srv.requestsFor(tiny.urlPaths.text).at(-1)!;
    expect(last.range).toBe('bytes=100000-');
    expect(last.status).toBe(206);
    expect(sameBytes(installed(m, T), tiny.text)).toBe(true);
    expect(existsSync(part)).toBe(false);
  });

  it('retries a dropped connection by itself, resuming where it stopped', async () => {
    const m = manager();
    const before = srv.requestsFor(tiny.urlPaths.text).length;
    srv.fault(tiny.urlPaths.text, { dropAfterBytes: 50_000 });
    const res = await m.pull(tiny.manifest.id);
    expect(res.files[1].source).toBe('resumed');
    const reqs = srv.requestsFor(tiny.urlPaths.text).slice(before);
    expect(reqs.map((r) => r.range)).toEqual([undefined, 'bytes=50000-']);
    expect(sameBytes(installed(m, T), tiny.text)).toBe(true);
  });

  it('retries a 503, and restarts cleanly when the server ignores Range', async () => {
    const m = manager();
    srv.fault(tiny.urlPaths.text, { status: 503 });
    mkdirp(path.dirname(installed(m, T)));
    writeFileSync(installed(m, T) + '.part', tiny.text.subarray(0, 5000));
    srv.fault(tiny.urlPaths.text, { ignoreRange: true });
    const before = srv.requestsFor(tiny.urlPaths.text).length;
    await m.pull(tiny.manifest.id);
    expect(srv.requestsFor(tiny.urlPaths.text).slice(before).map((r) => [r.range, r.status])).toEqual([
      ['bytes=5000-', 503],
      ['bytes=5000-', 200],
    ]);
    expect(sameBytes(installed(m, T), tiny.text)).toBe(true);
  });

  it('a stale .part whose bytes are wrong is caught by sha256 and deleted', async () => {
    const m = manager();
    mkdirp(path.dirname(installed(m, V)));
    writeFileSync(installed(m, V) + '.part', new Uint8Array(5000).fill(7));
    const err = await m.pull(tiny.manifest.id).catch((e) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect(err.message).toMatch(/sha256 mismatch/);
    expect(existsSync(installed(m, V) + '.part')).toBe(false);
    // ... and the next pull starts from scratch and succeeds.
    await m.pull(tiny.manifest.id);
    expect(m.isInstalled(tiny.manifest.id)).toBe(true);
  });

  it('refuses a sha256 mismatch loudly and installs nothing', async () => {
    const bad: ModelManifest = { ...tiny.manifest, files: tiny.manifest.files.map((f) => (f.role === 'vision' ? { ...f, sha256: 'ab'.repeat(32) } : f)) };
    const m = manager({ manifest: bad });
    const err = await m.pull(bad.id).catch((e) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect(err.message).toMatch(/sha256 mismatch for clip-tiny-test\/vision_model_quantized\.onnx.*expected abab.*got [0-9a-f]{64}.*nothing was installed/);
    expect(existsSync(installed(m, V))).toBe(false);
    expect(existsSync(installed(m, V) + '.part')).toBe(false);
    expect(m.isInstalled(bad.id)).toBe(false);
  });

  it('refuses bytes corrupted in transit', async () => {
    const m = manager();
    srv.fault(tiny.urlPaths.text, { corruptAt: 1234 });
    await expect(m.pull(tiny.manifest.id)).rejects.toThrow(/sha256 mismatch/);
    expect(existsSync(installed(m, T))).toBe(false);
  });

  it('a 404 is an upstream error naming the URL; nothing installed', async () => {
    const gone: ModelManifest = { ...tiny.manifest, files: tiny.manifest.files.map((f) => ({ ...f, url: `${srv.url}/nope/${f.path}` })) };
    const m = manager({ manifest: gone });
    const err = await m.pull(gone.id).catch((e) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err.message).toMatch(/HTTP 404 Not Found from http:\/\/127\.0\.0\.1:\d+\/nope\/vision_model_quantized\.onnx/);
    expect(existsSync(installed(m, V))).toBe(false);
    expect(existsSync(installed(m, V) + '.part')).toBe(false);
  });

  it('follows redirects (Hugging Face resolve URLs redirect to a CDN)', async () => {
    const moved: ModelManifest = { ...tiny.manifest, files: tiny.manifest.files.map((f) => ({ ...f, url: `${srv.url}/moved/${f.path}` })) };
    srv.redirect(`/moved/${V}`, tiny.urlPaths.vision);
    srv.redirect(`/moved/${T}`, tiny.urlPaths.text);
    const m = manager({ manifest: moved });
    await m.pull(moved.id);
    expect(m.isInstalled(moved.id)).toBe(true);
  });

  it('VIDEMBED_MODELS_MIRROR replaces the origin of every URL', async () => {
    const hf = writeTinyClip(path.join(tmp, 'src-hf')); // URLs on https://huggingface.co (unreachable here)
    expect(hf.manifest.files[0].url).toMatch(/^https:\/\/huggingface\.co\//);
    const m = new ModelManager({ manifests: [hf.manifest], env: { VIDEMBED_MODELS_DIR: path.join(tmp, 'mirror-models'), VIDEMBED_MODELS_MIRROR: srv.url } });
    managers.push(m);
    expect(m.dir).toBe(path.join(tmp, 'mirror-models'));
    expect(m.urlFor(hf.manifest.files[0])).toBe(srv.url + tiny.urlPaths.vision);
    const res = await m.pull(hf.manifest.id);
    expect(res.files[0].url).toBe(srv.url + tiny.urlPaths.vision);
    expect(m.isInstalled(hf.manifest.id)).toBe(true);
  });

  it('applyMirror keeps a path prefix and the query', () => {
    const u = 'https://huggingface.co/Xenova/clip-vit-base-patch32/resolve/main/onnx/x.onnx?download=true';
    expect(applyMirror(u, 'http://127.0.0.1:9000')).toBe('http://127.0.0.1:9000/Xenova/clip-vit-base-patch32/resolve/main/onnx/x.onnx?download=true');
    expect(applyMirror(u, 'https://mirror.example/hf/')).toBe('https://mirror.example/hf/Xenova/clip-vit-base-patch32/resolve/main/onnx/x.onnx?download=true');
    expect(applyMirror(u, undefined)).toBe(u);
    expect(() => applyMirror(u, 'not a url')).toThrow(ModelError);
  });
});

describe('models pull --from, verify', () => {
  it('--from installs files already on disk (repo layout or flat), still verified, no HTTP', async () => {
    const m = manager();
    const before = srv.requests.length;
    const res = await m.pull(tiny.manifest.id, { from: tiny.dir }); // finds onnx/<file>
    expect(res.files.map((f) => f.source)).toEqual(['local', 'local']);
    expect(srv.requests.length).toBe(before);
    expect(m.isInstalled(tiny.manifest.id)).toBe(true);

    const flat = path.join(tmp, 'flat');
    mkdirp(flat);
    writeFileSync(path.join(flat, V), tiny.vision);
    const corrupt = Uint8Array.from(tiny.text);
    corrupt[10] ^= 1;
    writeFileSync(path.join(flat, T), corrupt);
    const m2 = manager();
    await expect(m2.pull(tiny.manifest.id, { from: flat })).rejects.toThrow(/sha256 mismatch for clip-tiny-test\/text_model_quantized\.onnx from .*flat/);
    expect(existsSync(installed(m2, V))).toBe(true); // the good file is kept
    expect(existsSync(installed(m2, T))).toBe(false);
    expect(existsSync(installed(m2, T) + '.part')).toBe(false);

    await expect(manager().pull(tiny.manifest.id, { from: path.join(tmp, 'no-such-dir') })).rejects.toBeInstanceOf(NotFoundError);
    await expect(manager().pull(tiny.manifest.id, { from: path.join(tmp) })).rejects.toThrow(/not found in/);
  });

  it('verify re-hashes installed files and names what is wrong', async () => {
    const m = manager();
    await expect(m.verify(tiny.manifest.id)).rejects.toThrow(/model clip-tiny-test is not installed: run `vidembed models pull clip-tiny-test`/);
    expect(await m.verify()).toEqual([]);
    await m.pull(tiny.manifest.id, { from: tiny.dir });
    let [r] = await m.verify();
    expect(r.ok).toBe(true);
    expect(r.files.every((f) => f.ok && f.sha256 === f.expected_sha256)).toBe(true);

    // Same size, one byte flipped: only hashing can tell.
    const buf = readFileSync(installed(m, V));
    buf[buf.length >> 1] ^= 0xff;
    writeFileSync(installed(m, V), buf);
    expect(m.isInstalled(tiny.manifest.id)).toBe(true); // the cheap check cannot see it
    [r] = await m.verify(tiny.manifest.id);
    expect(r.ok).toBe(false);
    expect(r.files.find((f) => f.path === V)).toMatchObject({ ok: false, problem: 'sha256' });
    expect(r.files.find((f) => f.path === T)).toMatchObject({ ok: true });

    writeFileSync(installed(m, T), tiny.text.subarray(0, 10));
    [r] = await m.verify(tiny.manifest.id);
    expect(r.files.find((f) => f.path === T)).toMatchObject({ ok: false, problem: 'size', bytes: 10 });
    rmSync(installed(m, T));
    [r] = await m.verify(tiny.manifest.id);
    expect(r.files.find((f) => f.path === T)).toMatchObject({ ok: false, problem: 'missing', bytes: null });

    // pull repairs it.
    await m.pull(tiny.manifest.id);
    [r] = await m.verify(tiny.manifest.id);
    expect(r.ok).toBe(true);
  });

  it('unknown ids are NotFoundError listing the known ones', async () => {
    const m = manager();
    await expect(m.pull('nope')).rejects.toBeInstanceOf(NotFoundError);
    expect(() => m.get('nope')).toThrow(/known models: clip-tiny-test/);
  });
});

describe('shipped manifests', () => {
  it('clip-vit-b32 and the built-in perception tier', async () => {
    const all = loadManifests();
    const clip = all.find((m) => m.id === 'clip-vit-b32')!;
    expect(clip).toMatchObject({ kind: 'clip', dimension: 512, tokenizer: { context_length: 77, bos: 49406, eos: 49407 } });
    expect(clip.files.map((f) => [f.role, f.bytes, f.sha256])).toEqual([
      ['vision', 89117001, '583fd1110a514667812fee7d684952aaf82a99b959760c8d7dca7e0ab9839299'],
      ['text', 64504507, '73baab855d406190da9faa498cfedf65f15cf309f4cc7385b7b032e6d08e5c3a'],
    ]);
    expect(clip.files[0].url).toBe('https://huggingface.co/Xenova/clip-vit-base-patch32/resolve/main/onnx/vision_model_quantized.onnx');
    expect(clip.preprocessing).toMatchObject({ image_size: 224, resample: 'bicubic', mean: [0.48145466, 0.4578275, 0.40821073], std: [0.26862954, 0.26130258, 0.27577711] });
    const builtin = all.find((m) => m.id === BUILTIN_MODEL_ID)!;
    expect(builtin).toMatchObject({ kind: 'builtin', dimension: 512, files: [] });

    const m = new ModelManager({ dir: path.join(tmp, 'shipped') });
    managers.push(m);
    expect(m.isInstalled(BUILTIN_MODEL_ID)).toBe(true);
    expect(m.isInstalled('clip-vit-b32')).toBe(false);
    expect(await m.pull(BUILTIN_MODEL_ID)).toMatchObject({ builtin: true, files: [] });
    expect(m.list().map((s) => [s.id, s.installed])).toEqual([
      ['clip-vit-b32', false],
      ['imagenet-mobilenet-v2', false],
      [BUILTIN_MODEL_ID, true],
      ['whisper-base-en', false],
      ['whisper-tiny-en', false],
    ]);
  });

  it('models dir: VIDEMBED_MODELS_DIR, else ~/.cache/vidembed/models', () => {
    expect(modelsDir({ VIDEMBED_MODELS_DIR: '/x/y' })).toBe('/x/y');
    expect(modelsDir({})).toBe(path.join(os.homedir(), '.cache', 'vidembed', 'models'));
  });
});

function mkdirp(dir: string): void {
  mkdirSync(dir, { recursive: true });
}

function sameBytes(file: string, bytes: Uint8Array): boolean {
  return Buffer.from(readFileSync(file)).equals(Buffer.from(bytes));
}

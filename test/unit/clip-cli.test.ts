import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { describeError, exitCodeFor } from '../../src/cli/errors.js';
import { registerModels } from '../../src/cli/commands/models.js';
import type { CliContext, GlobalOptions, Run } from '../../src/cli/context.js';
import { pathsFor, readUserConfig } from '../../src/config.js';
import { FileServer } from '../helpers/http-fixture.js';
import { writeTinyClip, type TinyClip } from '../helpers/tiny-clip.js';

let tmp: string;
let srv: FileServer;
let tiny: TinyClip;
const saved = { ...process.env };

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'vidembed-clip-cli-'));
  srv = await FileServer.start();
  tiny = writeTinyClip(path.join(tmp, 'src')); // URLs on huggingface.co: reached through the mirror
  srv.addFile(tiny.urlPaths.vision, tiny.vision);
  srv.addFile(tiny.urlPaths.text, tiny.text);
  // The real clip-vit-b32 URLs, mirrored to bytes that are not the real model: must be refused.
  srv.addFile('/Xenova/clip-vit-base-patch32/resolve/main/onnx/vision_model_quantized.onnx', new Uint8Array(1000).fill(1));
  const manifests = path.join(tmp, 'manifests');
  mkdirSync(manifests);
  writeFileSync(path.join(manifests, 'clip-tiny-test.json'), JSON.stringify(tiny.manifest));
  process.env.VIDEMBED_MODELS_DIR = path.join(tmp, 'models');
  process.env.VIDEMBED_MODELS_MIRROR = srv.url;
  process.env.VIDEMBED_MANIFESTS_DIR = manifests;
});
afterAll(async () => {
  process.env = saved;
  await srv.close();
  rmSync(tmp, { recursive: true, force: true });
});
afterEach(() => vi.restoreAllMocks());

/** Runs `vidembed <args>` with the models commands, the way src/cli/main.ts runs commands. */
async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  let code = 0;
  vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => ((out += String(s)), true));
  const home = path.join(tmp, 'home');
  const run: Run = async (cmd, fn) => {
    const globals = cmd.optsWithGlobals() as GlobalOptions;
    try {
      code = (await fn({ paths: pathsFor(home) } as CliContext, globals)) ?? 0;
    } catch (e) {
      err += `vidembed: error: ${describeError(e)}\n`;
      code = exitCodeFor(e);
    }
  };
  const program = new Command('vidembed').option('--json').exitOverride();
  registerModels(program, run);
  await program.parseAsync(['node', 'vidembed', ...args]);
  vi.restoreAllMocks();
  return { code, out, err };
}

describe('vidembed models', () => {
  it('list: shipped + user manifests, nothing downloaded, built-in is the default', async () => {
    const r = await cli('models', 'list', '--json');
    expect(r.code).toBe(0);
    const list = JSON.parse(r.out);
    expect(list.map((m: { id: string; installed: boolean; default: boolean }) => [m.id, m.installed, m.default])).toEqual([
      ['clip-tiny-test', false, false],
      ['clip-vit-b32', false, false],
      ['imagenet-mobilenet-v2', false, false],
      ['perception-use-v1', true, true],
      ['whisper-base-en', false, false],
      ['whisper-tiny-en', false, false],
    ]);
    expect(list[1]).toMatchObject({ dim: 512, size_bytes: 89117001 + 64504507, kind: 'clip' });
    const table = await cli('models', 'list');
    expect(table.out).toMatch(/clip-vit-b32.*no.*146\.5 MiB/);
    expect(table.out).toMatch(/whisper-base-en +│ speech +│ speech +│ no +│ 141\.1 MiB/);
    expect(table.out).toMatch(/\*.*perception-use-v1.*yes/);
  });

  it('use refuses a model that is not installed', async () => {
    const r = await cli('models', 'use', 'clip-tiny-test');
    expect(r.code).toBe(9);
    expect(r.err).toBe('vidembed: error: model clip-tiny-test is not installed: run `vidembed models pull clip-tiny-test`\n');
    expect((await cli('models', 'use', 'nope')).code).toBe(3);
  });

  it('pull through the mirror, then use, list, verify', async () => {
    const r = await cli('models', 'pull', 'clip-tiny-test', '--json');
    expect(r.code).toBe(0);
    const res = JSON.parse(r.out);
    expect(res.files.map((f: { source: string }) => f.source)).toEqual(['downloaded', 'downloaded']);
    expect(res.files[0].url).toBe(srv.url + tiny.urlPaths.vision);

    const use = await cli('models', 'use', 'clip-tiny-test');
    expect(use.code).toBe(0);
    expect(use.out).toMatch(/default model for new collections: clip-tiny-test/);
    expect(readUserConfig(pathsFor(path.join(tmp, 'home'))).default_model).toBe('clip-tiny-test');
    const list = JSON.parse((await cli('models', 'list', '--json')).out);
    expect(list[0]).toMatchObject({ id: 'clip-tiny-test', installed: true, default: true });

    const ok = await cli('models', 'verify', '--json');
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out)).toMatchObject([{ id: 'clip-tiny-test', ok: true }]);
  });

  it('verify fails with a non-zero exit on a corrupted file', async () => {
    const file = path.join(tmp, 'models', 'clip-tiny-test', 'vision_model_quantized.onnx');
    const bytes = Uint8Array.from(tiny.vision);
    bytes[100] ^= 0xff;
    writeFileSync(file, bytes);
    const r = await cli('models', 'verify', 'clip-tiny-test');
    expect(r.code).toBe(9);
    expect(r.out).toMatch(/vision_model_quantized\.onnx.*NO.*sha256/);
    expect(r.err).toMatch(/verification failed for clip-tiny-test: run `vidembed models pull clip-tiny-test` to repair/);
    expect((await cli('models', 'pull', 'clip-tiny-test')).code).toBe(0);
    expect((await cli('models', 'verify', 'clip-tiny-test')).code).toBe(0);
  });

  it('pull refuses bytes that do not match the manifest, installs nothing', async () => {
    const r = await cli('models', 'pull', 'clip-vit-b32');
    expect(r.code).toBe(9);
    expect(r.err).toMatch(/clip-vit-b32\/vision_model_quantized\.onnx at http:.* is 1000 bytes, the manifest expects 89117001: refused; nothing was installed/);
    expect(existsSync(path.join(tmp, 'models', 'clip-vit-b32', 'vision_model_quantized.onnx'))).toBe(false);
    expect(existsSync(path.join(tmp, 'models', 'clip-vit-b32', 'vision_model_quantized.onnx.part'))).toBe(false);
  });

  it('pull --from a directory; built-in model needs no pull', async () => {
    process.env.VIDEMBED_MODELS_DIR = path.join(tmp, 'models-from');
    try {
      const r = await cli('models', 'pull', 'clip-tiny-test', '--from', tiny.dir);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/installed clip-tiny-test in .*models-from.*sha256 verified/);
    } finally {
      process.env.VIDEMBED_MODELS_DIR = path.join(tmp, 'models');
    }
    const b = await cli('models', 'pull', 'perception-use-v1');
    expect(b.code).toBe(0);
    expect(b.out).toMatch(/built in/);
  });
});

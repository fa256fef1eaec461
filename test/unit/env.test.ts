/**
 * Settings from the environment are read in one place (src/env.ts): the readers' rules, and a scan
 * of the sources that fails when a module reads a VIDEMBED_ variable (or CI) by itself.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as env from '../../src/env.js';
import { repoRoot } from '../helpers/clips.js';

describe('src/env.ts', () => {
  it('reads each setting with its default, and ignores values it cannot use', () => {
    expect(env.homeDir({ VIDEMBED_HOME: '/srv/lib' })).toBe('/srv/lib');
    expect(env.storageUrl({ VIDEMBED_STORAGE_URL: '' })).toBeUndefined();
    expect(env.ffmpegFastDecode({})).toBe(true);
    expect(env.ffmpegFastDecode({ VIDEMBED_FFMPEG_FAST: '0' })).toBe(false);
    expect(env.ffmpegThreads({})).toBe(1);
    expect(env.ffmpegThreads({ VIDEMBED_FFMPEG_THREADS: '0' })).toBe(0);
    expect(env.ffmpegThreads({ VIDEMBED_FFMPEG_THREADS: '-2' })).toBe(1);
    expect(env.onnxThreadsSetting({ VIDEMBED_ONNX_THREADS: '3' })).toBe(3);
    expect(env.onnxThreadsSetting({ VIDEMBED_ONNX_THREADS: 'many' })).toBeUndefined();
    expect(env.warmIdleMs(5, { VIDEMBED_WARM_IDLE_MS: '0' })).toBe(0);
    expect(env.warmIdleMs(5, { VIDEMBED_WARM_IDLE_MS: 'x' })).toBe(5);
    expect(env.workerIdleMs(30, { VIDEMBED_WORKER_IDLE_MS: '-1' })).toBe(30);
    expect(env.imagenetEnabled({ VIDEMBED_NO_IMAGENET: '1' })).toBe(false);
    expect(env.ocrEnabled({})).toBe(true);
    expect(env.autoWorker({ VIDEMBED_NO_AUTO_WORKER: '1' })).toBe(false);
    expect(env.playerSetting({ VIDEMBED_PLAYER: '' })).toBeUndefined();
    expect(env.inCi({ CI: 'true' })).toBe(true);
  });

  it('PostgreSQL connections: the pool size (VIDEMBED_PG_POOL) and named statements (VIDEMBED_PG_PREPARED)', () => {
    expect(env.pgPoolSize({})).toBe(8);
    expect(env.pgPoolSize({ VIDEMBED_PG_POOL: '3' })).toBe(3);
    expect(() => env.pgPoolSize({ VIDEMBED_PG_POOL: '0' })).toThrow(/VIDEMBED_PG_POOL must be an integer from 1 to 100/);
    expect(() => env.pgPoolSize({ VIDEMBED_PG_POOL: 'lots' })).toThrow(/VIDEMBED_PG_POOL/);
    expect(env.pgPreparedStatements({})).toBe(true);
    expect(env.pgPreparedStatements({ VIDEMBED_PG_PREPARED: 'off' })).toBe(false);
    expect(env.pgPreparedStatements({ VIDEMBED_PG_PREPARED: '0' })).toBe(false);
    expect(env.pgPreparedStatements({ VIDEMBED_PG_PREPARED: 'ON' })).toBe(true);
    expect(() => env.pgPreparedStatements({ VIDEMBED_PG_PREPARED: 'maybe' })).toThrow(/VIDEMBED_PG_PREPARED must be 1 or 0/);
  });

  it('the library and the models: VIDEMBED_HOME, else an existing ~/.vidembed, else XDG on Linux (issue 33)', () => {
    const none = () => false;
    const legacy = (p: string) => p === '/home/ann/.vidembed';
    expect(env.homeDir({ HOME: '/home/ann' }, 'linux', none)).toBe('/home/ann/.local/share/vidembed');
    expect(env.homeDir({ HOME: '/home/ann', XDG_DATA_HOME: '/data/ann' }, 'linux', none)).toBe('/data/ann/vidembed');
    expect(env.homeDir({ HOME: '/home/ann', XDG_DATA_HOME: 'relative/ignored' }, 'linux', none)).toBe('/home/ann/.local/share/vidembed');
    expect(env.homeDir({ HOME: '/home/ann', XDG_DATA_HOME: '/data/ann' }, 'linux', legacy)).toBe('/home/ann/.vidembed');
    expect(env.homeDir({ HOME: '/Users/ann' }, 'darwin', none)).toBe('/Users/ann/.vidembed');
    expect(env.homeDir({ HOME: '/home/ann', VIDEMBED_HOME: 'lib' }, 'linux', legacy)).toBe(path.resolve('lib'));
    expect(env.modelsDir({ HOME: '/home/ann' })).toBe('/home/ann/.cache/vidembed/models');
    expect(env.modelsDir({ HOME: '/home/ann', XDG_CACHE_HOME: '/cache/ann' })).toBe('/cache/ann/vidembed/models');
    expect(env.modelsDir({ HOME: '/home/ann', XDG_CACHE_HOME: '/cache/ann', VIDEMBED_MODELS_DIR: '/m' })).toBe('/m');
  });

  it('is the only module that reads VIDEMBED_ variables or CI from the environment', () => {
    const src = path.join(repoRoot, 'src');
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const p = path.join(dir, name);
        if (statSync(p).isDirectory()) walk(p);
        else if (p.endsWith('.ts')) files.push(p);
      }
    };
    walk(src);
    expect(files.length).toBeGreaterThan(50);
    const offenders = files
      .filter((f) => path.relative(src, f) !== 'env.ts')
      .filter((f) => /(process\.env|\benv)\s*(\.\s*(VIDEMBED_\w+|CI)\b|\[\s*['"](VIDEMBED_\w+|CI)['"])/.test(readFileSync(f, 'utf8')))
      .map((f) => path.relative(repoRoot, f));
    expect(offenders).toEqual([]);
  });
});

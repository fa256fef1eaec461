import { encoderThreadsSetting, homeDir, keyframeReuse, pixelThread, storageUrl, warmIdleMs as envWarmIdleMs } from '../env.js';
import { existsSync, mkdirSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BadRequestError } from '../api/errors.js';

/** Defaults a user can rely on; each is documented in docs/engine.md. */
export const DEFAULTS = {
  segmentSeconds: 4,
  fps: 1,
  topK: 10,
  /** Query embeddings kept by the LRU cache in front of the text encoder (search, encode_text). */
  textCacheEntries: 10_000,
  maxUploadBytes: 2 * 1024 ** 3,
  /**
   * Decoded tensor bytes per upload. The payload arrives as base64 in one JSON body (4/3 larger),
   * which must stay under V8's longest string (~512 MiB): 320 MiB decoded is ~427 MiB of body.
   */
  maxTensorBytes: 320 * 1024 ** 2,
  maxJsonBytes: 64 * 1024 ** 2,
  syncTimeoutMs: 120_000,
  /** A worker renews its job lease this often; a lease not renewed for `leaseMs` is taken over. */
  leaseMs: 60_000,
  heartbeatMs: 10_000,
  /** A background worker started by `upload` exits after this long with an empty queue. */
  workerIdleExitMs: 30_000,
  /** A background process that answered a CLI search stays this long after the last one. */
  warmIdleMs: 300_000,
  pollMs: 2_000,
} as const;

/** How long a warm process outlives its last CLI search (VIDEMBED_WARM_IDLE_MS; 0: no warm CLI). */
export function warmIdleMs(env: NodeJS.ProcessEnv = process.env): number {
  return envWarmIdleMs(DEFAULTS.warmIdleMs, env);
}

/**
 * Ingest decodes and runs the pixel taggers in a worker thread while the event loop runs the models
 * (src/engine/pixel-thread.ts). VIDEMBED_PIXEL_THREAD=0 keeps them on the event loop (tests,
 * debugging, profiling one thread); the results are the same either way.
 */
export { pixelThread };

/**
 * Ingest reuses the per-keyframe models' facts on a keyframe nearly identical to the last analysed
 * one (src/engine/keyframe-reuse.ts). VIDEMBED_KEYFRAME_REUSE=0 analyses every keyframe.
 */
export { keyframeReuse };

export interface UserConfig {
  default_collection?: string;
  default_model?: string;
  base_url?: string;
  api_key?: string;
  /** `collection create` said once what a CLIP model brings. */
  clip_hint_shown?: boolean;
}

export interface Paths {
  home: string;
  dbFile: string;
  blobsDir: string;
  logsDir: string;
  configFile: string;
}

export function resolveHome(env: NodeJS.ProcessEnv = process.env): string {
  return homeDir(env);
}

export function pathsFor(home: string): Paths {
  return {
    home,
    dbFile: path.join(home, 'vidembed.db'),
    blobsDir: path.join(home, 'blobs'),
    logsDir: path.join(home, 'logs'),
    configFile: path.join(home, 'config.json'),
  };
}

/**
 * The directory of the blob store (videos, thumbnails): `VIDEMBED_STORAGE_URL` (`file:///dir`, a
 * directory every node mounts), else `blobs/` under VIDEMBED_HOME. Other schemes are refused with
 * what is supported: an S3-compatible store would plug in behind the same interface (src/store/blobs.ts).
 */
export function storageRoot(p: Paths, env: NodeJS.ProcessEnv = process.env): string {
  const url = storageUrl(env);
  if (url === undefined) return p.blobsDir;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new BadRequestError(`VIDEMBED_STORAGE_URL is not a URL: ${url} (expected file:///a/shared/directory)`);
  }
  if (u.protocol !== 'file:') throw new BadRequestError(`VIDEMBED_STORAGE_URL: ${u.protocol.replace(/:$/, '')} storage is not supported; use file:///a/directory that every node mounts`);
  if (u.host !== '' && u.host !== 'localhost') throw new BadRequestError(`VIDEMBED_STORAGE_URL: file URLs name no host (file:///dir), got ${url}`);
  return path.resolve(decodeURIComponent(u.pathname));
}

export function ensureDirs(p: Paths): void {
  for (const dir of [p.home, p.blobsDir, p.logsDir]) mkdirSync(dir, { recursive: true });
}

export function readUserConfig(p: Paths): UserConfig {
  if (!existsSync(p.configFile)) return {};
  try {
    return JSON.parse(readFileSync(p.configFile, 'utf8')) as UserConfig;
  } catch {
    return {};
  }
}

export function writeUserConfig(p: Paths, patch: Partial<UserConfig>): UserConfig {
  const next = { ...readUserConfig(p), ...patch };
  for (const k of Object.keys(next) as (keyof UserConfig)[]) if (next[k] === undefined) delete next[k];
  mkdirSync(p.home, { recursive: true });
  const tmp = `${p.configFile}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(next, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, p.configFile);
  return next;
}

/**
 * Worker threads of the server's query text encoder (`serve --encoder-threads`, else
 * VIDEMBED_ENCODER_THREADS, else one per core). 0 encodes on the event loop, as the one-shot CLI
 * does. A value that is not an integer in 0–64 is an error naming where it came from.
 */
export function encoderThreads(flag?: number, env: NodeJS.ProcessEnv = process.env): number {
  const setting = encoderThreadsSetting(env);
  const [raw, where] = flag !== undefined ? [flag, '--encoder-threads'] : setting ? [Number(setting), 'VIDEMBED_ENCODER_THREADS'] : [undefined, ''];
  if (raw === undefined) return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  if (!Number.isInteger(raw) || raw < 0 || raw > 64) throw new BadRequestError(`${where} must be an integer from 0 to 64 (0: encode on the event loop)`);
  return raw;
}

import { encoderThreadsSetting, searchConcurrencySetting, searchThreadsSetting, homeDir, keyframeReuse, pixelThread, s3Settings, storageUrl, warmIdleMs as envWarmIdleMs } from './env.js';
import { existsSync, mkdirSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BadRequestError } from './api/errors.js';
import { LIMITS } from './api/defaults.js';
import { LocalBlobStore, type BlobStore } from './store/blobs.js';
import { MIN_PART_SIZE, S3BlobStore, type S3BlobStoreOptions } from './store/s3-blobs.js';

/** Defaults a user can rely on; each is documented in docs/engine.md. */
export const DEFAULTS = {
  // The API's request defaults are stated once, in src/api/defaults.ts.
  segmentSeconds: LIMITS.segmentSeconds.default,
  fps: LIMITS.fps.default,
  topK: LIMITS.topK.default,
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
  /**
   * Webhook deliveries (issue 34, docs/webhooks.md): each attempt's time budget; the lease it runs
   * under (longer than the budget, so one attempt is in flight per delivery); deliveries in flight
   * per worker; how often an idle worker looks for due ones; the first retry's wait (doubling, at
   * most `maxRetryMs`) and how long a delivery is retried before it is given up.
   */
  webhooks: {
    timeoutMs: 10_000,
    leaseMs: 30_000,
    concurrency: 8,
    pollMs: 200,
    firstRetryMs: 5_000,
    maxRetryMs: 2 * 3600_000,
    retryForMs: 24 * 3600_000,
  },
} as const;

/** How long a warm process outlives its last CLI search (VIDEMBED_WARM_IDLE_MS; 0: no warm CLI). */
export function warmIdleMs(env: NodeJS.ProcessEnv = process.env): number {
  return envWarmIdleMs(DEFAULTS.warmIdleMs, env);
}

/**
 * Ingest decodes and runs the pixel taggers in a worker thread while the event loop runs the models
 * (src/pipeline/pixel-thread.ts). VIDEMBED_PIXEL_THREAD=0 keeps them on the event loop (tests,
 * debugging, profiling one thread); the results are the same either way.
 */
export { pixelThread };

/**
 * Ingest reuses the per-keyframe models' facts on a keyframe nearly identical to the last analysed
 * one (src/pipeline/keyframe-reuse.ts). VIDEMBED_KEYFRAME_REUSE=0 analyses every keyframe.
 */
export { keyframeReuse };

export interface UserConfig {
  /** The default collection's id on the face it was chosen on (the local library, or a server). */
  default_collection?: string;
  /** Its name: what a remote CLI sends (names resolve on the server; a local id never leaves this machine). */
  default_collection_name?: string;
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
 * The directory of a file blob store: `VIDEMBED_STORAGE_URL` (`file:///dir`, a directory every node
 * mounts), else `blobs/` under VIDEMBED_HOME. Other schemes have no directory and are refused here;
 * `openBlobStore` is what opens any store (s3:// too).
 */
export function storageRoot(p: Paths, env: NodeJS.ProcessEnv = process.env): string {
  const url = storageUrl(env);
  if (url === undefined) return p.blobsDir;
  const u = parseStorageUrl(url);
  if (u.protocol !== 'file:') throw new BadRequestError(`VIDEMBED_STORAGE_URL: ${u.protocol.replace(/:$/, '')} storage is not supported; use file:///a/directory that every node mounts`);
  return fileRoot(u, url);
}

function parseStorageUrl(url: string): URL {
  try {
    return new URL(url);
  } catch {
    throw new BadRequestError(`VIDEMBED_STORAGE_URL is not a URL: ${url} (expected file:///a/shared/directory or s3://bucket/prefix)`);
  }
}

function fileRoot(u: URL, url: string): string {
  if (u.host !== '' && u.host !== 'localhost') throw new BadRequestError(`VIDEMBED_STORAGE_URL: file URLs name no host (file:///dir), got ${url}`);
  return path.resolve(decodeURIComponent(u.pathname));
}

/**
 * The S3 store that `VIDEMBED_STORAGE_URL=s3://bucket/optional/prefix` names, with the endpoint,
 * region and credentials of the VIDEMBED_S3_* and AWS_* variables (src/env.ts `s3Settings`).
 * Every mistake is one line naming the variable; none repeats a credential.
 */
export function s3StoreOptions(url: string, env: NodeJS.ProcessEnv = process.env): S3BlobStoreOptions {
  const u = parseStorageUrl(url);
  if (u.protocol !== 's3:') throw new BadRequestError(`VIDEMBED_STORAGE_URL: expected s3://bucket/prefix, got ${url}`);
  const bucket = u.hostname;
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw new BadRequestError(`VIDEMBED_STORAGE_URL: bad S3 bucket name "${bucket}" (3–63 characters: a–z, 0–9, dots and hyphens)`);
  if (u.port || u.username || u.password || u.search || u.hash) throw new BadRequestError(`VIDEMBED_STORAGE_URL: s3://bucket/prefix takes no port, user, query or fragment; the server is VIDEMBED_S3_ENDPOINT`);
  // The URL parser resolves `a/../b` to `b`: the prefix is read from the text as given.
  const prefix = decodeURIComponent(url.slice(`s3://${u.host}`.length).replace(/[?#].*$/, '')).replace(/^\/+|\/+$/g, '');
  if (prefix !== '' && (!/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_.-]+)*$/.test(prefix) || /(^|\/)\.\.?(\/|$)/.test(prefix))) throw new BadRequestError(`VIDEMBED_STORAGE_URL: bad prefix "${prefix}" (letters, digits, _ - . in /-separated parts)`);
  const s = s3Settings(env);
  if (!s.accessKeyId || !s.secretAccessKey) throw new BadRequestError('VIDEMBED_STORAGE_URL is an s3:// URL: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
  let endpoint = s.endpoint ?? `https://s3.${s.region}.amazonaws.com`;
  try {
    const e = new URL(endpoint);
    if (e.protocol !== 'http:' && e.protocol !== 'https:') throw new Error();
    if (e.username || e.password || e.search || e.hash) throw new BadRequestError('VIDEMBED_S3_ENDPOINT takes no user, query or fragment (credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)');
    endpoint = e.href;
  } catch (e) {
    if (e instanceof BadRequestError) throw e;
    throw new BadRequestError(`VIDEMBED_S3_ENDPOINT must be an http:// or https:// URL, got ${endpoint}`);
  }
  let partSize: number | undefined;
  if (s.partMiB !== undefined) {
    const mib = Number(s.partMiB);
    if (!Number.isInteger(mib) || mib * 1024 ** 2 < MIN_PART_SIZE || mib > 5120) throw new BadRequestError('VIDEMBED_S3_PART_MB must be an integer from 8 to 5120 (MiB per part of a multipart upload)');
    partSize = mib * 1024 ** 2;
  }
  return {
    endpoint,
    bucket,
    prefix,
    region: s.region,
    credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey, sessionToken: s.sessionToken },
    pathStyle: s.pathStyle ?? s.endpoint !== undefined,
    partSize,
  };
}

/**
 * The library's blob store: VIDEMBED_STORAGE_URL `file:///dir` (or unset: `blobs/` under
 * VIDEMBED_HOME) is a LocalBlobStore, `s3://bucket/prefix` an S3BlobStore; other schemes are
 * refused with what is supported.
 */
export function openBlobStore(p: Paths, env: NodeJS.ProcessEnv = process.env): BlobStore {
  const url = storageUrl(env);
  if (url === undefined) return new LocalBlobStore(p.blobsDir);
  const u = parseStorageUrl(url);
  if (u.protocol === 'file:') return new LocalBlobStore(fileRoot(u, url));
  if (u.protocol === 's3:') return new S3BlobStore(s3StoreOptions(url, env));
  throw new BadRequestError(`VIDEMBED_STORAGE_URL: ${u.protocol.replace(/:$/, '')} storage is not supported; use file:///a/directory that every node mounts or s3://bucket/prefix`);
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
 * Threads of the server that run searches (`serve --search-threads`, else VIDEMBED_SEARCH_THREADS,
 * else one per core). 0 searches on the event loop. Each thread holds its own in-memory index of
 * the collections it searches (SQLite, or PostgreSQL without pgvector): that memory once per thread
 * (docs/engine.md). A value that is not an integer in 0–64 is an error naming where it came from.
 */
export function searchThreads(flag?: number, env: NodeJS.ProcessEnv = process.env): number {
  return threadCount(flag, '--search-threads', searchThreadsSetting(env), 'VIDEMBED_SEARCH_THREADS', 'search on the event loop');
}

/**
 * Searches the server runs at once on its event loop (`serve --search-concurrency`, else
 * VIDEMBED_SEARCH_CONCURRENCY, else one more than the cores); the rest wait, oldest first
 * (src/runtime/search-gate.ts). On a pgvector library every search is statements in the
 * database: one per core there, and one more being read and answered here (docs/scale.md
 * "Connections"). 0: no limit.
 */
export function searchConcurrency(flag?: number, env: NodeJS.ProcessEnv = process.env): number {
  return threadCount(flag, '--search-concurrency', searchConcurrencySetting(env), 'VIDEMBED_SEARCH_CONCURRENCY', 'no limit', cores() + 1);
}

const cores = () => (typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length);

/** A count of a server's threads: the flag, else the variable, else `fallback` (one per core); an integer in 0–64 or an error naming where it came from. */
function threadCount(flag: number | undefined, flagName: string, setting: string | undefined, envName: string, zero: string, fallback = cores()): number {
  const [raw, where] = flag !== undefined ? [flag, flagName] : setting ? [Number(setting), envName] : [undefined, ''];
  if (raw === undefined) return fallback;
  if (!Number.isInteger(raw) || raw < 0 || raw > 64) throw new BadRequestError(`${where} must be an integer from 0 to 64 (0: ${zero})`);
  return raw;
}

/**
 * Worker threads of the server's query text encoder (`serve --encoder-threads`, else
 * VIDEMBED_ENCODER_THREADS, else one per core). 0 encodes on the event loop, as the one-shot CLI
 * does. A value that is not an integer in 0–64 is an error naming where it came from.
 */
export function encoderThreads(flag?: number, env: NodeJS.ProcessEnv = process.env): number {
  return threadCount(flag, '--encoder-threads', encoderThreadsSetting(env), 'VIDEMBED_ENCODER_THREADS', 'encode on the event loop');
}

/**
 * Every environment variable vidembed reads, read and validated here and nowhere else (tests pass
 * their own `env`). Each reader says what the variable does; docs/engine.md lists them all.
 * Lower layers (media, models, analysis) import from here, so nothing depends on the engine to
 * read its settings.
 */
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

type Env = NodeJS.ProcessEnv;

const set = (v: string | undefined): v is string => v !== undefined && v !== '';

/** A non-negative number of milliseconds, else `fallback`. */
function ms(v: string | undefined, fallback: number): number {
  const n = Number(v);
  return set(v) && Number.isFinite(n) && n >= 0 ? n : fallback;
}

// ---- where things are -------------------------------------------------------------------------

/**
 * VIDEMBED_HOME: the library (database, blobs, logs, config). Without it: `~/.vidembed` when that
 * exists (every library made before issue 33 keeps working), else on Linux the XDG data directory
 * (`$XDG_DATA_HOME/vidembed`, default `~/.local/share/vidembed`), elsewhere `~/.vidembed`.
 */
export function homeDir(env: Env = process.env, platform: NodeJS.Platform = process.platform, exists: (p: string) => boolean = existsSync): string {
  if (set(env.VIDEMBED_HOME)) return path.resolve(env.VIDEMBED_HOME);
  const user = userHome(env);
  const legacy = path.join(user, '.vidembed');
  if (platform !== 'linux' || exists(legacy)) return legacy;
  return path.join(xdgDir(env.XDG_DATA_HOME) ?? path.join(user, '.local', 'share'), 'vidembed');
}

/** The user's home directory: $HOME when set (as os.homedir() reads it), else the account's. */
function userHome(env: Env): string {
  return set(env.HOME) && path.isAbsolute(env.HOME) ? env.HOME : os.homedir();
}

/** An XDG base directory variable, when it is set to an absolute path (the spec ignores others). */
function xdgDir(v: string | undefined): string | undefined {
  return set(v) && path.isAbsolute(v) ? v : undefined;
}

/** VIDEMBED_STORAGE_URL: where the blob store is (`file:///dir`); parsed in src/config.ts `storageRoot`. */
export function storageUrl(env: Env = process.env): string | undefined {
  return set(env.VIDEMBED_STORAGE_URL) ? env.VIDEMBED_STORAGE_URL : undefined;
}

/**
 * VIDEMBED_DATABASE_URL: `postgres://…` puts the catalog, the job queue and the indexes in
 * PostgreSQL (many workers and servers on one library); unset, the library is SQLite under
 * VIDEMBED_HOME.
 */
export function databaseUrl(env: Env = process.env): string | undefined {
  return set(env.VIDEMBED_DATABASE_URL) ? env.VIDEMBED_DATABASE_URL : undefined;
}

/**
 * `--database-url`: the same as VIDEMBED_DATABASE_URL for this process and every process it
 * starts (the background worker must open the same library).
 */
export function useDatabaseUrl(url: string, env: Env = process.env): void {
  env.VIDEMBED_DATABASE_URL = url;
}

/** VIDEMBED_MODELS_DIR: installed models; default `$XDG_CACHE_HOME/vidembed/models` (`~/.cache/vidembed/models`). */
export function modelsDir(env: Env = process.env): string {
  if (set(env.VIDEMBED_MODELS_DIR)) return path.resolve(env.VIDEMBED_MODELS_DIR);
  return path.join(xdgDir(env.XDG_CACHE_HOME) ?? path.join(userHome(env), '.cache'), 'vidembed', 'models');
}

/** VIDEMBED_MANIFESTS_DIR: a directory of the user's own model manifests. */
export function manifestsDir(env: Env = process.env): string | undefined {
  return set(env.VIDEMBED_MANIFESTS_DIR) ? env.VIDEMBED_MANIFESTS_DIR : undefined;
}

/** VIDEMBED_MODELS_MIRROR: a base URL that `models pull` downloads from instead of the sources. */
export function modelsMirror(env: Env = process.env): string | undefined {
  return set(env.VIDEMBED_MODELS_MIRROR) ? env.VIDEMBED_MODELS_MIRROR : undefined;
}

/** VIDEMBED_FFMPEG: an ffmpeg binary to use instead of @ffmpeg-installer's. */
export function ffmpegOverride(env: Env = process.env): string | undefined {
  return set(env.VIDEMBED_FFMPEG) ? env.VIDEMBED_FFMPEG : undefined;
}

// ---- speech -----------------------------------------------------------------------------------

/** VIDEMBED_POCKETSPHINX: the `pocketsphinx_continuous` program (default: found on PATH). */
export function pocketsphinxOverride(env: Env = process.env): string | undefined {
  return set(env.VIDEMBED_POCKETSPHINX) ? env.VIDEMBED_POCKETSPHINX : undefined;
}

/** VIDEMBED_WHISPER_BINDING: whisper.node's native `index.node` for this platform (default: @fugood/node-whisper-<platform>-<arch>). */
export function whisperBindingOverride(env: Env = process.env): string | undefined {
  return set(env.VIDEMBED_WHISPER_BINDING) ? env.VIDEMBED_WHISPER_BINDING : undefined;
}

/** VIDEMBED_WHISPER_THREADS: threads whisper transcribes with (default 2). */
export function whisperThreads(env: Env = process.env): number {
  const n = Number(env.VIDEMBED_WHISPER_THREADS);
  return set(env.VIDEMBED_WHISPER_THREADS) && Number.isInteger(n) && n > 0 ? n : 2;
}

/** VIDEMBED_CMUDICT: a CMU pronouncing dictionary (default: the one pocketsphinx-en-us installs). */
export function cmudictPath(env: Env = process.env): string | undefined {
  return set(env.VIDEMBED_CMUDICT) ? env.VIDEMBED_CMUDICT : undefined;
}

/** VIDEMBED_SPEECH: `0` turns speech recognition off for every collection (default on where an engine is installed). */
export function speechEnabled(env: Env = process.env): boolean {
  return env.VIDEMBED_SPEECH !== '0';
}

/** VIDEMBED_SPEECH_TIMEOUT_S: a recognizer that reports nothing for this long is stopped (default 120). */
export function speechStallMs(env: Env = process.env): number {
  return ms(set(env.VIDEMBED_SPEECH_TIMEOUT_S) ? String(Number(env.VIDEMBED_SPEECH_TIMEOUT_S) * 1000) : undefined, 120_000);
}

/**
 * VIDEMBED_SPEECH_PARTS: how many recognizers may hear one long soundtrack at once, in pieces
 * (src/speech/parts.ts; default: the cores; 1: one recognizer for the whole soundtrack).
 */
export function speechParts(env: Env = process.env): number {
  const n = count(env.VIDEMBED_SPEECH_PARTS, 0);
  if (n > 0) return n;
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
}

/**
 * VIDEMBED_SPEECH_MIN_PIECE_S: the shortest piece a soundtrack is heard in (default 20 s,
 * src/speech/parts.ts); the speech eval sets it low to cut every recording (docs/speech.md).
 */
export function speechMinPieceS(env: Env = process.env): number | undefined {
  const n = Number(env.VIDEMBED_SPEECH_MIN_PIECE_S);
  return set(env.VIDEMBED_SPEECH_MIN_PIECE_S) && n > 0 ? n : undefined;
}

// ---- how ingest runs --------------------------------------------------------------------------

/** VIDEMBED_FFMPEG_THREADS: ffmpeg's decoding threads per video (default 1; 0 lets ffmpeg choose). */
export function ffmpegThreads(env: Env = process.env): number {
  const v = env.VIDEMBED_FFMPEG_THREADS;
  const n = Number(v);
  return set(v) && Number.isInteger(n) && n >= 0 ? n : 1;
}

/** VIDEMBED_FFMPEG_FAST=0 turns off skipping non-reference frames when sampling (on by default). */
export function ffmpegFastDecode(env: Env = process.env): boolean {
  return env.VIDEMBED_FFMPEG_FAST !== '0';
}

/** VIDEMBED_NO_PDEATHSIG=1: ffmpeg children are not tied to their parent's death (setpriv). */
export function ffmpegDiesWithParent(env: Env = process.env): boolean {
  return env.VIDEMBED_NO_PDEATHSIG !== '1';
}

/** VIDEMBED_PIXEL_THREAD=0 keeps decoding and the pixel taggers on the event loop (default: a worker thread). */
export function pixelThread(env: Env = process.env): boolean {
  return env.VIDEMBED_PIXEL_THREAD !== '0';
}

/** VIDEMBED_KEYFRAME_REUSE=0 analyses every keyframe (default: reuse a nearly identical one's facts). */
export function keyframeReuse(env: Env = process.env): boolean {
  return env.VIDEMBED_KEYFRAME_REUSE !== '0';
}

/** VIDEMBED_NO_IMAGENET=1: the ImageNet analyzer is not used even when installed. */
/**
 * VIDEMBED_KEYFRAMES=0: do not keep each segment's keyframe (losslessly, about 100–250 KB per
 * segment of 4 s at 512 px) — a keyframe analyzer that runs again later (a model pulled) then
 * decodes the video again.
 */
export function keepKeyframes(env: Env = process.env): boolean {
  return env.VIDEMBED_KEYFRAMES !== '0';
}

export function imagenetEnabled(env: Env = process.env): boolean {
  return env.VIDEMBED_NO_IMAGENET !== '1';
}

/** VIDEMBED_NO_OCR=1: on-screen text is not read. */
export function ocrEnabled(env: Env = process.env): boolean {
  return env.VIDEMBED_NO_OCR !== '1';
}

/** VIDEMBED_ONNX_THREADS: onnxruntime's intra-op threads per session (a positive integer), if set. */
export function onnxThreadsSetting(env: Env = process.env): number | undefined {
  const n = Number(env.VIDEMBED_ONNX_THREADS);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

/** VIDEMBED_NO_WASM: the CLIP resampler uses its JavaScript kernel instead of WebAssembly. */
export function wasmEnabled(env: Env = process.env): boolean {
  return !env.VIDEMBED_NO_WASM;
}

// ---- workers and processes --------------------------------------------------------------------

/** VIDEMBED_NO_AUTO_WORKER=1: `upload` never starts a background worker. */
export function autoWorker(env: Env = process.env): boolean {
  return env.VIDEMBED_NO_AUTO_WORKER !== '1';
}

/** VIDEMBED_WORKER_IDLE_MS: how long a background worker waits with nothing to do before it exits. */
export function workerIdleMs(fallback: number, env: Env = process.env): number {
  const n = Number(env.VIDEMBED_WORKER_IDLE_MS);
  return n > 0 ? n : fallback;
}

/** VIDEMBED_WARM_IDLE_MS: how long a warm process outlives its last CLI search (0: no warm CLI). */
export function warmIdleMs(fallback: number, env: Env = process.env): number {
  return ms(env.VIDEMBED_WARM_IDLE_MS, fallback);
}

/** VIDEMBED_SEARCH_CONCURRENCY, as given (validated by `searchConcurrency` in src/config.ts). */
export function searchConcurrencySetting(env: Env = process.env): string | undefined {
  return set(env.VIDEMBED_SEARCH_CONCURRENCY) ? env.VIDEMBED_SEARCH_CONCURRENCY : undefined;
}

/** VIDEMBED_SEARCH_THREADS, as given (validated by `searchThreads` in src/config.ts). */
export function searchThreadsSetting(env: Env = process.env): string | undefined {
  return set(env.VIDEMBED_SEARCH_THREADS) ? env.VIDEMBED_SEARCH_THREADS : undefined;
}

/** VIDEMBED_ENCODER_THREADS, as given (validated by `encoderThreads` in src/config.ts). */
export function encoderThreadsSetting(env: Env = process.env): string | undefined {
  return set(env.VIDEMBED_ENCODER_THREADS) ? env.VIDEMBED_ENCODER_THREADS : undefined;
}

/** VIDEMBED_PG_BIN: the directory of PostgreSQL's initdb/pg_ctl for throwaway test and bench clusters. */
export function pgBinSetting(env: Env = process.env): string | undefined {
  return set(env.VIDEMBED_PG_BIN) ? env.VIDEMBED_PG_BIN : undefined;
}

/**
 * VIDEMBED_PG_POOL: the connections a process keeps to a PostgreSQL library at most (default 8;
 * 1..100). Every server, worker and CLI process has its own pool; docs/scale.md "Connections".
 */
export function pgPoolSize(env: Env = process.env): number {
  return intIn('VIDEMBED_PG_POOL', env.VIDEMBED_PG_POOL, 1, 100, PG_POOL_DEFAULT);
}
export const PG_POOL_DEFAULT = 8;

/**
 * VIDEMBED_PG_PREPARED: each connection runs its parameterised reads as named statements, parsed
 * once and planned from the plan cache (default on; `0` turns it off, for a connection pooler that
 * cannot keep them: PgBouncer in transaction mode before 1.21 or without max_prepared_statements).
 */
export function pgPreparedStatements(env: Env = process.env): boolean {
  const v = (env.VIDEMBED_PG_PREPARED ?? '').trim().toLowerCase();
  if (v === '' || v === '1' || v === 'on') return true;
  if (v === '0' || v === 'off') return false;
  throw new Error(`VIDEMBED_PG_PREPARED must be 1 or 0 (on or off), not "${env.VIDEMBED_PG_PREPARED}"`);
}

// ---- vector search on PostgreSQL (docs/scale.md "pgvector") ------------------------------------

export type PgVectorRequest = 'auto' | 'pgvector' | 'memory';

/**
 * VIDEMBED_PG_VECTOR (or `--pg-vector`): where a PostgreSQL library's vectors are searched.
 * `auto` (default): in the database with pgvector when the server has the `vector` extension and
 * the library is new or already moved, else in each process's in-memory index; `pgvector`: in the
 * database, or refuse to start; `memory`: the in-memory index (refused on a library already moved).
 */
export function pgVectorRequest(env: Env = process.env): PgVectorRequest {
  const v = (env.VIDEMBED_PG_VECTOR ?? '').trim().toLowerCase();
  if (v === '' || v === 'auto') return 'auto';
  if (v === 'pgvector' || v === 'memory') return v;
  throw new Error(`VIDEMBED_PG_VECTOR (--pg-vector) must be auto, pgvector or memory, not "${env.VIDEMBED_PG_VECTOR}"`);
}

/** `--pg-vector`: the same as VIDEMBED_PG_VECTOR for this process and every process it starts. */
export function usePgVectorRequest(mode: string, env: Env = process.env): void {
  env.VIDEMBED_PG_VECTOR = mode;
  pgVectorRequest(env); // refuses a bad value here, with the option's name
}

/** The pgvector index and search settings, with their defaults (docs/scale.md lists them). */
export interface PgVectorSettings {
  /** HNSW `m` (links per node) for indexes built from now on (VIDEMBED_PG_HNSW_M, 24; 2..100; 16 until 2026-11-27: docs/scale.md "Recall and the graph"). */
  m: number;
  /** HNSW `ef_construction` for indexes built from now on (VIDEMBED_PG_HNSW_EF_CONSTRUCTION, 128; ≥ 2m, ≤ 1000). */
  efConstruction: number;
  /** `hnsw.ef_search` of every search (VIDEMBED_PG_HNSW_EF_SEARCH, 300 (100 until 2026-12-01: docs/scale.md "Read until the videos are held"); 1..1000). */
  efSearch: number;
  /** `hnsw.max_scan_tuples`: how far an iterative scan goes for filtered searches (VIDEMBED_PG_HNSW_MAX_SCAN_TUPLES, 40000). */
  maxScanTuples: number;
  /** What the index holds: `halfvec` (half the RAM, default) or `vector` (VIDEMBED_PG_VECTOR_INDEX; new indexes only). */
  index: 'halfvec' | 'vector';
  /** Collections with at most this many segments are searched exactly, without the index (VIDEMBED_PG_EXACT_BELOW, 10000). */
  exactBelow: number;
  /** `maintenance_work_mem` of an index build (VIDEMBED_PG_BUILD_MEMORY, '2GB': the graph should fit (~1.3 GB per million 512-d halfvec)). */
  buildMemory: string;
}

export const PG_VECTOR_DEFAULTS: PgVectorSettings = {
  m: 24,
  efConstruction: 128,
  efSearch: 300,
  maxScanTuples: 40_000,
  index: 'halfvec',
  exactBelow: 10_000,
  buildMemory: '2GB',
};

function intIn(name: string, v: string | undefined, lo: number, hi: number, fallback: number): number {
  if (!set(v)) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < lo || n > hi) throw new Error(`${name} must be an integer from ${lo} to ${hi}, not "${v}"`);
  return n;
}

export function pgVectorSettings(env: Env = process.env): PgVectorSettings {
  const d = PG_VECTOR_DEFAULTS;
  const m = intIn('VIDEMBED_PG_HNSW_M', env.VIDEMBED_PG_HNSW_M, 2, 100, d.m);
  const efConstruction = intIn('VIDEMBED_PG_HNSW_EF_CONSTRUCTION', env.VIDEMBED_PG_HNSW_EF_CONSTRUCTION, 4, 1000, d.efConstruction);
  if (efConstruction < 2 * m) throw new Error(`VIDEMBED_PG_HNSW_EF_CONSTRUCTION (${efConstruction}) must be at least twice VIDEMBED_PG_HNSW_M (${m})`);
  const index = (env.VIDEMBED_PG_VECTOR_INDEX ?? '').trim() || d.index;
  if (index !== 'halfvec' && index !== 'vector') throw new Error(`VIDEMBED_PG_VECTOR_INDEX must be halfvec or vector, not "${index}"`);
  const buildMemory = (env.VIDEMBED_PG_BUILD_MEMORY ?? '').trim() || d.buildMemory;
  if (!/^\d+\s*(kB|MB|GB)$/.test(buildMemory)) throw new Error(`VIDEMBED_PG_BUILD_MEMORY must be like 512MB or 2GB, not "${buildMemory}"`);
  return {
    m,
    efConstruction,
    efSearch: intIn('VIDEMBED_PG_HNSW_EF_SEARCH', env.VIDEMBED_PG_HNSW_EF_SEARCH, 1, 1000, d.efSearch),
    maxScanTuples: intIn('VIDEMBED_PG_HNSW_MAX_SCAN_TUPLES', env.VIDEMBED_PG_HNSW_MAX_SCAN_TUPLES, 1, 100_000_000, d.maxScanTuples),
    index,
    exactBelow: intIn('VIDEMBED_PG_EXACT_BELOW', env.VIDEMBED_PG_EXACT_BELOW, 0, 100_000_000, d.exactBelow),
    buildMemory,
  };
}

// ---- the CLI ----------------------------------------------------------------------------------

/** VIDEMBED_POLL_MS: how often `--wait` asks for a status. */
export function pollMs(fallback: number, env: Env = process.env): number {
  const n = Number(env.VIDEMBED_POLL_MS);
  return n > 0 ? n : fallback;
}

/** VIDEMBED_BASE_URL and VIDEMBED_API_KEY: drive a remote server instead of the local engine. */
export function remoteSettings(env: Env = process.env): { baseUrl?: string; apiKey?: string } {
  return { baseUrl: env.VIDEMBED_BASE_URL, apiKey: env.VIDEMBED_API_KEY };
}

/** VIDEMBED_COLLECTION: the collection commands use when none is named. */
export function defaultCollection(env: Env = process.env): string | undefined {
  return env.VIDEMBED_COLLECTION;
}

/** VIDEMBED_PLAYER: the player `open` starts (`none`: never start one). */
export function playerSetting(env: Env = process.env): string | undefined {
  return set(env.VIDEMBED_PLAYER) ? env.VIDEMBED_PLAYER : undefined;
}

/** CI: no prompts, pickers or spinners, whatever the terminal. */
export function inCi(env: Env = process.env): boolean {
  return Boolean(env.CI);
}

// ---- object storage (VIDEMBED_STORAGE_URL=s3://bucket/prefix) ---------------------------------

/**
 * The S3-compatible store's settings, as given (validated by `openBlobStore` in
 * src/config.ts): VIDEMBED_S3_ENDPOINT (`http(s)://host[:port]`; unset: AWS's regional
 * endpoint), VIDEMBED_S3_REGION (else AWS_REGION, else `us-east-1`), VIDEMBED_S3_PATH_STYLE
 * (`1`: `endpoint/bucket/key`, `0`: `bucket.endpoint/key`; default 1 with an endpoint, 0 without),
 * VIDEMBED_S3_PART_MB (multipart part size in MiB, at least 8; default 16), and the standard
 * AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN.
 */
export function s3Settings(env: Env = process.env): {
  endpoint?: string;
  region: string;
  pathStyle?: boolean;
  partMiB?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
} {
  const pathStyle = env.VIDEMBED_S3_PATH_STYLE;
  return {
    endpoint: set(env.VIDEMBED_S3_ENDPOINT) ? env.VIDEMBED_S3_ENDPOINT : undefined,
    region: set(env.VIDEMBED_S3_REGION) ? env.VIDEMBED_S3_REGION : set(env.AWS_REGION) ? env.AWS_REGION : 'us-east-1',
    pathStyle: pathStyle === '1' ? true : pathStyle === '0' ? false : undefined,
    partMiB: set(env.VIDEMBED_S3_PART_MB) ? env.VIDEMBED_S3_PART_MB : undefined,
    accessKeyId: set(env.AWS_ACCESS_KEY_ID) ? env.AWS_ACCESS_KEY_ID : undefined,
    secretAccessKey: set(env.AWS_SECRET_ACCESS_KEY) ? env.AWS_SECRET_ACCESS_KEY : undefined,
    sessionToken: set(env.AWS_SESSION_TOKEN) ? env.AWS_SESSION_TOKEN : undefined,
  };
}

// ---- limits (docs/limits.md) ------------------------------------------------------------------

/** A non-negative integer, else `fallback` (0 is a value: "no limit" where a limit says so). */
function count(v: string | undefined, fallback: number): number {
  const n = Number(v);
  return set(v) && Number.isInteger(n) && n >= 0 ? n : fallback;
}

/**
 * What a key may do when it carries no limit of its own (`keys create --max-jobs …` overrides
 * each; 0: no limit): VIDEMBED_KEY_MAX_JOBS, jobs its owner may have queued or running (default
 * 100); VIDEMBED_KEY_MAX_VIDEO_S, the longest video it may upload in seconds (default 14400, 4 h);
 * VIDEMBED_KEY_MAX_UPLOAD_MB, its largest upload in MiB (default 0: the server's upload limit).
 */
export function keyLimitDefaults(env: Env = process.env): { maxJobs: number; maxVideoSeconds: number; maxUploadBytes: number } {
  return {
    maxJobs: count(env.VIDEMBED_KEY_MAX_JOBS, 100),
    maxVideoSeconds: count(env.VIDEMBED_KEY_MAX_VIDEO_S, 14_400),
    maxUploadBytes: count(env.VIDEMBED_KEY_MAX_UPLOAD_MB, 0) * 1024 * 1024,
  };
}

/**
 * VIDEMBED_FAIR_LANE_S: a worker whose job has run this long takes, beside it, one job of an owner
 * that has nothing running (so one owner's hours of video never hold up another's clip); default
 * 10, 0: one job at a time.
 */
export function fairLaneMs(env: Env = process.env): number {
  return count(env.VIDEMBED_FAIR_LANE_S, 10) * 1000;
}

/**
 * VIDEMBED_SIDE_LANE_WAIT_S: the longest a side lane's job (a video's speech) waits for the
 * worker's main lane (pictures, plans, tasks) to drain before it runs beside it anyway, counted from
 * its enqueue — the bound that keeps a long queue of picture work from starving speech; default 600;
 * 0: speech runs beside the pictures (niced) as soon as it is queued.
 */
export function sideLaneWaitMs(env: Env = process.env): number {
  return count(env.VIDEMBED_SIDE_LANE_WAIT_S, 600) * 1000;
}

/**
 * Caps on the server's synchronous work (429 when a key is over its share, 503 when the server is
 * full, both with Retry-After): VIDEMBED_SYNC_MAX, synchronous video encodes and tags at once
 * (default 2); VIDEMBED_SYNC_MAX_PER_KEY (default 1); VIDEMBED_LARGE_BODY_MAX, request bodies over
 * VIDEMBED_LARGE_BODY_MB MiB (default 8) being received or handled at once (default 2);
 * VIDEMBED_LARGE_BODY_MAX_PER_KEY (default 1).
 */
export function syncLimits(env: Env = process.env): { sync: number; syncPerKey: number; largeBodies: number; largeBodiesPerKey: number; largeBodyBytes: number } {
  const positive = (v: string | undefined, fallback: number) => Math.max(1, count(v, fallback));
  return {
    sync: positive(env.VIDEMBED_SYNC_MAX, 2),
    syncPerKey: positive(env.VIDEMBED_SYNC_MAX_PER_KEY, 1),
    largeBodies: positive(env.VIDEMBED_LARGE_BODY_MAX, 2),
    largeBodiesPerKey: positive(env.VIDEMBED_LARGE_BODY_MAX_PER_KEY, 1),
    largeBodyBytes: count(env.VIDEMBED_LARGE_BODY_MB, 8) * 1024 * 1024,
  };
}

// ---- storage that can be reclaimed (docs/operations.md) ---------------------------------------

/** Settled async tasks (with their payloads) are kept this long by default: 7 days. */
export const DEFAULT_RETENTION_MS = 7 * 24 * 3600 * 1000;

/**
 * VIDEMBED_RETENTION_DAYS: how long a settled async task (its result and payload) is kept before
 * workers delete it (a positive number, fractions allowed; default 7).
 */
export function retentionMs(env: Env = process.env): number {
  const days = Number(env.VIDEMBED_RETENTION_DAYS);
  return set(env.VIDEMBED_RETENTION_DAYS) && Number.isFinite(days) && days > 0 ? days * 24 * 3600 * 1000 : DEFAULT_RETENTION_MS;
}

/** VIDEMBED_STORAGE_QUOTA_MB: bytes (in MiB) each owner may store (videos, tensor uploads, task payloads); unset: no limit. */
export function storageQuotaBytes(env: Env = process.env): number | undefined {
  const mib = Number(env.VIDEMBED_STORAGE_QUOTA_MB);
  return set(env.VIDEMBED_STORAGE_QUOTA_MB) && Number.isFinite(mib) && mib >= 0 ? Math.floor(mib * 1024 ** 2) : undefined;
}

// ---- webhooks (issue 34) -------------------------------------------------------------------------

/**
 * VIDEMBED_WEBHOOK_RETRY_MS: how long a failed webhook delivery waits before its first retry
 * (default 5000); each later wait doubles, up to 2 hours, and a delivery is retried for 24 hours
 * (docs/webhooks.md). Tests and the benchmark shorten it.
 */
export function webhookFirstRetryMs(fallback: number, env: Env = process.env): number {
  const n = Number(env.VIDEMBED_WEBHOOK_RETRY_MS);
  return set(env.VIDEMBED_WEBHOOK_RETRY_MS) && Number.isFinite(n) && n > 0 ? n : fallback;
}

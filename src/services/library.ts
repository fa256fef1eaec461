/**
 * The library every service works on: its ports (catalog, job queue, blob store, analyzers,
 * embedders, the query text encoder) behind their interfaces, and the lookups every service shares
 * (a collection or video as a principal may see it, an embedder by id, a video's file on this
 * machine). Built from given ports (tests inject an in-memory catalog) or opened from a home
 * (src/services/open.ts). It knows no backend by class.
 */
import { createReadStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { ConflictError, MediaError, NotFoundError, ValidationError, errorMessage } from '../api/errors.js';
import { canSee, type Principal } from '../api/principal.js';
import { capabilityContext, frameAnalyzers, LANE_NAMES, type CapabilityContext, type CapabilityRegistry } from '../capabilities/index.js';
import type { Analyzer } from '../analysis/types.js';
import type { Embedder } from '../embedders/types.js';
import type { MediaPort } from '../media/port.js';
import type { QueryTextEncoder } from '../embedders/text-encoder.js';
import type { SpeechAnalyzer } from '../speech/analyzer.js';
import type { SpeechSetting } from '../speech/engines.js';
import { speechLanguageOf, speechSettingOf } from '../speech/store.js';
import { VIDEO_ARTIFACTS } from './artifacts.js';
import { BlobNotFoundError, type BlobStore } from '../store/blobs.js';
import type { Catalog } from '../store/catalog/types.js';
import type { CollectionRow } from '../store/collections.js';
import type { VideoRow } from '../store/videos.js';
import type { Paths } from '../config.js';
import type { FetchPolicy, Resolver } from '../net/fetch-video.js';
import { redactError } from '../api/redact.js';
import { retentionMs, storageQuotaBytes, webhookFirstRetryMs } from '../env.js';
import { DEFAULTS } from '../config.js';
import { FootageUnavailableError, openFootage, type OpenedFootage, type VideoFile } from './footage-files.js';

/** How webhooks are delivered (issue 34; defaults: DEFAULTS.webhooks in src/config.ts). */
export interface WebhookSettings {
  /**
   * Webhooks created through this library may point at private, loopback or link-local addresses:
   * the operator's grant (`serve --allow-private-webhooks`, `webhooks add --allow-private`), kept
   * with each endpoint it was given to.
   */
  allowPrivate: boolean;
  timeoutMs: number;
  leaseMs: number;
  concurrency: number;
  pollMs: number;
  firstRetryMs: number;
  maxRetryMs: number;
  retryForMs: number;
  /** How receivers' host names are resolved (tests); default the system resolver. */
  resolve?: Resolver;
}

/** What a library is made of. Every field is an interface; `open.ts` fills them from a home. */
export interface LibraryPorts {
  paths: Paths;
  /** Collections, videos, segments, tasks, keys, and the durable job queue (`catalog.queue`). */
  catalog: Catalog;
  blobs: BlobStore;
  /** Where a blob is on this machine's disk, when the blob store keeps files here (a directory store). */
  blobPath?: (key: string) => string;
  embedderFor: (id: string) => Embedder;
  /** Every model id `embedderFor` knows, when that is a fixed list (the registry's); the server's schemas name them. */
  modelIds?: () => string[];
  /**
   * Every analysis the engine runs, declared (src/capabilities): frame and track analyzers and what
   * derives from them. Checked when the library is built: a registry that does not add up fails then.
   */
  capabilities: CapabilityRegistry;
  /** The video files' media: probe, frames, soundtrack, thumbnails, playback copies (src/media/port.ts; ffmpeg). */
  media: MediaPort;
  /** Whether a model's files are on this machine (src/models/manifest.ts); absent: every model `embedderFor` knows is. */
  modelInstalled?: (id: string) => boolean;
  /** The speech analyzer for a collection's setting and language (BCP 47; default `en`): one-off analyses listen with `auto`. */
  speechFor: (setting: SpeechSetting, language?: string) => SpeechAnalyzer;
  /** Encodes query text (search, encodeText); closed with the library. */
  textEncoder: QueryTextEncoder;
  fetchPolicy: FetchPolicy;
  maxUploadBytes: number;
  maxTensorBytes: number;
  /** Called after work is queued so that something runs it (the CLI starts a background worker). */
  onWorkQueued: () => void | Promise<void>;
  /** How long a settled async task is kept (TasksService.expire); default VIDEMBED_RETENTION_DAYS. */
  retentionMs?: number;
  /** Bytes each owner may store (src/services/quota.ts); default VIDEMBED_STORAGE_QUOTA_MB, else no limit. */
  storageQuotaBytes?: number;
  /** Refuses a file that is not a video (text, a still image, audio only), naming it `name` (MediaError). */
  checkVideo: (file: string, name: string) => Promise<void>;
  /** Webhook delivery settings; default DEFAULTS.webhooks (the first retry: VIDEMBED_WEBHOOK_RETRY_MS), no private targets. */
  webhooks?: Partial<WebhookSettings>;
  /**
   * A server's library roots (`serve --library DIR`): footage in place is read only from inside
   * them. Empty: a file in place is read only where it was indexed (src/services/footage-files.ts).
   */
  libraryRoots?: string[];
}

export type { VideoFile };

export class Library implements LibraryPorts {
  readonly paths: Paths;
  readonly catalog: Catalog;
  readonly blobs: BlobStore;
  readonly blobPath?: (key: string) => string;
  readonly embedderFor: (id: string) => Embedder;
  readonly modelIds?: () => string[];
  readonly capabilities: CapabilityRegistry;
  readonly media: MediaPort;
  readonly modelInstalled?: (id: string) => boolean;
  readonly speechFor: (setting: SpeechSetting, language?: string) => SpeechAnalyzer;
  readonly textEncoder: QueryTextEncoder;
  readonly fetchPolicy: FetchPolicy;
  readonly maxUploadBytes: number;
  readonly maxTensorBytes: number;
  readonly onWorkQueued: () => void | Promise<void>;
  readonly retentionMs: number;
  readonly storageQuotaBytes?: number;
  readonly checkVideo: (file: string, name: string) => Promise<void>;
  readonly webhooks: WebhookSettings;
  readonly libraryRoots: string[];

  constructor(ports: LibraryPorts) {
    this.paths = ports.paths;
    this.catalog = ports.catalog;
    this.blobs = ports.blobs;
    this.blobPath = ports.blobPath;
    this.embedderFor = ports.embedderFor;
    this.modelIds = ports.modelIds;
    this.capabilities = ports.capabilities;
    this.media = ports.media;
    this.modelInstalled = ports.modelInstalled;
    this.speechFor = ports.speechFor;
    this.textEncoder = ports.textEncoder;
    this.fetchPolicy = ports.fetchPolicy;
    this.maxUploadBytes = ports.maxUploadBytes;
    this.maxTensorBytes = ports.maxTensorBytes;
    this.onWorkQueued = ports.onWorkQueued;
    this.retentionMs = ports.retentionMs ?? retentionMs();
    this.storageQuotaBytes = 'storageQuotaBytes' in ports ? ports.storageQuotaBytes : storageQuotaBytes();
    this.checkVideo = ports.checkVideo;
    this.webhooks = { ...DEFAULTS.webhooks, firstRetryMs: webhookFirstRetryMs(DEFAULTS.webhooks.firstRetryMs), allowPrivate: false, ...ports.webhooks };
    this.libraryRoots = ports.libraryRoots ?? [];
    // Fails now, naming it, when an input names no capability, a lane runs nobody's jobs or capabilities depend on each other in a cycle.
    const ids = this.modelIds?.() ?? [];
    const contexts = ids.length ? ids.map((id) => capabilityContext(this.embedderFor(id))) : [capabilityContext({ id: 'any', consumes: [] })];
    this.capabilities.validate(LANE_NAMES, contexts);
  }

  /** The frame analyzers a collection with `embedder` runs, loaded (queries by example analyse a picture with them). */
  async analyzersFor(embedder: Embedder): Promise<Analyzer[]> {
    const ctx = capabilityContext(embedder);
    return (await frameAnalyzers(this.capabilities, await this.capabilities.plan(ctx), ctx)).analyzers;
  }

  /** What a collection's capabilities depend on: its embedder, its speech setting and language. */
  capabilityContext(c: Pick<CollectionRow, 'model' | 'recipe_json'>): CapabilityContext {
    return capabilityContext(this.embedder(c.model), { setting: speechSettingOf(c.recipe_json), language: speechLanguageOf(c.recipe_json) });
  }

  /**
   * An embedder by id, installed on this machine: an unknown id, or a model whose files are not
   * here, is the caller's error (422 at `loc` naming it), never a failure of the work later.
   */
  embedder(id: string, loc: (string | number)[] = ['model']): Embedder {
    let embedder: Embedder;
    try {
      embedder = this.embedderFor(id);
    } catch (err) {
      throw new ValidationError([{ loc, msg: errorMessage(err), type: 'value_error.model' }]);
    }
    if (this.modelInstalled && !this.modelInstalled(embedder.id)) {
      throw new ValidationError([{ loc, msg: `model ${embedder.id} is not installed: run \`vidembed models pull ${embedder.id}\``, type: 'value_error.model.not_installed' }]);
    }
    return embedder;
  }

  /** A collection by id or name, if `p` may see it; names are looked up in its own library first. */
  async collection(p: Principal, idOrName: string): Promise<CollectionRow> {
    const byId = await this.catalog.collections.byId(idOrName);
    if (byId && canSee(p, byId.owner)) return byId;
    const own = await this.catalog.collections.byName(idOrName, p.owner);
    if (own.length) return own[0];
    if (p.admin) {
      const any = await this.catalog.collections.byName(idOrName, null);
      if (any.length === 1) return any[0];
      if (any.length > 1) {
        throw new ConflictError(`${any.length} owners have a collection named "${idOrName}": name it by id (${any.map((c) => c.id).join(', ')})`);
      }
    }
    throw new NotFoundError(`collection not found: ${idOrName}`);
  }

  /** A video, if `p` may see its collection. */
  async video(p: Principal, videoId: string): Promise<VideoRow> {
    const v = await this.catalog.videos.byId(videoId);
    const c = v && (await this.catalog.collections.byId(v.collection_id));
    if (!v || !c || !canSee(p, c.owner)) throw new NotFoundError(`video not found: ${videoId}`);
    return v;
  }

  /**
   * Opens a video's file in place and checks it is the file that was indexed (issue 30: never a
   * link swapped in, never outside the library roots or inside the library's own data; with
   * `content`, the same fingerprint). Throws FootageUnavailableError with the reason.
   */
  openFootage(v: VideoRow, opts: { content: boolean }): Promise<OpenedFootage> {
    return openFootage({
      path: v.path,
      size: v.size_bytes,
      fingerprint: v.fingerprint,
      roots: this.libraryRoots.length ? this.libraryRoots : undefined,
      forbidden: [this.paths.home],
      content: opts.content,
    });
  }

  /** Where a video's file is on this machine, as recorded (nothing is opened or checked): a blob's path, or the user's file in place. */
  pathOf(v: VideoRow): string | undefined {
    return v.blob_key ? this.blobPath?.(v.blob_key) : v.path;
  }

  /** Why a video's file in place cannot be read now, or undefined when it can (no content check: for lists). */
  async footageProblem(v: VideoRow): Promise<string | undefined> {
    if (v.fingerprint === null) return undefined;
    try {
      await (await this.openFootage(v, { content: false })).close();
      return undefined;
    } catch (err) {
      if (err instanceof FootageUnavailableError) return err.reason;
      throw err;
    }
  }

  /**
   * A video's original file (the server streams it with Range support): its blob, or — in place —
   * the user's file, opened and checked first; the bytes sent are those of the opened file.
   */
  async videoFile(v: VideoRow): Promise<VideoFile> {
    const { blob_key: key } = v;
    const base = { filename: v.filename, size: v.size_bytes };
    if (key) return { ...base, path: this.blobPath?.(key), open: (range) => this.blobs.stream(key, range) };
    if (v.fingerprint === null) return { ...base, path: v.path, open: (range) => createReadStream(v.path, range) };
    const opened = await this.openFootage(v, { content: true });
    return { filename: v.filename, size: opened.size, open: (range) => opened.stream(range), release: () => opened.close() };
  }

  /**
   * The video as a file on this machine, for ffmpeg: its blob (in the directory every node mounts,
   * or downloaded from an object store until `release`), the user's file in place (opened and
   * checked: ffmpeg reads the opened file), or the absolute path a video stored before blob keys
   * was kept at.
   */
  async localVideoFile(v: VideoRow): Promise<{ path: string; release(): Promise<void> }> {
    if (v.fingerprint !== null) {
      let opened: OpenedFootage;
      try {
        opened = await this.openFootage(v, { content: true });
      } catch (err) {
        if (err instanceof FootageUnavailableError) throw new MediaError(err.message, { cause: err });
        throw err;
      }
      try {
        return { path: await opened.processPath(), release: () => opened.close() };
      } catch (err) {
        await opened.close();
        throw err;
      }
    }
    if (!v.blob_key) return { path: v.path, release: async () => {} };
    try {
      return await this.blobs.localFile(v.blob_key);
    } catch (err) {
      if (err instanceof BlobNotFoundError) throw new MediaError(`${v.filename} is missing from the library's storage (deleted outside vidembed?)`, { cause: err });
      throw err;
    }
  }

  /**
   * The video's file, thumbnails, keyframes, transcript, soundtrack and playback proxy (a job still
   * running stages its own and removes them when its settle is refused); missing ones are no error (the
   * catalog rows are gone already). A video in place is the user's own file: it is never deleted.
   */
  async removeVideoFiles(v: VideoRow): Promise<void> {
    if (v.fingerprint === null) await (v.blob_key ? this.blobs.delete(v.blob_key) : unlink(v.path)).catch(() => {});
    for (const folder of [VIDEO_ARTIFACTS.thumbs(v.id), VIDEO_ARTIFACTS.keyframes(v.id)]) await this.blobs.deletePrefix(folder).catch(() => {});
    for (const key of [VIDEO_ARTIFACTS.transcript(v.id), VIDEO_ARTIFACTS.playback(v.id), VIDEO_ARTIFACTS.soundtrack(v.id)]) await this.blobs.delete(key).catch(() => {});
  }

  /** An error whose message names the user's file, never a path of this machine's data or temp directories. */
  redact(err: unknown, names: [string, string][] = []): unknown {
    return redactError(err, names, [this.paths.home]);
  }

  async close(): Promise<void> {
    await this.textEncoder.close();
    await this.catalog.close();
  }
}

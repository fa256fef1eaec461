/**
 * The composition root: opens a library's ports from a home (or takes the ones given) and builds
 * the services on them. The only place that chooses backends.
 */
import type { Analyzer } from '../analysis/types.js';
import { databaseUrl } from '../env.js';
import type { Embedder } from '../embedders/types.js';
import { getEmbedder, listEmbedders } from '../embedders/registry.js';
import { CachedTextEncoder, InProcessTextEncoder, type QueryTextEncoder } from '../embedders/text-encoder.js';
import { installedModelCheck } from '../models/manifest.js';
import type { BlobStore } from '../store/blobs.js';
import { openSqliteCatalog } from '../store/catalog/sqlite.js';
import type { Catalog } from '../store/catalog/types.js';
import type { Store } from '../store/index.js';
import { openCatalog } from '../store/open.js';
import { DEFAULTS, ensureDirs, openBlobStore, pathsFor, resolveHome } from '../config.js';
import { DEFAULT_FETCH_POLICY, type FetchPolicy } from '../net/fetch-video.js';
import { Library, type WebhookSettings } from './library.js';
import { ffmpegMedia } from '../media/ffmpeg-media.js';
import type { MediaPort } from '../media/port.js';
import { builtinCapabilities, defaultCapabilities, type CapabilityRegistry } from '../capabilities/index.js';
import type { SpeechAnalyzer } from '../speech/analyzer.js';
import { speechAnalyzerFor, type SpeechSetting } from '../speech/engines.js';

export interface EngineOptions {
  home?: string;
  /** The library's database: `postgres://…` (default: VIDEMBED_DATABASE_URL, else SQLite in the home). */
  databaseUrl?: string;
  /** Where its files are: `file:///dir` or `s3://bucket/prefix` (default: VIDEMBED_STORAGE_URL, else blobs/ in the home). */
  storageUrl?: string;
  /**
   * The catalog to use instead of opening the home's or `databaseUrl`'s (tests: an in-memory one,
   * src/store/memory); the library closes it.
   */
  catalog?: Catalog;
  /** The blob store to use instead of opening the home's or `storageUrl`'s. With `catalog` too, the home is never created. */
  blobs?: BlobStore;
  /** The speech analyzer for a collection's speech setting; default src/speech/engines.ts (tests pass fakes). */
  speechFor?: (setting: SpeechSetting, language?: string) => SpeechAnalyzer;
  /** Embedder lookup by id; defaults to the model registry. */
  embedderFor?: (id: string) => Embedder;
  /**
   * The frame analyzers to run instead of the engine's (perception, ImageNet where installed, OCR):
   * tests and programs that bring their own. Default: the capability registry's (src/capabilities).
   */
  analyzers?: Analyzer[];
  /** Every capability, declared (default: src/capabilities builtin, with `analyzers` and `speechFor`). */
  capabilities?: CapabilityRegistry;
  /** The media port (default: ffmpeg, src/media/ffmpeg-media.ts; unit tests pass a fake). */
  media?: MediaPort;
  /** Whether a model is installed (default with the registry: its manifest's files are here; with `embedderFor`: every one is). */
  modelInstalled?: (id: string) => boolean;
  fetchPolicy?: Partial<FetchPolicy>;
  maxUploadBytes?: number;
  /** Keep an exact in-memory SIMD copy of searched collections' vectors (long-running processes). */
  memoryIndex?: boolean;
  /** Largest tensor payload accepted by uploadTensors (decoded bytes). */
  maxTensorBytes?: number;
  /**
   * Called after work is queued so that something will run it: the CLI starts a background worker
   * process; the server runs workers itself and passes a no-op.
   */
  onWorkQueued?: () => void | Promise<void>;
  /**
   * Encodes the text of `search` and `encodeText`. Default: the embedder on this thread behind an
   * LRU cache (the one-shot CLI); the server passes a pool of worker threads behind the cache.
   * The library closes it.
   */
  textEncoder?: QueryTextEncoder;
  /** How long settled async tasks are kept (default VIDEMBED_RETENTION_DAYS, else 7 days). */
  retentionMs?: number;
  /** Bytes each owner may store (default VIDEMBED_STORAGE_QUOTA_MB, else no limit). */
  storageQuotaBytes?: number;
  /**
   * Refuses a file that is not a video before it is stored (MediaError naming `name`); default:
   * ffmpeg's probe (src/media/is-video.ts). Unit tests that upload placeholder bytes pass one that takes any file.
   */
  checkVideo?: (file: string, name: string) => Promise<void>;
  /** Webhook delivery settings (tests, `serve --allow-private-webhooks`); default DEFAULTS.webhooks. */
  webhooks?: Partial<WebhookSettings>;
  /** A server's library roots (`serve --library DIR`): footage in place is read only from inside them. */
  libraryRoots?: string[];
}

/** A library opened from a home, and the SQLite store under it when its catalog is this machine's SQLite file. */
export function openLibrary(opts: EngineOptions = {}): { library: Library; localStore?: Store } {
  const paths = pathsFor(opts.home ?? resolveHome());
  if (!opts.catalog || !opts.blobs) ensureDirs(paths);
  let localStore: Store | undefined;
  let catalog = opts.catalog;
  if (!catalog) {
    const url = opts.databaseUrl ?? databaseUrl();
    if (url) catalog = openCatalog(paths.dbFile, { memoryIndex: opts.memoryIndex, databaseUrl: url });
    else {
      const sqlite = openSqliteCatalog(paths.dbFile, { memoryIndex: opts.memoryIndex });
      localStore = sqlite.store;
      catalog = sqlite;
    }
  }
  const blobs = opts.blobs ?? openBlobStore(paths, opts.storageUrl ? { ...process.env, VIDEMBED_STORAGE_URL: opts.storageUrl } : process.env);
  const embedderFor = opts.embedderFor ?? getEmbedder;
  const media = opts.media ?? ffmpegMedia;
  const speechFor = opts.speechFor ?? ((setting: SpeechSetting, language?: string) => speechAnalyzerFor(setting, process.env, language));
  const library = new Library({
    paths,
    catalog,
    blobs,
    // A directory store keeps each blob as a file on this machine (the CLI shows its path).
    blobPath: hasPaths(blobs) ? (key) => blobs.pathOf(key) : undefined,
    checkVideo: opts.checkVideo ?? ((file, name) => media.assertVideo(file, name)),
    embedderFor,
    modelIds: opts.embedderFor ? undefined : () => listEmbedders().map((e) => e.id),
    capabilities: opts.capabilities ?? (opts.analyzers || opts.speechFor ? builtinCapabilities({ analyzers: opts.analyzers, speechFor: opts.speechFor }) : defaultCapabilities()),
    media,
    modelInstalled: opts.modelInstalled ?? (opts.embedderFor ? undefined : installedModelCheck()),
    speechFor,
    textEncoder: opts.textEncoder ?? new CachedTextEncoder(new InProcessTextEncoder(embedderFor), DEFAULTS.textCacheEntries),
    fetchPolicy: { ...DEFAULT_FETCH_POLICY, ...opts.fetchPolicy },
    maxUploadBytes: opts.maxUploadBytes ?? DEFAULTS.maxUploadBytes,
    maxTensorBytes: opts.maxTensorBytes ?? DEFAULTS.maxTensorBytes,
    onWorkQueued: opts.onWorkQueued ?? (() => {}),
    retentionMs: opts.retentionMs,
    webhooks: opts.webhooks,
    libraryRoots: opts.libraryRoots,
    ...('storageQuotaBytes' in opts ? { storageQuotaBytes: opts.storageQuotaBytes } : {}),
  });
  return { library, localStore };
}

function hasPaths(blobs: BlobStore): blobs is BlobStore & { pathOf(key: string): string } {
  return typeof (blobs as { pathOf?: unknown }).pathOf === 'function';
}

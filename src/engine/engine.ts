import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import {
  BadRequestError,
  ConflictError,
  MediaError,
  NotFoundError,
  PayloadTooLargeError,
  ValidationError,
  VidembedError,
  errorMessage,
} from '../api/errors.js';
import type {
  AsyncStatusResponse,
  AsyncSubmitRequest,
  AsyncSubmitResponse,
  CollectionSummary,
  CreateCollectionRequest,
  CreateCollectionResponse,
  EncodeTextRequest,
  EncodeTextResponse,
  EncodeVideoRequest,
  EncodeVideoResponse,
  IngestFile,
  ListCollectionsRequest,
  ListVideosRequest,
  ReindexResponse,
  CollectionDetails,
  DeleteResponse,
  DuplicatesRequest,
  DuplicatesResponse,
  UpdateCollectionRequest,
  VideoDetails,
  VideoStatus,
  VideoSummary,
  SearchRequest,
  SearchResponse,
  TagVideoResponse,
  TaskKind,
  TensorUploadRequest,
  TensorUploadResponse,
  UploadVideoResponse,
  VideoService,
  VideoStatusResponse,
  TranscriptResponse,
} from '../api/types.js';
import { canSee, LOCAL_PRINCIPAL, type Principal } from '../api/principal.js';
import { thumbnailUrl } from '../api/paths.js';
import type { Embedder } from '../models/embedder.js';
import type { Analyzer } from '../analysis/types.js';
import { keywordsOf, recipeOf, storedFacts } from '../analysis/keywords.js';
import { DEFAULT_EMBEDDER_ID as DEFAULT_MODEL_ID, getEmbedder } from '../models/registry.js';
import { CachedTextEncoder, InProcessTextEncoder, type QueryTextEncoder } from '../models/text-encoder.js';
import type { Store } from '../store/index.js';
import { SqliteCatalog } from '../store/catalog/sqlite.js';
import { openCatalog } from '../store/open.js';
import type { Catalog } from '../store/catalog/types.js';
import type { CollectionRow } from '../store/collections.js';
import { newId } from '../store/ids.js';
import type { QueuedJob } from '../store/queue/types.js';
import { CollectionNameTakenError } from '../store/catalog/types.js';
import type { VideoRow } from '../store/videos.js';
import { DEFAULTS, ensureDirs, openBlobStore, pathsFor, readUserConfig, resolveHome, type Paths } from './config.js';
import { DEFAULT_FETCH_POLICY, type FetchPolicy } from './fetch-video.js';
import { analyzeFrames, analyzeVideo, type AnalyzedVideo } from './pipeline.js';
import { DUPLICATE_THRESHOLDS, findDuplicateGroups, nearDuplicateOf, sampleSignature, storeSignature, type VideoSignature } from './duplicates.js';
import { phashToHex } from '../media/phash.js';
import { loadTensorAudio, loadTensorFrames, storeTensorUpload, tensorKeyOwner } from './tensors.js';
import type { SpeechAnalyzer } from '../speech/analyzer.js';
import { expectedSpeechVersion, isSpeechSetting, speechAnalyzerFor, type SpeechSetting } from '../speech/engines.js';
import { loadTranscript, speechSettingOf, storeTranscript, transcriptKey } from '../speech/store.js';
import { BlobNotFoundError, LocalBlobStore, type BlobStore } from '../store/blobs.js';
import { hybridSearch, MAX_SEARCH_HITS, type HybridSearchInput } from './search.js';
import { spokenQuery } from '../speech/match.js';
import type { SpokenWord } from '../speech/types.js';
import { AUDIO_LABELS } from '../speech/analyzer.js';
import { combineQueryVectors, embedImageQuery, hasImage } from './examples.js';
import { buildTags } from './tags.js';
import { resolveVideoSource } from './sources.js';
import { intInRange, numberInRange, requireText } from './validate.js';
import { redactError } from './redact.js';
import { displaySize } from '../media/probe.js';
import { readsAsEnglish } from '../analysis/describe.js';
import { SEARCH_WEIGHTS } from '../models/perception/weights.js';
import { CAMERA_MOVEMENT_LABELS } from '../tagging/camera-movement.js';
import { SHOOTING_ANGLE_LABELS, SHOT_SIZE_LABELS } from '../tagging/framing.js';

export interface EngineOptions {
  home?: string;
  /** The library's database: `postgres://…` (default: VIDEMBED_DATABASE_URL, else SQLite in the home). */
  databaseUrl?: string;
  /** Where its files are: `file:///dir` or `s3://bucket/prefix` (default: VIDEMBED_STORAGE_URL, else blobs/ in the home). */
  storageUrl?: string;
  /** Embedder lookup by id; defaults to the model registry. */
  embedderFor?: (id: string) => Embedder;
  /** The analyzers run before an embedder; default: src/analysis (perception always, ImageNet where installed). */
  analyzersFor?: (embedder: Embedder) => Promise<Analyzer[]>;
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
   * The engine closes it in `close()`.
   */
  textEncoder?: QueryTextEncoder;
  /** The speech analyzer for a collection's speech setting; default src/speech/engines.ts (tests pass fakes). */
  speechFor?: (setting: SpeechSetting) => SpeechAnalyzer;
  /**
   * The catalog to use instead of opening the home's or `databaseUrl`'s (tests: an in-memory one,
   * src/store/memory); the engine closes it in `close()`.
   */
  catalog?: Catalog;
  /** The blob store to use instead of opening the home's or `storageUrl`'s. With `catalog` too, the home is never created. */
  blobs?: BlobStore;
}

/** A video's original file: where it is on this machine's disk, if it is, and its bytes by range. */
export interface VideoFile {
  filename: string;
  size: number;
  /** The file on this machine (a directory store, or a video stored before blob keys); none in an object store. */
  path?: string;
  /** Its bytes, or the bytes `start`..`end` (inclusive). */
  open(range?: { start: number; end?: number }): Readable;
}

export interface JobContext {
  signal: AbortSignal;
  /** The claim the work runs under: its results land only while the token still holds the job. */
  job?: { id: string; token: number };
  /** Set by the engine when it settled the job itself, in the transaction of its results. */
  settled?: boolean;
}

/** The local face of VideoService: SQLite + sqlite-vec store, ffmpeg, models, durable jobs. */
export class LocalEngine implements VideoService {
  readonly paths: Paths;
  /** The library's catalog, queue and indexes: SQLite under the home, or PostgreSQL (VIDEMBED_DATABASE_URL). */
  readonly catalog: Catalog;
  private readonly embedderFor: (id: string) => Embedder;
  private readonly analyzers: (embedder: Embedder) => Promise<Analyzer[]>;
  private readonly speechFor: (setting: SpeechSetting) => SpeechAnalyzer;
  private readonly fetchPolicy: FetchPolicy;
  readonly maxUploadBytes: number;
  readonly maxTensorBytes: number;
  readonly blobs: BlobStore;
  private readonly onWorkQueued: () => void | Promise<void>;
  readonly textEncoder: QueryTextEncoder;
  /** Who this engine acts for: full rights by default (the local CLI); see `as()`. */
  readonly principal: Principal = LOCAL_PRINCIPAL;

  constructor(opts: EngineOptions = {}) {
    this.paths = pathsFor(opts.home ?? resolveHome());
    if (!opts.catalog || !opts.blobs) ensureDirs(this.paths);
    this.catalog = opts.catalog ?? openCatalog(this.paths.dbFile, { memoryIndex: opts.memoryIndex, databaseUrl: opts.databaseUrl });
    this.embedderFor = opts.embedderFor ?? getEmbedder;
    this.analyzers = opts.analyzersFor ?? (async (e) => (await import('../analysis/index.js')).analyzersFor(e));
    this.speechFor = opts.speechFor ?? ((setting) => speechAnalyzerFor(setting));
    this.fetchPolicy = { ...DEFAULT_FETCH_POLICY, ...opts.fetchPolicy };
    this.maxUploadBytes = opts.maxUploadBytes ?? DEFAULTS.maxUploadBytes;
    this.maxTensorBytes = opts.maxTensorBytes ?? DEFAULTS.maxTensorBytes;
    this.blobs = opts.blobs ?? openBlobStore(this.paths, opts.storageUrl ? { ...process.env, VIDEMBED_STORAGE_URL: opts.storageUrl } : process.env);
    this.onWorkQueued = opts.onWorkQueued ?? (() => {});
    this.textEncoder = opts.textEncoder ?? new CachedTextEncoder(new InProcessTextEncoder((id) => this.embedderFor(id)), DEFAULTS.textCacheEntries);
  }

  /** The SQLite store under the catalog (tools and tests that work on the local file); none on PostgreSQL. */
  get store(): Store {
    if (!(this.catalog instanceof SqliteCatalog)) throw new Error('this library is on PostgreSQL: it has no local SQLite store');
    return this.catalog.store;
  }

  /** True when the library's catalog is this machine's SQLite file. */
  get isLocalLibrary(): boolean {
    return this.catalog instanceof SqliteCatalog;
  }

  /**
   * This engine acting for `principal`: the same store, models and caches, seen through ownership
   * (another owner's ids answer 404, as if they did not exist). The server makes one per request.
   */
  as(principal: Principal): LocalEngine {
    const view = Object.create(this) as LocalEngine;
    Object.defineProperty(view, 'principal', { value: Object.freeze({ ...principal }), enumerable: true });
    return view;
  }

  // ---- collections -------------------------------------------------------------------------

  async createCollection(req: CreateCollectionRequest): Promise<CreateCollectionResponse> {
    const name = requireText(req?.name, ['body', 'name']).trim();
    if (name.length > 128) throw new ValidationError([{ loc: ['body', 'name'], msg: 'must be at most 128 characters', type: 'value_error.any_str.max_length' }]);
    const description = req.description ?? '';
    if (typeof description !== 'string') throw new ValidationError([{ loc: ['body', 'description'], msg: 'must be a string', type: 'type_error.str' }]);
    if (description.length > 4096) throw new ValidationError([{ loc: ['body', 'description'], msg: 'must be at most 4096 characters', type: 'value_error.any_str.max_length' }]);
    const modelId = req.model ?? readUserConfig(this.paths).default_model ?? DEFAULT_MODEL_ID;
    const embedder = this.embedder(modelId, ['body', 'model']);
    await assertModelInstalled(embedder.id);
    const owner = this.principal.owner;
    const speech = req.speech ?? 'auto';
    if (!isSpeechSetting(speech)) throw new ValidationError([{ loc: ['body', 'speech'], msg: 'must be one of auto, off, pocketsphinx, whisper', type: 'value_error.enum' }]);
    if ((await this.catalog.collections.byName(name, owner)).length) throw new ConflictError(`a collection named "${name}" already exists`);
    let row: CollectionRow;
    try {
      row = await this.catalog.transaction(async (tx) => {
        const r = await tx.collections.insert({ name, description, model: embedder.id, dim: embedder.dim, owner });
        // The recipe records the setting from the start (its versions come with the first video).
        if (speech !== 'auto') await tx.collections.setRecipe(r.id, { speech_setting: speech });
        return r;
      });
    } catch (err) {
      if (err instanceof CollectionNameTakenError) throw new ConflictError(`a collection named "${name}" already exists`);
      throw err;
    }
    return { collection_id: row.id, name: row.name, description: row.description, created_at: row.created_at, model: row.model, dim: row.dim, speech };
  }

  async listCollections(req: ListCollectionsRequest = {}): Promise<CollectionSummary[]> {
    const limit = intInRange(req.limit, ['query', 'limit'], 1, 1000, 100);
    const offset = intInRange(req.offset, ['query', 'offset'], 0, Number.MAX_SAFE_INTEGER, 0);
    const rows = await this.catalog.collections.list(limit, offset, this.principal.admin ? null : this.principal.owner);
    return Promise.all(rows.map((r) => this.withRecipe(toSummary(r))));
  }

  async getCollection(idOrName: string): Promise<CollectionSummary> {
    return this.withRecipe(toSummary(await this.collection(idOrName)));
  }

  /** Adds `needs_reindex` where the engine would now make the collection's vectors differently. */
  private async withRecipe(summary: CollectionSummary): Promise<CollectionSummary> {
    const { speech_setting: _setting, ...made } = summary.recipe ?? {};
    // Only a recipe with versions (a processed video) says how the vectors were made.
    if (!Object.keys(made).length) return summary;
    let expected: Record<string, string>;
    try {
      const { expectedRecipe } = await import('../analysis/versions.js');
      expected = await expectedRecipe(this.embedderFor(summary.model));
    } catch {
      return summary; // an embedder this engine does not know: nothing to compare with
    }
    // Speech is compared where the recipe records it (collections made before speech have none).
    if (made.speech !== undefined) expected.speech = expectedSpeechVersion(summary.speech ?? 'auto');
    const keys = new Set([...Object.keys(expected), ...Object.keys(made)]);
    summary.needs_reindex = [...keys].some((k) => expected[k] !== made[k]);
    return summary;
  }

  async collectionDetails(idOrName: string): Promise<CollectionDetails> {
    const row = await this.collection(idOrName);
    return { ...(await this.withRecipe(toSummary(row))), counts: await this.catalog.videos.countsByStatus(row.id) };
  }

  /** Renames a collection and/or changes its description (names stay unique per owner). */
  async updateCollection(idOrName: string, patch: UpdateCollectionRequest): Promise<CollectionSummary> {
    const row = await this.collection(idOrName);
    const name = patch?.name === undefined ? undefined : requireText(patch.name, ['body', 'name']).trim();
    if (name !== undefined && name.length > 128) throw new ValidationError([{ loc: ['body', 'name'], msg: 'must be at most 128 characters', type: 'value_error.any_str.max_length' }]);
    const description = patch?.description;
    if (description !== undefined && (typeof description !== 'string' || description.length > 4096)) {
      throw new ValidationError([{ loc: ['body', 'description'], msg: 'must be a string of at most 4096 characters', type: 'value_error' }]);
    }
    if (name !== undefined && name !== row.name && (await this.catalog.collections.byName(name, row.owner)).length) {
      throw new ConflictError(`a collection named "${name}" already exists`);
    }
    try {
      await this.catalog.collections.update(row.id, { name, description });
    } catch (err) {
      if (err instanceof CollectionNameTakenError) throw new ConflictError(`a collection named "${name}" already exists`);
      throw err;
    }
    return this.getCollection(row.id);
  }

  /** Removes a collection with every video in it (files, segments, vectors, keywords, pending jobs). */
  async deleteCollection(idOrName: string): Promise<DeleteResponse> {
    const row = await this.collection(idOrName);
    const videos = await this.catalog.videos.listByCollection(row.id);
    await this.catalog.transaction(async (tx) => {
      for (const v of videos) {
        await tx.queue.cancelFor(v.id);
        await tx.segments.deleteForVideo(v.id, row.dim);
        await tx.videos.delete(v.id);
      }
      await tx.collections.delete(row.id);
    });
    await Promise.all(videos.map((v) => this.removeVideoFiles(v)));
    return { id: row.id, deleted: true, videos: videos.length };
  }

  /**
   * Processes every video of a collection again in the background (after an analyzer changed or
   * was installed). Each video keeps its old segments and vectors, and search answers from them,
   * until its new ones replace them in one transaction.
   */
  async reindexCollection(idOrName: string): Promise<ReindexResponse> {
    const collection = await this.collection(idOrName);
    const ids = await this.catalog.videos.idsForCollection(collection.id, ['processed', 'failed']);
    await this.catalog.transaction(async (tx) => {
      for (const id of ids) await tx.queue.enqueue('video.process', id);
    });
    if (ids.length) await this.onWorkQueued();
    return { collection_id: collection.id, queued: ids.length };
  }

  /** What is said counts in a text search (and alone with `said`): the query as sounds, and the transcripts by video. */
  private spokenInput(text: string, only: boolean): HybridSearchInput['spoken'] {
    const query = text ? spokenQuery(text) : undefined;
    if (!query) return undefined;
    const memo = new Map<string, Promise<SpokenWord[] | undefined>>();
    const wordsOf = (videoId: string) => {
      let got = memo.get(videoId);
      if (!got) memo.set(videoId, (got = loadTranscript(this.blobs, videoId).then((t) => t?.words)));
      return got;
    };
    return { query, wordsOf, only };
  }

  /** A collection by id or name, if this principal may see it; names are looked up in its own library first. */
  private async collection(idOrName: string): Promise<CollectionRow> {
    const p = this.principal;
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

  /** A video, if this principal may see its collection. */
  private async video(videoId: string): Promise<VideoRow> {
    const v = await this.catalog.videos.byId(videoId);
    const c = v && (await this.catalog.collections.byId(v.collection_id));
    if (!v || !c || !canSee(this.principal, c.owner)) throw new NotFoundError(`video not found: ${videoId}`);
    return v;
  }

  // ---- videos ------------------------------------------------------------------------------

  async uploadVideo(collectionIdOrName: string, file: IngestFile): Promise<UploadVideoResponse> {
    const collection = await this.collection(collectionIdOrName);
    const st = await stat(file.path).catch(() => undefined);
    if (!st) throw new NotFoundError(`file not found: ${file.path}`);
    if (st.isDirectory()) throw new BadRequestError(`${file.path} is a directory, not a video file`);
    if (!st.isFile()) throw new BadRequestError(`${file.path} is not a regular file`);
    if (st.size > this.maxUploadBytes) {
      throw new PayloadTooLargeError(`${file.filename} is ${st.size} bytes, over the ${this.maxUploadBytes}-byte upload limit`);
    }
    // The same bytes twice in one collection are one video: answer with it (unless forced).
    const sha256 = await sha256File(file.path);
    const existing = file.force ? undefined : await this.catalog.videos.byContent(collection.id, sha256);
    if (existing) {
      if (file.move) await unlink(file.path).catch(() => {});
      return { video_id: existing.id, status: existing.status, duplicate: true };
    }
    // Near-duplicates (asked for): a quick decode of the file's own, compared with the collection's
    // signatures before anything is stored. A file that does not decode is stored as usual (its
    // processing will say what is wrong with it).
    let quick: VideoSignature | undefined;
    if (file.skipDuplicates && !file.force) {
      quick = await sampleSignature(file.path).catch(() => undefined);
      const near = quick && (await nearDuplicateOf(this.catalog, collection.id, quick));
      if (near) {
        if (file.move) await unlink(file.path).catch(() => {});
        const { video, coverage, similarity } = near;
        return { video_id: video.id, status: video.status, duplicate: true, near_duplicate: { filename: video.filename, coverage: round3(coverage), similarity: round3(similarity) } };
      }
    }
    const id = newId('vid');
    const ext = safeExtension(file.filename);
    const key = `videos/${id}${ext}`;
    await this.blobs.putFile(key, file.path, { move: file.move });
    try {
      await this.catalog.transaction(async (tx) => {
        await tx.videos.insert({ id, collection_id: collection.id, filename: path.basename(file.filename), blob_key: key, size_bytes: st.size, content_sha256: sha256 });
        await tx.queue.enqueue('video.process', id);
        // Later files of the same upload compare with this one before it is processed.
        if (quick) await storeSignature(tx, id, quick);
      });
    } catch (err) {
      await this.blobs.delete(key).catch(() => {});
      throw err;
    }
    await this.onWorkQueued();
    return { video_id: id, status: 'uploaded' };
  }

  async videoStatus(videoId: string): Promise<VideoStatusResponse> {
    const v = await this.video(videoId);
    const out: VideoStatusResponse = { video_id: v.id, status: v.status };
    if (v.status === 'processing' && v.progress !== null) out.progress = v.progress;
    if (v.status === 'processed') out.progress = 100;
    if (v.status === 'failed' && v.error_message) out.error_message = v.error_message;
    return out;
  }

  /** A video with its tags and segments (`video show`, `GET /videos/{id}`). */
  async videoDetails(videoId: string): Promise<VideoDetails> {
    const v = await this.video(videoId);
    const segments = (await this.catalog.segments.listForVideo(videoId)).map((s) => ({
      start: s.start,
      end: s.end,
      thumbnail_url: thumbnailUrl(v.id, s.start),
      description: s.description,
      tags: s.tags_json ? (JSON.parse(s.tags_json) as Record<string, unknown>) : undefined,
      facts: s.facts_json ? (JSON.parse(s.facts_json) as Record<string, unknown>) : undefined,
    }));
    return { ...toVideoSummary(v), tags: v.tags_json ? (JSON.parse(v.tags_json) as Record<string, unknown>) : undefined, segments };
  }

  /** What is said in a video (`video transcript`, `GET /videos/{id}/transcript`). */
  async videoTranscript(videoId: string): Promise<TranscriptResponse> {
    const v = await this.video(videoId);
    const t = await loadTranscript(this.blobs, v.id);
    if (!t) {
      const reason = v.status === 'processed' ? 'processed before speech was indexed: `vidembed video reprocess`' : `not processed yet (status ${v.status})`;
      return { video_id: v.id, engine: '', language: '', duration: 0, words: [], reason };
    }
    const words = t.words.map(({ w, start, end, conf }) => ({ w, start, end, conf }));
    return { video_id: v.id, engine: t.engine, language: t.language, duration: t.duration, words, ...(t.reason ? { reason: t.reason } : {}) };
  }

  /** Keyframe thumbnails of a video's segments and its poster (the middle segment's), in the blob store. */
  private async storeThumbnails(videoId: string, jpegs: (Buffer | undefined)[]): Promise<void> {
    await this.blobs.deletePrefix(`thumbs/${videoId}`);
    for (const [i, jpeg] of jpegs.entries()) if (jpeg) await this.blobs.put(`thumbs/${videoId}/${i}.jpg`, jpeg);
    const poster = jpegs[jpegs.length >> 1] ?? jpegs.find(Boolean);
    if (poster) await this.blobs.put(`thumbs/${videoId}/poster.jpg`, poster);
  }

  /**
   * The JPEG of the segment at `t` seconds (the keyframe of the segment holding that moment, else
   * the nearest), or the video's poster without `t`. 404 before the video is processed.
   */
  async videoThumbnail(videoId: string, t?: number): Promise<Buffer> {
    const v = await this.video(videoId);
    let key = `thumbs/${v.id}/poster.jpg`;
    if (t !== undefined) {
      if (!Number.isFinite(t) || t < 0) throw new ValidationError([{ loc: ['query', 't'], msg: 'must be a number of seconds >= 0', type: 'value_error.number' }]);
      const segs = await this.catalog.segments.listForVideo(v.id);
      const at = segs.find((s) => t >= s.start && t < s.end) ?? segs.reduce<(typeof segs)[number] | undefined>((best, s) => (!best || Math.abs(s.start - t) < Math.abs(best.start - t) ? s : best), undefined);
      if (at) key = `thumbs/${v.id}/${at.idx}.jpg`;
    }
    if (!(await this.blobs.has(key))) throw new NotFoundError(`no thumbnail for ${videoId} yet (status ${v.status})`);
    return this.blobs.get(key);
  }

  /**
   * Where a video's thumbnails are on this machine's disk (`vidembed video show`): the poster and
   * one JPEG per segment, by segment index; absent before processing or with a store that has no
   * paths.
   */
  async thumbnailFiles(videoId: string): Promise<{ poster?: string; segments: (string | undefined)[] }> {
    const v = await this.video(videoId);
    const blobs = this.blobs;
    if (!(blobs instanceof LocalBlobStore)) return { segments: [] };
    const at = async (key: string) => ((await blobs.has(key)) ? blobs.pathOf(key) : undefined);
    const segs = await this.catalog.segments.listForVideo(v.id);
    return { poster: await at(`thumbs/${v.id}/poster.jpg`), segments: await Promise.all(segs.map((s) => at(`thumbs/${v.id}/${s.idx}.jpg`))) };
  }

  /** A video's original file (the server streams it with Range support; the CLI shows its path). */
  async videoFile(videoId: string): Promise<VideoFile> {
    const v = await this.video(videoId);
    const { blob_key: key } = v;
    const base = { filename: v.filename, size: v.size_bytes };
    if (!key) return { ...base, path: v.path, open: (range) => createReadStream(v.path, range) };
    const blobs = this.blobs;
    return { ...base, path: blobs instanceof LocalBlobStore ? blobs.pathOf(key) : undefined, open: (range) => blobs.stream(key, range) };
  }

  /**
   * The video as a file on this machine, for ffmpeg: its blob (in the directory every node mounts,
   * or downloaded from an object store until `release`), or the absolute path a video stored
   * before blob keys was kept at.
   */
  private async localVideoFile(v: VideoRow): Promise<{ path: string; release(): Promise<void> }> {
    if (!v.blob_key) return { path: v.path, release: async () => {} };
    try {
      return await this.blobs.localFile(v.blob_key);
    } catch (err) {
      if (err instanceof BlobNotFoundError) throw new MediaError(`${v.filename} is missing from the library's storage (deleted outside vidembed?)`, { cause: err });
      throw err;
    }
  }

  /** The video's file and thumbnails; missing ones are no error (the catalog rows are gone already). */
  private async removeVideoFiles(v: VideoRow): Promise<void> {
    await (v.blob_key ? this.blobs.delete(v.blob_key) : unlink(v.path)).catch(() => {});
    await this.blobs.deletePrefix(`thumbs/${v.id}`).catch(() => {});
    await this.blobs.delete(transcriptKey(v.id)).catch(() => {});
  }

  async listVideos(collectionIdOrName: string, req: ListVideosRequest = {}): Promise<VideoSummary[]> {
    const collection = await this.collection(collectionIdOrName);
    const limit = intInRange(req.limit, ['query', 'limit'], 1, 1000, 100);
    const offset = intInRange(req.offset, ['query', 'offset'], 0, Number.MAX_SAFE_INTEGER, 0);
    const status = req.status === undefined || req.status === null || (req.status as string) === '' ? undefined : req.status;
    if (status !== undefined && !VIDEO_STATUSES.includes(status)) {
      throw new ValidationError([{ loc: ['query', 'status'], msg: `must be one of ${VIDEO_STATUSES.join(', ')}`, type: 'value_error.enum' }]);
    }
    return (await this.catalog.videos.page(collection.id, { status, limit, offset })).map(toVideoSummary);
  }

  /** Removes a video: its pending job, segments, vectors, keywords and file (the disk is freed). */
  async deleteVideo(videoId: string): Promise<DeleteResponse> {
    const v = await this.video(videoId);
    const collection = (await this.catalog.collections.byId(v.collection_id))!;
    await this.catalog.transaction(async (tx) => {
      await tx.queue.cancelFor(v.id);
      await tx.segments.deleteForVideo(v.id, collection.dim);
      await tx.videos.delete(v.id);
    });
    await this.removeVideoFiles(v);
    return { id: v.id, deleted: true };
  }

  /** Processes a video again (after a failure, or to pick up new analyzers). */
  async reprocessVideo(videoId: string): Promise<VideoStatusResponse> {
    const v = await this.video(videoId);
    await this.catalog.transaction(async (tx) => {
      await tx.queue.cancelFor(v.id);
      await tx.queue.enqueue('video.process', v.id);
    });
    await this.onWorkQueued();
    return this.videoStatus(v.id);
  }

  /** Groups of near-identical videos of a collection: re-encoded, resized or trimmed copies (docs/engine.md). */
  async findDuplicates(collectionIdOrName: string, req: DuplicatesRequest = {}): Promise<DuplicatesResponse> {
    const collection = await this.collection(collectionIdOrName);
    const minSimilarity = numberInRange(req?.min_similarity, ['query', 'min_similarity'], (n) => n > 0 && n <= 1, 'in (0, 1]', DUPLICATE_THRESHOLDS.minSimilarity);
    if (req?.segments !== undefined && typeof req.segments !== 'boolean') {
      throw new ValidationError([{ loc: ['query', 'segments'], msg: 'must be a boolean', type: 'type_error.bool' }]);
    }
    return findDuplicateGroups(this.catalog, collection, { minSimilarity, segments: req?.segments === true });
  }

  // ---- search and embeddings -------------------------------------------------------------

  /**
   * Search by text, by example (a picture: `image_base64`/`image_url`, or locally `image_path`; a
   * moment: `like {video_id, t?}`), or both: each given part becomes a unit vector in the
   * collection's space and the query is their normalised mean (each counts the same). The keyword
   * bonus comes from the text alone. `like` leaves its own video out. Pages: `offset` + `top_k`
   * reach at most MAX_SEARCH_HITS.
   */
  async search(collectionIdOrName: string, req: SearchRequest, opts: { explain?: boolean; signal?: AbortSignal } = {}): Promise<SearchResponse> {
    const collection = await this.collection(collectionIdOrName);
    const saidGiven = req?.said !== undefined && req?.said !== null;
    const textGiven = (req?.text !== undefined && req?.text !== null) || saidGiven;
    const imageGiven = hasImage(req ?? {});
    const likeGiven = req?.like !== undefined && req?.like !== null;
    if (!textGiven && !imageGiven && !likeGiven) {
      throw new ValidationError([{ loc: ['body', 'text'], msg: 'give text, said, a picture (image_base64 or image_url) or a moment (like), or a mix', type: 'value_error.missing' }]);
    }
    if (saidGiven && (req.text != null || imageGiven || likeGiven)) {
      throw new ValidationError([{ loc: ['body', 'said'], msg: 'said searches the transcripts alone: give it without text, a picture or a moment (text already matches what is said)', type: 'value_error' }]);
    }
    const text = saidGiven ? requireText(req.said, ['body', 'said']) : textGiven ? requireText(req.text, ['body', 'text']) : '';
    const topK = intInRange(req.top_k, ['body', 'top_k'], 1, 100, DEFAULTS.topK);
    const offset = intInRange(req.offset, ['body', 'offset'], 0, MAX_SEARCH_HITS - 1, 0);
    if (offset + topK > MAX_SEARCH_HITS) {
      throw new ValidationError([{ loc: ['body', 'offset'], msg: `offset + top_k may reach at most ${MAX_SEARCH_HITS} results`, type: 'value_error.number.not_le' }]);
    }
    const filter = {
      shot_size: tagFilter(req.shot_size, ['body', 'shot_size'], SHOT_SIZE_LABELS),
      camera_movement: tagFilter(req.camera_movement, ['body', 'camera_movement'], CAMERA_MOVEMENT_LABELS),
      shooting_angle: tagFilter(req.shooting_angle, ['body', 'shooting_angle'], SHOOTING_ANGLE_LABELS),
      audio: tagFilter(req.audio, ['body', 'audio'], AUDIO_LABELS),
    };
    const minConfidence = numberInRange(req.min_confidence, ['body', 'min_confidence'], (n) => n >= 0 && n <= 1, 'in [0, 1]', 0);
    const embedder = this.embedder(collection.model);
    const parts: Float32Array[] = [];
    const exclude = new Set<string>();
    // The moment first: a wrong video id fails before any model loads.
    if (likeGiven) {
      const { vector, videoId } = await this.likeVector(collection, req.like!);
      parts.push(vector);
      exclude.add(videoId);
    }
    const bounded = boundText(text);
    let truncated = false;
    if (textGiven) {
      const t = await this.textEncoder.embedText(embedder.id, bounded.text);
      parts.push(t.vector);
      truncated = t.truncated;
    }
    if (imageGiven) {
      await embedder.load();
      parts.push(await embedImageQuery(req, embedder, await this.analyzers(embedder), { allowPath: true, fetchPolicy: this.fetchPolicy, signal: opts.signal }));
    }
    const all = await hybridSearch(this.catalog.segments, this.catalog.videos, {
      collectionId: collection.id,
      dim: collection.dim,
      queryVector: parts.length === 1 ? parts[0] : combineQueryVectors(parts),
      text: bounded.text,
      topK: offset + topK,
      filter,
      explain: opts.explain ?? false,
      minConfidence: minConfidence > 0 ? minConfidence : undefined,
      excludeVideoIds: exclude,
      spoken: this.spokenInput(textGiven ? bounded.text : '', saidGiven),
    });
    const results = all.slice(offset);
    const warnings: string[] = [];
    const script = textGiven ? uncoveredScript(text) : undefined;
    if (script) warnings.push(`the ${collection.model} text model reads English: a query in ${script} script matches poorly; try English words`);
    if (bounded.cut || truncated) warnings.push(`the query was cut to what the model reads (${bounded.cut ? `${MAX_TEXT_CHARS} characters` : 'its context'})`);
    const counts = await this.catalog.videos.countsByStatus(collection.id);
    const waiting = counts.uploaded + counts.processing;
    if (waiting > 0) warnings.push(`${waiting} video${waiting === 1 ? ' is' : 's are'} still processing: results cover the ${counts.processed} processed`);
    if (results.length > 0 && results.every((r) => (r.confidence ?? 0) < SEARCH_WEIGHTS.mediumConfidence)) {
      warnings.push('no strong match: every result has low confidence');
    }
    const out: SearchResponse = { results, model: collection.model };
    if (offset > 0) out.offset = offset;
    // Another page exists when this one is full and the cap is not reached.
    if (all.length === offset + topK && offset + topK < MAX_SEARCH_HITS) out.next_offset = offset + topK;
    if (bounded.cut || truncated) out.truncated = true;
    if (warnings.length) out.warnings = warnings;
    return out;
  }

  /** A moment as a query: the stored vector of the segment at `t`, or the video's mean vector. */
  private async likeVector(collection: CollectionRow, like: { video_id?: unknown; t?: unknown }): Promise<{ vector: Float32Array; videoId: string }> {
    if (typeof like !== 'object' || typeof like.video_id !== 'string' || !like.video_id) {
      throw new ValidationError([{ loc: ['body', 'like', 'video_id'], msg: 'must be a video id', type: 'type_error.str' }]);
    }
    const t = like.t === undefined || like.t === null ? undefined : numberInRange(like.t, ['body', 'like', 't'], (n) => n >= 0, '>= 0 seconds', 0);
    const v = await this.video(like.video_id);
    const from = (await this.catalog.collections.byId(v.collection_id))!;
    if (from.model !== collection.model || from.dim !== collection.dim) {
      throw new ValidationError([{ loc: ['body', 'like', 'video_id'], msg: `is in a collection made with ${from.model}; this one uses ${collection.model}`, type: 'value_error.model' }]);
    }
    const segs = await this.catalog.segments.listForVideo(v.id);
    if (segs.length === 0) throw new ConflictError(`video ${v.id} has no segments to search with yet (status ${v.status})`);
    const chosen = t === undefined ? segs : [segs.find((s) => t >= s.start && t < s.end) ?? segs.reduce((best, s) => (Math.abs(s.start - t) < Math.abs(best.start - t) ? s : best))];
    const vectors = [...(await this.catalog.segments.vectors(from.dim, chosen.map((s) => s.id))).values()];
    if (vectors.length === 0) throw new ConflictError(`video ${v.id} has no stored vectors`);
    return { vector: vectors.length === 1 ? vectors[0] : combineQueryVectors(vectors), videoId: v.id };
  }

  async encodeText(req: EncodeTextRequest & { model?: string }): Promise<EncodeTextResponse> {
    const text = requireText(req?.text, ['body', 'text']);
    const embedder = this.embedder(req.model ?? DEFAULT_MODEL_ID, ['body', 'model']);
    const bounded = boundText(text);
    const { vector, truncated } = await this.textEncoder.embedText(embedder.id, bounded.text);
    return { embedding: Array.from(vector), model: embedder.id, dim: embedder.dim, truncated: truncated || bounded.cut };
  }

  async encodeVideo(req: EncodeVideoRequest, opts: { signal?: AbortSignal } = {}): Promise<EncodeVideoResponse> {
    const { segmentSeconds, fps, embedder } = this.videoOptions(req);
    const source = await resolveVideoSource(req, { allowPath: true, fetchPolicy: this.fetchPolicy, maxBytes: this.maxUploadBytes });
    try {
      const analyzed = await analyzeVideo(source.file, embedder, { segmentSeconds, fps, signal: opts.signal, analyzers: await this.analyzers(embedder), speech: this.speechFor('auto') });
      return toEncodeVideoResponse(analyzed, embedder);
    } catch (err) {
      throw this.redact(err, [[source.file, source.displayName]]);
    } finally {
      await source.cleanup();
    }
  }

  private async encodeTensor(req: AsyncSubmitRequest, signal: AbortSignal): Promise<EncodeVideoResponse> {
    const { segmentSeconds, fps, embedder } = this.videoOptions(req);
    const frames = await loadTensorFrames(this.blobs, req.tensor!.video_input_key!, req.tensor!.video_kwargs_key);
    const audioKey = req.tensor!.audio_input_key;
    const audio = audioKey ? await loadTensorAudio(this.blobs, audioKey) : undefined;
    const analyzed = await analyzeFrames(frames, embedder, { segmentSeconds, fps, signal, analyzers: await this.analyzers(embedder), speech: this.speechFor('auto'), audio });
    return toEncodeVideoResponse(analyzed, embedder);
  }

  private async tagTensor(req: AsyncSubmitRequest, signal: AbortSignal): Promise<TagVideoResponse> {
    const { segmentSeconds, fps, embedder } = this.videoOptions(req);
    const frames = await loadTensorFrames(this.blobs, req.tensor!.video_input_key!, req.tensor!.video_kwargs_key);
    const analyzed = await analyzeFrames(frames, embedder, { segmentSeconds, fps, signal, analyzers: await this.analyzers(embedder) });
    return { tags: buildTags(analyzed, embedder.id) };
  }

  private videoOptions(req: EncodeVideoRequest) {
    const segmentSeconds = numberInRange(req.segment_seconds, ['body', 'segment_seconds'], (n) => n >= 1 && n <= 60, 'in [1, 60]', DEFAULTS.segmentSeconds);
    const fps = numberInRange(req.fps, ['body', 'fps'], (n) => n > 0 && n <= 8, 'in (0, 8]', DEFAULTS.fps);
    const embedder = this.embedder(req.model ?? DEFAULT_MODEL_ID, ['body', 'model']);
    return { segmentSeconds, fps, embedder };
  }

  /** Tags a video without storing it: the same analysis an upload gets, answered as SPEC §3 Tags. */
  async tagVideo(req: EncodeVideoRequest, opts: { signal?: AbortSignal } = {}): Promise<TagVideoResponse> {
    const { segmentSeconds, fps, embedder } = this.videoOptions(req);
    const source = await resolveVideoSource(req, { allowPath: true, fetchPolicy: this.fetchPolicy, maxBytes: this.maxUploadBytes });
    try {
      const analyzed = await analyzeVideo(source.file, embedder, { segmentSeconds, fps, signal: opts.signal, analyzers: await this.analyzers(embedder), speech: this.speechFor('auto') });
      return { tags: buildTags(analyzed, embedder.id) };
    } catch (err) {
      throw this.redact(err, [[source.file, source.displayName]]);
    } finally {
      await source.cleanup();
    }
  }

  // ---- async tasks -------------------------------------------------------------------------

  async submitEmbeddingTask(req: AsyncSubmitRequest): Promise<AsyncSubmitResponse> {
    return this.submitTask('embedding', req);
  }

  async submitTask(kind: TaskKind, req: AsyncSubmitRequest): Promise<AsyncSubmitResponse> {
    if (req === null || typeof req !== 'object') throw new ValidationError([{ loc: ['body'], msg: 'must be an object', type: 'type_error.dict' }]);
    this.videoOptions(req); // validate now; a bad option is the caller's error, not a failed task
    const sources = ['video_url', 'video_base64', 'video_path', 'tensor'].filter((k) => (req as Record<string, unknown>)[k] !== undefined);
    if (sources.length !== 1) {
      throw new ValidationError([{ loc: ['body'], msg: 'give exactly one of video_url, video_base64 or tensor', type: 'value_error.missing' }]);
    }
    if (req.tensor !== undefined) await this.checkTensorRef(kind, req.tensor);
    const id = newId('req');
    await this.catalog.transaction(async (tx) => {
      await tx.tasks.insert(id, kind, req, this.principal.owner);
      await tx.queue.enqueue(kind === 'embedding' ? 'task.embedding' : 'task.tagging', id);
    });
    await this.onWorkQueued();
    return { request_id: id, status: 'pending' };
  }

  async uploadTensors(req: TensorUploadRequest): Promise<TensorUploadResponse> {
    return storeTensorUpload(req, this.blobs, this.maxTensorBytes, this.principal.owner);
  }

  /** Unknown keys are the caller's error (404) at submit time, not a failed task later. */
  private async checkTensorRef(kind: TaskKind, ref: unknown): Promise<void> {
    if (ref === null || typeof ref !== 'object') throw new ValidationError([{ loc: ['body', 'tensor'], msg: 'must be an object', type: 'type_error.dict' }]);
    const r = ref as Record<string, unknown>;
    if (typeof r.video_input_key !== 'string') {
      throw new ValidationError([{ loc: ['body', 'tensor', 'video_input_key'], msg: 'is required', type: 'value_error.missing' }]);
    }
    const optional = kind === 'embedding' ? 'audio_input_key' : 'video_kwargs_key';
    const keys: [string, string][] = [['video_input_key', r.video_input_key]];
    if (r[optional] !== undefined) {
      if (typeof r[optional] !== 'string') throw new ValidationError([{ loc: ['body', 'tensor', optional], msg: 'must be a string', type: 'type_error.str' }]);
      keys.push([optional, r[optional] as string]);
    }
    for (const [field, key] of keys) {
      const ext = field === 'video_kwargs_key' ? '.json' : '.bin';
      const owner = tensorKeyOwner(key);
      let exists = false;
      try {
        exists = owner !== undefined && canSee(this.principal, owner) && (await this.blobs.has(`${key}${ext}`));
      } catch {
        exists = false;
      }
      if (!exists) throw new NotFoundError(`unknown ${field}: ${key}`);
    }
  }

  async taskStatus(requestId: string): Promise<AsyncStatusResponse> {
    const t = await this.catalog.tasks.byId(requestId);
    if (!t || !canSee(this.principal, t.owner)) throw new NotFoundError(`task not found: ${requestId}`);
    const out: AsyncStatusResponse = { request_id: t.id, status: t.status };
    if (t.status === 'completed' && t.result_json) Object.assign(out, JSON.parse(t.result_json));
    if (t.status === 'failed') out.error_message = t.error_message ?? 'failed';
    return out;
  }

  // ---- jobs (run by workers) ---------------------------------------------------------------

  /** Runs one claimed job to its end state. Never throws for a failure of the work itself. */
  async runJob(job: Pick<QueuedJob, 'kind' | 'refId'>, ctx: JobContext): Promise<'done' | 'failed'> {
    switch (job.kind) {
      case 'video.process':
        return this.processVideoJob(job.refId, ctx);
      case 'task.embedding':
      case 'task.tagging':
        return this.runTaskJob(job.refId, ctx);
      default:
        return 'failed';
    }
  }

  /** Marks the subject of a job failed (used when the queue gives up on a job). */
  /**
   * Fails the videos and tasks that no job will finish any more: their job was failed (or gave
   * up) but the process stopped before it could fail them too. Workers run it when they start and
   * every 30 s while idle. Returns how many it failed.
   */
  async failStranded(): Promise<number> {
    const why = (lastError: string | null) => `processing stopped: ${lastError ?? 'its job was lost'}`;
    const videos = await this.catalog.videos.stranded();
    for (const v of videos) await this.catalog.videos.markFailed(v.id, why(v.last_error));
    const tasks = await this.catalog.tasks.stranded();
    for (const t of tasks) await this.catalog.tasks.fail(t.id, why(t.last_error));
    return videos.length + tasks.length;
  }

  async failJobSubject(job: Pick<QueuedJob, 'kind' | 'refId'>, message: string): Promise<void> {
    if (job.kind === 'video.process') await this.catalog.videos.markFailed(job.refId, message);
    else await this.catalog.tasks.fail(job.refId, message);
  }

  private async processVideoJob(videoId: string, ctx: JobContext): Promise<'done' | 'failed'> {
    const video = await this.catalog.videos.byId(videoId);
    if (!video) return 'failed';
    const collection = await this.catalog.collections.byId(video.collection_id);
    if (!collection) return 'failed';
    await this.catalog.videos.markProcessing(videoId);
    let file: { path: string; release(): Promise<void> } | undefined;
    try {
      const embedder = this.embedder(collection.model);
      if (video.size_bytes === 0) throw new MediaError(`${video.filename} is empty (0 bytes)`);
      const analyzers = await this.analyzers(embedder);
      const speechSetting = speechSettingOf(collection.recipe_json);
      const speech = this.speechFor(speechSetting);
      file = await this.localVideoFile(video);
      const analyzed = await analyzeVideo(file.path, embedder, {
        analyzers,
        speech,
        thumbnails: true,
        signature: true,
        segmentSeconds: DEFAULTS.segmentSeconds,
        fps: DEFAULTS.fps,
        signal: ctx.signal,
        onProgress: (f) => void this.catalog.videos.setProgress(videoId, f * 99).catch(() => {}),
      });
      await this.storeThumbnails(videoId, analyzed.segments.map((s) => s.thumbnail));
      await storeTranscript(this.blobs, videoId, analyzed.transcript ?? { engine: '', language: '', words: [], duration: analyzed.media.durationSec, reason: analyzed.noTranscript ?? 'no speech analysis' });
      await this.catalog.videos.setMediaInfo(videoId, {
        duration: analyzed.media.durationSec,
        ...displaySize(analyzed.media),
        fps: analyzed.media.fps,
        codec: analyzed.media.videoCodec,
      });
      const segments = analyzed.segments.map((s) => ({
        idx: s.idx,
        start: s.start,
        end: s.end,
        description: s.description,
        details: s.details,
        keywords: keywordsOf(s.analysis),
        facts: storedFacts(s.analysis, analyzers),
        tags: s.tags, // every tag kind's label is filterable (src/store/segments.ts NewSegment.tags)
        phash: s.phash && !s.phash.flat ? phashToHex(s.phash) : undefined,
        vector: s.vector,
      }));
      // The results land only while this claim still holds the job (its fencing token), and the job
      // is done in the same transaction: a worker whose lease passed to another claim writes
      // nothing, and a worker killed after the commit leaves nothing to redo.
      const held = await this.catalog.transaction(async (tx) => {
        if (ctx.job && !(await tx.queue.complete(ctx.job.id, ctx.job.token))) return false;
        await tx.segments.replaceForVideo(videoId, collection.id, collection.dim, segments);
        if (analyzed.signature) await storeSignature(tx, videoId, analyzed.signature);
        await tx.videos.markProcessed(videoId, JSON.stringify(buildTags(analyzed, embedder.id)));
        await tx.collections.setRecipe(collection.id, { ...recipeOf(embedder, analyzers), speech_setting: speechSetting, speech: speech.version });
        return true;
      });
      if (held && ctx.job) ctx.settled = true;
      return held ? 'done' : 'failed';
    } catch (err) {
      if (ctx.signal.aborted) throw err; // shutdown: the job goes back to the queue
      await this.catalog.videos.markFailed(videoId, failureMessage(this.redact(err, file ? [[file.path, video.filename]] : [])));
      await this.catalog.signatures.delete(videoId); // an upload's quick signature stands for nothing now
      return 'failed';
    } finally {
      await file?.release();
    }
  }

  private async runTaskJob(requestId: string, ctx: JobContext): Promise<'done' | 'failed'> {
    const task = await this.catalog.tasks.byId(requestId);
    if (!task) return 'failed';
    await this.catalog.tasks.markProcessing(requestId);
    try {
      const req = JSON.parse(task.request_json) as AsyncSubmitRequest;
      if (task.kind === 'tagging') {
        const tagged = req.tensor ? await this.tagTensor(req, ctx.signal) : await this.tagVideo(req, { signal: ctx.signal });
        await this.catalog.tasks.complete(requestId, tagged);
        return 'done';
      }
      const res = req.tensor ? await this.encodeTensor(req, ctx.signal) : await this.encodeVideo(req, { signal: ctx.signal });
      await this.catalog.tasks.complete(requestId, {
        embedding: res.video_embedding,
        embeddings: res.embeddings,
        segments: res.segments,
        model: res.model,
        dim: res.dim,
      });
      return 'done';
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      await this.catalog.tasks.fail(requestId, failureMessage(this.redact(err, [])));
      return 'failed';
    }
  }

  /** An error whose message names the user's file, never a path of this machine's data or temp directories. */
  redact(err: unknown, names: [string, string][] = []): unknown {
    return redactError(err, names, [this.paths.home]);
  }

  /**
   * Loads the embedders the library's collections use (a warm process does this once, so the
   * first search it answers for the CLI is as quick as the next). Failures are left for the call
   * that needs the model to report.
   */
  async preloadEmbedders(): Promise<void> {
    const models = new Set((await this.catalog.collections.list(1000, 0)).map((c) => c.model));
    for (const id of models) await this.embedder(id).load().catch(() => {});
  }

  private embedder(id: string, loc: (string | number)[] = ['model']): Embedder {
    try {
      return this.embedderFor(id);
    } catch (err) {
      throw new ValidationError([{ loc, msg: errorMessage(err), type: 'value_error.model' }]);
    }
  }

  async close(): Promise<void> {
    await this.textEncoder.close();
    await this.catalog.close();
  }
}

/** A collection on a model that is not installed could never process a video: refuse it now. */
async function assertModelInstalled(id: string): Promise<void> {
  const { ModelManager } = await import('../models/manager.js');
  const manager = new ModelManager();
  let installed: boolean;
  try {
    installed = manager.isInstalled(id);
  } catch {
    return; // an embedder registered without a manifest (tests, plug-ins) manages its own files
  }
  if (!installed) {
    throw new ValidationError([{ loc: ['body', 'model'], msg: `model ${id} is not installed: run \`vidembed models pull ${id}\``, type: 'value_error.model' }]);
  }
}

const VIDEO_STATUSES: VideoStatus[] = ['uploaded', 'processing', 'processed', 'failed'];

function toVideoSummary(v: VideoRow): VideoSummary {
  const out: VideoSummary = { video_id: v.id, collection_id: v.collection_id, filename: v.filename, status: v.status, size_bytes: v.size_bytes, created_at: v.created_at };
  if (v.status === 'processing' && v.progress !== null) out.progress = v.progress;
  if (v.status === 'failed' && v.error_message) out.error_message = v.error_message;
  if (v.duration !== null) out.duration = v.duration;
  if (v.width !== null) out.width = v.width;
  if (v.height !== null) out.height = v.height;
  if (v.fps !== null) out.fps = v.fps;
  if (v.codec) out.codec = v.codec;
  return out;
}

function toSummary(row: CollectionRow): CollectionSummary {
  return {
    id: row.id,
    owner: row.owner,
    name: row.name,
    description: row.description,
    video_count: row.video_count,
    created_at: row.created_at,
    model: row.model,
    dim: row.dim,
    ...(row.recipe_json ? { recipe: JSON.parse(row.recipe_json) as Record<string, string> } : {}),
    speech: speechSettingOf(row.recipe_json),
  };
}

export function toEncodeVideoResponse(analyzed: AnalyzedVideo, embedder: Embedder): EncodeVideoResponse {
  return {
    embeddings: analyzed.segments.map((s) => Array.from(s.vector)),
    segments: analyzed.segments.map((s) => ({ start: s.start, end: s.end })),
    model: embedder.id,
    dim: embedder.dim,
    video_embedding: Array.from(analyzed.videoVector),
    descriptions: analyzed.segments.map((s) => s.description),
  };
}

function failureMessage(err: unknown): string {
  if (err instanceof VidembedError) return err.message;
  return `internal error: ${errorMessage(err)}`;
}

/**
 * Text longer than this is cut before any tokenizer sees it: far more than any embedder's context
 * holds (USE lite reads 256 tokens, CLIP 77), so the cut changes no vector, and a megabyte-long
 * query costs no more than a short one. The answer says `truncated: true` (docs/api.md).
 */
export const MAX_TEXT_CHARS = 16_384;

export function boundText(text: string): { text: string; cut: boolean } {
  if (text.length <= MAX_TEXT_CHARS) return { text, cut: false };
  // Never split a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(text[MAX_TEXT_CHARS - 1]) ? MAX_TEXT_CHARS - 1 : MAX_TEXT_CHARS;
  return { text: text.slice(0, end), cut: true };
}

/** A tag filter value: one of the tag's labels, else a 422 that lists them. */
function tagFilter(value: unknown, loc: (string | number)[], allowed: readonly string[]): string | undefined {
  const v = optionalString(value, loc);
  if (v !== undefined && !allowed.includes(v)) {
    throw new ValidationError([{ loc, msg: `must be one of ${allowed.join(', ')}`, type: 'value_error.enum' }]);
  }
  return v;
}

/**
 * The name of the script most of a query's letters are in, when it is not one the text models
 * read (they read English: Latin script); undefined when the query is mostly Latin letters.
 */
export function uncoveredScript(text: string): string | undefined {
  const letters = text.match(/\p{L}/gu) ?? [];
  if (letters.length === 0 || readsAsEnglish(text)) return undefined;
  const scripts = ['Han', 'Hiragana', 'Katakana', 'Hangul', 'Cyrillic', 'Greek', 'Arabic', 'Hebrew', 'Devanagari', 'Thai'];
  let best = 'a non-Latin';
  let most = 0;
  for (const name of scripts) {
    const n = letters.filter((c) => new RegExp(`\\p{Script=${name}}`, 'u').test(c)).length;
    if (n > most) {
      most = n;
      best = name === 'Hiragana' || name === 'Katakana' ? 'Japanese' : name === 'Han' ? 'Chinese/Japanese (Han)' : name;
    }
  }
  return best;
}

function optionalString(value: unknown, loc: (string | number)[]): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new ValidationError([{ loc, msg: 'must be a string', type: 'type_error.str' }]);
  return value;
}

async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/** Keeps a short alphanumeric extension so ffmpeg can use it as a hint; never a path. */
function safeExtension(filename: string): string {
  const ext = path.extname(path.basename(filename)).toLowerCase();
  return /^\.[a-z0-9]{1,8}$/.test(ext) ? ext : '';
}

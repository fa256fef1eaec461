/**
 * The local face of VideoService (the CLI's, and what a warm process answers): a thin facade over
 * the services of a library opened from a home (src/services). It validates each request with the
 * operation's schema (src/api/validate.ts: the same schemas the server validates with) and acts
 * for one principal: full rights by default; `as(principal)` gives a facade for another.
 */
import type {
  AsyncStatusResponse,
  AsyncSubmitRequest,
  AsyncSubmitResponse,
  CollectionDetails,
  CollectionSummary,
  CreateCollectionRequest,
  CreateCollectionResponse,
  DeleteResponse,
  DuplicatesRequest,
  DuplicatesResponse,
  EncodeTextRequest,
  EncodeTextResponse,
  EncodeVideoRequest,
  EncodeVideoResponse,
  IngestFile,
  ListCollectionsRequest,
  ListVideosRequest,
  FindVideosRequest,
  ReindexResponse,
  SearchRequest,
  SearchResponse,
  TagVideoResponse,
  TaskKind,
  TensorUploadRequest,
  TensorUploadResponse,
  TranscriptResponse,
  UpdateCollectionRequest,
  UploadVideoResponse,
  VideoDetails,
  VideoService,
  VideoStatusResponse,
  VideoSummary,
  LibraryScanRequest,
  ListJobsResponse,
  CancelJobResponse,
  RescanResponse,
  CreateWebhookRequest,
  CreateWebhookResponse,
  DeleteWebhookResponse,
  ListWebhooksResponse,
  TestWebhookResponse,
  WebhookDeliveriesRequest,
  WebhookDeliveriesResponse,
  WebhookSummary,
} from '../api/types.js';
import { LOCAL_PRINCIPAL, type Principal } from '../api/principal.js';
import { validateRequest } from '../api/validate.js';
import type { BlobStore } from '../store/blobs.js';
import type { Catalog } from '../store/catalog/types.js';
import type { Store } from '../store/index.js';
import type { QueuedJob } from '../store/queue/types.js';
import type { QueryTextEncoder } from '../embedders/text-encoder.js';
import { createServices, openLibrary, type EngineOptions, type JobContext, type Services, type VideoFile } from '../services/index.js';
import type { Paths } from '../config.js';
import { DeliveryLoop } from './deliveries.js';

export type { EngineOptions, JobContext, VideoFile };
export { MAX_TEXT_CHARS, boundText, uncoveredScript } from '../services/search.js';
import type { SearchOptions } from '../services/search.js';
export { toEncodeVideoResponse } from '../services/analysis.js';

export class LocalEngine implements VideoService {
  readonly services: Services;
  /** Who this facade acts for: full rights by default (the local CLI); see `as()`. */
  readonly principal: Principal;
  private readonly localStore?: Store;

  constructor(opts: EngineOptions = {}, bound?: { services: Services; localStore?: Store; principal: Principal }) {
    if (bound) {
      this.services = bound.services;
      this.localStore = bound.localStore;
      this.principal = Object.freeze({ ...bound.principal });
      return;
    }
    const { library, localStore } = openLibrary(opts);
    this.services = createServices(library);
    this.localStore = localStore;
    this.principal = LOCAL_PRINCIPAL;
  }

  /** The same library, services and caches, acting for `principal` (another owner's ids answer 404). */
  as(principal: Principal): LocalEngine {
    return new LocalEngine({}, { services: this.services, localStore: this.localStore, principal });
  }

  get paths(): Paths {
    return this.services.library.paths;
  }
  /** The library's catalog, queue and indexes: SQLite under the home, or PostgreSQL (VIDEMBED_DATABASE_URL). */
  get catalog(): Catalog {
    return this.services.library.catalog;
  }
  get blobs(): BlobStore {
    return this.services.library.blobs;
  }
  get textEncoder(): QueryTextEncoder {
    return this.services.library.textEncoder;
  }
  get maxUploadBytes(): number {
    return this.services.library.maxUploadBytes;
  }
  get maxTensorBytes(): number {
    return this.services.library.maxTensorBytes;
  }

  /** The SQLite store under the catalog (tools and tests that work on the local file); none on PostgreSQL. */
  get store(): Store {
    if (!this.localStore) throw new Error('this library is on PostgreSQL: it has no local SQLite store');
    return this.localStore;
  }

  /** True when the library's catalog is this machine's SQLite file. */
  get isLocalLibrary(): boolean {
    return this.localStore !== undefined;
  }

  // ---- collections -------------------------------------------------------------------------

  async createCollection(req: CreateCollectionRequest): Promise<CreateCollectionResponse> {
    return this.services.collections.create(this.principal, validateRequest('createCollection', 'body', req));
  }
  async listCollections(req: ListCollectionsRequest = {}): Promise<CollectionSummary[]> {
    return this.services.collections.list(this.principal, validateRequest('listCollections', 'querystring', req));
  }
  async getCollection(idOrName: string): Promise<CollectionSummary> {
    return this.services.collections.get(this.principal, idOrName);
  }
  async collectionDetails(idOrName: string): Promise<CollectionDetails> {
    return this.services.collections.details(this.principal, idOrName);
  }
  async updateCollection(idOrName: string, patch: UpdateCollectionRequest): Promise<CollectionSummary> {
    return this.services.collections.update(this.principal, idOrName, validateRequest('updateCollection', 'body', patch));
  }
  async deleteCollection(idOrName: string): Promise<DeleteResponse> {
    return this.services.collections.delete(this.principal, idOrName);
  }
  async reindexCollection(idOrName: string, opts: { all?: boolean } = {}): Promise<ReindexResponse> {
    return this.services.collections.reindex(this.principal, idOrName, validateRequest('reindexCollection', 'querystring', opts));
  }

  // ---- videos ------------------------------------------------------------------------------

  async uploadVideo(collectionIdOrName: string, file: IngestFile): Promise<UploadVideoResponse> {
    return this.services.videos.upload(this.principal, collectionIdOrName, file);
  }
  async videoStatus(videoId: string): Promise<VideoStatusResponse> {
    return this.services.videos.status(this.principal, videoId);
  }
  async videoDetails(videoId: string): Promise<VideoDetails> {
    return this.services.videos.details(this.principal, videoId);
  }
  async videoTranscript(videoId: string): Promise<TranscriptResponse> {
    return this.services.videos.transcript(this.principal, videoId);
  }
  async videoThumbnail(videoId: string, t?: number): Promise<Buffer> {
    return this.services.videos.thumbnail(this.principal, videoId, validateRequest('videoThumbnail', 'querystring', { t }).t);
  }
  async thumbnailFiles(videoId: string): Promise<{ poster?: string; segments: (string | undefined)[] }> {
    return this.services.videos.thumbnailFiles(this.principal, videoId);
  }
  async videoFile(videoId: string): Promise<VideoFile> {
    return this.services.videos.file(this.principal, videoId);
  }
  /** Where a video's file is on this machine (`video show`): its blob's path, or the user's file in place; nothing is opened. */
  async videoPath(videoId: string): Promise<string | undefined> {
    return this.services.library.pathOf(await this.services.library.video(this.principal, videoId));
  }
  async listVideos(collectionIdOrName: string, req: ListVideosRequest = {}): Promise<VideoSummary[]> {
    return this.services.videos.list(this.principal, collectionIdOrName, validateRequest('listVideos', 'querystring', req));
  }
  async findVideos(req: FindVideosRequest): Promise<VideoSummary[]> {
    const { name, collection } = validateRequest('findVideos', 'querystring', req);
    return this.services.videos.find(this.principal, name, { collection });
  }
  async deleteVideo(videoId: string): Promise<DeleteResponse> {
    return this.services.videos.delete(this.principal, videoId);
  }
  async reprocessVideo(videoId: string): Promise<VideoStatusResponse> {
    return this.services.videos.reprocess(this.principal, videoId);
  }
  async scanLibrary(collectionIdOrName: string, req: LibraryScanRequest = {}): Promise<RescanResponse> {
    const { inPlace } = this.services;
    if (req.path !== undefined) await inPlace.addFolder(this.principal, collectionIdOrName, req.path);
    return inPlace.rescan(this.principal, collectionIdOrName, { includeDeleted: req.include_deleted === true });
  }
  async listJobs(owner?: string): Promise<ListJobsResponse> {
    return this.services.queue.list(this.principal, owner);
  }
  async cancelJob(jobId: string): Promise<CancelJobResponse> {
    return this.services.queue.cancel(this.principal, jobId);
  }
  async findDuplicates(collectionIdOrName: string, req: DuplicatesRequest = {}): Promise<DuplicatesResponse> {
    return this.services.videos.duplicates(this.principal, collectionIdOrName, validateRequest('duplicates', 'querystring', req));
  }

  // ---- search and embeddings -------------------------------------------------------------

  async search(collectionIdOrName: string, req: SearchRequest, opts: SearchOptions = {}): Promise<SearchResponse> {
    return this.services.search.search(this.principal, collectionIdOrName, validateRequest('search', 'body', req), opts);
  }
  async encodeText(req: EncodeTextRequest & { model?: string }): Promise<EncodeTextResponse> {
    return this.services.search.encodeText(validateRequest('encodeText', 'body', req));
  }
  async encodeVideo(req: EncodeVideoRequest, opts: { signal?: AbortSignal } = {}): Promise<EncodeVideoResponse> {
    return this.services.analysis.encodeVideo(validateRequest('encodeVideo', 'body', req), opts);
  }
  async tagVideo(req: EncodeVideoRequest, opts: { signal?: AbortSignal } = {}): Promise<TagVideoResponse> {
    return this.services.analysis.tagVideo(validateRequest('tagVideo', 'body', req), opts);
  }

  // ---- async tasks -------------------------------------------------------------------------

  async submitEmbeddingTask(req: AsyncSubmitRequest): Promise<AsyncSubmitResponse> {
    return this.submitTask('embedding', req);
  }
  async submitTask(kind: TaskKind, req: AsyncSubmitRequest): Promise<AsyncSubmitResponse> {
    return this.services.tasks.submit(this.principal, kind, validateRequest('asyncSubmit', 'body', req));
  }
  async taskStatus(requestId: string): Promise<AsyncStatusResponse> {
    return this.services.tasks.status(this.principal, requestId);
  }
  async uploadTensors(req: TensorUploadRequest): Promise<TensorUploadResponse> {
    return this.services.tasks.uploadTensors(this.principal, validateRequest('tensorUpload', 'body', req));
  }

  // ---- webhooks (issue 34) -----------------------------------------------------------------

  /**
   * Registers a webhook for this facade's owner. `opts.allowPrivate` (local callers only: `webhooks
   * add --allow-private`) lets it point at a private or loopback address; the server never passes it.
   */
  async createWebhook(req: CreateWebhookRequest, opts: { allowPrivate?: boolean } = {}): Promise<CreateWebhookResponse> {
    return this.services.webhooks.create(this.principal, validateRequest('createWebhook', 'body', req), opts);
  }
  async listWebhooks(): Promise<ListWebhooksResponse> {
    return this.services.webhooks.list(this.principal);
  }
  async getWebhook(webhookId: string): Promise<WebhookSummary> {
    return this.services.webhooks.get(this.principal, webhookId);
  }
  async deleteWebhook(webhookId: string): Promise<DeleteWebhookResponse> {
    return this.services.webhooks.remove(this.principal, webhookId);
  }
  async testWebhook(webhookId: string): Promise<TestWebhookResponse> {
    return this.services.webhooks.test(this.principal, webhookId);
  }
  async webhookDeliveries(webhookId: string, req: WebhookDeliveriesRequest = {}): Promise<WebhookDeliveriesResponse> {
    return this.services.webhooks.deliveries(this.principal, webhookId, validateRequest('webhookDeliveries', 'querystring', req));
  }

  // ---- jobs (run by workers) ---------------------------------------------------------------

  /** Webhook deliveries, beside a worker's jobs (src/runtime/worker.ts): until `signal` aborts. */
  async besideJobs(workerId: string, signal: AbortSignal, log: (line: string) => void): Promise<void> {
    const { webhooks } = this.services;
    await new DeliveryLoop(webhooks, { concurrency: webhooks.settings.concurrency, pollMs: webhooks.settings.pollMs, log }).run(workerId, signal);
  }
  async besideJobsDue(): Promise<boolean> {
    return (await this.services.webhooks.dueCount()) > 0;
  }

  async runJob(job: Pick<QueuedJob, 'kind' | 'refId'>, ctx: JobContext): Promise<'done' | 'failed'> {
    return this.services.jobs.run(job, ctx);
  }
  async failStranded(): Promise<number> {
    return this.services.jobs.failStranded();
  }
  /**
   * Workers' upkeep, when they start and while idle: tasks past their retention deleted, videos
   * that failed for lack of space retried once there is room, what stopped processes left behind
   * removed (temp dirs, staged files, files of deleted videos).
   */
  async housekeeping(): Promise<string[]> {
    const expired = await this.services.tasks.expire();
    const retried = await this.services.jobs.retryNoSpace();
    const swept = await this.services.jobs.sweepLeftovers();
    const purged = await this.services.webhooks.purge();
    return [
      ...swept,
      ...(expired.tasks || expired.tensorUploads ? [`deleted ${expired.tasks} task(s) and ${expired.tensorUploads} tensor upload(s) past their retention`] : []),
      ...(purged ? [`deleted ${purged} webhook delivery record(s) past their retention`] : []),
      ...(retried ? [`queued again ${retried} video(s) that had failed for lack of space`] : []),
    ];
  }
  async failJobSubject(job: Pick<QueuedJob, 'kind' | 'refId'>, message: string): Promise<void> {
    return this.services.jobs.failSubject(job, message);
  }
  async preloadEmbedders(): Promise<void> {
    return this.services.jobs.preloadEmbedders();
  }

  /** An error whose message names the user's file, never a path of this machine's data or temp directories. */
  redact(err: unknown, names: [string, string][] = []): unknown {
    return this.services.library.redact(err, names);
  }

  async close(): Promise<void> {
    await this.services.library.close();
  }
}

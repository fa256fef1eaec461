/**
 * Request and response shapes of the API (SPEC §2–§6), made from the operations' JSON Schemas
 * (src/api/schemas.ts): the types the server validates and serializes with are the types the
 * services, the local facade and the remote client speak, so the CLI prints the same JSON
 * whichever face serves it. Only what no schema describes is written here: local-only fields
 * (a path on this machine), the ingest of a local file, and the VideoService interface.
 */
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { inPlaceSchemas, jobSchemas, operationsSchemas, schemas, tagsSchema } from './schemas.js';

type Ops = typeof schemas;

/**
 * A type without the open `[x: string]: unknown` that `additionalProperties` (stated or not) adds
 * at every level: the named fields only (an object may carry more).
 */
export type Named<T> = T extends readonly (infer E)[]
  ? Named<E>[]
  : T extends object
    ? keyof NamedKeys<T> extends never
      ? { [K in keyof T]: Named<T[K]> } // a map (only additionalProperties): its entries stay
      : { [K in keyof NamedKeys<T>]: Named<T[K & keyof T]> }
    : T;
type NamedKeys<T> = { [K in keyof T as string extends K ? never : K]: T[K] };

/** A request part as a caller writes it: defaulted fields stay optional. */
type RequestPart<K extends keyof Ops, P extends 'body' | 'querystring'> = Ops[K] extends { [Q in P]: infer S extends JSONSchema }
  ? Named<FromSchema<TypeOf<S>, { keepDefaultedPropertiesOptional: true }>>
  : never;

/**
 * The schema as TypeScript types see it: `oneOf` ("exactly one of these fields", checked at run
 * time) left out, as json-schema-to-ts would make the request types unusable (never) with it.
 */
export type TypeOf<S> = S extends { oneOf: unknown } ? Omit<S, 'oneOf'> : S;

/** An operation's success body. */
type ResponseBody<K extends keyof Ops> = Ops[K] extends { response: infer S extends JSONSchema } ? Named<FromSchema<S>> : never;

/** Local callers only (the CLI): the video is a file on this machine (the server strips it). */
interface LocalVideo {
  video_path?: string;
}

export type VideoStatus = ResponseBody<'videoStatus'>['status'];
export type TaskStatus = ResponseBody<'asyncStatus'>['status'];
export type TaskKind = RequestPart<'tensorUpload', 'body'>['service'];

export type CreateCollectionRequest = RequestPart<'createCollection', 'body'>;
export type CreateCollectionResponse = ResponseBody<'createCollection'>;
export type CollectionSummary = ResponseBody<'listCollections'>[number];
/** A collection with how many of its videos are in each status (`GET /collections/{id}`). */
export type CollectionDetails = ResponseBody<'collectionDetails'>;
export type UpdateCollectionRequest = RequestPart<'updateCollection', 'body'>;
export type DeleteResponse = ResponseBody<'deleteCollection'>;
export type ListCollectionsRequest = RequestPart<'listCollections', 'querystring'>;
export type ReindexResponse = ResponseBody<'reindexCollection'>;

export type ListVideosRequest = RequestPart<'listVideos', 'querystring'>;
export type FindVideosRequest = RequestPart<'findVideos', 'querystring'>;
/** A video as listed (`GET /collections/{id}/videos`): newest first. */
export type VideoSummary = ResponseBody<'listVideos'>[number];
/** A video with its tags and segments (`GET /videos/{id}`, `vidembed video show`). */
export type VideoDetails = ResponseBody<'videoDetails'>;
export type UploadVideoResponse = ResponseBody<'uploadVideo'>;
export type VideoStatusResponse = ResponseBody<'videoStatus'>;
/** `GET /videos/{id}/transcript`: every recognized word with its times and confidence. */
export type TranscriptResponse = ResponseBody<'videoTranscript'>;

/**
 * A search: text, a picture or a moment, or a mix (the schema asks for at least one; this type
 * leaves that to it), plus one filter field per filterable tag kind (src/tags/registry.ts).
 */
export type SearchRequest = Named<FromSchema<Omit<Ops['search']['body'], 'anyOf' | 'allOf'>, { keepDefaultedPropertiesOptional: true }>> & {
  /** Local callers only (the CLI's `--image`): a picture on this machine. */
  image_path?: string;
};
export type SearchResponse = ResponseBody<'search'>;
export type SearchResult = SearchResponse['results'][number];
export type ConfidenceLabel = SearchResult['confidence_label'];
/** A spoken match: the transcript's words around it, the matched words, when they are said. */
export type SaidMatch = NonNullable<SearchResult['said']>;

export type EncodeTextRequest = RequestPart<'encodeText', 'body'>;
export type EncodeTextResponse = ResponseBody<'encodeText'>;
/** Exactly one source: `video_url`, `video_base64`, or (local face only) `video_path`. */
export type EncodeVideoRequest = RequestPart<'encodeVideo', 'body'> & LocalVideo;
export type EncodeVideoResponse = ResponseBody<'encodeVideo'>;
export type VideoSource = Pick<EncodeVideoRequest, 'video_url' | 'video_base64' | 'video_path'>;

export type { TagValue } from '../tags/aggregate.js';
/** SPEC §3 Tags: one value per tag kind measured (src/tags/registry.ts), segments, shots and cuts. */
export type Tags = FromSchema<typeof tagsSchema>;
export type TagVideoResponse = { tags: Tags };

export type AsyncSubmitRequest = RequestPart<'asyncSubmit', 'body'> & LocalVideo;
export type TensorRef = NonNullable<AsyncSubmitRequest['tensor']>;
export type AsyncSubmitResponse = ResponseBody<'asyncSubmit'>;
export type AsyncStatusResponse = Omit<ResponseBody<'asyncStatus'>, 'tags'> & { tags?: Tags };
export type TensorUploadRequest = RequestPart<'tensorUpload', 'body'>;
export type TensorUploadResponse = ResponseBody<'tensorUpload'>;
export type TensorObject = TensorUploadRequest['video_input'];

export type DuplicatesRequest = RequestPart<'duplicates', 'querystring'>;
/** `GET /collections/{id}/duplicates`, `vidembed duplicates`. */
export type DuplicatesResponse = ResponseBody<'duplicates'>;
export type DuplicateGroup = DuplicatesResponse['groups'][number];

/** A local file to ingest: the engine takes ownership of `path` when `move` is true. */
export interface IngestFile {
  path: string;
  filename: string;
  move?: boolean;
  /** Store it even when the collection already holds the same bytes. */
  force?: boolean;
  /** Index the user's file where it lies (its path, fingerprint and mtime): nothing is copied. Local only. */
  inPlace?: boolean;
  /** Skip it when its pictures are already in a video of the collection (re-encoded, resized or trimmed). */
  skipDuplicates?: boolean;
  /** Called as the file's bytes go (read on this machine, sent to a server) with how many have gone so far. */
  onProgress?: (bytes: number) => void;
}

/**
 * The one service interface with three faces: the local engine, the HTTP server (an adapter over
 * the engine) and the remote client. Methods throw errors from src/api/errors.ts.
 */
export interface VideoService {
  createCollection(req: CreateCollectionRequest): Promise<CreateCollectionResponse>;
  listCollections(req?: ListCollectionsRequest): Promise<CollectionSummary[]>;
  /** Resolves a collection by id or by name. */
  getCollection(idOrName: string): Promise<CollectionSummary>;
  /** Processes a collection's videos again in the background (`collection reindex`). */
  reindexCollection(idOrName: string, opts?: { all?: boolean }): Promise<ReindexResponse>;
  collectionDetails(idOrName: string): Promise<CollectionDetails>;
  updateCollection(idOrName: string, patch: UpdateCollectionRequest): Promise<CollectionSummary>;
  /** Removes a collection with its videos, segments, vectors, keywords, files and pending jobs. */
  deleteCollection(idOrName: string): Promise<DeleteResponse>;
  listVideos(collectionIdOrName: string, req?: ListVideosRequest): Promise<VideoSummary[]>;
  /** The videos a name stands for: a video id, a file name or a path in place (`card-01/C0001.MP4`), oldest first. */
  findVideos(req: FindVideosRequest): Promise<VideoSummary[]>;
  videoDetails(videoId: string): Promise<VideoDetails>;
  /** What is said in a video, word by word (empty, with `reason`, when nothing could be heard). */
  videoTranscript(videoId: string): Promise<TranscriptResponse>;
  deleteVideo(videoId: string): Promise<DeleteResponse>;
  reprocessVideo(videoId: string): Promise<VideoStatusResponse>;
  /** Groups of near-identical videos of a collection (re-encoded, resized, trimmed copies). */
  findDuplicates(collectionIdOrName: string, req?: DuplicatesRequest): Promise<DuplicatesResponse>;
  uploadVideo(collectionId: string, file: IngestFile): Promise<UploadVideoResponse>;
  /**
   * Footage in place: indexes the folder `req.path` where it lies (remembered for later scans),
   * then brings the collection's folders up to date (new, changed, moved, missing files). Locally
   * any folder; on a server only inside its library folders (`serve --library DIR`).
   */
  scanLibrary(collectionIdOrName: string, req?: LibraryScanRequest): Promise<RescanResponse>;
  /** Queued and running jobs, oldest first: the caller's own (an admin's: everyone's, or `owner`'s). */
  listJobs(owner?: string): Promise<ListJobsResponse>;
  /** Cancels a queued or running job; its video or task fails with "cancelled by …". */
  cancelJob(jobId: string): Promise<CancelJobResponse>;
  videoStatus(videoId: string): Promise<VideoStatusResponse>;
  search(collectionId: string, req: SearchRequest, opts?: { explain?: boolean }): Promise<SearchResponse>;
  encodeText(req: EncodeTextRequest): Promise<EncodeTextResponse>;
  encodeVideo(req: EncodeVideoRequest, opts?: { signal?: AbortSignal }): Promise<EncodeVideoResponse>;
  tagVideo(req: EncodeVideoRequest, opts?: { signal?: AbortSignal }): Promise<TagVideoResponse>;
  submitEmbeddingTask(req: AsyncSubmitRequest): Promise<AsyncSubmitResponse>;
  submitTask(kind: TaskKind, req: AsyncSubmitRequest): Promise<AsyncSubmitResponse>;
  taskStatus(requestId: string): Promise<AsyncStatusResponse>;
  uploadTensors(req: TensorUploadRequest): Promise<TensorUploadResponse>;
  /** Webhooks of the caller's owner (issue 34): the secret is in the answer to create only. */
  createWebhook(req: CreateWebhookRequest): Promise<CreateWebhookResponse>;
  listWebhooks(): Promise<ListWebhooksResponse>;
  getWebhook(webhookId: string): Promise<WebhookSummary>;
  deleteWebhook(webhookId: string): Promise<DeleteWebhookResponse>;
  /** Queues a `webhook.test` event for that endpoint alone. */
  testWebhook(webhookId: string): Promise<TestWebhookResponse>;
  /** Its deliveries, newest first, each with its attempts' status codes. */
  webhookDeliveries(webhookId: string, req?: WebhookDeliveriesRequest): Promise<WebhookDeliveriesResponse>;
  close(): Promise<void>;
}

/** `vidembed jobs`, `GET /jobs` and `POST /jobs/{id}/cancel` (issue 21). */
export type ListJobsResponse = Named<FromSchema<typeof jobSchemas.listJobs.response>>;
export type CancelJobResponse = Named<FromSchema<typeof jobSchemas.cancelJob.response>>;
/** DELETE of a task or a tensor upload (issue 21). */
export type TaskDeleteResponse = Named<FromSchema<typeof operationsSchemas.deleteTask.response>>;
/** `vidembed rescan`, `POST /collections/{id}/library-scan`: what a scan of footage in place found. */
export type RescanResponse = Named<FromSchema<(typeof inPlaceSchemas)['libraryScan']['response']>>;
export type LibraryScanRequest = Named<FromSchema<(typeof inPlaceSchemas)['libraryScan']['body']>>;

/** Webhooks (issue 34): `vidembed webhooks`, `/webhooks`. */
export type CreateWebhookRequest = RequestPart<'createWebhook', 'body'>;
/** A webhook as created: with its signing secret, shown this once. */
export type CreateWebhookResponse = ResponseBody<'createWebhook'>;
export type WebhookSummary = ResponseBody<'getWebhook'>;
export type ListWebhooksResponse = ResponseBody<'listWebhooks'>;
export type DeleteWebhookResponse = ResponseBody<'deleteWebhook'>;
export type TestWebhookResponse = ResponseBody<'testWebhook'>;
export type WebhookDeliveriesRequest = RequestPart<'webhookDeliveries', 'querystring'>;
export type WebhookDeliveriesResponse = ResponseBody<'webhookDeliveries'>;
export type WebhookDeliverySummary = WebhookDeliveriesResponse['deliveries'][number];

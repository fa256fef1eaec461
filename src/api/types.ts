/**
 * Request and response shapes of the API (SPEC §2–§6). The local engine, the HTTP server and the
 * remote client all speak exactly these, so the CLI prints the same JSON whichever face serves it.
 */

export type VideoStatus = 'uploaded' | 'processing' | 'processed' | 'failed';
export type TaskStatus = 'pending' | 'processing' | 'completed' | 'failed';
export type TaskKind = 'embedding' | 'tagging';

export interface CreateCollectionRequest {
  name: string;
  description?: string;
  /** Embedder id for the collection's vectors; default: the configured default model. */
  model?: string;
  /** Who transcribes what is said (default `auto`: the best engine installed). */
  speech?: 'auto' | 'off' | 'pocketsphinx' | 'whisper';
}

export interface CreateCollectionResponse {
  collection_id: string;
  name: string;
  description: string;
  created_at: string;
  model: string;
  dim: number;
  speech?: 'auto' | 'off' | 'pocketsphinx' | 'whisper';
}

export interface CollectionSummary {
  id: string;
  /** The owner whose library holds it (admins see every owner's). */
  owner?: string;
  name: string;
  description: string;
  video_count: number;
  created_at: string;
  model: string;
  dim: number;
  /** Analyzer versions its vectors were made with (as of its last processed video). */
  recipe?: Record<string, string>;
  /** Its speech setting. */
  speech?: 'auto' | 'off' | 'pocketsphinx' | 'whisper';
  /** The engine would make its vectors differently now (a new analyzer, a newer version): `collection reindex`. */
  needs_reindex?: boolean;
}

/** A collection with how many of its videos are in each status (`GET /collections/{id}`). */
export interface CollectionDetails extends CollectionSummary {
  counts: Record<VideoStatus, number>;
}

export interface UpdateCollectionRequest {
  name?: string;
  description?: string;
}

export interface DeleteResponse {
  id: string;
  deleted: true;
  /** For a collection: how many videos went with it. */
  videos?: number;
}

export interface ListVideosRequest {
  status?: VideoStatus;
  limit?: number;
  offset?: number;
}

/** A video as listed (`GET /collections/{id}/videos`): newest first. */
export interface VideoSummary {
  video_id: string;
  collection_id: string;
  filename: string;
  status: VideoStatus;
  progress?: number;
  error_message?: string;
  /** Seconds; known once processed. */
  duration?: number;
  /** Displayed size (after rotation), known once processed. */
  width?: number;
  height?: number;
  fps?: number;
  /** Video codec (h264, hevc, vp9…), known once processed. */
  codec?: string;
  size_bytes: number;
  created_at: string;
}

/** A video with its tags and segments (`GET /videos/{id}`, `vidembed video show`). */
export interface VideoDetails extends VideoSummary {
  tags?: Record<string, unknown>;
  segments: Array<{ start: number; end: number; thumbnail_url?: string; description: string; tags?: Record<string, unknown>; facts?: Record<string, unknown> }>;
}

export interface ReindexResponse {
  collection_id: string;
  /** Videos queued to be processed again; search answers from their old vectors until each is redone. */
  queued: number;
}

export interface ListCollectionsRequest {
  limit?: number;
  offset?: number;
}

export interface UploadVideoResponse {
  video_id: string;
  status: VideoStatus;
  /** True when the collection already held these bytes: nothing was stored, `video_id` is that video (send `force` to add it again). */
  duplicate?: boolean;
  /**
   * With `skip_duplicates`: the file's pictures are already in `video_id` (a re-encode, resize or
   * trim of it), so nothing was stored (`duplicate` is true); what that video is and how close.
   */
  near_duplicate?: { filename: string; similarity: number; coverage: number };
}

export interface VideoStatusResponse {
  video_id: string;
  status: VideoStatus;
  progress?: number;
  error_message?: string;
}

export interface SearchRequest {
  /** What to find, in words; optional when a picture, a moment or `said` is given. */
  text?: string;
  /** Words that were said: searches the transcripts only (exactly and by sound). */
  said?: string;
  /** A picture as the query (a still, a frame), as base64 bytes… */
  image_base64?: string;
  /** …or fetched from a public URL (the same guard as video_url). */
  image_url?: string;
  /** Local callers only (the CLI's `--image`): a picture on this machine. */
  image_path?: string;
  /** A moment as the query: the segment of `video_id` at `t` seconds, or the whole video; that video is left out of the results. */
  like?: { video_id: string; t?: number };
  top_k?: number;
  /** Results to skip (pages): offset + top_k reach at most 1,000. */
  offset?: number;
  /** Tag filters (issue: tagging); a result must match every given filter. */
  shot_size?: string;
  camera_movement?: string;
  shooting_angle?: string;
  /** What the soundtrack holds at the moment: speech, music, silence or other. */
  audio?: string;
  /** Leave out results whose confidence is below this, in [0, 1]. */
  min_confidence?: number;
}

export type ConfidenceLabel = 'high' | 'medium' | 'low';

export interface SearchResult {
  video_id: string;
  /** Cosine similarity of the best segment to the query. */
  similarity: number;
  /** What results are ordered by: similarity plus the keyword bonus (docs/engine.md). */
  relevance: number;
  /** How likely this is what the query asked for, in [0, 1], calibrated (docs/engine.md). */
  confidence: number;
  confidence_label: ConfidenceLabel;
  start: number;
  end: number;
  filename: string;
  /** Present when asked for (`explain`): what the engine saw in the matching segment. */
  description?: string;
  /** With `explain`: the query words found among the words analysis found in the segment. */
  matched_words?: string[];
  /** API path of the matching moment's keyframe (`GET /videos/{id}/thumbnail?t=`). */
  thumbnail_url?: string;
  /** The moment's shot tags: shot size, camera movement, shooting angle (label and confidence). */
  tags?: Partial<Record<'shot_size' | 'camera_movement' | 'shooting_angle', { label: string; confidence: number }>>;
  /** Present when the result was found by what is said: the words around the match (`*matched*`). */
  said?: SaidMatch;
}

/** A spoken match: the transcript's words around it, the matched words, when they are said. */
export interface SaidMatch {
  /** Up to 8 words each side, the matched ones between asterisks: `…the quarterly *revenue* grew…`. */
  text: string;
  matched: string[];
  start: number;
  end: number;
  /** In [0, 1]: 1 when the query's sounds stand in the transcript exactly. */
  score: number;
}

export interface SearchResponse {
  results: SearchResult[];
  model: string;
  /** The offset this page starts at, when not 0. */
  offset?: number;
  /** Present when more results may follow: the `offset` of the next page. */
  next_offset?: number;
  /** True when the query was cut to the text limit before encoding. */
  truncated?: boolean;
  /** Things the user should know: every match is weak, the query's script is not read, videos still processing. */
  warnings?: string[];
}

export interface EncodeTextRequest {
  text: string;
}

export interface EncodeTextResponse {
  embedding: number[];
  model: string;
  dim: number;
  truncated: boolean;
}

/** Exactly one source: `video_url`, `video_base64`, or (local face only) `video_path`. */
export interface VideoSource {
  video_url?: string;
  video_base64?: string;
  video_path?: string;
}

export interface EncodeVideoOptions {
  segment_seconds?: number;
  fps?: number;
  model?: string;
}

export type EncodeVideoRequest = VideoSource & EncodeVideoOptions;

export interface Segment {
  start: number;
  end: number;
}

export interface EncodeVideoResponse {
  embeddings: number[][];
  segments: Segment[];
  model: string;
  dim: number;
  video_embedding: number[];
  /** One description per segment (perception tier). */
  descriptions?: string[];
}

export interface TagValue {
  label: string;
  confidence: number;
  scores: Record<string, number>;
  [extra: string]: unknown;
}

export interface Tags {
  shot_size?: TagValue;
  shooting_angle?: TagValue;
  camera_movement?: TagValue;
  segments: Array<{ start: number; end: number; [tag: string]: unknown }>;
  duration: number;
  model: string;
  [extra: string]: unknown;
}

export interface TagVideoResponse {
  tags: Tags;
}

export interface TensorRef {
  video_input_key?: string;
  audio_input_key?: string;
  video_kwargs_key?: string;
}

export type AsyncSubmitRequest = VideoSource & EncodeVideoOptions & { tensor?: TensorRef };

export interface AsyncSubmitResponse {
  request_id: string;
  status: TaskStatus;
}

export interface AsyncStatusResponse {
  request_id: string;
  status: TaskStatus;
  embedding?: number[];
  embeddings?: number[][];
  segments?: Segment[];
  tags?: Tags;
  error_message?: string;
}

export interface TensorObject {
  data: string;
  shape: number[];
  dtype: string;
}

export interface TensorUploadRequest {
  service: TaskKind;
  request_id: string;
  video_input: TensorObject;
  audio_input?: TensorObject;
  video_kwargs?: Record<string, unknown>;
}

export interface TensorUploadResponse {
  request_id: string;
  r2_keys: { video_input: string; audio_input?: string; video_kwargs?: string };
}

/** A local file to ingest: the engine takes ownership of `path` when `move` is true. */
export interface IngestFile {
  path: string;
  filename: string;
  move?: boolean;
  /** Store it even when the collection already holds the same bytes. */
  force?: boolean;
  /** Skip it when its pictures are already in a video of the collection (re-encoded, resized or trimmed). */
  skipDuplicates?: boolean;
}

export interface DuplicatesRequest {
  /** Videos at this similarity or above are grouped, in [0, 1] (default 0.5, docs/engine.md). */
  min_similarity?: number;
  /** Also say where each segment of a group's first video is in the others. */
  segments?: boolean;
}

export interface DuplicateVideo {
  video_id: string;
  filename: string;
  duration?: number;
  /** Similarity to the group's first video (the earliest added); absent on that one. */
  similarity?: number;
}

/** A segment of a group's first video and where its pictures are in the group's other videos. */
export interface DuplicateSegment {
  start: number;
  end: number;
  /** Share of the segment's pictures found in each other video, and the segment there that holds them. */
  matches: Array<{ video_id: string; start: number; end: number; similarity: number }>;
}

export interface DuplicateGroup {
  /** The lowest similarity among the links that hold the group together, in [0, 1]. */
  similarity: number;
  /** Earliest added first. */
  videos: DuplicateVideo[];
  segments?: DuplicateSegment[];
}

/** `GET /collections/{id}/duplicates`, `vidembed duplicates`. */
export interface DuplicatesResponse {
  collection_id: string;
  min_similarity: number;
  /** Strongest first. */
  groups: DuplicateGroup[];
  /** Videos compared: those with a visual signature. */
  compared: number;
  /** Processed videos without a visual signature (processed by an earlier release): `vidembed collection reindex` gives them one. */
  missing_signature: number;
  warnings?: string[];
}

/**
 * The one service interface with three faces: the local engine, the HTTP server (an adapter over
 * the engine) and the remote client. Methods throw errors from src/api/errors.ts.
 */
/** `GET /videos/{id}/transcript`: every recognized word with its times and confidence. */
export interface TranscriptResponse {
  video_id: string;
  /** The engine and model that heard it (empty when none did). */
  engine: string;
  language: string;
  /** Seconds of audio heard. */
  duration: number;
  words: Array<{ w: string; start: number; end: number; conf: number }>;
  /** Why there are no words: no audio track, silent, speech off, no engine installed, a recognizer failure. */
  reason?: string;
}

export interface VideoService {
  createCollection(req: CreateCollectionRequest): Promise<CreateCollectionResponse>;
  listCollections(req?: ListCollectionsRequest): Promise<CollectionSummary[]>;
  /** Resolves a collection by id or by name. */
  getCollection(idOrName: string): Promise<CollectionSummary>;
  /** Processes a collection's videos again in the background (`collection reindex`). */
  reindexCollection(idOrName: string): Promise<ReindexResponse>;
  collectionDetails(idOrName: string): Promise<CollectionDetails>;
  updateCollection(idOrName: string, patch: UpdateCollectionRequest): Promise<CollectionSummary>;
  /** Removes a collection with its videos, segments, vectors, keywords, files and pending jobs. */
  deleteCollection(idOrName: string): Promise<DeleteResponse>;
  listVideos(collectionIdOrName: string, req?: ListVideosRequest): Promise<VideoSummary[]>;
  videoDetails(videoId: string): Promise<VideoDetails>;
  /** What is said in a video, word by word (empty, with `reason`, when nothing could be heard). */
  videoTranscript(videoId: string): Promise<TranscriptResponse>;
  deleteVideo(videoId: string): Promise<DeleteResponse>;
  reprocessVideo(videoId: string): Promise<VideoStatusResponse>;
  /** Groups of near-identical videos of a collection (re-encoded, resized, trimmed copies). */
  findDuplicates(collectionIdOrName: string, req?: DuplicatesRequest): Promise<DuplicatesResponse>;
  uploadVideo(collectionId: string, file: IngestFile): Promise<UploadVideoResponse>;
  videoStatus(videoId: string): Promise<VideoStatusResponse>;
  search(collectionId: string, req: SearchRequest, opts?: { explain?: boolean }): Promise<SearchResponse>;
  encodeText(req: EncodeTextRequest): Promise<EncodeTextResponse>;
  encodeVideo(req: EncodeVideoRequest, opts?: { signal?: AbortSignal }): Promise<EncodeVideoResponse>;
  tagVideo(req: EncodeVideoRequest, opts?: { signal?: AbortSignal }): Promise<TagVideoResponse>;
  submitEmbeddingTask(req: AsyncSubmitRequest): Promise<AsyncSubmitResponse>;
  submitTask(kind: TaskKind, req: AsyncSubmitRequest): Promise<AsyncSubmitResponse>;
  taskStatus(requestId: string): Promise<AsyncStatusResponse>;
  uploadTensors(req: TensorUploadRequest): Promise<TensorUploadResponse>;
  close(): Promise<void>;
}

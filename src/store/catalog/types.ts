import type { CapabilityStatus } from '../../api/defaults.js';
import type { KeyLimitSettings } from '../../api/limits.js';
import type { TaskKind, VideoStatus } from '../../api/types.js';
import type { CollectionRow } from '../collections.js';
import type { ApiKeyRow, KeyRole } from '../keys.js';
import type { TaskRow } from '../tasks.js';
import type { MediaInfo, NewVideo, VideoFileSeen, VideoRow } from '../videos.js';
import type { NewSegment, SegmentRevision, SegmentRow, TagFilter, TermList } from '../segments.js';
import type { SegmentKeyRow, SignatureRow } from '../signatures.js';
import type { JobQueue, WorkerRegistry } from '../queue/types.js';
import type { WebhooksStore, WebhooksTx } from '../webhooks/types.js';

export type { ApiKeyRow, CollectionRow, KeyRole, MediaInfo, NewSegment, NewVideo, SegmentKeyRow, SegmentRevision, SegmentRow, SignatureRow, TagFilter, TaskRow, TermList, VideoFileSeen, VideoRow };

/**
 * The catalog (collections, videos, tasks, API keys) the engine needs, on any backend (SQLite:
 * src/store/catalog/sqlite.ts, which delegates to the synchronous repos of src/store; PostgreSQL:
 * src/store/catalog/postgres.ts). One conformance suite (test/conformance/catalog.ts)
 * holds both to the rules written here. Both hand back the same row shapes, with exactly the fields
 * of CollectionRow, VideoRow, TaskRow and ApiKeyRow; times are ISO 8601 strings in UTC with
 * milliseconds ("2026-11-22T17:25:42.123Z"), JSON columns the exact strings that were written.
 */

/**
 * A collection's name is taken by another collection of the same owner (insert or rename). Both
 * backends reject with this, not with their driver's constraint error.
 */
export class CollectionNameTakenError extends Error {
  constructor(
    readonly collectionName: string,
    readonly owner: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(`a collection named "${collectionName}" already exists${owner === undefined ? '' : ` for owner "${owner}"`}`, options);
    this.name = 'CollectionNameTakenError';
  }
}

/**
 * Collections.
 *
 * - names are unique per owner: two owners may each have a collection "x", one owner may not (insert
 *   and update reject with CollectionNameTakenError and change nothing).
 * - insert: owner defaults to "default"; the new row has video_count 0 and recipe_json null.
 * - video_count, in every row handed back, is the number of the collection's videos right now.
 * - `owner = null` in a query means every owner's. byName defaults to the owner "default", list to
 *   every owner's.
 * - byName: the owner's collection with that name (0 or 1 rows), or with `owner = null` every
 *   owner's, oldest first.
 * - list: newest first (by creation order, not by clock: collections created in the same
 *   millisecond keep it), then `limit` / `offset`.
 * - update changes only the fields given; delete takes the collection's videos with it (and of a
 *   missing id does nothing); setRecipe stores the recipe as JSON text.
 */
export interface CollectionsCatalog {
  insert(input: { name: string; description: string; model: string; dim: number; owner?: string }): Promise<CollectionRow>;
  update(id: string, patch: { name?: string; description?: string }): Promise<void>;
  delete(id: string): Promise<void>;
  setRecipe(id: string, recipe: Record<string, string>): Promise<void>;
  byId(id: string): Promise<CollectionRow | undefined>;
  byName(name: string, owner?: string | null): Promise<CollectionRow[]>;
  list(limit: number, offset: number, owner?: string | null): Promise<CollectionRow[]>;
}

/**
 * Videos of a collection.
 *
 * - insert: stored either by blob key or, as before keys, by absolute path: exactly one of the two
 *   (a non-empty one), else it rejects and stores nothing. The other reads as '' (path) or null
 *   (blob_key). A new video is 'uploaded', progress null, created_at = updated_at. The collection
 *   must exist (else it rejects); deleting the collection deletes its videos. A video in place
 *   (the user's file, issue 22) is stored by path with a fingerprint and a file_mtime, both or
 *   neither (else it rejects); other videos read null in both.
 * - byFingerprint: the oldest video in place of that collection with that fingerprint.
 * - byFilename: the videos of those collections whose filename is exactly `filename` (case and
 *   all), oldest first, at most `limit` (a lookup by name: `video show C0001.MP4`).
 * - fileSeen: a video in place found at a new path or with new bytes: path, filename, size,
 *   fingerprint and file_mtime replaced, updated_at moved; of a video not in place it does nothing.
 * - byContent: the oldest video of that collection (only that one) with those bytes (SHA-256).
 * - page: newest first (videos created in the same millisecond: the later insert first), optionally
 *   of one status, then limit / offset. listByCollection and idsForCollection: oldest first.
 * - markProcessing: status 'processing', progress 0, error cleared. setProgress counts only while
 *   processing: clamped to 0..100 and rounded to one decimal. markProcessed: 'processed', progress
 *   100, error cleared, tags stored. markFailed: 'failed', progress null, the message stored.
 *   setMediaInfo: duration, displayed width and height, fps, codec, playback (null when not given).
 *   setTags: the tags alone, whatever the status (a video searchable while a later lane still runs).
 *   Each of these moves updated_at.
 * - countsByStatus: every status, 0 for those without videos.
 * - countWaiting: how many of the collection's videos are uploaded or processing (what every search
 *   asks: cheap however many videos the collection has, where countsByStatus counts them all).
 * - failedWith: ids of the videos of every collection 'failed' with exactly this message, least
 *   recently updated first, at most `limit` (those failed for lack of space are retried).
 * - bytesOfOwner: the size_bytes of every video in the owner's collections, summed (0: none).
 * - stranded: videos 'uploaded' or 'processing' none of whose jobs (the job queue's, same store) is
 *   queued or running, so none will finish them; with the last_error of the job updated last (null
 *   when it recorded none, or there is no job at all).
 */
export interface VideosCatalog {
  insert(v: NewVideo): Promise<VideoRow>;
  byContent(collectionId: string, sha256: string): Promise<VideoRow | undefined>;
  byFingerprint(collectionId: string, fingerprint: string): Promise<VideoRow | undefined>;
  byFilename(collectionIds: string[], filename: string, limit: number): Promise<VideoRow[]>;
  fileSeen(id: string, file: VideoFileSeen): Promise<void>;
  byId(id: string): Promise<VideoRow | undefined>;
  /** The videos of these ids that exist (id → row as byId reads it), in one lookup: a search's page. */
  byIds(ids: string[]): Promise<Map<string, VideoRow>>;
  page(collectionId: string, opts: { status?: VideoStatus; limit: number; offset: number }): Promise<VideoRow[]>;
  delete(id: string): Promise<void>;
  listByCollection(collectionId: string): Promise<VideoRow[]>;
  markProcessing(id: string): Promise<void>;
  setProgress(id: string, progress: number): Promise<void>;
  setMediaInfo(id: string, info: MediaInfo): Promise<void>;
  markProcessed(id: string, tagsJson: string | null): Promise<void>;
  setTags(id: string, tagsJson: string | null): Promise<void>;
  stranded(): Promise<Array<{ id: string; last_error: string | null }>>;
  markFailed(id: string, message: string): Promise<void>;
  failedWith(message: string, limit: number): Promise<string[]>;
  bytesOfOwner(owner: string): Promise<number>;
  idsForCollection(collectionId: string, statuses: VideoStatus[]): Promise<string[]>;
  countsByStatus(collectionId: string): Promise<Record<VideoStatus, number>>;
  countWaiting(collectionId: string): Promise<number>;
}

/**
 * Folders indexed in place (issue 22), per collection: `rescan` walks them again for new files.
 * - add records an absolute folder for the collection (the same one again: nothing); the
 *   collection must exist. list: the collection's folders in the order added. Deleting the
 *   collection forgets its folders.
 * - exclude remembers a file the user deleted from the collection by its content fingerprint (and
 *   the path it had), so `rescan` leaves it out until it is added again; the same fingerprint
 *   again updates the path. excluded: the collection's exclusions, fingerprint → path. include
 *   forgets one (the user added the file again). Deleting the collection forgets them.
 */
export interface FoldersCatalog {
  add(collectionId: string, dir: string): Promise<void>;
  list(collectionId: string): Promise<string[]>;
  exclude(collectionId: string, fingerprint: string, path: string): Promise<void>;
  excluded(collectionId: string): Promise<Map<string, string>>;
  include(collectionId: string, fingerprint: string): Promise<void>;
}

/**
 * Async tasks (embedding, tagging requests).
 *
 * - insert: 'pending', owner defaults to "default", the request stored as JSON text.
 * - markProcessing: 'processing'. complete: 'completed', the result as JSON text, error cleared.
 *   fail: 'failed' with the message (a result stored before stays).
 * - stranded: tasks 'pending' or 'processing' that no queued or running job will finish (as for
 *   videos).
 * - delete removes the task (of a missing id: nothing). settledBefore: tasks 'completed' or
 *   'failed' last updated before `before` (ISO 8601), least recently updated first, at most `limit`
 *   (retention, docs/operations.md).
 */
export interface TasksCatalog {
  insert(id: string, kind: TaskKind, request: unknown, owner?: string): Promise<TaskRow>;
  byId(id: string): Promise<TaskRow | undefined>;
  markProcessing(id: string): Promise<void>;
  complete(id: string, result: unknown): Promise<void>;
  stranded(): Promise<Array<{ id: string; last_error: string | null }>>;
  fail(id: string, message: string): Promise<void>;
  delete(id: string): Promise<void>;
  settledBefore(before: string, limit: number): Promise<TaskRow[]>;
}

/**
 * API keys, stored as SHA-256 hashes (hex, src/store/keys.ts hashKey): the raw key ("vk_" and 32
 * base64url characters) exists only in create's answer; the row keeps its first 7 characters as
 * `prefix`.
 *
 * - create: owner defaults to the key's name, role to 'user', quota to none (null); used 0.
 * - byKey finds a key by the raw key (never by its hash), revoked ones too: the caller checks
 *   revoked_at.
 * - byName: oldest first. list: newest first (keys created in the same millisecond: the later
 *   insert first).
 * - revoke(idOrName) revokes the unrevoked keys with that id or that name (all of them), stamping
 *   revoked_at; how many it revoked (0 the second time).
 * - charge counts `units` against the quota atomically: true and counted when used + units stays
 *   within the quota (or there is none), else false and nothing counted — also when callers
 *   charge the same key at the same time. `units` is a positive integer; anything else is a
 *   RangeError and counts nothing.
 */
export interface KeysCatalog {
  create(input: { name: string; qps: number; quota?: number | null; owner?: string; role?: KeyRole; limits?: KeyLimitSettings }): Promise<{ row: ApiKeyRow; key: string }>;
  byId(id: string): Promise<ApiKeyRow | undefined>;
  byName(name: string): Promise<ApiKeyRow[]>;
  byKey(key: string): Promise<ApiKeyRow | undefined>;
  list(): Promise<ApiKeyRow[]>;
  revoke(idOrName: string): Promise<number>;
  charge(id: string, units: number): Promise<boolean>;
}

/**
 * A video's segments: rows, vectors (one dimension per collection), and the keyword index of what
 * analysis found (`keywords`, else the description; stemmed: "dogs" finds "dog").
 *
 * - replaceForVideo replaces every segment of the video in one transaction (a redone job never
 *   duplicates rows); each vector must have `dim` numbers, else it rejects and changes nothing.
 *   Segment ids are integers that only grow (a replaced segment gets a new id).
 * - deleteForVideo deletes them (and of a video without segments does nothing).
 * - byIds: the rows that exist of the ids given; listForVideo: by idx.
 * - countForCollection: how many segments the collection has now.
 * - vectors: the stored vectors of the ids given (those that exist), as written.
 * - candidates: the `k` segments of the collection nearest the query by cosine similarity
 *   (matching `filter`'s tags), plus the `also` segments that exist, each with its similarity and
 *   the margin within which it is exact (0: exact; > 0: an approximation to re-score with
 *   `similarities`). Exact ties go to the smaller segment id. With `videos`, the caller needs the
 *   nearest only until they hold that many distinct videos: an implementation may return fewer
 *   than k, but always every one of the k nearest up to (and including) the first that brings the
 *   count of videos to `videos` (all k when they hold fewer). Returning the k is always right.
 * - similarities: exact cosine similarity of the ids given (those that exist) to the query.
 * - videosOf: the video of each id given that exists.
 * - selectiveTerms: the terms found in at most max(floor, maxShare × all segments) segments.
 * - termMatches: per term, the collection's segments (matching `filter`) whose keywords hold it,
 *   at most `limit`, best first.
 * - termLists: per term, `null` when more than `limit` of the collection's segments hold it
 *   (whatever the filter: a word too common to list); else `total`, how many of them hold it
 *   (whatever the filter), and `ids`, those matching `filter`, best first (as termMatches orders).
 *   Bounded work: a common word costs `limit` + 1 matches read, never all of them.
 * - termsAmong: per term, those of `ids` (in the collection, matching `filter`) whose keywords hold it.
 * - a filter is tag kind → label (TagFilter): a segment matches when its labels (from the tags it
 *   was written with, SegmentRow.labels) hold every entry; a kind it lacks never matches; an entry
 *   without a label filters nothing; a kind that is not a lower-case word is refused (RangeError).
 * Every segment written is visible to every process (and, on PostgreSQL, every machine) at once.
 */
export interface SegmentsCatalog {
  replaceForVideo(videoId: string, collectionId: string, dim: number, segments: NewSegment[]): Promise<void>;
  /**
   * Rewrites what analysis says of a video's segments, keeping what a revision does not give (its
   * vector unless it gives one, its times and keyframe hash always): one revision per segment of
   * the video, by idx, each with the segment's new keywords; facts, tags, description and details
   * replace the stored ones where given. A revision for an idx the video lacks, or a segment
   * without one, rejects and changes nothing. The revised segments get new ids (ids only grow, as
   * a replace gives them), so every cache of answers sees the change. Call it inside a transaction
   * (it reads, then writes): a lane that lands later (speech) merges its output this way.
   */
  reviseForVideo(videoId: string, collectionId: string, dim: number, revisions: SegmentRevision[]): Promise<void>;
  deleteForVideo(videoId: string, dim: number): Promise<void>;
  byIds(ids: number[]): Promise<Map<number, SegmentRow>>;
  listForVideo(videoId: string): Promise<SegmentRow[]>;
  countForCollection(collectionId: string): Promise<number>;
  vectors(dim: number, ids: number[]): Promise<Map<number, Float32Array>>;
  /**
   * The exact k nearest segments of the collection (matching `filter`) and the `also` segments,
   * each with its similarity and the margin within which it is exact. `exclude`: segments never
   * returned, left out inside the search so that k counts the others (a search by a moment leaves
   * its own video out: a long video's own moments would otherwise fill the k). `videos`: enough
   * when the nearest hold this many videos (see above; pgvector then reads fewer rows).
   */
  candidates(
    collectionId: string,
    dim: number,
    query: Float32Array,
    k: number,
    filter: TagFilter,
    also: number[],
    exclude?: number[],
    videos?: number,
  ): Promise<Map<number, { similarity: number; margin: number }>>;
  similarities(dim: number, ids: number[], query: Float32Array): Promise<Map<number, number>>;
  videosOf(collectionId: string, ids: number[]): Promise<Map<number, string>>;
  selectiveTerms(terms: string[], maxShare?: number, floor?: number): Promise<string[]>;
  termMatches(collectionId: string, terms: string[], limit: number, filter?: TagFilter): Promise<Map<string, number[]>>;
  termLists(collectionId: string, terms: string[], limit: number, filter?: TagFilter): Promise<Map<string, TermList | null>>;
  termsAmong(collectionId: string, terms: string[], ids: number[], filter?: TagFilter): Promise<Map<string, number[]>>;
  /**
   * Optional: the same repository for the calls of one search, which may read the state of the
   * first call's catch-up with other writers instead of catching up at each call (PostgreSQL:
   * one round trip per search). Writes committed before the search began are seen.
   */
  forSearch?(): SegmentsCatalog;
}

/** A capability's state for one video, as stored (src/capabilities: what ran, with which version, how it ended). */
export interface VideoCapabilityRow {
  video_id: string;
  capability: string;
  status: CapabilityStatus;
  /** The version that made its output (done), or that will (pending, running); null when skipped before knowing. */
  version: string | null;
  /** Why it was skipped, or how it failed. */
  message: string | null;
  updated_at: string;
}

export type CapabilityStateInput = Pick<VideoCapabilityRow, 'capability' | 'status'> & Partial<Pick<VideoCapabilityRow, 'version' | 'message'>>;

/**
 * Per video, the state of each capability that runs on it (src/capabilities/types.ts).
 *
 * - set upserts each given capability's state (version and message null when not given), moving
 *   its updated_at; the video's other capabilities keep theirs. The video must exist (else it
 *   rejects and changes nothing). Deleting the video deletes its states.
 * - forVideo: the video's states, by capability name. forCollection: the states of the
 *   collection's videos, by video id then capability name.
 * - lock (inside a transaction): holds the video until the transaction ends; another
 *   transaction's lock of it waits until then (PostgreSQL: the video's row FOR UPDATE; SQLite and
 *   memory run one transaction at a time). Two lanes that settle the same video take turns.
 */
export interface AnalysisCatalog {
  set(videoId: string, states: CapabilityStateInput[]): Promise<void>;
  forVideo(videoId: string): Promise<VideoCapabilityRow[]>;
  forCollection(collectionId: string): Promise<VideoCapabilityRow[]>;
  lock(videoId: string): Promise<void>;
}

/**
 * Visual signatures of videos (near-duplicates, src/duplicates/duplicates.ts); deleted with their video.
 * - put inserts or replaces the video's signature.
 * - forCollection: the collection's signatures, oldest video first.
 * - segmentKeys: start, end and keyframe pHash of every segment of the collection, by video id then idx.
 */
export interface SignaturesCatalog {
  put(videoId: string, version: number, frames: number, data: Buffer): Promise<void>;
  delete(videoId: string): Promise<void>;
  forCollection(collectionId: string): Promise<SignatureRow[]>;
  segmentKeys(collectionId: string): Promise<SegmentKeyRow[]>;
}

/**
 * What one transaction may touch: every write lands, or none does. `holds(jobId, token)` is true
 * while that claim still holds the job, and `complete(jobId, token)` settles it as done only then
 * (the fencing check for a job's results, in the same transaction as the results: on PostgreSQL
 * both lock the job's row until commit).
 */
export interface CatalogTx {
  readonly collections: CollectionsCatalog;
  readonly videos: VideosCatalog;
  readonly tasks: TasksCatalog;
  readonly segments: SegmentsCatalog;
  readonly signatures: SignaturesCatalog;
  readonly analysis: AnalysisCatalog;
  readonly folders: FoldersCatalog;
  readonly queue: {
    enqueue(kind: Parameters<JobQueue['enqueue']>[0], refId: string, maxAttempts?: number, owner?: string): Promise<string>;
    cancelFor(refId: string): Promise<number>;
    holds(jobId: string, token: number): Promise<boolean>;
    /** `JobQueue.complete` inside the transaction: the job is done exactly when the results land. */
    complete(jobId: string, token: number): Promise<boolean>;
  };
  /** The webhook outbox: an event lands exactly when the state change it reports does (issue 34). */
  readonly webhooks: WebhooksTx;
}

/** The catalog of one store. close() closes the connection or pool when the catalog opened it. */
export interface Catalog {
  readonly collections: CollectionsCatalog;
  readonly videos: VideosCatalog;
  readonly tasks: TasksCatalog;
  readonly keys: KeysCatalog;
  readonly segments: SegmentsCatalog;
  readonly signatures: SignaturesCatalog;
  readonly analysis: AnalysisCatalog;
  readonly folders: FoldersCatalog;
  readonly queue: JobQueue;
  readonly registry: WorkerRegistry;
  /** Webhook endpoints and the delivery outbox (src/store/webhooks/types.ts). */
  readonly webhooks: WebhooksStore;
  /**
   * Runs `fn` in one transaction and commits when it resolves (rolls back when it rejects). Inside,
   * use only `tx`: calls on the catalog itself are not part of the transaction (on SQLite they wait
   * until it ends). Keep it to store calls: no other I/O inside.
   */
  transaction<T>(fn: (tx: CatalogTx) => Promise<T>): Promise<T>;
  /**
   * Optional: where this store's vector searches run and why, in one sentence (`vidembed doctor`,
   * `serve` at start). PostgreSQL: 'pgvector' (in the database) or 'memory' (each process's
   * in-memory index); SQLite: 'sqlite-vec' or 'memory'.
   */
  vectorStore?(): Promise<{ mode: string; reason: string }>;
  close(): Promise<void>;
}

/** The fields of each row type, in one place: both backends hand back exactly these. */
export const COLLECTION_FIELDS = ['id', 'owner', 'name', 'description', 'model', 'dim', 'created_at', 'video_count', 'recipe_json'] as const satisfies readonly (keyof CollectionRow)[];
export const VIDEO_FIELDS = [
  'id',
  'collection_id',
  'filename',
  'path',
  'blob_key',
  'size_bytes',
  'status',
  'progress',
  'error_message',
  'duration',
  'width',
  'height',
  'fps',
  'codec',
  'playback',
  'tags_json',
  'created_at',
  'updated_at',
  'fingerprint',
  'file_mtime',
] as const satisfies readonly (keyof VideoRow)[];
export const TASK_FIELDS = ['id', 'kind', 'owner', 'status', 'request_json', 'result_json', 'error_message', 'created_at', 'updated_at'] as const satisfies readonly (keyof TaskRow)[];
export const API_KEY_FIELDS = ['id', 'name', 'key_hash', 'prefix', 'qps', 'quota', 'used', 'created_at', 'revoked_at', 'owner', 'role', 'limits_json'] as const satisfies readonly (keyof ApiKeyRow)[];

/** Compile-time: each list above names every field of its row type (a field added to a row type must be added there). */
type Covers<Row, Fields extends readonly (keyof Row)[]> = [Exclude<keyof Row, Fields[number]>] extends [never] ? true : never;
const covered: [
  Covers<CollectionRow, typeof COLLECTION_FIELDS>,
  Covers<VideoRow, typeof VIDEO_FIELDS>,
  Covers<TaskRow, typeof TASK_FIELDS>,
  Covers<ApiKeyRow, typeof API_KEY_FIELDS>,
] = [true, true, true, true];
void covered;

/** A copy of `row` with exactly `fields` (drops columns a backend reads beyond the row type). */
export function pickFields<Row>(row: Row, fields: readonly (keyof Row)[]): Row {
  const out = {} as Row;
  for (const f of fields) out[f] = row[f];
  return out;
}

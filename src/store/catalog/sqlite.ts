import type { KeyLimitSettings } from '../../api/limits.js';
import type { TaskKind, VideoStatus } from '../../api/types.js';
import type { CollectionsRepo } from '../collections.js';
import { Gate, gated } from '../gate.js';
import { Store } from '../index.js';
import type { KeysRepo } from '../keys.js';
import type { TasksRepo } from '../tasks.js';
import type { MediaInfo, VideosRepo } from '../videos.js';
import {
  API_KEY_FIELDS,
  COLLECTION_FIELDS,
  pickFields,
  TASK_FIELDS,
  VIDEO_FIELDS,
  type ApiKeyRow,
  type Catalog,
  type CollectionRow,
  type CollectionsCatalog,
  type KeyRole,
  type KeysCatalog,
  type TaskRow,
  type TasksCatalog,
  type VideoRow,
  type FoldersCatalog,
  type NewVideo,
  type VideoFileSeen,
  type VideosCatalog,
  type CatalogTx,
  type NewSegment,
  type SegmentKeyRow,
  type SegmentRow,
  type SegmentsCatalog,
  type SignatureRow,
  type SignaturesCatalog,
  type TagFilter,
  type TermList,
  type AnalysisCatalog,
  type CapabilityStateInput,
  type SegmentRevision,
  type VideoCapabilityRow,
} from './types.js';
import { reviseSegments } from '../segments-revise.js';
import type { SegmentsRepo } from '../segments.js';
import type { SignaturesRepo } from '../signatures.js';
import type { JobQueue, WorkerRegistry } from '../queue/types.js';
import type { WebhooksStore } from '../webhooks/types.js';

/*
 * The catalog on a vidembed SQLite database: every call is the synchronous repo's (src/store/*.ts),
 * done before it returns a settled promise (a repo that throws gives a rejected one). Nothing here
 * touches SQL. Rows are cut to their row type's fields (`SELECT *` of videos also reads
 * content_sha256); the repos throw CollectionNameTakenError themselves.
 */

const collection = (r: CollectionRow): CollectionRow => pickFields(r, COLLECTION_FIELDS);
const video = (r: VideoRow): VideoRow => pickFields(r, VIDEO_FIELDS);
const task = (r: TaskRow): TaskRow => pickFields(r, TASK_FIELDS);
const apiKey = (r: ApiKeyRow): ApiKeyRow => pickFields(r, API_KEY_FIELDS);
const maybe = <T>(r: T | undefined, f: (r: T) => T): T | undefined => (r === undefined ? undefined : f(r));

export class SqliteCollectionsCatalog implements CollectionsCatalog {
  constructor(private readonly repo: CollectionsRepo) {}

  async insert(input: { name: string; description: string; model: string; dim: number; owner?: string }): Promise<CollectionRow> {
    return collection(this.repo.insert(input));
  }

  async update(id: string, patch: { name?: string; description?: string }): Promise<void> {
    this.repo.update(id, patch);
  }

  async delete(id: string): Promise<void> {
    this.repo.delete(id);
  }

  async setRecipe(id: string, recipe: Record<string, string>): Promise<void> {
    this.repo.setRecipe(id, recipe);
  }

  async byId(id: string): Promise<CollectionRow | undefined> {
    return maybe(this.repo.byId(id), collection);
  }

  async byName(name: string, owner: string | null = 'default'): Promise<CollectionRow[]> {
    return this.repo.byName(name, owner).map(collection);
  }

  async list(limit: number, offset: number, owner: string | null = null): Promise<CollectionRow[]> {
    return this.repo.list(limit, offset, owner).map(collection);
  }
}

export class SqliteVideosCatalog implements VideosCatalog {
  constructor(private readonly repo: VideosRepo) {}

  async insert(v: NewVideo): Promise<VideoRow> {
    return video(this.repo.insert(v));
  }

  async byFingerprint(collectionId: string, fingerprint: string): Promise<VideoRow | undefined> {
    return maybe(this.repo.byFingerprint(collectionId, fingerprint), video);
  }

  async byFilename(collectionIds: string[], filename: string, limit: number): Promise<VideoRow[]> {
    return this.repo.byFilename(collectionIds, filename, limit).map(video);
  }

  async fileSeen(id: string, file: VideoFileSeen): Promise<void> {
    this.repo.fileSeen(id, file);
  }

  async byContent(collectionId: string, sha256: string): Promise<VideoRow | undefined> {
    return maybe(this.repo.byContent(collectionId, sha256), video);
  }

  async byId(id: string): Promise<VideoRow | undefined> {
    return maybe(this.repo.byId(id), video);
  }

  async byIds(ids: string[]): Promise<Map<string, VideoRow>> {
    const out = new Map<string, VideoRow>();
    for (const row of this.repo.byIds(ids)) out.set(row.id, video(row));
    return out;
  }

  async page(collectionId: string, opts: { status?: VideoStatus; limit: number; offset: number }): Promise<VideoRow[]> {
    return this.repo.page(collectionId, opts).map(video);
  }

  async delete(id: string): Promise<void> {
    this.repo.delete(id);
  }

  async listByCollection(collectionId: string): Promise<VideoRow[]> {
    return this.repo.listByCollection(collectionId).map(video);
  }

  async markProcessing(id: string): Promise<void> {
    this.repo.markProcessing(id);
  }

  async setProgress(id: string, progress: number): Promise<void> {
    this.repo.setProgress(id, progress);
  }

  async setMediaInfo(id: string, info: MediaInfo): Promise<void> {
    this.repo.setMediaInfo(id, info);
  }

  async setTags(id: string, tagsJson: string | null): Promise<void> {
    this.repo.setTags(id, tagsJson);
  }

  async markProcessed(id: string, tagsJson: string | null): Promise<void> {
    this.repo.markProcessed(id, tagsJson);
  }

  async stranded(): Promise<Array<{ id: string; last_error: string | null }>> {
    return this.repo.stranded();
  }

  async bytesOfOwner(owner: string): Promise<number> {
    return this.repo.bytesOfOwner(owner);
  }

  async failedWith(message: string, limit: number): Promise<string[]> {
    return this.repo.failedWith(message, limit);
  }

  async markFailed(id: string, message: string): Promise<void> {
    this.repo.markFailed(id, message);
  }

  async idsForCollection(collectionId: string, statuses: VideoStatus[]): Promise<string[]> {
    return this.repo.idsForCollection(collectionId, statuses);
  }

  async countsByStatus(collectionId: string): Promise<Record<VideoStatus, number>> {
    return this.repo.countsByStatus(collectionId);
  }

  async countWaiting(collectionId: string): Promise<number> {
    return this.repo.countWaiting(collectionId);
  }
}

export class SqliteTasksCatalog implements TasksCatalog {
  constructor(private readonly repo: TasksRepo) {}

  async insert(id: string, kind: TaskKind, request: unknown, owner?: string): Promise<TaskRow> {
    return task(this.repo.insert(id, kind, request, owner));
  }

  async byId(id: string): Promise<TaskRow | undefined> {
    return maybe(this.repo.byId(id), task);
  }

  async markProcessing(id: string): Promise<void> {
    this.repo.markProcessing(id);
  }

  async complete(id: string, result: unknown): Promise<void> {
    this.repo.complete(id, result);
  }

  async stranded(): Promise<Array<{ id: string; last_error: string | null }>> {
    return this.repo.stranded();
  }

  async delete(id: string): Promise<void> {
    this.repo.delete(id);
  }

  async settledBefore(before: string, limit: number): Promise<TaskRow[]> {
    return this.repo.settledBefore(before, limit).map(task);
  }

  async fail(id: string, message: string): Promise<void> {
    this.repo.fail(id, message);
  }
}

export class SqliteKeysCatalog implements KeysCatalog {
  constructor(private readonly repo: KeysRepo) {}

  async create(input: { name: string; qps: number; quota?: number | null; owner?: string; role?: KeyRole; limits?: KeyLimitSettings }): Promise<{ row: ApiKeyRow; key: string }> {
    const { row, key } = this.repo.create(input);
    return { row: apiKey(row), key };
  }

  async byId(id: string): Promise<ApiKeyRow | undefined> {
    return maybe(this.repo.byId(id), apiKey);
  }

  async byName(name: string): Promise<ApiKeyRow[]> {
    return this.repo.byName(name).map(apiKey);
  }

  async byKey(key: string): Promise<ApiKeyRow | undefined> {
    return maybe(this.repo.byKey(key), apiKey);
  }

  async list(): Promise<ApiKeyRow[]> {
    return this.repo.list().map(apiKey);
  }

  async revoke(idOrName: string): Promise<number> {
    return this.repo.revoke(idOrName);
  }

  async charge(id: string, units: number): Promise<boolean> {
    return this.repo.charge(id, units);
  }
}

export class SqliteSegmentsCatalog implements SegmentsCatalog {
  constructor(private readonly repo: SegmentsRepo) {}

  async replaceForVideo(videoId: string, collectionId: string, dim: number, segments: NewSegment[]): Promise<void> {
    this.repo.replaceForVideo(videoId, collectionId, dim, segments);
  }

  async deleteForVideo(videoId: string, dim: number): Promise<void> {
    this.repo.deleteForVideo(videoId, dim);
  }

  async reviseForVideo(videoId: string, collectionId: string, dim: number, revisions: SegmentRevision[]): Promise<void> {
    await reviseSegments(this, videoId, collectionId, dim, revisions);
  }

  async byIds(ids: number[]): Promise<Map<number, SegmentRow>> {
    return this.repo.byIds(ids);
  }

  async listForVideo(videoId: string): Promise<SegmentRow[]> {
    return this.repo.listForVideo(videoId);
  }

  async countForCollection(collectionId: string): Promise<number> {
    return this.repo.countForCollection(collectionId);
  }

  async vectors(dim: number, ids: number[]): Promise<Map<number, Float32Array>> {
    return this.repo.vectors(dim, ids);
  }

  async candidates(collectionId: string, dim: number, query: Float32Array, k: number, filter: TagFilter, also: number[], exclude: number[] = []): Promise<Map<number, { similarity: number; margin: number }>> {
    return this.repo.candidates(collectionId, dim, query, k, filter, also, exclude);
  }

  async similarities(dim: number, ids: number[], query: Float32Array): Promise<Map<number, number>> {
    return this.repo.similarities(dim, ids, query);
  }

  async videosOf(collectionId: string, ids: number[]): Promise<Map<number, string>> {
    return this.repo.videosOf(collectionId, ids);
  }

  async selectiveTerms(terms: string[], maxShare?: number, floor?: number): Promise<string[]> {
    return this.repo.selectiveTerms(terms, maxShare, floor);
  }

  async termMatches(collectionId: string, terms: string[], limit: number, filter: TagFilter = {}): Promise<Map<string, number[]>> {
    return this.repo.termMatches(collectionId, terms, limit, filter);
  }

  async termLists(collectionId: string, terms: string[], limit: number, filter: TagFilter = {}): Promise<Map<string, TermList | null>> {
    return this.repo.termLists(collectionId, terms, limit, filter);
  }

  async termsAmong(collectionId: string, terms: string[], ids: number[], filter: TagFilter = {}): Promise<Map<string, number[]>> {
    return this.repo.termsAmong(collectionId, terms, ids, filter);
  }
}

export class SqliteSignaturesCatalog implements SignaturesCatalog {
  constructor(private readonly repo: SignaturesRepo) {}

  async put(videoId: string, version: number, frames: number, data: Buffer): Promise<void> {
    this.repo.put(videoId, version, frames, data);
  }

  async delete(videoId: string): Promise<void> {
    this.repo.delete(videoId);
  }

  async forCollection(collectionId: string): Promise<SignatureRow[]> {
    return this.repo.forCollection(collectionId);
  }

  async segmentKeys(collectionId: string): Promise<SegmentKeyRow[]> {
    return this.repo.segmentKeys(collectionId);
  }
}

/** Folders indexed in place (library_folders, SQLite migration 17). */
class SqliteFoldersCatalog implements FoldersCatalog {
  constructor(private readonly db: Store['db']) {}

  async add(collectionId: string, dir: string): Promise<void> {
    this.db
      .prepare('INSERT OR IGNORE INTO library_folders (collection_id, path, seq) SELECT ?, ?, COALESCE(MAX(seq), 0) + 1 FROM library_folders')
      .run(collectionId, dir);
  }

  async list(collectionId: string): Promise<string[]> {
    return this.db.prepare('SELECT path FROM library_folders WHERE collection_id = ? ORDER BY seq').pluck().all(collectionId) as string[];
  }

  async exclude(collectionId: string, fingerprint: string, path: string): Promise<void> {
    this.db
      .prepare('INSERT INTO excluded_files (collection_id, fingerprint, path, excluded_at) VALUES (?, ?, ?, ?) ON CONFLICT (collection_id, fingerprint) DO UPDATE SET path = excluded.path, excluded_at = excluded.excluded_at')
      .run(collectionId, fingerprint, path, new Date().toISOString());
  }

  async excluded(collectionId: string): Promise<Map<string, string>> {
    const rows = this.db.prepare('SELECT fingerprint, path FROM excluded_files WHERE collection_id = ?').all(collectionId) as { fingerprint: string; path: string }[];
    return new Map(rows.map((r) => [r.fingerprint, r.path]));
  }

  async include(collectionId: string, fingerprint: string): Promise<void> {
    this.db.prepare('DELETE FROM excluded_files WHERE collection_id = ? AND fingerprint = ?').run(collectionId, fingerprint);
  }
}

/** Capabilities' states per video (video_capabilities, SQLite migration 20). */
class SqliteAnalysisCatalog implements AnalysisCatalog {
  constructor(private readonly db: Store['db']) {}

  async set(videoId: string, states: CapabilityStateInput[]): Promise<void> {
    const upsert = this.db.prepare(
      `INSERT INTO video_capabilities (video_id, capability, status, version, message, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (video_id, capability) DO UPDATE SET status = excluded.status, version = excluded.version, message = excluded.message, updated_at = excluded.updated_at`,
    );
    this.db.transaction(() => {
      if (!this.db.prepare('SELECT 1 FROM videos WHERE id = ?').get(videoId)) throw new Error(`analysis.set: no video ${videoId}`);
      const now = new Date().toISOString();
      for (const st of states) upsert.run(videoId, st.capability, st.status, st.version ?? null, st.message ?? null, now);
    })();
  }

  async forVideo(videoId: string): Promise<VideoCapabilityRow[]> {
    return this.db.prepare('SELECT video_id, capability, status, version, message, updated_at FROM video_capabilities WHERE video_id = ? ORDER BY capability').all(videoId) as VideoCapabilityRow[];
  }

  async forCollection(collectionId: string): Promise<VideoCapabilityRow[]> {
    return this.db
      .prepare(
        `SELECT a.video_id, a.capability, a.status, a.version, a.message, a.updated_at FROM video_capabilities a JOIN videos v ON v.id = a.video_id
         WHERE v.collection_id = ? ORDER BY a.video_id, a.capability`,
      )
      .all(collectionId) as VideoCapabilityRow[];
  }

  /** One transaction at a time (BEGIN IMMEDIATE): holding the video is holding the database. */
  async lock(_videoId: string): Promise<void> {}
}

/** The catalog on an open Store's repos; close() closes the store only when this catalog opened it. */
export class SqliteCatalog implements Catalog {
  readonly collections: SqliteCollectionsCatalog;
  readonly videos: SqliteVideosCatalog;
  readonly tasks: SqliteTasksCatalog;
  readonly keys: SqliteKeysCatalog;
  readonly segments: SqliteSegmentsCatalog;
  readonly signatures: SqliteSignaturesCatalog;
  readonly analysis: AnalysisCatalog;
  readonly folders: FoldersCatalog;
  readonly queue: JobQueue;
  readonly registry: WorkerRegistry;
  readonly webhooks: WebhooksStore;
  private readonly gate = new Gate();
  private readonly tx: CatalogTx;

  constructor(
    readonly store: Store,
    private readonly ownsStore = false,
  ) {
    const g = <T extends object>(t: T): T => gated(t, this.gate);
    this.collections = g(new SqliteCollectionsCatalog(store.collections));
    this.videos = g(new SqliteVideosCatalog(store.videos));
    this.tasks = g(new SqliteTasksCatalog(store.tasks));
    this.keys = g(new SqliteKeysCatalog(store.keys));
    this.segments = g(new SqliteSegmentsCatalog(store.segments));
    this.signatures = g(new SqliteSignaturesCatalog(store.signatures));
    this.folders = g(new SqliteFoldersCatalog(store.db));
    this.analysis = g(new SqliteAnalysisCatalog(store.db));
    this.queue = g(store.queue);
    this.registry = g(store.registry);
    this.webhooks = g(store.webhooks);
    this.tx = { collections: this.collections, videos: this.videos, tasks: this.tasks, segments: this.segments, signatures: this.signatures, analysis: this.analysis, folders: this.folders, queue: this.queue, webhooks: this.webhooks };
  }

  transaction<T>(fn: (tx: CatalogTx) => Promise<T>): Promise<T> {
    const db = this.store.db;
    return this.gate.run(async () => {
      if (db.inTransaction) return fn(this.tx); // nested: part of the transaction already open
      db.exec('BEGIN IMMEDIATE');
      try {
        const result = await fn(this.tx);
        db.exec('COMMIT');
        return result;
      } catch (err) {
        if (db.inTransaction) db.exec('ROLLBACK');
        this.store.segments.forgetTables();
        throw err;
      }
    });
  }

  async close(): Promise<void> {
    // Waits for calls in flight (the gate) before closing the file.
    if (this.ownsStore) await this.gate.run(() => this.store.close());
  }
}

/** Opens (migrating) a vidembed database file and the catalog on it; close() closes the file. */
export function openSqliteCatalog(file: string, opts: { memoryIndex?: boolean } = {}): SqliteCatalog {
  return new SqliteCatalog(Store.open(file, opts), true);
}

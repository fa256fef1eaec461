import type { KeyLimitSettings } from '../../api/limits.js';
import { randomBytes } from 'node:crypto';
import type { TaskKind, VideoStatus } from '../../api/types.js';
import {
  API_KEY_FIELDS,
  CollectionNameTakenError,
  pickFields,
  VIDEO_FIELDS,
  type ApiKeyRow,
  type Catalog,
  type CatalogTx,
  type CollectionRow,
  type CollectionsCatalog,
  type KeyRole,
  type KeysCatalog,
  type TaskRow,
  type TasksCatalog,
  type FoldersCatalog,
  type NewVideo,
  type VideoFileSeen,
  type VideoRow,
  type MediaInfo,
  type VideosCatalog,
  type AnalysisCatalog,
  type CapabilityStateInput,
  type VideoCapabilityRow,
} from '../catalog/types.js';
import { checkNewVideo } from '../videos.js';
import { nowIso } from '../db.js';
import { gated } from '../gate.js';
import { newId } from '../ids.js';
import { hashKey, limitsJson } from '../keys.js';
import type { JobQueue, WorkerRegistry } from '../queue/types.js';
import { MemoryJobQueue, MemoryWorkerRegistry } from './queue.js';
import { MemoryWebhooks } from './webhooks.js';
import type { WebhooksStore } from '../webhooks/types.js';
import { MemorySegmentsCatalog, MemorySignaturesCatalog } from './segments.js';
import { MemoryStore, strandedOf, type CollectionRecord, type MemoryState, type VideoRecord } from './state.js';

/*
 * A catalog and job queue held in this process's memory (no file, no server): for tests of engine
 * and service logic, which then run in milliseconds. It keeps every rule of src/store/catalog/types.ts
 * and src/store/queue/types.ts (the conformance suites run it beside SQLite and PostgreSQL). Nothing
 * survives the process.
 */

const TASK_KINDS: readonly TaskKind[] = ['embedding', 'tagging'];

/** Deletes a video and what goes with it (segments, signature), as the databases' cascades do. */
function deleteVideo(state: MemoryState, id: string): void {
  if (!state.videos.delete(id)) return;
  state.signatures.delete(id);
  state.capabilities.delete(id);
  for (const [sid, s] of state.segments) if (s.row.video_id === id) state.segments.delete(sid);
}

class MemoryCollectionsCatalog implements CollectionsCatalog {
  constructor(private readonly store: MemoryStore) {}

  private row(c: CollectionRecord): CollectionRow {
    let videoCount = 0;
    for (const v of this.store.state.videos.values()) if (v.collection_id === c.id) videoCount++;
    return { id: c.id, owner: c.owner, name: c.name, description: c.description, model: c.model, dim: c.dim, created_at: c.created_at, video_count: videoCount, recipe_json: c.recipe_json };
  }

  private taken(name: string, owner: string, except?: string): boolean {
    for (const c of this.store.state.collections.values()) if (c.name === name && c.owner === owner && c.id !== except) return true;
    return false;
  }

  async insert(input: { name: string; description: string; model: string; dim: number; owner?: string }): Promise<CollectionRow> {
    const owner = input.owner ?? 'default';
    if (this.taken(input.name, owner)) throw new CollectionNameTakenError(input.name, owner);
    const state = this.store.state;
    const c: CollectionRecord = { id: newId('col'), owner, name: input.name, description: input.description, model: input.model, dim: input.dim, created_at: nowIso(), recipe_json: null, seq: state.nextSeq() };
    state.collections.set(c.id, c);
    return this.row(c);
  }

  async update(id: string, patch: { name?: string; description?: string }): Promise<void> {
    const c = this.store.state.collections.get(id);
    if (!c) return;
    if (patch.name !== undefined && this.taken(patch.name, c.owner, id)) throw new CollectionNameTakenError(patch.name, c.owner);
    if (patch.name !== undefined) c.name = patch.name;
    if (patch.description !== undefined) c.description = patch.description;
  }

  async delete(id: string): Promise<void> {
    const state = this.store.state;
    for (const v of [...state.videos.values()]) if (v.collection_id === id) deleteVideo(state, v.id);
    for (const [sid, s] of state.segments) if (s.row.collection_id === id) state.segments.delete(sid);
    state.collections.delete(id);
    state.folders.delete(id);
    state.excluded.delete(id);
  }

  async setRecipe(id: string, recipe: Record<string, string>): Promise<void> {
    const c = this.store.state.collections.get(id);
    if (c) c.recipe_json = JSON.stringify(recipe);
  }

  async byId(id: string): Promise<CollectionRow | undefined> {
    const c = this.store.state.collections.get(id);
    return c && this.row(c);
  }

  async byName(name: string, owner: string | null = 'default'): Promise<CollectionRow[]> {
    return [...this.store.state.collections.values()]
      .filter((c) => c.name === name && (owner === null || c.owner === owner))
      .sort((a, b) => a.seq - b.seq)
      .map((c) => this.row(c));
  }

  async list(limit: number, offset: number, owner: string | null = null): Promise<CollectionRow[]> {
    return [...this.store.state.collections.values()]
      .filter((c) => owner === null || c.owner === owner)
      .sort((a, b) => b.seq - a.seq)
      .slice(offset, offset + limit)
      .map((c) => this.row(c));
  }
}

const video = (v: VideoRecord): VideoRow => pickFields(v, VIDEO_FIELDS);

class MemoryVideosCatalog implements VideosCatalog {
  constructor(private readonly store: MemoryStore) {}

  /** The collection's videos, oldest first. */
  private of(collectionId: string): VideoRecord[] {
    return [...this.store.state.videos.values()].filter((v) => v.collection_id === collectionId).sort((a, b) => a.seq - b.seq);
  }

  /** Changes a video's fields and moves updated_at (a missing video: nothing). */
  private set(id: string, patch: Partial<VideoRow>, when: (v: VideoRecord) => boolean = () => true): void {
    const v = this.store.state.videos.get(id);
    if (v && when(v)) Object.assign(v, patch, { updated_at: nowIso() });
  }

  async insert(v: NewVideo): Promise<VideoRow> {
    checkNewVideo(v);
    const state = this.store.state;
    if (!state.collections.has(v.collection_id)) throw new Error(`videos.insert: no collection ${v.collection_id}`);
    if (state.videos.has(v.id)) throw new Error(`videos.insert: video ${v.id} exists`);
    const now = nowIso();
    const row: VideoRecord = {
      id: v.id,
      collection_id: v.collection_id,
      filename: v.filename,
      path: v.path ?? '',
      blob_key: v.blob_key ?? null,
      size_bytes: v.size_bytes,
      status: 'uploaded',
      progress: null,
      error_message: null,
      duration: null,
      width: null,
      height: null,
      fps: null,
      codec: null,
      playback: null,
      tags_json: null,
      created_at: now,
      updated_at: now,
      fingerprint: v.fingerprint ?? null,
      file_mtime: v.file_mtime ?? null,
      content_sha256: v.content_sha256 ?? null,
      seq: state.nextSeq(),
    };
    state.videos.set(row.id, row);
    return video(row);
  }

  async byFingerprint(collectionId: string, fingerprint: string): Promise<VideoRow | undefined> {
    const v = this.of(collectionId).find((x) => x.fingerprint === fingerprint);
    return v && video(v);
  }

  async byFilename(collectionIds: string[], filename: string, limit: number): Promise<VideoRow[]> {
    const wanted = new Set(collectionIds);
    return [...this.store.state.videos.values()]
      .filter((v) => wanted.has(v.collection_id) && v.filename === filename)
      .sort((a, b) => a.seq - b.seq)
      .slice(0, limit)
      .map(video);
  }

  async fileSeen(id: string, f: VideoFileSeen): Promise<void> {
    this.set(id, { path: f.path, filename: f.filename, size_bytes: f.size_bytes, fingerprint: f.fingerprint, file_mtime: f.file_mtime }, (v) => v.fingerprint !== null);
  }

  async byContent(collectionId: string, sha256: string): Promise<VideoRow | undefined> {
    const v = this.of(collectionId).find((x) => x.content_sha256 === sha256);
    return v && video(v);
  }

  async byId(id: string): Promise<VideoRow | undefined> {
    const v = this.store.state.videos.get(id);
    return v && video(v);
  }

  async byIds(ids: string[]): Promise<Map<string, VideoRow>> {
    const out = new Map<string, VideoRow>();
    for (const id of ids) {
      const v = this.store.state.videos.get(id);
      if (v) out.set(id, video(v));
    }
    return out;
  }

  async page(collectionId: string, opts: { status?: VideoStatus; limit: number; offset: number }): Promise<VideoRow[]> {
    return this.of(collectionId)
      .filter((v) => !opts.status || v.status === opts.status)
      .reverse()
      .slice(opts.offset, opts.offset + opts.limit)
      .map(video);
  }

  async delete(id: string): Promise<void> {
    deleteVideo(this.store.state, id);
  }

  async listByCollection(collectionId: string): Promise<VideoRow[]> {
    return this.of(collectionId).map(video);
  }

  async markProcessing(id: string): Promise<void> {
    this.set(id, { status: 'processing', progress: 0, error_message: null });
  }

  async setProgress(id: string, progress: number): Promise<void> {
    this.set(id, { progress: Math.max(0, Math.min(100, Math.round(progress * 10) / 10)) }, (v) => v.status === 'processing');
  }

  async setMediaInfo(id: string, info: MediaInfo): Promise<void> {
    this.set(id, { duration: info.duration, width: info.width, height: info.height, fps: info.fps, codec: info.codec ?? null, playback: info.playback ?? null });
  }

  async setTags(id: string, tagsJson: string | null): Promise<void> {
    this.set(id, { tags_json: tagsJson });
  }

  async markProcessed(id: string, tagsJson: string | null): Promise<void> {
    this.set(id, { status: 'processed', progress: 100, error_message: null, tags_json: tagsJson });
  }

  async stranded(): Promise<Array<{ id: string; last_error: string | null }>> {
    const state = this.store.state;
    return strandedOf(state, state.videos.values(), ['uploaded', 'processing']);
  }

  async markFailed(id: string, message: string): Promise<void> {
    this.set(id, { status: 'failed', progress: null, error_message: message });
  }

  async bytesOfOwner(owner: string): Promise<number> {
    const { collections, videos } = this.store.state;
    let n = 0;
    for (const v of videos.values()) if (collections.get(v.collection_id)?.owner === owner) n += v.size_bytes;
    return n;
  }

  async failedWith(message: string, limit: number): Promise<string[]> {
    // The store's map keeps insertion order: a stable sort by update time keeps it among equals.
    return [...this.store.state.videos.values()]
      .filter((v) => v.status === 'failed' && v.error_message === message)
      .sort((a, b) => (a.updated_at < b.updated_at ? -1 : a.updated_at > b.updated_at ? 1 : 0))
      .slice(0, limit)
      .map((v) => v.id);
  }

  async idsForCollection(collectionId: string, statuses: VideoStatus[]): Promise<string[]> {
    return this.of(collectionId)
      .filter((v) => statuses.includes(v.status))
      .map((v) => v.id);
  }

  async countsByStatus(collectionId: string): Promise<Record<VideoStatus, number>> {
    const out: Record<VideoStatus, number> = { uploaded: 0, processing: 0, processed: 0, failed: 0 };
    for (const v of this.of(collectionId)) out[v.status]++;
    return out;
  }

  async countWaiting(collectionId: string): Promise<number> {
    return this.of(collectionId).filter((v) => v.status === 'uploaded' || v.status === 'processing').length;
  }
}

class MemoryTasksCatalog implements TasksCatalog {
  constructor(private readonly store: MemoryStore) {}

  private set(id: string, patch: Partial<TaskRow>): void {
    const t = this.store.state.tasks.get(id);
    if (t) Object.assign(t, patch, { updated_at: nowIso() });
  }

  async insert(id: string, kind: TaskKind, request: unknown, owner = 'default'): Promise<TaskRow> {
    if (!TASK_KINDS.includes(kind)) throw new Error(`tasks.insert: unknown kind ${String(kind)}`);
    const tasks = this.store.state.tasks;
    if (tasks.has(id)) throw new Error(`tasks.insert: task ${id} exists`);
    const now = nowIso();
    const row: TaskRow = { id, kind, owner, status: 'pending', request_json: JSON.stringify(request), result_json: null, error_message: null, created_at: now, updated_at: now };
    tasks.set(id, row);
    return { ...row };
  }

  async byId(id: string): Promise<TaskRow | undefined> {
    const t = this.store.state.tasks.get(id);
    return t && { ...t };
  }

  async markProcessing(id: string): Promise<void> {
    this.set(id, { status: 'processing' });
  }

  async complete(id: string, result: unknown): Promise<void> {
    this.set(id, { status: 'completed', result_json: JSON.stringify(result), error_message: null });
  }

  async stranded(): Promise<Array<{ id: string; last_error: string | null }>> {
    const state = this.store.state;
    return strandedOf(state, state.tasks.values(), ['pending', 'processing']);
  }

  async fail(id: string, message: string): Promise<void> {
    this.set(id, { status: 'failed', error_message: message });
  }

  async delete(id: string): Promise<void> {
    this.store.state.tasks.delete(id);
  }

  async settledBefore(before: string, limit: number): Promise<TaskRow[]> {
    return [...this.store.state.tasks.values()]
      .filter((t) => (t.status === 'completed' || t.status === 'failed') && t.updated_at < before)
      .sort((a, b) => (a.updated_at < b.updated_at ? -1 : a.updated_at > b.updated_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(0, limit)
      .map((t) => ({ ...t }));
  }
}

const apiKey = (r: ApiKeyRow): ApiKeyRow => pickFields(r, API_KEY_FIELDS);

class MemoryKeysCatalog implements KeysCatalog {
  constructor(private readonly store: MemoryStore) {}

  private all(): ApiKeyRow[] {
    return [...this.store.state.keys.values()].sort((a, b) => a.seq - b.seq);
  }

  async create(input: { name: string; qps: number; quota?: number | null; owner?: string; role?: KeyRole; limits?: KeyLimitSettings }): Promise<{ row: ApiKeyRow; key: string }> {
    const key = `vk_${randomBytes(24).toString('base64url')}`;
    const state = this.store.state;
    const row = {
      id: newId('key'),
      name: input.name,
      key_hash: hashKey(key),
      prefix: key.slice(0, 7),
      qps: input.qps,
      quota: input.quota ?? null,
      used: 0,
      created_at: nowIso(),
      revoked_at: null,
      owner: input.owner ?? input.name,
      role: input.role ?? 'user',
      limits_json: limitsJson(input.limits),
      seq: state.nextSeq(),
    };
    state.keys.set(row.id, row);
    return { row: apiKey(row), key };
  }

  async byId(id: string): Promise<ApiKeyRow | undefined> {
    const k = this.store.state.keys.get(id);
    return k && apiKey(k);
  }

  async byName(name: string): Promise<ApiKeyRow[]> {
    return this.all()
      .filter((k) => k.name === name)
      .map(apiKey);
  }

  async byKey(key: string): Promise<ApiKeyRow | undefined> {
    const hash = hashKey(key);
    const k = this.all().find((r) => r.key_hash === hash);
    return k && apiKey(k);
  }

  async list(): Promise<ApiKeyRow[]> {
    return this.all().reverse().map(apiKey);
  }

  async revoke(idOrName: string): Promise<number> {
    const now = nowIso();
    let n = 0;
    for (const k of this.store.state.keys.values()) {
      if ((k.id !== idOrName && k.name !== idOrName) || k.revoked_at !== null) continue;
      k.revoked_at = now;
      n++;
    }
    return n;
  }

  async charge(id: string, units: number): Promise<boolean> {
    if (!Number.isSafeInteger(units) || units < 1) throw new RangeError(`charge: units must be a positive integer, got ${units}`);
    const k = this.store.state.keys.get(id);
    if (!k || (k.quota !== null && k.used + units > k.quota)) return false;
    k.used += units;
    return true;
  }
}

/** Folders indexed in place, per collection. */
class MemoryFoldersCatalog implements FoldersCatalog {
  constructor(private readonly store: MemoryStore) {}

  async add(collectionId: string, dir: string): Promise<void> {
    const { state } = this.store;
    if (!state.collections.has(collectionId)) throw new Error(`folders.add: no collection ${collectionId}`);
    const list = state.folders.get(collectionId) ?? [];
    if (!list.includes(dir)) state.folders.set(collectionId, [...list, dir]);
  }

  async list(collectionId: string): Promise<string[]> {
    return [...(this.store.state.folders.get(collectionId) ?? [])];
  }

  async exclude(collectionId: string, fingerprint: string, path: string): Promise<void> {
    const { state } = this.store;
    if (!state.collections.has(collectionId)) throw new Error(`folders.exclude: no collection ${collectionId}`);
    const map = state.excluded.get(collectionId) ?? new Map<string, string>();
    map.set(fingerprint, path);
    state.excluded.set(collectionId, map);
  }

  async excluded(collectionId: string): Promise<Map<string, string>> {
    return new Map(this.store.state.excluded.get(collectionId) ?? []);
  }

  async include(collectionId: string, fingerprint: string): Promise<void> {
    this.store.state.excluded.get(collectionId)?.delete(fingerprint);
  }
}

/** Capabilities' states per video. */
class MemoryAnalysisCatalog implements AnalysisCatalog {
  constructor(private readonly store: MemoryStore) {}

  async set(videoId: string, states: CapabilityStateInput[]): Promise<void> {
    const { state } = this.store;
    if (!state.videos.has(videoId)) throw new Error(`analysis.set: no video ${videoId}`);
    const of = state.capabilities.get(videoId) ?? new Map<string, VideoCapabilityRow>();
    const now = new Date().toISOString();
    for (const st of states) of.set(st.capability, { video_id: videoId, capability: st.capability, status: st.status, version: st.version ?? null, message: st.message ?? null, updated_at: now });
    state.capabilities.set(videoId, of);
  }

  async forVideo(videoId: string): Promise<VideoCapabilityRow[]> {
    return [...(this.store.state.capabilities.get(videoId)?.values() ?? [])].sort(byCapability).map((r) => ({ ...r }));
  }

  async forCollection(collectionId: string): Promise<VideoCapabilityRow[]> {
    const { state } = this.store;
    const ids = [...state.videos.values()].filter((v) => v.collection_id === collectionId).map((v) => v.id).sort();
    return ids.flatMap((id) => [...(state.capabilities.get(id)?.values() ?? [])].sort(byCapability).map((r) => ({ ...r })));
  }

  /** One transaction at a time: holding the video is holding the store. */
  async lock(_videoId: string): Promise<void> {}
}

const byCapability = (a: VideoCapabilityRow, b: VideoCapabilityRow) => (a.capability < b.capability ? -1 : a.capability > b.capability ? 1 : 0);

/** A catalog on an in-memory store. Several catalogs on one store act as connections to one database. */
export class MemoryCatalog implements Catalog {
  readonly collections: CollectionsCatalog;
  readonly videos: VideosCatalog;
  readonly tasks: TasksCatalog;
  readonly keys: KeysCatalog;
  readonly segments: MemorySegmentsCatalog;
  readonly signatures: MemorySignaturesCatalog;
  readonly analysis: AnalysisCatalog;
  readonly folders: FoldersCatalog;
  readonly queue: JobQueue;
  readonly registry: WorkerRegistry;
  readonly webhooks: WebhooksStore;
  private readonly tx: CatalogTx;

  constructor(readonly store: MemoryStore = new MemoryStore()) {
    const g = <T extends object>(t: T): T => gated(t, store.gate);
    this.collections = g(new MemoryCollectionsCatalog(store));
    this.videos = g(new MemoryVideosCatalog(store));
    this.tasks = g(new MemoryTasksCatalog(store));
    this.keys = g(new MemoryKeysCatalog(store));
    this.segments = g(new MemorySegmentsCatalog(store));
    this.signatures = g(new MemorySignaturesCatalog(store));
    this.folders = g(new MemoryFoldersCatalog(store));
    this.analysis = g(new MemoryAnalysisCatalog(store));
    this.queue = g(new MemoryJobQueue(store));
    this.registry = g(new MemoryWorkerRegistry(store));
    this.webhooks = g(new MemoryWebhooks(store));
    this.tx = { collections: this.collections, videos: this.videos, tasks: this.tasks, segments: this.segments, signatures: this.signatures, analysis: this.analysis, folders: this.folders, queue: this.queue, webhooks: this.webhooks };
  }

  transaction<T>(fn: (tx: CatalogTx) => Promise<T>): Promise<T> {
    return this.store.transaction(() => fn(this.tx));
  }

  /** The data stays with the store (other catalogs on it go on). */
  async close(): Promise<void> {}
}

/** The job queue and worker registry of an in-memory store (its catalogs have the same ones). */
export function openMemoryQueue(store: MemoryStore): { queue: JobQueue; registry: WorkerRegistry; close(): Promise<void> } {
  return { queue: gated(new MemoryJobQueue(store), store.gate), registry: gated(new MemoryWorkerRegistry(store), store.gate), close: async () => {} };
}

/** The webhooks of an in-memory store (its catalogs have the same ones). */
export function openMemoryWebhooks(store: MemoryStore): { webhooks: WebhooksStore; close(): Promise<void> } {
  return { webhooks: gated(new MemoryWebhooks(store), store.gate), close: async () => {} };
}

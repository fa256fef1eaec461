import type { KeyLimitSettings } from '../../api/limits.js';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { TaskKind, TaskStatus, VideoStatus } from '../../api/types.js';
import { newId } from '../ids.js';
import { hashKey, limitsJson } from '../keys.js';
import { inTransaction, isClient, openMigratedPool, type Queryable } from '../pg/migrate.js';
import { foldDeltas } from '../pg/deltas.js';
import { PgJobQueue, PgTxJobQueue, PgWorkerRegistry } from '../queue/postgres.js';
import { PgSegmentsCatalog, PgSignaturesCatalog } from './pg-segments.js';
import type { PgVectorSettings } from '../../env.js';
import { describeVectorStore, type VectorStoreStatus } from '../pg/vector-store.js';
import { PgWebhooks } from '../webhooks/postgres.js';
import {
  CollectionNameTakenError,
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
} from './types.js';
import { checkNewVideo } from '../videos.js';

/*
 * The catalog on PostgreSQL (tables of PG_MIGRATIONS version 2, src/store/pg/migrations.ts; segments and
 * signatures of version 3 in ./pg-segments.ts). Each repository runs on a Queryable: the pool, where
 * every call is one parameterised statement, so one transaction; or, inside PgCatalog.transaction,
 * the transaction's client. Times come from the database's clock and are
 * read back as ISO strings with milliseconds in UTC, as SQLite's rows carry them; bigints are read
 * back as numbers; the select lists name exactly the fields of the row types. Rows created in the
 * same instant are ordered by `seq` (insertion order).
 */

/** A timestamptz column as `new Date().toISOString()` writes it. */
const iso = (col: string) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const COLLECTION_COLS = (videoCount: string) =>
  `c.id, c.owner, c.name, c.description, c.model, c.dim, ${iso('c.created_at')} AS created_at, ${videoCount} AS video_count, c.recipe_json`;
// The count from its deltas (PG migration 1500), not the collection's rows.
/** About how many video inserts and deletes a collection's count deltas are folded after (PgVideosCatalog.foldNowAndThen). */
const FOLD_VIDEOS_EVERY = 32;
const SELECT_COLLECTIONS = `SELECT ${COLLECTION_COLS('(SELECT coalesce(sum(v.n), 0)::int FROM video_counts v WHERE v.collection_id = c.id)')} FROM collections c`;

const VIDEO_COLS = `id, collection_id, filename, path, blob_key, size_bytes::float8 AS size_bytes, status, progress, error_message,
  duration, width, height, fps, codec, playback, tags_json, ${iso('created_at')} AS created_at, ${iso('updated_at')} AS updated_at,
  fingerprint, ${iso('file_mtime')} AS file_mtime`;

const TASK_COLS = `id, kind, owner, status, request_json, result_json, error_message, ${iso('created_at')} AS created_at, ${iso('updated_at')} AS updated_at`;

const KEY_COLS = `id, name, key_hash, prefix, qps, quota::float8 AS quota, used::float8 AS used, ${iso('created_at')} AS created_at,
  ${iso('revoked_at')} AS revoked_at, owner, role, limits_json`;

/**
 * Subjects of `table` in a waiting status that no queued or running job will finish, with the
 * last_error of their job updated last (as src/store/queue/sqlite.ts strandedSubjects).
 */
const stranded = (table: 'videos' | 'tasks') => `
  SELECT s.id, (SELECT j.last_error FROM jobs j WHERE j.ref_id = s.id ORDER BY j.updated_at DESC, j.seq DESC LIMIT 1) AS last_error
  FROM ${table} s
  WHERE s.status = ANY ($1::text[])
    AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.ref_id = s.id AND j.status IN ('queued', 'running'))`;
const STRANDED_VIDEOS = stranded('videos');
const VIDEOS_WAITING: VideoStatus[] = ['uploaded', 'processing'];
const STRANDED_TASKS = stranded('tasks');
const TASKS_WAITING: TaskStatus[] = ['pending', 'processing'];

function isNameTaken(err: unknown): boolean {
  const e = err as { code?: unknown; constraint?: unknown } | null;
  return e?.code === '23505' && e.constraint === 'collections_owner_name';
}

export class PgCollectionsCatalog implements CollectionsCatalog {
  constructor(private readonly q: Queryable) {}

  async insert(input: { name: string; description: string; model: string; dim: number; owner?: string }): Promise<CollectionRow> {
    const owner = input.owner ?? 'default';
    try {
      const { rows } = await this.q.query<CollectionRow>(
        `INSERT INTO collections AS c (id, owner, name, description, model, dim) VALUES ($1, $2, $3, $4, $5, $6)
         RETURNING ${COLLECTION_COLS('0')}`,
        [newId('col'), owner, input.name, input.description, input.model, input.dim],
      );
      return rows[0];
    } catch (err) {
      if (isNameTaken(err)) throw new CollectionNameTakenError(input.name, owner, { cause: err });
      throw err;
    }
  }

  async update(id: string, patch: { name?: string; description?: string }): Promise<void> {
    if (patch.name === undefined && patch.description === undefined) return;
    // Read before the UPDATE: inside a transaction, nothing can be read after a failed statement.
    const owner = patch.name === undefined ? undefined : (await this.q.query<{ owner: string }>('SELECT owner FROM collections WHERE id = $1', [id])).rows[0]?.owner;
    try {
      await this.q.query('UPDATE collections SET name = coalesce($2, name), description = coalesce($3, description) WHERE id = $1', [
        id,
        patch.name ?? null,
        patch.description ?? null,
      ]);
    } catch (err) {
      if (isNameTaken(err)) throw new CollectionNameTakenError(patch.name!, owner, { cause: err });
      throw err;
    }
  }

  async delete(id: string): Promise<void> {
    await this.q.query('DELETE FROM collections WHERE id = $1', [id]);
    await this.q.query('DELETE FROM video_counts WHERE collection_id = $1', [id]); // its videos' deltas (the cascade's included)
  }

  async setRecipe(id: string, recipe: Record<string, string>): Promise<void> {
    await this.q.query('UPDATE collections SET recipe_json = $2 WHERE id = $1', [id, JSON.stringify(recipe)]);
  }

  async byId(id: string): Promise<CollectionRow | undefined> {
    const { rows } = await this.q.query<CollectionRow>(`${SELECT_COLLECTIONS} WHERE c.id = $1`, [id]);
    return rows[0];
  }

  async byName(name: string, owner: string | null = 'default'): Promise<CollectionRow[]> {
    const { rows } =
      owner === null
        ? await this.q.query<CollectionRow>(`${SELECT_COLLECTIONS} WHERE c.name = $1 ORDER BY c.seq`, [name])
        : await this.q.query<CollectionRow>(`${SELECT_COLLECTIONS} WHERE c.name = $1 AND c.owner = $2`, [name, owner]);
    return rows;
  }

  async list(limit: number, offset: number, owner: string | null = null): Promise<CollectionRow[]> {
    const { rows } = await this.q.query<CollectionRow>(
      `${SELECT_COLLECTIONS} WHERE ($1::text IS NULL OR c.owner = $1) ORDER BY c.seq DESC LIMIT $2 OFFSET $3`,
      [owner, limit, offset],
    );
    return rows;
  }
}

export class PgVideosCatalog implements VideosCatalog {
  constructor(private readonly q: Queryable) {}

  async insert(v: NewVideo): Promise<VideoRow> {
    checkNewVideo(v);
    const { rows } = await this.q.query<VideoRow>(
      `INSERT INTO videos (id, collection_id, filename, path, blob_key, size_bytes, status, content_sha256, fingerprint, file_mtime, created_at, updated_at)
       SELECT $1, $2, $3, $4, $5, $6, 'uploaded', $7, $8, $9, t, t FROM clock_timestamp() AS t
       RETURNING ${VIDEO_COLS}`,
      [v.id, v.collection_id, v.filename, v.path ?? '', v.blob_key ?? null, v.size_bytes, v.content_sha256 ?? null, v.fingerprint ?? null, v.file_mtime ?? null],
    );
    this.foldNowAndThen(v.collection_id);
    return rows[0];
  }

  /**
   * A collection's video count deltas (PG migration 1500: a row per insert or delete statement)
   * folded into one row about once in FOLD_VIDEOS_EVERY writes, in the background; on a pool only
   * (a transaction's client runs one statement at a time).
   */
  private foldNowAndThen(collectionId: string): void {
    if (!isClient(this.q) && Math.random() < 1 / FOLD_VIDEOS_EVERY) foldDeltas(this.q, 'video_counts', collectionId);
  }

  async byFingerprint(collectionId: string, fingerprint: string): Promise<VideoRow | undefined> {
    const { rows } = await this.q.query<VideoRow>(
      `SELECT ${VIDEO_COLS} FROM videos WHERE collection_id = $1 AND fingerprint = $2 ORDER BY created_at, seq LIMIT 1`,
      [collectionId, fingerprint],
    );
    return rows[0];
  }

  async byFilename(collectionIds: string[], filename: string, limit: number): Promise<VideoRow[]> {
    if (!collectionIds.length) return [];
    const { rows } = await this.q.query<VideoRow>(
      `SELECT ${VIDEO_COLS} FROM videos WHERE collection_id = ANY($1) AND filename = $2 ORDER BY created_at, seq LIMIT $3`,
      [collectionIds, filename, limit],
    );
    return rows;
  }

  async fileSeen(id: string, f: VideoFileSeen): Promise<void> {
    await this.q.query(
      `UPDATE videos SET path = $2, filename = $3, size_bytes = $4, fingerprint = $5, file_mtime = $6, updated_at = clock_timestamp()
       WHERE id = $1 AND fingerprint IS NOT NULL`,
      [id, f.path, f.filename, f.size_bytes, f.fingerprint, f.file_mtime],
    );
  }

  async byContent(collectionId: string, sha256: string): Promise<VideoRow | undefined> {
    const { rows } = await this.q.query<VideoRow>(
      `SELECT ${VIDEO_COLS} FROM videos WHERE collection_id = $1 AND content_sha256 = $2 ORDER BY created_at, seq LIMIT 1`,
      [collectionId, sha256],
    );
    return rows[0];
  }

  async byId(id: string): Promise<VideoRow | undefined> {
    const { rows } = await this.q.query<VideoRow>(`SELECT ${VIDEO_COLS} FROM videos WHERE id = $1`, [id]);
    return rows[0];
  }

  async byIds(ids: string[]): Promise<Map<string, VideoRow>> {
    const out = new Map<string, VideoRow>();
    if (ids.length === 0) return out;
    const { rows } = await this.q.query<VideoRow>(`SELECT ${VIDEO_COLS} FROM videos WHERE id = ANY ($1::text[])`, [[...new Set(ids)]]);
    for (const r of rows) out.set(r.id, r);
    return out;
  }

  async page(collectionId: string, opts: { status?: VideoStatus; limit: number; offset: number }): Promise<VideoRow[]> {
    const { rows } = await this.q.query<VideoRow>(
      `SELECT ${VIDEO_COLS} FROM videos WHERE collection_id = $1 AND ($2::text IS NULL OR status = $2)
       ORDER BY created_at DESC, seq DESC LIMIT $3 OFFSET $4`,
      [collectionId, opts.status || null, opts.limit, opts.offset],
    );
    return rows;
  }

  async delete(id: string): Promise<void> {
    const { rows } = await this.q.query<{ collection_id: string }>('DELETE FROM videos WHERE id = $1 RETURNING collection_id', [id]);
    if (rows.length) this.foldNowAndThen(rows[0].collection_id);
  }

  async listByCollection(collectionId: string): Promise<VideoRow[]> {
    const { rows } = await this.q.query<VideoRow>(`SELECT ${VIDEO_COLS} FROM videos WHERE collection_id = $1 ORDER BY created_at, seq`, [collectionId]);
    return rows;
  }

  async markProcessing(id: string): Promise<void> {
    await this.q.query(
      `UPDATE videos SET status = 'processing', progress = 0, error_message = NULL, updated_at = clock_timestamp() WHERE id = $1`,
      [id],
    );
  }

  async setProgress(id: string, progress: number): Promise<void> {
    await this.q.query(`UPDATE videos SET progress = $2, updated_at = clock_timestamp() WHERE id = $1 AND status = 'processing'`, [
      id,
      Math.max(0, Math.min(100, Math.round(progress * 10) / 10)),
    ]);
  }

  async setMediaInfo(id: string, info: MediaInfo): Promise<void> {
    await this.q.query(
      'UPDATE videos SET duration = $2, width = $3, height = $4, fps = $5, codec = $6, playback = $7, updated_at = clock_timestamp() WHERE id = $1',
      [id, info.duration, info.width, info.height, info.fps, info.codec ?? null, info.playback ?? null],
    );
  }

  async setTags(id: string, tagsJson: string | null): Promise<void> {
    await this.q.query('UPDATE videos SET tags_json = $2, updated_at = clock_timestamp() WHERE id = $1', [id, tagsJson]);
  }

  async markProcessed(id: string, tagsJson: string | null): Promise<void> {
    await this.q.query(
      `UPDATE videos SET status = 'processed', progress = 100, error_message = NULL, tags_json = $2, updated_at = clock_timestamp() WHERE id = $1`,
      [id, tagsJson],
    );
  }

  async stranded(): Promise<Array<{ id: string; last_error: string | null }>> {
    return (await this.q.query<{ id: string; last_error: string | null }>(STRANDED_VIDEOS, [VIDEOS_WAITING])).rows;
  }

  async bytesOfOwner(owner: string): Promise<number> {
    const { rows } = await this.q.query<{ n: number }>(
      `SELECT COALESCE(SUM(v.size_bytes), 0)::float8 AS n FROM videos v JOIN collections c ON c.id = v.collection_id WHERE c.owner = $1`,
      [owner],
    );
    return rows[0].n;
  }

  async failedWith(message: string, limit: number): Promise<string[]> {
    const { rows } = await this.q.query<{ id: string }>(
      `SELECT id FROM videos WHERE status = 'failed' AND error_message = $1 ORDER BY updated_at, seq LIMIT $2`,
      [message, limit],
    );
    return rows.map((r) => r.id);
  }

  async markFailed(id: string, message: string): Promise<void> {
    await this.q.query(
      `UPDATE videos SET status = 'failed', progress = NULL, error_message = $2, updated_at = clock_timestamp() WHERE id = $1`,
      [id, message],
    );
  }

  async idsForCollection(collectionId: string, statuses: VideoStatus[]): Promise<string[]> {
    const { rows } = await this.q.query<{ id: string }>(
      'SELECT id FROM videos WHERE collection_id = $1 AND status = ANY ($2::text[]) ORDER BY created_at, seq',
      [collectionId, statuses],
    );
    return rows.map((r) => r.id);
  }

  async countsByStatus(collectionId: string): Promise<Record<VideoStatus, number>> {
    const out: Record<VideoStatus, number> = { uploaded: 0, processing: 0, processed: 0, failed: 0 };
    const { rows } = await this.q.query<{ status: VideoStatus; n: number }>(
      'SELECT status, count(*)::int AS n FROM videos WHERE collection_id = $1 GROUP BY status',
      [collectionId],
    );
    for (const r of rows) out[r.status] = r.n;
    return out;
  }

  /** The waiting videos through their partial index (videos_waiting), not the collection's every row. */
  async countWaiting(collectionId: string): Promise<number> {
    const { rows } = await this.q.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM videos WHERE status IN ('uploaded', 'processing') AND collection_id = $1",
      [collectionId],
    );
    return rows[0].n;
  }
}

/** Folders indexed in place (library_folders, PG_MIGRATIONS version 7). */
export class PgFoldersCatalog implements FoldersCatalog {
  constructor(private readonly q: Queryable) {}

  async add(collectionId: string, dir: string): Promise<void> {
    await this.q.query('INSERT INTO library_folders (collection_id, path) VALUES ($1, $2) ON CONFLICT DO NOTHING', [collectionId, dir]);
  }

  async list(collectionId: string): Promise<string[]> {
    const { rows } = await this.q.query<{ path: string }>('SELECT path FROM library_folders WHERE collection_id = $1 ORDER BY seq', [collectionId]);
    return rows.map((r) => r.path);
  }

  async exclude(collectionId: string, fingerprint: string, path: string): Promise<void> {
    await this.q.query(
      'INSERT INTO excluded_files (collection_id, fingerprint, path) VALUES ($1, $2, $3) ON CONFLICT (collection_id, fingerprint) DO UPDATE SET path = EXCLUDED.path, excluded_at = now()',
      [collectionId, fingerprint, path],
    );
  }

  async excluded(collectionId: string): Promise<Map<string, string>> {
    const { rows } = await this.q.query<{ fingerprint: string; path: string }>('SELECT fingerprint, path FROM excluded_files WHERE collection_id = $1', [collectionId]);
    return new Map(rows.map((r) => [r.fingerprint, r.path]));
  }

  async include(collectionId: string, fingerprint: string): Promise<void> {
    await this.q.query('DELETE FROM excluded_files WHERE collection_id = $1 AND fingerprint = $2', [collectionId, fingerprint]);
  }
}

export class PgTasksCatalog implements TasksCatalog {
  constructor(private readonly q: Queryable) {}

  async insert(id: string, kind: TaskKind, request: unknown, owner = 'default'): Promise<TaskRow> {
    const { rows } = await this.q.query<TaskRow>(
      `INSERT INTO tasks (id, kind, owner, status, request_json, created_at, updated_at)
       SELECT $1, $2, $3, 'pending', $4, t, t FROM clock_timestamp() AS t
       RETURNING ${TASK_COLS}`,
      [id, kind, owner, JSON.stringify(request)],
    );
    return rows[0];
  }

  async byId(id: string): Promise<TaskRow | undefined> {
    const { rows } = await this.q.query<TaskRow>(`SELECT ${TASK_COLS} FROM tasks WHERE id = $1`, [id]);
    return rows[0];
  }

  async markProcessing(id: string): Promise<void> {
    await this.q.query(`UPDATE tasks SET status = 'processing', updated_at = clock_timestamp() WHERE id = $1`, [id]);
  }

  async complete(id: string, result: unknown): Promise<void> {
    await this.q.query(
      `UPDATE tasks SET status = 'completed', result_json = $2, error_message = NULL, updated_at = clock_timestamp() WHERE id = $1`,
      [id, JSON.stringify(result)],
    );
  }

  async stranded(): Promise<Array<{ id: string; last_error: string | null }>> {
    return (await this.q.query<{ id: string; last_error: string | null }>(STRANDED_TASKS, [TASKS_WAITING])).rows;
  }

  async fail(id: string, message: string): Promise<void> {
    await this.q.query(`UPDATE tasks SET status = 'failed', error_message = $2, updated_at = clock_timestamp() WHERE id = $1`, [id, message]);
  }

  async delete(id: string): Promise<void> {
    await this.q.query('DELETE FROM tasks WHERE id = $1', [id]);
  }

  async settledBefore(before: string, limit: number): Promise<TaskRow[]> {
    const { rows } = await this.q.query<TaskRow>(
      `SELECT ${TASK_COLS} FROM tasks WHERE status IN ('completed', 'failed') AND updated_at < $1::timestamptz ORDER BY updated_at, id LIMIT $2`,
      [before, limit],
    );
    return rows;
  }
}

export class PgKeysCatalog implements KeysCatalog {
  constructor(private readonly q: Queryable) {}

  async create(input: { name: string; qps: number; quota?: number | null; owner?: string; role?: KeyRole; limits?: KeyLimitSettings }): Promise<{ row: ApiKeyRow; key: string }> {
    const key = `vk_${randomBytes(24).toString('base64url')}`;
    const { rows } = await this.q.query<ApiKeyRow>(
      `INSERT INTO api_keys (id, name, key_hash, prefix, qps, quota, owner, role, limits_json) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       RETURNING ${KEY_COLS}`,
      [newId('key'), input.name, hashKey(key), key.slice(0, 7), input.qps, input.quota ?? null, input.owner ?? input.name, input.role ?? 'user', limitsJson(input.limits)],
    );
    return { row: rows[0], key };
  }

  async byId(id: string): Promise<ApiKeyRow | undefined> {
    const { rows } = await this.q.query<ApiKeyRow>(`SELECT ${KEY_COLS} FROM api_keys WHERE id = $1`, [id]);
    return rows[0];
  }

  async byName(name: string): Promise<ApiKeyRow[]> {
    const { rows } = await this.q.query<ApiKeyRow>(`SELECT ${KEY_COLS} FROM api_keys WHERE name = $1 ORDER BY created_at, seq`, [name]);
    return rows;
  }

  async byKey(key: string): Promise<ApiKeyRow | undefined> {
    const { rows } = await this.q.query<ApiKeyRow>(`SELECT ${KEY_COLS} FROM api_keys WHERE key_hash = $1`, [hashKey(key)]);
    return rows[0];
  }

  async list(): Promise<ApiKeyRow[]> {
    const { rows } = await this.q.query<ApiKeyRow>(`SELECT ${KEY_COLS} FROM api_keys ORDER BY created_at DESC, seq DESC`);
    return rows;
  }

  async revoke(idOrName: string): Promise<number> {
    const r = await this.q.query(`UPDATE api_keys SET revoked_at = clock_timestamp() WHERE (id = $1 OR name = $1) AND revoked_at IS NULL`, [idOrName]);
    return r.rowCount ?? 0;
  }

  /**
   * One UPDATE: a concurrent charge of the same key waits for this one's row lock and then
   * re-checks the quota against the committed `used` (READ COMMITTED), so two charges never both
   * pass on the same headroom.
   */
  async charge(id: string, units: number): Promise<boolean> {
    if (!Number.isSafeInteger(units) || units < 1) throw new RangeError(`charge: units must be a positive integer, got ${units}`);
    const r = await this.q.query(`UPDATE api_keys SET used = used + $2 WHERE id = $1 AND (quota IS NULL OR used + $2 <= quota)`, [id, units]);
    return r.rowCount === 1;
  }
}

/** Capabilities' states per video (video_capabilities, PostgreSQL migration 10). */
export class PgAnalysisCatalog implements AnalysisCatalog {
  constructor(private readonly q: Queryable) {}

  async set(videoId: string, states: CapabilityStateInput[]): Promise<void> {
    if (!states.length) {
      if (!(await this.q.query('SELECT 1 FROM videos WHERE id = $1', [videoId])).rowCount) throw new Error(`analysis.set: no video ${videoId}`);
      return;
    }
    // One statement: every state lands or none does; a video that is not there is a foreign-key error.
    const rows = states.map((st) => [st.capability, st.status, st.version ?? null, st.message ?? null]);
    try {
      await this.q.query(
        `INSERT INTO video_capabilities (video_id, capability, status, version, message, updated_at)
         SELECT $1, x->>0, x->>1, x->>2, x->>3, now() FROM jsonb_array_elements($2::jsonb) AS x
         ON CONFLICT (video_id, capability) DO UPDATE SET status = excluded.status, version = excluded.version, message = excluded.message, updated_at = excluded.updated_at`,
        [videoId, JSON.stringify(rows)],
      );
    } catch (err) {
      if ((err as { code?: string }).code === '23503') throw new Error(`analysis.set: no video ${videoId}`, { cause: err });
      throw err;
    }
  }

  async forVideo(videoId: string): Promise<VideoCapabilityRow[]> {
    const r = await this.q.query<VideoCapabilityRow>(
      `SELECT video_id, capability, status, version, message, ${iso('updated_at')} AS updated_at FROM video_capabilities WHERE video_id = $1 ORDER BY capability COLLATE "C"`,
      [videoId],
    );
    return r.rows;
  }

  async forCollection(collectionId: string): Promise<VideoCapabilityRow[]> {
    const r = await this.q.query<VideoCapabilityRow>(
      `SELECT a.video_id, a.capability, a.status, a.version, a.message, ${iso('a.updated_at')} AS updated_at FROM video_capabilities a JOIN videos v ON v.id = a.video_id
       WHERE v.collection_id = $1 ORDER BY a.video_id COLLATE "C", a.capability COLLATE "C"`,
      [collectionId],
    );
    return r.rows;
  }

  /** The video's row FOR UPDATE: another transaction's lock of it waits until this one ends. */
  async lock(videoId: string): Promise<void> {
    await this.q.query('SELECT 1 FROM videos WHERE id = $1 FOR UPDATE', [videoId]);
  }
}

/**
 * The catalog on a pool whose schema is migrated; close() ends the pool only when this catalog
 * opened it. `segments` keeps this process's in-memory vector index (src/store/catalog/pg-segments.ts).
 */
export class PgCatalog implements Catalog {
  readonly collections: PgCollectionsCatalog;
  readonly videos: PgVideosCatalog;
  readonly tasks: PgTasksCatalog;
  readonly keys: PgKeysCatalog;
  readonly segments: PgSegmentsCatalog;
  readonly signatures: PgSignaturesCatalog;
  readonly analysis: PgAnalysisCatalog;
  readonly folders: PgFoldersCatalog;
  readonly queue: PgJobQueue;
  readonly registry: PgWorkerRegistry;
  readonly webhooks: PgWebhooks;

  /**
   * `opts.vectorSettings`: pgvector's search settings (default PG_VECTOR_DEFAULTS);
   * `opts.vectorStatus`: where searches run, as decided when the store was opened (src/store/open.ts).
   */
  constructor(
    readonly pool: pg.Pool,
    private readonly ownsPool = false,
    private readonly opts: { vectorSettings?: PgVectorSettings; vectorStatus?: () => VectorStoreStatus | undefined } = {},
  ) {
    this.collections = new PgCollectionsCatalog(pool);
    this.videos = new PgVideosCatalog(pool);
    this.tasks = new PgTasksCatalog(pool);
    this.keys = new PgKeysCatalog(pool);
    this.segments = new PgSegmentsCatalog(pool, undefined, { settings: opts.vectorSettings });
    this.signatures = new PgSignaturesCatalog(pool);
    this.folders = new PgFoldersCatalog(pool);
    this.analysis = new PgAnalysisCatalog(pool);
    this.queue = new PgJobQueue(pool);
    this.registry = new PgWorkerRegistry(pool);
    this.webhooks = new PgWebhooks(pool);
  }

  /**
   * One client checked out of the pool for the whole of `fn`: BEGIN, `fn(tx)` with every catalog
   * bound to that client, COMMIT when it resolves, ROLLBACK when it rejects; the client goes back to
   * the pool in every case. Searches inside scan the collection as the transaction sees it.
   */
  transaction<T>(fn: (tx: CatalogTx) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, (client) =>
      fn({
        collections: new PgCollectionsCatalog(client),
        videos: new PgVideosCatalog(client),
        tasks: new PgTasksCatalog(client),
        segments: new PgSegmentsCatalog(client, undefined, { settings: this.opts.vectorSettings }),
        signatures: new PgSignaturesCatalog(client),
        analysis: new PgAnalysisCatalog(client),
        folders: new PgFoldersCatalog(client),
        queue: new PgTxJobQueue(client),
        webhooks: new PgWebhooks(client),
      }),
    );
  }

  /** Where searches run and why: as decided at open (src/store/open.ts), else as the database says now. */
  async vectorStore(): Promise<VectorStoreStatus> {
    await this.pool.query('SELECT 1'); // an opened store migrates and decides on first use
    return this.opts.vectorStatus?.() ?? describeVectorStore(this.pool);
  }

  private closing?: Promise<void>;

  /** Ends the pool it owns; a second close waits for the first (pg throws "Called end on pool more than once"). */
  close(): Promise<void> {
    return (this.closing ??= this.ownsPool ? this.pool.end() : Promise.resolve());
  }
}

/** A pool on `url`, the schema migrated, and the catalog on it (which ends the pool on close). */
export async function openPgCatalog(url: string, opts: { max?: number } = {}): Promise<PgCatalog> {
  return new PgCatalog(await openMigratedPool(url, opts.max ?? 4), true);
}

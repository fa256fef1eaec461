import type { VideoStatus } from '../api/types.js';
import { strandedSubjects } from './queue/sqlite.js';
import type { Db } from './db.js';
import { nowIso } from './db.js';

export type VideoPlayback = 'original' | 'proxy' | 'none';

/** What processing learns of a video's media (`setMediaInfo`). */
export interface MediaInfo {
  duration: number;
  width: number;
  height: number;
  fps: number;
  codec?: string;
  playback?: VideoPlayback;
}

export interface VideoRow {
  id: string;
  collection_id: string;
  filename: string;
  /** Legacy: the absolute path of a video stored before blob keys ('' for later ones). */
  path: string;
  /** The video's key in the blob store (VIDEMBED_STORAGE_URL); null for videos stored by path. */
  blob_key: string | null;
  size_bytes: number;
  status: VideoStatus;
  progress: number | null;
  error_message: string | null;
  duration: number | null;
  width: number | null;
  height: number | null;
  fps: number | null;
  /** Video codec as ffmpeg names it (h264, hevc, vp9…), known once processed. */
  codec: string | null;
  /** How a browser plays it: its own file, the playback proxy, or not at all; null until processed. */
  playback: VideoPlayback | null;
  tags_json: string | null;
  created_at: string;
  updated_at: string;
  /**
   * In place (issue 22): the content fingerprint of the user's file at `path`, which vidembed reads
   * and never deletes (src/services/in-place.ts); null for videos the library holds.
   */
  fingerprint: string | null;
  /** In place: the file's modification time when it was last seen (ISO, ms); null otherwise. */
  file_mtime: string | null;
}

/** What a new video is: stored by blob key, by path (legacy), or in place (path + fingerprint + file_mtime). */
export interface NewVideo {
  id: string;
  collection_id: string;
  filename: string;
  path?: string;
  blob_key?: string;
  size_bytes: number;
  content_sha256?: string;
  fingerprint?: string;
  file_mtime?: string;
}

/** A video indexed in place found again: at a new path (moved, renamed) or with new bytes (changed). */
export interface VideoFileSeen {
  path: string;
  filename: string;
  size_bytes: number;
  fingerprint: string;
  file_mtime: string;
}

/** The rule every backend's insert checks first (one place). */
export function checkNewVideo(v: NewVideo): void {
  if (!v.blob_key === !v.path) throw new Error('videos.insert: give exactly one of path and blob_key');
  if (!v.fingerprint !== !v.file_mtime || (v.fingerprint && !v.path)) throw new Error('videos.insert: a video in place has a path, a fingerprint and a file_mtime');
}

export class VideosRepo {
  constructor(private readonly db: Db) {}

  /** A new video, stored either by blob key (`blob_key`) or, as before keys, by absolute `path`. */
  insert(v: NewVideo): VideoRow {
    checkNewVideo(v);
    const now = nowIso();
    this.db
      .prepare(
        `INSERT INTO videos (id, collection_id, filename, path, blob_key, size_bytes, status, created_at, updated_at, content_sha256, fingerprint, file_mtime)
         VALUES (?, ?, ?, ?, ?, ?, 'uploaded', ?, ?, ?, ?, ?)`,
      )
      .run(v.id, v.collection_id, v.filename, v.path ?? '', v.blob_key ?? null, v.size_bytes, now, now, v.content_sha256 ?? null, v.fingerprint ?? null, v.file_mtime ?? null);
    return this.byId(v.id)!;
  }

  /** The oldest video in place of a collection with this fingerprint. */
  byFingerprint(collectionId: string, fingerprint: string): VideoRow | undefined {
    return this.db.prepare('SELECT * FROM videos WHERE collection_id = ? AND fingerprint = ? ORDER BY created_at, rowid LIMIT 1').get(collectionId, fingerprint) as VideoRow | undefined;
  }

  /** The videos of these collections named exactly `filename`, oldest first (index videos_filename). */
  byFilename(collectionIds: string[], filename: string, limit: number): VideoRow[] {
    if (!collectionIds.length) return [];
    const marks = collectionIds.map(() => '?').join(', ');
    return this.db
      .prepare(`SELECT * FROM videos WHERE collection_id IN (${marks}) AND filename = ? ORDER BY created_at, rowid LIMIT ?`)
      .all(...collectionIds, filename, limit) as VideoRow[];
  }

  /** A video in place seen again (moved, renamed or changed): its path, name, size, fingerprint, mtime. */
  fileSeen(id: string, f: VideoFileSeen): void {
    this.db
      .prepare('UPDATE videos SET path = ?, filename = ?, size_bytes = ?, fingerprint = ?, file_mtime = ?, updated_at = ? WHERE id = ? AND fingerprint IS NOT NULL')
      .run(f.path, f.filename, f.size_bytes, f.fingerprint, f.file_mtime, nowIso(), id);
  }

  /** The first video of a collection with these bytes (content hash), if any. */
  byContent(collectionId: string, sha256: string): VideoRow | undefined {
    return this.db.prepare('SELECT * FROM videos WHERE collection_id = ? AND content_sha256 = ? ORDER BY created_at, rowid LIMIT 1').get(collectionId, sha256) as VideoRow | undefined;
  }

  byId(id: string): VideoRow | undefined {
    return this.db.prepare('SELECT * FROM videos WHERE id = ?').get(id) as VideoRow | undefined;
  }

  /** The videos of these ids that exist (one statement; in no particular order). */
  byIds(ids: readonly string[]): VideoRow[] {
    if (ids.length === 0) return [];
    if (ids.length === 1) {
      const row = this.byId(ids[0]);
      return row ? [row] : [];
    }
    return this.db.prepare('SELECT * FROM videos WHERE id IN (SELECT value FROM json_each(?))').all(JSON.stringify(ids)) as VideoRow[];
  }

  /** Newest first, optionally of one status (created_at, then rowid: the later insert first). */
  page(collectionId: string, opts: { status?: VideoStatus; limit: number; offset: number }): VideoRow[] {
    const where = opts.status ? 'AND status = ?' : '';
    const params: unknown[] = [collectionId, ...(opts.status ? [opts.status] : []), opts.limit, opts.offset];
    return this.db.prepare(`SELECT * FROM videos WHERE collection_id = ? ${where} ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`).all(...params) as VideoRow[];
  }

  delete(id: string): void {
    this.db.prepare('DELETE FROM videos WHERE id = ?').run(id);
  }

  listByCollection(collectionId: string): VideoRow[] {
    return this.db
      .prepare('SELECT * FROM videos WHERE collection_id = ? ORDER BY created_at, rowid')
      .all(collectionId) as VideoRow[];
  }

  markProcessing(id: string): void {
    this.db
      .prepare(`UPDATE videos SET status = 'processing', progress = 0, error_message = NULL, updated_at = ? WHERE id = ?`)
      .run(nowIso(), id);
  }

  setProgress(id: string, progress: number): void {
    this.db
      .prepare(`UPDATE videos SET progress = ?, updated_at = ? WHERE id = ? AND status = 'processing'`)
      .run(Math.max(0, Math.min(100, Math.round(progress * 10) / 10)), nowIso(), id);
  }

  /** Media facts once processed; width and height are the displayed size (after rotation). */
  setMediaInfo(id: string, info: MediaInfo): void {
    this.db
      .prepare('UPDATE videos SET duration = ?, width = ?, height = ?, fps = ?, codec = ?, playback = ?, updated_at = ? WHERE id = ?')
      .run(info.duration, info.width, info.height, info.fps, info.codec ?? null, info.playback ?? null, nowIso(), id);
  }

  setTags(id: string, tagsJson: string | null): void {
    this.db.prepare('UPDATE videos SET tags_json = ?, updated_at = ? WHERE id = ?').run(tagsJson, nowIso(), id);
  }

  markProcessed(id: string, tagsJson: string | null): void {
    this.db
      .prepare(
        `UPDATE videos SET status = 'processed', progress = 100, error_message = NULL, tags_json = ?, updated_at = ? WHERE id = ?`,
      )
      .run(tagsJson, nowIso(), id);
  }

  /**
   * Videos still waiting or processing that no job will ever finish: none of their jobs is queued
   * or running (a worker died between failing a job and failing its video). With the last_error of
   * their job updated last (null when it recorded none, or there is no job).
   */
  /** Videos stored before blob keys: kept by an absolute path on this machine (not the user's files in place). */
  countWithPathOnly(): number {
    return this.db.prepare(`SELECT COUNT(*) FROM videos WHERE (blob_key IS NULL OR blob_key = '') AND fingerprint IS NULL`).pluck().get() as number;
  }

  /** Videos in place: the user's files, read from their folders on this machine. */
  countInPlace(): number {
    return this.db.prepare('SELECT COUNT(*) FROM videos WHERE fingerprint IS NOT NULL').pluck().get() as number;
  }

  stranded(): Array<{ id: string; last_error: string | null }> {
    return strandedSubjects(this.db, 'videos', ['uploaded', 'processing']);
  }

  markFailed(id: string, message: string): void {
    this.db
      .prepare(`UPDATE videos SET status = 'failed', progress = NULL, error_message = ?, updated_at = ? WHERE id = ?`)
      .run(message, nowIso(), id);
  }

  bytesOfOwner(owner: string): number {
    return this.db
      .prepare(`SELECT COALESCE(SUM(v.size_bytes), 0) FROM videos v JOIN collections c ON c.id = v.collection_id WHERE c.owner = ?`)
      .pluck()
      .get(owner) as number;
  }

  failedWith(message: string, limit: number): string[] {
    return this.db
      .prepare(`SELECT id FROM videos WHERE status = 'failed' AND error_message = ? ORDER BY updated_at, rowid LIMIT ?`)
      .pluck()
      .all(message, limit) as string[];
  }

  idsForCollection(collectionId: string, statuses: VideoStatus[]): string[] {
    return this.db
      .prepare(`SELECT id FROM videos WHERE collection_id = ? AND status IN (SELECT value FROM json_each(?)) ORDER BY created_at, rowid`)
      .pluck()
      .all(collectionId, JSON.stringify(statuses)) as string[];
  }

  /** How many of a collection's videos are in each status. */
  countsByStatus(collectionId: string): Record<VideoStatus, number> {
    const out: Record<VideoStatus, number> = { uploaded: 0, processing: 0, processed: 0, failed: 0 };
    const rows = this.db.prepare('SELECT status, COUNT(*) AS n FROM videos WHERE collection_id = ? GROUP BY status').all(collectionId) as { status: VideoStatus; n: number }[];
    for (const r of rows) out[r.status] = r.n;
    return out;
  }

  countWaiting(collectionId: string): number {
    return this.db.prepare("SELECT COUNT(*) FROM videos WHERE status IN ('uploaded', 'processing') AND collection_id = ?").pluck().get(collectionId) as number;
  }
}

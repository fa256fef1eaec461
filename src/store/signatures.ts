import type { Db } from './db.js';
import { nowIso } from './db.js';

export interface SignatureRow {
  video_id: string;
  version: number;
  frames: number;
  data: Buffer;
}

/** One key frame of a segment, for near-duplicate detection. */
export interface SegmentKeyRow {
  video_id: string;
  idx: number;
  start: number;
  end: number;
  phash: string | null;
}

/**
 * Visual signatures of videos (src/duplicates/duplicates.ts: the pHashes of frames every 1/4 s, as
 * bytes); deleted with their video (foreign key, cascade).
 */
export class SignaturesRepo {
  constructor(private readonly db: Db) {}

  put(videoId: string, version: number, frames: number, data: Buffer): void {
    this.db
      .prepare(
        `INSERT INTO video_signatures (video_id, version, frames, data, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (video_id) DO UPDATE SET version = excluded.version, frames = excluded.frames, data = excluded.data, updated_at = excluded.updated_at`,
      )
      .run(videoId, version, frames, data, nowIso());
  }

  delete(videoId: string): void {
    this.db.prepare('DELETE FROM video_signatures WHERE video_id = ?').run(videoId);
  }

  /** The signatures of a collection's videos, oldest video first. */
  forCollection(collectionId: string): SignatureRow[] {
    return this.db
      .prepare(
        `SELECT s.video_id, s.version, s.frames, s.data FROM video_signatures s JOIN videos v ON v.id = s.video_id
         WHERE v.collection_id = ? ORDER BY v.created_at, v.rowid`,
      )
      .all(collectionId) as SignatureRow[];
  }

  /** Start, end and keyframe pHash of every segment of a collection, by video and position. */
  segmentKeys(collectionId: string): SegmentKeyRow[] {
    return this.db
      .prepare('SELECT video_id, idx, start, end, phash FROM segments WHERE collection_id = ? ORDER BY video_id, idx')
      .all(collectionId) as SegmentKeyRow[];
  }
}

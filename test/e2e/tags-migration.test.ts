import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as sqliteVec from 'sqlite-vec';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgCatalog } from '../../src/store/catalog/postgres.js';
import { openSqliteCatalog } from '../../src/store/catalog/sqlite.js';
import type { Catalog } from '../../src/store/catalog/types.js';
import { migrate, schemaVersion } from '../../src/store/migrations.js';
import { migratePg, openPgPool, PG_MIGRATIONS } from '../../src/store/pg/migrate.js';
import { pgTestAvailable, startTestDatabase, type PgTestDatabase } from '../helpers/postgres.js';

/*
 * Tags stored generically (SQLite migration 14, PostgreSQL migration 4): segments written under the
 * fixed columns shot_size / camera_movement / shooting_angle keep their labels, which filter as
 * before; new segments with any tag kind land beside them.
 */

const DIM = 4;
const OLD = [
  { idx: 0, v: [1, 0, 0, 0], shot: 'wide', move: 'static', angle: 'high' },
  { idx: 1, v: [0.9, 0.1, 0, 0], shot: 'close', move: 'pan_left', angle: null },
  { idx: 2, v: [0.8, 0.2, 0, 0], shot: '', move: '', angle: '' }, // '' meant "not tagged" in sqlite-vec's columns
  { idx: 3, v: [0.7, 0.3, 0, 0], shot: null, move: null, angle: null },
];
const bytes = (v: number[]) => Buffer.from(Float32Array.from(v).buffer);

/** What every backend must show after the migration (ids in idx order). */
async function expectMoved(c: Catalog, collectionId: string, videoId: string, newVideo: string): Promise<void> {
  const rows = await c.segments.listForVideo(videoId);
  expect(rows.map((r) => r.labels)).toEqual([{ shot_size: 'wide', camera_movement: 'static', shooting_angle: 'high' }, { shot_size: 'close', camera_movement: 'pan_left' }, {}, {}]);
  for (const r of rows) expect(Object.keys(r)).not.toContain('shot_size');
  const ids = rows.map((r) => r.id);
  const q = Float32Array.from([1, 0, 0, 0]);
  const found = async (filter: Record<string, string>) => [...(await c.segments.candidates(collectionId, DIM, q, 10, filter, [])).keys()].sort((a, b) => a - b);
  expect(await found({ shot_size: 'wide' })).toEqual([ids[0]]);
  expect(await found({ camera_movement: 'pan_left', shot_size: 'close' })).toEqual([ids[1]]);
  expect(await found({ shooting_angle: 'high', shot_size: 'close' })).toEqual([]);
  expect(await found({})).toEqual(ids);
  expect((await c.segments.termMatches(collectionId, ['horse'], 10, { camera_movement: 'static' })).get('horse')).toEqual([ids[0]]);

  // A new video with a kind the old columns never had, beside the old ones.
  await c.videos.insert({ id: newVideo, collection_id: collectionId, filename: 'b.mp4', blob_key: `videos/${newVideo}`, size_bytes: 1 });
  await c.segments.replaceForVideo(newVideo, collectionId, DIM, [
    { idx: 0, start: 0, end: 1, description: 'horse', tags: { shot_size: { label: 'wide', confidence: 1 }, audio: { label: 'music', confidence: 1 } }, vector: Float32Array.from([0.95, 0.05, 0, 0]) },
  ]);
  const [fresh] = await c.segments.listForVideo(newVideo);
  expect(fresh.labels).toEqual({ shot_size: 'wide', audio: 'music' });
  expect(await found({ shot_size: 'wide' })).toEqual([ids[0], fresh.id]);
  expect(await found({ audio: 'music' })).toEqual([fresh.id]);
}

describe('generic tags: SQLite migration 14 moves the fixed tag columns', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vidembed-tags-migrate-'));
  const file = path.join(dir, 'vidembed.db');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  beforeAll(() => {
    // A library as release 13 left it, with a vector table of the old shape (tag columns in vec0).
    const old = new Database(file);
    sqliteVec.load(old);
    migrate(old, 13);
    expect(schemaVersion(old)).toBe(13);
    const now = new Date().toISOString();
    old.prepare(`INSERT INTO collections (id, owner, name, description, model, dim, created_at, seq) VALUES ('col_old', 'default', 'old', '', 'fake', ?, ?, 1)`).run(DIM, now);
    old.prepare(`INSERT INTO videos (id, collection_id, filename, path, size_bytes, status, created_at, updated_at) VALUES ('vid_old', 'col_old', 'a.mp4', '/x', 1, 'processed', ?, ?)`).run(now, now);
    old.exec(`CREATE VIRTUAL TABLE vec_segments_${DIM} USING vec0(segment_id INTEGER PRIMARY KEY, collection_id TEXT PARTITION KEY,
      shot_size TEXT, camera_movement TEXT, shooting_angle TEXT, embedding FLOAT[${DIM}] distance_metric=cosine)`);
    for (const s of OLD) {
      const id = old
        .prepare(`INSERT INTO segments (video_id, collection_id, idx, start, end, description, shot_size, camera_movement, shooting_angle) VALUES ('vid_old', 'col_old', ?, ?, ?, 'horse', ?, ?, ?)`)
        .run(s.idx, s.idx, s.idx + 1, s.shot, s.move, s.angle).lastInsertRowid;
      old.prepare('INSERT INTO segments_fts (rowid, description) VALUES (?, ?)').run(id, 'horse');
      old.prepare('INSERT INTO segment_vectors (segment_id, embedding) VALUES (?, ?)').run(id, bytes(s.v));
      old.prepare(`INSERT INTO vec_segments_${DIM} VALUES (?, 'col_old', ?, ?, ?, ?)`).run(BigInt(id), s.shot ?? '', s.move ?? '', s.angle ?? '', bytes(s.v));
    }
    old.close();
  });

  for (const memoryIndex of [false, true]) {
    it(`labels move into labels_json, the columns go; filters find the old rows and new ones (${memoryIndex ? 'in-memory index' : 'sqlite-vec'})`, async () => {
      const c = openSqliteCatalog(file, { memoryIndex });
      try {
        const cols = c.store.db.prepare(`SELECT name FROM pragma_table_info('segments')`).pluck().all();
        expect(cols).toContain('labels_json');
        expect(cols).not.toContain('shot_size');
        expect(schemaVersion(c.store.db)).toBeGreaterThanOrEqual(14);
        await expectMoved(c, 'col_old', 'vid_old', `vid_new_${memoryIndex}`);
        await c.videos.delete(`vid_new_${memoryIndex}`);
      } finally {
        await c.close();
      }
    });
  }
});

const pgOk = pgTestAvailable();

describe.skipIf(!pgOk)('generic tags: PostgreSQL migration 4 moves the fixed tag columns', () => {
  let db: PgTestDatabase;
  beforeAll(async () => {
    db = await startTestDatabase();
  });
  afterAll(async () => {
    await db?.teardown();
  });

  it('labels move into the labels jsonb column, the columns go; filters find the old rows and new ones', async () => {
    const pool = openPgPool(db.url, 3);
    const c = new PgCatalog(pool, true);
    try {
      expect(await migratePg(pool, 3)).toEqual([1, 2, 3]);
      const col = await c.collections.insert({ name: 'old', description: '', model: 'fake', dim: DIM });
      // The videos table as migration 3 left it (today's catalog writes later columns too).
      await pool.query(`INSERT INTO videos (id, collection_id, filename, blob_key, size_bytes, status) VALUES ('vid_old', $1, 'a.mp4', 'videos/a', 1, 'uploaded')`, [col.id]);
      for (const s of OLD) {
        await pool.query(
          `INSERT INTO segments (video_id, collection_id, idx, start, "end", description, keywords, shot_size, camera_movement, shooting_angle, dim, embedding)
           VALUES ('vid_old', $1, $2::int, $2::float8, $2::float8 + 1, 'horse', to_tsvector('english', 'horse'), $3, $4, $5, $6, $7)`,
          [col.id, s.idx, s.shot, s.move, s.angle, DIM, bytes(s.v)],
        );
      }
      // Migration 4 and every later one (the catalog below writes their columns).
      expect(await migratePg(pool)).toEqual(PG_MIGRATIONS.map((m) => m.version).filter((v) => v > 3));
      const { rows } = await pool.query(`SELECT column_name FROM information_schema.columns WHERE table_name = 'segments'`);
      expect(rows.map((r) => r.column_name)).toContain('labels');
      expect(rows.map((r) => r.column_name)).not.toContain('shot_size');
      await expectMoved(c, col.id, 'vid_old', 'vid_new');
    } finally {
      await c.close();
    }
  });
});

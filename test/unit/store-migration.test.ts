import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalEngine } from '../../src/runtime/engine.js';
import { hashKey } from '../../src/store/keys.js';
import { migrate, schemaVersion } from '../../src/store/migrations.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';

/** A library made by the previous release (schema 3, before owners) opened by this one. */
describe('migrating a schema-3 library to owners', () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'vidembed-migrate-'));
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it('gives everything made before owners to "default", which admins and the local CLI see and other owners do not', async () => {
    const old = new Database(path.join(home, 'vidembed.db'));
    migrate(old, 3);
    expect(schemaVersion(old)).toBe(3);
    const now = new Date().toISOString();
    old.prepare(`INSERT INTO collections (id, name, description, model, dim, created_at, seq, revision) VALUES ('col_old', 'archive', 'd', 'fake-16', 16, ?, 1, 5)`).run(now);
    old
      .prepare(`INSERT INTO videos (id, collection_id, filename, path, size_bytes, status, created_at, updated_at) VALUES ('vid_old', 'col_old', 'a.mp4', '/x/a.mp4', 1, 'uploaded', ?, ?)`)
      .run(now, now);
    old.prepare(`INSERT INTO tasks (id, kind, status, request_json, created_at, updated_at) VALUES ('req_old', 'embedding', 'pending', '{}', ?, ?)`).run(now, now);
    old.prepare(`INSERT INTO api_keys (id, name, key_hash, prefix, qps, created_at) VALUES ('key_old', 'legacy', ?, 'vk_abcd', 5, ?)`).run(hashKey('vk_legacy'), now);
    old.close();

    const fake = new FakeEmbedder();
    const engine = new LocalEngine({ home, embedderFor: () => fake });
    try {
      const db = engine.store.db;
      expect(schemaVersion(db)).toBeGreaterThanOrEqual(4);
      expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
      expect(db.prepare(`SELECT owner, revision FROM collections WHERE id = 'col_old'`).get()).toEqual({ owner: 'default', revision: 5 });
      expect(engine.store.keys.byId('key_old')).toMatchObject({ owner: 'default', role: 'user' });

      // The local CLI and admin keys see the old library; another owner does not; the legacy key does.
      expect((await engine.listCollections()).map((c) => c.id)).toEqual(['col_old']);
      const admin = engine.as({ owner: 'ops', admin: true });
      expect((await admin.videoStatus('vid_old')).status).toBe('uploaded');
      expect((await admin.taskStatus('req_old')).status).toBe('pending');
      expect((await admin.getCollection('archive')).id).toBe('col_old');
      const legacy = engine.as({ owner: 'default', admin: false });
      expect((await legacy.getCollection('archive')).id).toBe('col_old');
      const bob = engine.as({ owner: 'bob', admin: false });
      expect(await bob.listCollections()).toEqual([]);
      await expect(bob.getCollection('col_old')).rejects.toMatchObject({ status: 404 });
      await expect(bob.videoStatus('vid_old')).rejects.toMatchObject({ status: 404 });
      await expect(bob.taskStatus('req_old')).rejects.toMatchObject({ status: 404 });

      // Names are unique per owner now, not globally.
      expect((await bob.createCollection({ name: 'archive' })).name).toBe('archive');
      await expect(legacy.createCollection({ name: 'archive' })).rejects.toMatchObject({ status: 409 });
      // With two "archive"s an admin outside both owners must name one by id.
      await expect(admin.getCollection('archive')).rejects.toMatchObject({ status: 409 });

      // Foreign keys survived the table rebuild: deleting the collection removes its videos.
      db.prepare(`DELETE FROM collections WHERE id = 'col_old'`).run();
      expect(db.prepare(`SELECT COUNT(*) AS n FROM videos WHERE id = 'vid_old'`).get()).toEqual({ n: 0 });
    } finally {
      await engine.close();
    }
  });
});

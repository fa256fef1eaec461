/**
 * `vidembed migrate --to postgres://… --storage-to file:///dir`: a SQLite library copied into an
 * empty PostgreSQL database (real CLI, real cluster) answers the same on the other side — counts,
 * segment ids, vectors, keywords, keys (by the raw key), open jobs, files — and search gives the
 * same page on both backends. A database that already holds a library is refused.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hybridSearch } from '../../src/search/hybrid.js';
import { PgCatalog } from '../../src/store/catalog/postgres.js';
import { SqliteCatalog } from '../../src/store/catalog/sqlite.js';
import { Store } from '../../src/store/index.js';
import { openPgPool } from '../../src/store/pg/migrate.js';
import { runCli } from '../helpers/cli.js';
import { removeDir, tempDir } from '../helpers/clips.js';
import { pgTestAvailable, usePgTestDatabase } from '../helpers/postgres.js';

const DIM = 8;
const WORDS = ['dog', 'cat', 'boat', 'harbour', 'mountain', 'bicycle', 'kitchen', 'orange', 'guitar', 'forest'];

function rng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}
const r = rng(1122);
const unit = () => {
  const v = new Float32Array(DIM).map(() => r() - 0.5);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};

const pgOk = pgTestAvailable();

describe.skipIf(!pgOk)('vidembed migrate: SQLite library into PostgreSQL', () => {
  const db = usePgTestDatabase(['collections', 'videos', 'segments', 'segment_deletions', 'video_signatures', 'tasks', 'api_keys', 'jobs', 'workers']);
  const dir = tempDir('vidembed-migrate-');
  const home = path.join(dir, 'home');
  const shared = path.join(dir, 'shared');
  afterAll(() => removeDir(dir));

  it('copies every table and file, keeps ids and keys, and search answers the same on both', async () => {
    mkdirSync(home, { recursive: true });
    const store = Store.open(path.join(home, 'vidembed.db'));
    let rawKey = '';
    let collectionId = '';
    try {
      collectionId = store.collections.insert({ name: 'archive', description: 'old footage', model: 'fake-8', dim: DIM }).id;
      for (let v = 0; v < 12; v++) {
        const id = `vid_${v}`;
        store.videos.insert({ id, collection_id: collectionId, filename: `${id}.mp4`, blob_key: `videos/${id}.mp4`, size_bytes: 3 });
        mkdirSync(path.join(home, 'blobs', 'videos'), { recursive: true });
        writeFileSync(path.join(home, 'blobs', 'videos', `${id}.mp4`), `v${v}`);
        if (v === 11) {
          await store.queue.enqueue('video.process', id); // still to do
          continue;
        }
        store.segments.replaceForVideo(
          id,
          collectionId,
          DIM,
          Array.from({ length: 4 }, (_, i) => {
            const words = `${WORDS[(v + i) % WORDS.length]} ${WORDS[(v * 3 + i) % WORDS.length]}`;
            return { idx: i, start: i * 4, end: i * 4 + 4, description: `A ${words}.`, keywords: words, facts: { objects: [words] }, tags: { shot_size: { label: i % 2 ? 'wide' : 'close' }, audio: i % 3 ? 'speech' : 'music' }, vector: unit() };
          }),
        );
        store.videos.markProcessed(id, '{}');
      }
      store.signatures.put('vid_0', 1, 2, Buffer.from([1, 2, 3, 4]));
      rawKey = store.keys.create({ name: 'alice', qps: 5, quota: 100 }).key;
      store.tasks.insert('req_1', 'embedding', { video_url: 'https://example.com/a.mp4' });
    } finally {
      store.close();
    }

    const res = await runCli(['--home', home, '--json', 'migrate', '--to', db.url, '--storage-to', `file://${shared}`]);
    expect(res.code, res.stderr).toBe(0);
    const byTable = Object.fromEntries((res.json.tables as { table: string; sqlite: number; postgres: number }[]).map((t) => [t.table, t]));
    expect(byTable).toMatchObject({
      collections: { sqlite: 1, postgres: 1 },
      videos: { sqlite: 12, postgres: 12 },
      segments: { sqlite: 44, postgres: 44 },
      video_signatures: { sqlite: 1, postgres: 1 },
      tasks: { sqlite: 1, postgres: 1 },
      api_keys: { sqlite: 1, postgres: 1 },
      jobs: { sqlite: 1, postgres: 1 },
    });
    expect(res.json.files_copied).toBe(12);
    expect(readFileSync(path.join(shared, 'videos', 'vid_7.mp4'), 'utf8')).toBe('v7');

    const sqlite = new SqliteCatalog(Store.open(path.join(home, 'vidembed.db')), true);
    const pg = new PgCatalog(openPgPool(db.url, 2), true);
    try {
      // Rows and ids as they were.
      const a = await sqlite.segments.listForVideo('vid_3');
      const b = await pg.segments.listForVideo('vid_3');
      expect(b).toEqual(a); // labels too
      expect(new Set(b.map((s) => s.labels.shot_size))).toEqual(new Set(['wide', 'close']));
      const ids = a.map((s) => s.id);
      expect([...(await pg.segments.vectors(DIM, ids)).values()]).toEqual([...(await sqlite.segments.vectors(DIM, ids)).values()]);
      // The key works by the raw key (only its hash was ever stored), with its quota.
      expect(await pg.keys.byKey(rawKey)).toMatchObject({ name: 'alice', quota: 100, used: 0 });
      expect(await pg.videos.byId('vid_11')).toMatchObject({ status: 'uploaded', blob_key: 'videos/vid_11.mp4' });
      expect((await pg.queue.claim('wrk_pg', 60_000))?.refId).toBe('vid_11');
      // The same page for the same queries on both.
      for (let q = 0; q < 10; q++) {
        const input = { collectionId, dim: DIM, queryVector: unit(), text: `${WORDS[q]} ${WORDS[(q + 4) % WORDS.length]}`, topK: 5, filter: q % 3 === 0 ? {} : q % 3 === 1 ? { shot_size: 'wide' } : { shot_size: 'close', audio: 'music' }, explain: true };
        const onSqlite = await hybridSearch(sqlite.segments, sqlite.videos, input);
        const onPg = await hybridSearch(pg.segments, pg.videos, input);
        expect(onPg.map((x) => [x.video_id, x.start, x.matched_words])).toEqual(onSqlite.map((x) => [x.video_id, x.start, x.matched_words]));
        onPg.forEach((x, i) => expect(x.relevance!).toBeCloseTo(onSqlite[i].relevance!, 5));
      }
      // New segments take ids after the copied ones.
      await pg.segments.replaceForVideo('vid_11', collectionId, DIM, [{ idx: 0, start: 0, end: 4, description: 'new', vector: unit() }]);
      expect((await pg.segments.listForVideo('vid_11'))[0].id).toBeGreaterThan(Math.max(...ids, 44));
    } finally {
      await sqlite.close();
      await pg.close();
    }

    // Once is enough: a database holding a library is refused, and left as it was.
    const again = await runCli(['--home', home, 'migrate', '--to', db.url]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/already holds a library/);
    expect(existsSync(path.join(home, 'vidembed.db'))).toBe(true);
  });
});

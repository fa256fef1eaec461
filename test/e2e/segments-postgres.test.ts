import { describe, expect, it } from 'vitest';
import { PgCatalog } from '../../src/store/catalog/postgres.js';
import { SchemaTooNewError } from '../../src/api/errors.js';
import { migratePg, openPgPool, PG_MIGRATIONS } from '../../src/store/pg/migrate.js';
import { foldDeltas } from '../../src/store/pg/deltas.js';
import { conformance, DIM, seg, segmentIds, sortedIds, vec } from '../conformance/segments.js';
import { conformance as analysisConformance } from '../conformance/analysis.js';
import { pgTestAvailable, usePgTestDatabase } from '../helpers/postgres.js';

/* The segment, signature and transaction rules (test/conformance/segments.ts) on PostgreSQL (a throwaway cluster), and what only several machines can do. */

const pgOk = pgTestAvailable();

describe.skipIf(!pgOk)('segments conformance: PostgreSQL', () => {
  const db = usePgTestDatabase(['segment_deletions', 'video_signatures', 'video_capabilities', 'segments', 'collections', 'videos', 'tasks', 'api_keys', 'jobs', 'workers']);

  conformance(() => ({ open: async () => new PgCatalog(openPgPool(db.url, 3), true) }));
  analysisConformance(() => ({ open: async () => new PgCatalog(openPgPool(db.url, 3), true), concurrentTransactions: true }));

  it('a search view catches up once: one round trip for all the calls of a search', async () => {
    const c = new PgCatalog(openPgPool(db.url, 3), true);
    try {
      const col = (await c.collections.insert({ name: 'pinned', description: '', model: 'test', dim: DIM })).id;
      await c.videos.insert({ id: 'vid_pin', collection_id: col, filename: 'a.mp4', blob_key: 'videos/pin', size_bytes: 1 });
      await c.segments.replaceForVideo('vid_pin', col, DIM, [seg(0, vec(1, 0, 0, 0), { keywords: 'horse' }), seg(1, vec(0, 1, 0, 0))]);
      const q = vec(1, 0, 0, 0);
      await c.segments.candidates(col, DIM, q, 5, {}, []); // loads the collection
      const index = (c.segments as unknown as { index: { stats: { catchUps: number } } }).index;
      const before = index.stats.catchUps;
      const view = c.segments.forSearch!();
      const ids = [...(await view.candidates(col, DIM, q, 5, {}, [])).keys()];
      await view.termMatches(col, ['horse'], 10);
      await view.countForCollection(col);
      await view.videosOf(col, ids);
      await view.similarities(DIM, ids, q);
      expect(index.stats.catchUps - before).toBe(1);
      await c.segments.countForCollection(col); // the catalog itself still catches up at each call
      expect(index.stats.catchUps - before).toBe(2);
    } finally {
      await c.close();
    }
  });
  it('a transaction that commits after a later one is not missed by a process that searched in between', async () => {
    const writer = new PgCatalog(openPgPool(db.url, 3), true);
    const other = new PgCatalog(openPgPool(db.url, 3), true);
    const reader = new PgCatalog(openPgPool(db.url, 3), true);
    try {
      const col = (await writer.collections.insert({ name: 'late', description: '', model: 'test', dim: DIM })).id;
      for (const id of ['vid_early', 'vid_late']) await writer.videos.insert({ id, collection_id: col, filename: 'a.mp4', blob_key: `videos/${id}`, size_bytes: 1 });
      const q = vec(1, 0, 0, 0);
      expect((await reader.segments.candidates(col, DIM, q, 10, {}, [])).size).toBe(0);
      let seenMeanwhile: number[] = [];
      await writer.transaction(async (tx) => {
        // Smaller ids, committed last.
        await tx.segments.replaceForVideo('vid_early', col, DIM, [seg(0, vec(1, 0, 0, 0)), seg(1, vec(0.5, 0.5, 0, 0))]);
        await other.segments.replaceForVideo('vid_late', col, DIM, [seg(0, vec(0, 1, 0, 0))]);
        seenMeanwhile = [...(await reader.segments.candidates(col, DIM, q, 10, {}, [])).keys()];
      });
      const early = await segmentIds(writer, 'vid_early');
      const late = await segmentIds(writer, 'vid_late');
      expect(Math.max(...early)).toBeLessThan(Math.min(...late));
      expect(seenMeanwhile).toEqual(late);
      expect(sortedIds(await reader.segments.candidates(col, DIM, q, 10, {}, []))).toEqual([...early, ...late].sort((a, b) => a - b));
      expect(reader.segments.index?.stats.fullLoads).toBe(1);
    } finally {
      for (const x of [writer, other, reader]) await x.close();
    }
  });

  it('holds locks the job until the transaction ends: a cancel from another machine waits, then sees the committed results and fails the job', async () => {
    const c = new PgCatalog(openPgPool(db.url, 3), true);
    const elsewhere = new PgCatalog(openPgPool(db.url, 3), true);
    try {
      const col = (await c.collections.insert({ name: 'locks', description: '', model: 'test', dim: DIM })).id;
      await c.videos.insert({ id: 'vid_lock', collection_id: col, filename: 'a.mp4', blob_key: 'videos/lock', size_bytes: 1 });
      const jobId = await c.queue.enqueue('video.process', 'vid_lock');
      const job = (await c.queue.claim('w1', 60_000))!;
      let cancelled: Promise<number> | undefined;
      await c.transaction(async (tx) => {
        expect(await tx.queue.holds(jobId, job.token)).toBe(true);
        let settled = false;
        cancelled = elsewhere.queue.cancelFor('vid_lock').finally(() => (settled = true));
        // Wait until the cancel is blocked on this transaction's row lock (a state, not a time);
        // were the row not locked, the cancel would finish instead, and fail the job under us.
        for (;;) {
          const { rows } = await c.pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FROM jobs WHERE ref_id%FOR UPDATE%'`,
          );
          if (rows[0].n > 0) break;
          expect(settled).toBe(false);
        }
        await tx.segments.replaceForVideo('vid_lock', col, DIM, [seg(0, vec(1, 0, 0, 0))]);
        await tx.videos.markProcessed('vid_lock', null);
      });
      expect(await cancelled).toBe(1);
      expect(await c.queue.get(jobId)).toMatchObject({ status: 'failed' });
      expect((await c.videos.byId('vid_lock'))?.status).toBe('processed');
      expect(await c.queue.complete(jobId, job.token)).toBe(false);
    } finally {
      await c.close();
      await elsewhere.close();
    }
  });

  /** Every lexeme's count as kept on write (PG migration 1300) and as counted from the rows now. */
  async function termCounts(pool: PgCatalog['pool']): Promise<{ kept: Record<string, number>; counted: Record<string, number> }> {
    const kept = await pool.query<{ term: string; n: number }>('SELECT term, sum(n)::int AS n FROM segment_term_counts GROUP BY term HAVING sum(n) <> 0 ORDER BY term');
    const counted = await pool.query<{ term: string; n: number }>('SELECT u.lexeme AS term, count(*)::int AS n FROM segments s, unnest(s.keywords) AS u GROUP BY u.lexeme ORDER BY u.lexeme');
    return { kept: Object.fromEntries(kept.rows.map((r) => [r.term, r.n])), counted: Object.fromEntries(counted.rows.map((r) => [r.term, r.n])) };
  }

  /** The keyword side's narrow copy (PG migration 1400) and the segments it copies, row for row. */
  async function keywordCopy(pool: PgCatalog['pool']): Promise<{ copy: unknown[]; rows: unknown[] }> {
    const cols = 'id::text AS id, collection_id, keywords::text AS keywords, labels::text AS labels';
    const copy = (await pool.query(`SELECT ${cols} FROM segment_keywords ORDER BY id`)).rows;
    const rows = (await pool.query(`SELECT ${cols} FROM segments ORDER BY id`)).rows;
    return { copy, rows };
  }

  const WORDS = ['dogs', 'dog', 'running', 'runner', 'beach', 'sea', 'city', 'night', 'the', "can't", 'red', 'bright'];
  const keywordsOf = (k: number) => Array.from({ length: 1 + (k % 4) }, (_, j) => WORDS[(k * 7 + j * 5) % WORDS.length]).join(' ');

  it('per-lexeme counts (migration 1300) and the keyword copy (migration 1400) kept on write equal the rows\' own through inserts, rewrites, deletes, updates, a cascade and a truncate; selectiveTerms decides as a direct count would', async () => {
    const c = new PgCatalog(openPgPool(db.url, 4), true);
    try {
      const col = (await c.collections.insert({ name: 'terms', description: '', model: 'test', dim: DIM })).id;
      const ids = Array.from({ length: 12 }, (_, v) => `vid_terms_${v}`);
      for (const id of ids) await c.videos.insert({ id, collection_id: col, filename: `${id}.mp4`, blob_key: `videos/${id}`, size_bytes: 1 });
      // Side by side (concurrent writers append deltas without waiting for one another).
      await Promise.all(ids.map((id, v) => c.segments.replaceForVideo(id, col, DIM, Array.from({ length: 3 + v }, (_, i) => seg(i, vec(1, i, v, 0), { keywords: keywordsOf(v * 31 + i) })))));
      let t = await termCounts(c.pool);
      expect(Object.keys(t.counted).length).toBeGreaterThan(6);
      expect(t.kept).toEqual(t.counted);
      let k = await keywordCopy(c.pool);
      expect(k.rows.length).toBeGreaterThan(60);
      expect(k.copy).toEqual(k.rows);
      // Rewritten, deleted, one row's keywords changed in place, a video deleted (segments go by cascade).
      await c.segments.replaceForVideo(ids[2], col, DIM, [seg(0, vec(1, 0, 0, 0), { keywords: 'beach beach sea' })]);
      await c.segments.deleteForVideo(ids[5], DIM);
      await c.pool.query(`UPDATE segments SET keywords = to_tsvector('english', 'night city lights') WHERE video_id = $1 AND idx = 0`, [ids[7]]);
      await c.pool.query('UPDATE segments SET start = start + 1 WHERE video_id = $1', [ids[8]]); // keywords unchanged
      await c.pool.query('DELETE FROM videos WHERE id = $1', [ids[9]]);
      const relabelled = await c.pool.query<{ id: number }>(
        `UPDATE segments SET labels = '{"shot_size":"wide"}', keywords = to_tsvector('english', 'crane lighthouse') WHERE video_id = $1 AND idx = 1 RETURNING id::float8 AS id`,
        [ids[10]],
      );
      t = await termCounts(c.pool);
      expect(t.kept).toEqual(t.counted);
      expect(t.kept.light).toBe(1);
      k = await keywordCopy(c.pool);
      expect(k.copy).toEqual(k.rows);
      expect(k.rows).toContainEqual(expect.objectContaining({ labels: '{"shot_size": "wide"}' }));
      expect(k.rows.some((r) => (r as { keywords: string }).keywords.includes("'light'"))).toBe(true);
      // The keyword side answers from the copy: the in-place changes are found, the deleted rows are not.
      expect((await c.segments.termMatches(col, ['lights'], 10)).get('lights')).toHaveLength(1);
      expect((await c.segments.termMatches(col, ['lighthouse'], 10, { shot_size: 'wide' })).get('lighthouse')).toEqual([relabelled.rows[0].id]);
      expect((await c.segments.termMatches(col, ['lighthouse'], 10, { shot_size: 'close' })).get('lighthouse')).toEqual([]);
      const withSea = (k.rows as { id: string; keywords: string }[]).filter((r) => r.keywords.includes("'sea':")).map((r) => Number(r.id));
      expect(withSea.length).toBeGreaterThan(3);
      expect([...(await c.segments.termMatches(col, ['sea'], 1000)).get('sea')!].sort((a, b) => a - b)).toEqual(withSea.sort((a, b) => a - b));
      // Which words selectiveTerms keeps, against each word's count made directly (phrases and
      // "can't" are several lexemes: counted at search time as before).
      const total = (await c.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM segments')).rows[0].n;
      const words = [...WORDS, 'dog beach', 'lights', 'zebra'];
      for (const share of [0.05, 0.1, 0.2, 0.4]) {
        const limit = Math.max(1, total * share);
        const direct: string[] = [];
        for (const w of words) {
          const { rows } = await c.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM segments WHERE keywords @@ phraseto_tsquery('english', $1)`, [w]);
          if (rows[0].n <= limit) direct.push(w);
        }
        expect(await c.segments.selectiveTerms(words, share, 1)).toEqual(direct);
      }
      // Many deltas for one lexeme are folded into one row by a search; the count stays.
      for (let k = 0; k < 70; k++) await c.segments.replaceForVideo(ids[0], col, DIM, [seg(0, vec(1, 0, 0, 0), { keywords: k % 2 ? 'harbour' : 'harbour sea' })]);
      const deltas = async () => (await c.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM segment_term_counts WHERE term = 'harbour'`)).rows[0].n;
      expect(await deltas()).toBeGreaterThan(64);
      await c.segments.selectiveTerms(['harbour'], 0.01, 1);
      for (let i = 0; i < 200 && (await deltas()) > 1; i++) await new Promise((r) => setTimeout(r, 10));
      expect(await deltas()).toBe(1);
      t = await termCounts(c.pool);
      expect(t.kept).toEqual(t.counted);
      k = await keywordCopy(c.pool);
      expect(k.copy).toEqual(k.rows);
      // TRUNCATE fires no row trigger: the counts and the copy go with it.
      await c.pool.query('TRUNCATE segments CASCADE');
      expect((await termCounts(c.pool)).kept).toEqual({});
      expect((await keywordCopy(c.pool)).copy).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it('video counts (migration 1500) kept on write equal the rows through inserts side by side, a bulk insert, deletes, a move, a fold, a deleted collection and a truncate', async () => {
    const c = new PgCatalog(openPgPool(db.url, 4), true);
    const kept = async () =>
      (await c.pool.query<{ c: string; n: number }>('SELECT collection_id AS c, sum(n)::int AS n FROM video_counts GROUP BY 1 HAVING sum(n) <> 0 ORDER BY 1')).rows;
    const direct = async () => (await c.pool.query<{ c: string; n: number }>('SELECT collection_id AS c, count(*)::int AS n FROM videos GROUP BY 1 ORDER BY 1')).rows;
    try {
      const a = (await c.collections.insert({ name: 'counted_a', description: '', model: 'test', dim: DIM })).id;
      const b = (await c.collections.insert({ name: 'counted_b', description: '', model: 'test', dim: DIM })).id;
      const add = (col: string, id: string) => c.videos.insert({ id, collection_id: col, filename: `${id}.mp4`, blob_key: `videos/${id}`, size_bytes: 1 });
      await Promise.all([...Array.from({ length: 5 }, (_, i) => add(a, `vid_ca_${i}`)), ...Array.from({ length: 3 }, (_, i) => add(b, `vid_cb_${i}`))]);
      await c.pool.query(
        `INSERT INTO videos (id, collection_id, filename, blob_key, size_bytes, status) SELECT 'vid_bulk_' || g, $1, 'bulk.mp4', 'videos/bulk' || g, 1, 'processed' FROM generate_series(1, 10) g`,
        [b],
      );
      expect(await kept()).toEqual(await direct());
      expect((await c.collections.byId(a))!.video_count).toBe(5);
      expect((await c.collections.byId(b))!.video_count).toBe(13);
      await c.videos.delete('vid_ca_0');
      await c.videos.delete('vid_ca_1');
      await c.pool.query('UPDATE videos SET collection_id = $1 WHERE id = $2', [a, 'vid_bulk_1']);
      await c.pool.query("UPDATE videos SET status = 'failed' WHERE collection_id = $1", [b]); // no move: no delta
      expect(await kept()).toEqual(await direct());
      expect((await c.collections.byId(a))!.video_count).toBe(4);
      expect((await c.collections.byId(b))!.video_count).toBe(12);
      await foldDeltas(c.pool, 'video_counts', b);
      expect((await c.pool.query('SELECT n::int AS n FROM video_counts WHERE collection_id = $1', [b])).rows).toEqual([{ n: 12 }]);
      expect(await kept()).toEqual(await direct());
      expect((await c.collections.list(10, 0)).find((r) => r.id === a)?.video_count).toBe(4);
      await c.collections.delete(b);
      expect((await c.pool.query('SELECT count(*)::int AS n FROM video_counts WHERE collection_id = $1', [b])).rows[0].n).toBe(0);
      expect(await kept()).toEqual(await direct());
      await c.pool.query('TRUNCATE videos CASCADE');
      expect((await c.pool.query('SELECT count(*)::int AS n FROM video_counts')).rows[0].n).toBe(0);
      expect((await c.collections.byId(a))!.video_count).toBe(0);
    } finally {
      await c.close();
    }
  });

  it('migrations 1300, 1400 and 1500 count and copy the segments and videos a library already has', async () => {
    const admin = openPgPool(db.url, 1);
    try {
      await admin.query('DROP DATABASE IF EXISTS terms_before');
      await admin.query('CREATE DATABASE terms_before');
    } finally {
      await admin.end();
    }
    const u = new URL(db.url);
    u.pathname = '/terms_before';
    const setup = openPgPool(u.toString(), 1);
    await migratePg(setup, 1299);
    await setup.end();
    const c = new PgCatalog(openPgPool(u.toString(), 2), true);
    try {
      const col = (await c.collections.insert({ name: 'old', description: '', model: 'test', dim: DIM })).id;
      for (let v = 0; v < 5; v++) {
        const id = `vid_old_${v}`;
        await c.videos.insert({ id, collection_id: col, filename: `${id}.mp4`, blob_key: `videos/${id}`, size_bytes: 1 });
        await c.segments.replaceForVideo(id, col, DIM, Array.from({ length: 4 }, (_, i) => seg(i, vec(1, i, v, 0), { keywords: keywordsOf(v * 4 + i) })));
      }
      expect((await c.pool.query(`SELECT to_regclass('segment_term_counts') AS t`)).rows[0].t).toBeNull();
      expect(await migratePg(c.pool)).toEqual([1300, 1400, 1500]);
      expect((await c.collections.byId(col))!.video_count).toBe(5);
      const t = await termCounts(c.pool);
      expect(Object.keys(t.counted).length).toBeGreaterThan(4);
      expect(t.kept).toEqual(t.counted);
      const k = await keywordCopy(c.pool);
      expect(k.rows).toHaveLength(20);
      expect(k.copy).toEqual(k.rows);
      // The GIN index moved with the keywords.
      const idx = await c.pool.query<{ i: string }>(`SELECT indexname AS i FROM pg_indexes WHERE tablename IN ('segments', 'segment_keywords') AND indexdef LIKE '%gin%' ORDER BY 1`);
      expect(idx.rows.map((r) => r.i)).toEqual(['segment_keywords_terms']);
    } finally {
      await c.close();
    }
  });

  it('a database a newer vidembed migrated is refused before any step runs, and left as it was', async () => {
    const admin = openPgPool(db.url, 1);
    try {
      await admin.query('DROP DATABASE IF EXISTS schema_future');
      await admin.query('CREATE DATABASE schema_future');
    } finally {
      await admin.end();
    }
    const u = new URL(db.url);
    u.pathname = '/schema_future';
    const pool = openPgPool(u.toString(), 1);
    try {
      await migratePg(pool, 1299);
      const last = Math.max(...PG_MIGRATIONS.map((m) => m.version));
      await pool.query('INSERT INTO vidembed_schema_migrations (version, name) VALUES ($1, $2)', [last + 100, 'from the future']);
      const err = await migratePg(pool).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SchemaTooNewError);
      expect((err as Error).message).toContain(`PostgreSQL database was upgraded by a newer vidembed (schema ${last + 100}; this vidembed knows up to ${last})`);
      // None of the steps past 1299 ran.
      const { rows } = await pool.query<{ v: number }>('SELECT version AS v FROM vidembed_schema_migrations WHERE version > 1299 ORDER BY 1');
      expect(rows.map((r) => r.v)).toEqual([last + 100]);
      expect((await pool.query(`SELECT to_regclass('segment_term_counts') AS t`)).rows[0].t).toBeNull();
    } finally {
      await pool.end();
    }
  });
});

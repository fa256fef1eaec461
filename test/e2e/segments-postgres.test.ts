import { describe, expect, it } from 'vitest';
import { PgCatalog } from '../../src/store/catalog/postgres.js';
import { openPgPool } from '../../src/store/pg/migrate.js';
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
});

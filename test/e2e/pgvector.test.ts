import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_VECTOR_DEFAULTS, type PgVectorSettings } from '../../src/env.js';
import { PERCEPTION_EMBEDDER_ID } from '../../src/models/perception/id.js';
import { hybridSearch } from '../../src/search/hybrid.js';
import { PgCatalog } from '../../src/store/catalog/postgres.js';
import type { Catalog, NewSegment } from '../../src/store/catalog/types.js';
import { migratePg, openPgPool } from '../../src/store/pg/migrate.js';
import { migrateToPgvector } from '../../src/store/pg/vector-migrate.js';
import { hnswIndexState, readVectorStore } from '../../src/store/pg/vector-store.js';
import { pgvectorTestAvailable, usePgvector } from '../helpers/pgvector.js';
import { BIN } from '../helpers/cli.js';
import { startTestDatabase, type PgTestDatabase } from '../helpers/postgres.js';

/*
 * pgvector mode on a real PostgreSQL 15 + pgvector 0.8 (issue 32): owner isolation inside the
 * index scan, deletes, the online move of an existing library while it is searched and written,
 * and an outage in the middle of searches. Small libraries (a few thousand 32-dim vectors): the
 * figures at 1M live in `npm run bench -- pgvector`, not here.
 */

const ok = pgvectorTestAvailable();
const D = 32;

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}
const unit = (v: Float32Array) => {
  let n = 0;
  for (const x of v) n += x * x;
  return v.map((x) => x / Math.sqrt(n));
};

/** `videos` videos of 25 segments near random centres (shared between owners: near-identical neighbours). */
async function fill(c: Catalog, collectionId: string, prefix: string, videos: number, centres: Float32Array[], seed: number, shot?: (i: number) => string): Promise<Map<string, Float32Array[]>> {
  const rnd = rng(seed);
  const out = new Map<string, Float32Array[]>();
  for (let v = 0; v < videos; v++) {
    const id = `${prefix}_${v}`;
    await c.videos.insert({ id, collection_id: collectionId, filename: `${id}.mp4`, blob_key: `videos/${id}`, size_bytes: 1 });
    const vecs = Array.from({ length: 25 }, () => {
      const centre = centres[Math.floor(rnd() * centres.length)];
      return unit(centre.map((x) => x + 0.05 * (rnd() - 0.5)));
    });
    const segs: NewSegment[] = vecs.map((vector, i) => ({ idx: i, start: i, end: i + 1, description: `${prefix} shot ${i}`, vector, tags: shot ? { shot_size: shot(v * 25 + i) } : undefined }));
    await c.segments.replaceForVideo(id, collectionId, D, segs);
    out.set(id, vecs);
  }
  return out;
}

describe.skipIf(!ok)('pgvector: owners, deletes, the online move, an outage', () => {
  let db: PgTestDatabase;
  beforeAll(async () => {
    db = await startTestDatabase({ ownCluster: true });
  });
  afterAll(async () => {
    await db?.teardown();
  });

  /** A fresh database on the file's cluster. */
  async function freshDb(name: string): Promise<string> {
    const admin = openPgPool(db.url, 1);
    try {
      await admin.query(`CREATE DATABASE ${name}`);
    } finally {
      await admin.end();
    }
    const u = new URL(db.url);
    u.pathname = `/${name}`;
    return u.toString();
  }

  it('owner isolation inside the index scan: another owner\'s near-identical vectors never appear, and a small owner\'s pages stay full', async () => {
    const url = await freshDb('owners');
    const settings: PgVectorSettings = { ...PG_VECTOR_DEFAULTS, exactBelow: 0 }; // every search through the HNSW index
    const setup = openPgPool(url, 2);
    await migratePg(setup);
    await usePgvector(setup, settings);
    await setup.end();
    const c = new PgCatalog(openPgPool(url, 4), true, { vectorSettings: settings });
    try {
      const rnd = rng(1);
      const centres = Array.from({ length: 20 }, () => unit(Float32Array.from({ length: D }, () => rnd() - 0.5)));
      const big = (await c.collections.insert({ name: 'big', description: '', model: 'test', dim: D, owner: 'big' })).id;
      const small = (await c.collections.insert({ name: 'small', description: '', model: 'test', dim: D, owner: 'small' })).id;
      await fill(c, big, 'big', 160, centres, 2); // 4000 segments
      const smallVideos = await fill(c, small, 'small', 12, centres, 3, (i) => (i % 3 === 0 ? 'close' : 'wide')); // 300 segments
      expect(await hnswIndexState(c.pool, D)).toBe('valid');
      const smallIds = new Set((await c.pool.query<{ id: number }>('SELECT id::float8 AS id FROM segments WHERE collection_id = $1', [small])).rows.map((r) => r.id));
      // The small owner's collection is 7 % of the index: the iterative scan must go well past ef_search.
      for (const [i, q] of [...smallVideos.values()].map((v) => v[0]).entries()) {
        const got = await c.segments.forSearch!().candidates(small, D, q, 200, {}, []);
        expect(got.size).toBe(200);
        for (const id of got.keys()) expect(smallIds.has(id)).toBe(true);
        // A tag filter inside the same scan: a third of the small owner's rows.
        const close = await c.segments.forSearch!().candidates(small, D, q, 50, { shot_size: 'close' }, []);
        expect(close.size).toBe(50);
        const rows = await c.segments.byIds([...close.keys()]);
        for (const r of rows.values()) expect(r).toMatchObject({ collection_id: small, labels: { shot_size: 'close' } });
        if (i >= 3) break;
      }
      // Read until the videos are held (SegmentsCatalog.candidates `videos`): the same scan, still only the small owner's.
      for (const q of [...smallVideos.values()].slice(0, 4).map((v) => v[3])) {
        const few = await c.segments.forSearch!().candidates(small, D, q, 200, {}, [], [], 6);
        expect(few.size).toBeGreaterThanOrEqual(6);
        expect(few.size).toBeLessThan(200);
        for (const id of few.keys()) expect(smallIds.has(id)).toBe(true);
      }
      // Through hybrid search: every result is the small owner's.
      const q = [...smallVideos.values()][5][7];
      const results = await hybridSearch(c.segments, c.videos, { collectionId: small, dim: D, queryVector: q, text: 'shot', topK: 10, filter: {}, explain: false });
      expect(results).toHaveLength(10);
      expect(results[0].video_id).toBe('small_5');
      for (const r of results) expect(r.video_id.startsWith('small_')).toBe(true);
    } finally {
      await c.close();
    }
  });

  it('`vidembed serve` on a pgvector library: says where and how many searches run at once, and 24 searches sent together all answer as one at a time', async () => {
    const url = await freshDb('served');
    const settings: PgVectorSettings = { ...PG_VECTOR_DEFAULTS, exactBelow: 0 };
    const setup = openPgPool(url, 2);
    await migratePg(setup);
    await usePgvector(setup, settings);
    await setup.end();
    const c = new PgCatalog(openPgPool(url, 2), true, { vectorSettings: settings });
    // A collection of the default model (serve knows it), 60 videos of 25 moments near 8 centres.
    const rnd = rng(5);
    const W = 512;
    const centres = Array.from({ length: 8 }, () => unit(Float32Array.from({ length: W }, () => rnd() - 0.5)));
    const col = (await c.collections.insert({ name: 'served', description: '', model: PERCEPTION_EMBEDDER_ID, dim: W })).id;
    for (let v = 0; v < 60; v++) {
      const id = `served_${v}`;
      await c.videos.insert({ id, collection_id: col, filename: `${id}.mp4`, blob_key: `videos/${id}`, size_bytes: 1 });
      const centre = centres[v % centres.length];
      await c.segments.replaceForVideo(id, col, W, Array.from({ length: 25 }, (_, i) => ({ idx: i, start: i, end: i + 1, description: `shot ${i}`, vector: unit(centre.map((x) => x + 0.05 * (rnd() - 0.5))) })));
      await c.videos.markProcessed(id, '{}');
    }
    await c.close();
    const home = mkdtempSync(path.join(os.tmpdir(), 'vidembed-pgv-serve-'));
    const serve = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--no-worker', '--no-auth'], {
      env: { ...process.env, VIDEMBED_HOME: home, VIDEMBED_DATABASE_URL: url, VIDEMBED_PG_EXACT_BELOW: '0', VIDEMBED_SEARCH_CONCURRENCY: '2', VIDEMBED_WARM_IDLE_MS: '0' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    serve.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    try {
      const base = await new Promise<string>((resolve, reject) => {
        const t = setInterval(() => {
          const m = /serving on (http:\/\/\S+)/.exec(log);
          if (m) (clearInterval(t), resolve(m[1]));
          if (serve.exitCode !== null) (clearInterval(t), reject(new Error(log)));
        }, 50);
      });
      const search = async (v: number) => {
        const r = await fetch(`${base}/collections/${col}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ like: { video_id: `served_${v}`, t: 3 }, top_k: 5 }) });
        return { status: r.status, body: (await r.json()) as { results: Array<{ video_id: string }>; detail?: unknown } };
      };
      const alone = [];
      for (let v = 0; v < 24; v++) alone.push(await search(v));
      const together = await Promise.all(Array.from({ length: 24 }, (_, v) => search(v)));
      expect(together).toEqual(alone);
      for (const [v, r] of alone.entries()) {
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(r.body.results).toHaveLength(5);
        expect(r.body.results.map((x) => x.video_id)).not.toContain(`served_${v}`);
      }
      expect(log).toContain('vector search: pgvector');
      expect(log).toContain('searches: on the event loop (pgvector searches in the database), 2 at once');
    } finally {
      serve.kill('SIGTERM');
      await new Promise((r) => serve.once('exit', r));
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('keywords and labels stay in the row beside a 512-d vector (PG migration 1200): ranking a word reads no TOAST, and ranks the same', async () => {
    // Without 1200 (migrated up to 1199) every row's keywords and labels went out of line, since the
    // inline vector alone passes TOAST's 2 KB threshold: ranking a word's matches read ~9 buffers
    // per row. With it the matches' heap pages are all it reads; the answer is the same.
    const W = 512;
    const write = async (name: string, upTo?: number) => {
      const url = await freshDb(name);
      const setup = openPgPool(url, 2);
      await migratePg(setup, upTo);
      await usePgvector(setup);
      await setup.end();
      const c = new PgCatalog(openPgPool(url, 4), true);
      const rnd = rng(11);
      const col = (await c.collections.insert({ name: 'c', description: '', model: 'test', dim: W })).id;
      for (let v = 0; v < 8; v++) {
        const id = `vid_${v}`;
        await c.videos.insert({ id, collection_id: col, filename: `${id}.mp4`, blob_key: `videos/${id}`, size_bytes: 1 });
        const segs: NewSegment[] = Array.from({ length: 25 }, (_, i) => ({
          idx: i,
          start: i,
          end: i + 1,
          description: `dog ${'park '.repeat((v * 25 + i) % 7)}${i % 2 ? 'cat' : 'tree'}`,
          vector: unit(Float32Array.from({ length: W }, () => rnd() - 0.5)),
          tags: { shot_size: i % 3 ? 'wide' : 'close' },
        }));
        await c.segments.replaceForVideo(id, col, W, segs);
      }
      const plan = await c.pool.query<{ 'QUERY PLAN': Array<{ Plan: Record<string, unknown> }> }>(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)
         SELECT s.id, ts_rank(s.keywords, q, 1) AS rank FROM phraseto_tsquery('english', 'dog') AS q, segments s
         WHERE s.keywords @@ q AND s.collection_id = $1 AND s.labels @> '{"shot_size":"close"}'::jsonb ORDER BY rank DESC, s.id`,
        [col],
      );
      const hits = plan.rows[0]['QUERY PLAN'][0].Plan['Shared Hit Blocks'] as number;
      const pages = (await c.pool.query<{ n: number }>(`SELECT count(DISTINCT (ctid::text::point)[0])::int AS n FROM segments`)).rows[0].n;
      // At 1199 the ranking the search made then, in SQL over the segment rows (the catalog of today
      // ranks from segment_keywords, PG migration 1400, which a library at 1199 does not have yet);
      // after every migration, the catalog's own answer.
      const ranked = new Map<string, number[]>();
      for (const term of ['dog', 'cat']) {
        if (upTo === undefined) {
          ranked.set(term, (await c.segments.termMatches(col, [term], 50, { shot_size: 'close' })).get(term)!);
          continue;
        }
        const { rows } = await c.pool.query<{ id: number }>(
          `SELECT s.id::float8 AS id FROM phraseto_tsquery('english', $2) AS q, segments s
           WHERE numnode(q) > 0 AND s.keywords @@ q AND s.collection_id = $1 AND s.labels @> '{"shot_size":"close"}'::jsonb
           ORDER BY ts_rank(s.keywords, q, 1) DESC, s.id LIMIT 50`,
          [col, term],
        );
        ranked.set(term, rows.map((r) => r.id));
      }
      await c.close();
      return { hits, pages, ranked };
    };
    const before = await write('toast_before', 1199);
    const after = await write('toast_after');
    expect(after.pages).toBeGreaterThan(40); // 200 rows of ~2.3 KB: a few rows per page
    expect(before.hits).toBeGreaterThan(before.pages + 200); // every row's keywords and labels read from TOAST
    expect(after.hits).toBeLessThan(after.pages + 20); // the heap pages, the GIN index's few, nothing else
    expect(after.ranked.get('dog')!.length).toBe(50);
    expect(after.ranked).toEqual(before.ranked);
  });

  it('deletes: a deleted video\'s segments never come back, before or after VACUUM, and the index stays valid', async () => {
    const url = await freshDb('deletes');
    const settings: PgVectorSettings = { ...PG_VECTOR_DEFAULTS, exactBelow: 0 };
    const setup = openPgPool(url, 2);
    await migratePg(setup);
    await usePgvector(setup, settings);
    await setup.end();
    const c = new PgCatalog(openPgPool(url, 4), true, { vectorSettings: settings });
    try {
      const rnd = rng(4);
      const centres = Array.from({ length: 10 }, () => unit(Float32Array.from({ length: D }, () => rnd() - 0.5)));
      const col = (await c.collections.insert({ name: 'del', description: '', model: 'test', dim: D })).id;
      const videos = await fill(c, col, 'del', 40, centres, 5);
      const gone = ['del_3', 'del_17', 'del_29'];
      const goneIds = new Set<number>();
      for (const v of gone) for (const r of await c.segments.listForVideo(v)) goneIds.add(r.id);
      for (const v of gone) await c.videos.delete(v); // segments go by cascade
      const check = async () => {
        for (const v of gone) {
          const q = videos.get(v)![0]; // each deleted vector was its own nearest neighbour
          const got = await c.segments.candidates(col, D, q, 100, {}, [...goneIds].slice(0, 5));
          for (const id of got.keys()) expect(goneIds.has(id)).toBe(false);
        }
        expect(await c.segments.countForCollection(col)).toBe(37 * 25);
      };
      await check();
      await c.pool.query('VACUUM segments');
      await check();
      expect(await hnswIndexState(c.pool, D)).toBe('valid');
      // A video written again after its deletion is found again.
      await c.videos.insert({ id: 'del_3', collection_id: col, filename: 'again.mp4', blob_key: 'videos/again', size_bytes: 1 });
      await c.segments.replaceForVideo('del_3', col, D, [{ idx: 0, start: 0, end: 1, description: 'again', vector: videos.get('del_3')![0] }]);
      const back = await c.segments.candidates(col, D, videos.get('del_3')![0], 1, {}, []);
      const [id] = back.keys();
      expect((await c.segments.byIds([id])).get(id)?.video_id).toBe('del_3');
    } finally {
      await c.close();
    }
  });

  it('the online move: an in-memory library moves to pgvector while searched and written, interrupted once and resumed, and no search fails or misses', async () => {
    const url = await freshDb('move');
    const setup = openPgPool(url, 2);
    await migratePg(setup);
    await setup.end();
    const writer = new PgCatalog(openPgPool(url, 3), true);
    const reader = new PgCatalog(openPgPool(url, 3), true);
    const mover = openPgPool(url, 3);
    try {
      const rnd = rng(6);
      const centres = Array.from({ length: 30 }, () => unit(Float32Array.from({ length: D }, () => rnd() - 0.5)));
      const col = (await writer.collections.insert({ name: 'move', description: '', model: 'test', dim: D })).id;
      const videos = await fill(writer, col, 'old', 40, centres, 7); // 1000 segments, in memory mode
      expect(await reader.segments.searchMode()).toBe('memory');

      // Searches all along: each asks for a stored vector, which must come back first, from its video.
      let stop = false;
      let searches = 0;
      const misses: string[] = [];
      const probes = [...videos.entries()].map(([v, vecs]) => ({ v, q: vecs[11] }));
      const searching = (async () => {
        while (!stop) {
          const p = probes[searches % probes.length];
          const mode = await reader.segments.searchMode();
          const got = await hybridSearch(reader.segments, reader.videos, { collectionId: col, dim: D, queryVector: p.q, text: '', topK: 3, filter: {}, explain: false });
          if (got[0]?.video_id !== p.v || !(got[0].similarity > 0.9999)) {
            misses.push(`${mode}/${(await readVectorStore(mover)).phase}: ${p.v} → ${JSON.stringify(got.map((g) => [g.video_id, g.similarity]))}`);
          }
          searches++;
        }
      })();
      // Writes all along too (a worker): new videos in whatever phase the library is in.
      let written = 0;
      const writing = (async () => {
        while (!stop) {
          await fill(writer, col, `new${written}`, 1, centres, 100 + written);
          written++;
        }
      })();

      // Interrupted in the middle of the backfill, then run again.
      const ac = new AbortController();
      const seen: string[] = [];
      const first = migrateToPgvector(mover, PG_VECTOR_DEFAULTS, {
        batch: 100,
        graceMs: 100,
        signal: ac.signal,
        onProgress: (p) => {
          seen.push(`${p.step} ${p.done}/${p.total}`);
          if (p.step === 'backfill' && p.done >= 400) ac.abort();
        },
      });
      const outcome = await first.then(
        () => 'resolved',
        (err: Error) => err.name,
      );
      expect({ outcome, seen }).toMatchObject({ outcome: 'AbortError' });
      expect((await readVectorStore(mover)).phase).toBe('migrating');
      const steps = new Set<string>();
      const result = await migrateToPgvector(mover, PG_VECTOR_DEFAULTS, { batch: 100, graceMs: 5500, onProgress: (p) => steps.add(p.step) });
      expect([...steps]).toEqual(expect.arrayContaining(['backfill', 'index', 'switch', 'compact', 'vacuum', 'done']));
      expect(result.indexes).toEqual([{ dim: D, result: 'built' }]);
      // The reader moves to SQL within its phase refresh (5 s).
      for (let i = 0; i < 200 && (await reader.segments.searchMode()) !== 'pgvector'; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await reader.segments.searchMode()).toBe('pgvector');
      const before = searches;
      while (searches < before + 20) await new Promise((r) => setTimeout(r, 20));
      stop = true;
      await Promise.all([searching, writing]);
      expect(misses).toEqual([]);
      expect(written).toBeGreaterThan(0);

      const { rows } = await mover.query<{ total: number; vec: number; bytea: number }>(
        'SELECT count(*)::int AS total, count(vec)::int AS vec, count(embedding)::int AS bytea FROM segments',
      );
      expect(rows[0]).toEqual({ total: (40 + written) * 25, vec: (40 + written) * 25, bytea: 0 });
      expect(await hnswIndexState(mover, D)).toBe('valid');
      // A second run has nothing left to do.
      const again = await migrateToPgvector(mover, PG_VECTOR_DEFAULTS, { graceMs: 0 });
      expect(again).toMatchObject({ already: true, backfilled: 0, compacted: 0, indexes: [{ dim: D, result: 'exists' }] });
    } finally {
      await writer.close();
      await reader.close();
      await mover.end();
    }
  });

  it('an outage during searches: they fail while the server is down (no hang, no wrong answer) and answer again when it is back', async () => {
    const url = await freshDb('outage');
    const setup = openPgPool(url, 2);
    await migratePg(setup);
    await usePgvector(setup);
    await setup.end();
    const c = new PgCatalog(openPgPool(url, 3), true);
    try {
      const rnd = rng(8);
      const centres = Array.from({ length: 10 }, () => unit(Float32Array.from({ length: D }, () => rnd() - 0.5)));
      const col = (await c.collections.insert({ name: 'out', description: '', model: 'test', dim: D })).id;
      const videos = await fill(c, col, 'out', 10, centres, 9);
      const q = videos.get('out_4')![2];
      const search = () => hybridSearch(c.segments, c.videos, { collectionId: col, dim: D, queryVector: q, text: 'shot', topK: 3, filter: {}, explain: false });
      expect((await search())[0].video_id).toBe('out_4');
      let failures = 0;
      let answers = 0;
      const during = (async () => {
        for (let i = 0; i < 40; i++) {
          try {
            const got = await search();
            expect(got[0].video_id).toBe('out_4');
            answers++;
          } catch {
            failures++;
          }
          await new Promise((r) => setTimeout(r, 25));
        }
      })();
      await new Promise((r) => setTimeout(r, 100));
      db.cluster!.halt();
      await new Promise((r) => setTimeout(r, 500));
      db.cluster!.resume();
      await during;
      expect(failures).toBeGreaterThan(0);
      expect(answers).toBeGreaterThan(0);
      // Back: pgvector mode, right answer.
      expect((await search())[0].video_id).toBe('out_4');
      expect(await c.segments.searchMode()).toBe('pgvector');
    } finally {
      await c.close();
    }
  });
});

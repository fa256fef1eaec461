/**
 * `bench -- pgvector` (and part of `bench -- scale`): PostgreSQL with pgvector (issue 32) at
 * growing library sizes, VIDEMBED_PGVECTOR_SIZES (default "100000,1000000"): one library grown
 * step by step, and at each size:
 *
 * - the HNSW index built from scratch (seconds, MB), the table's MB;
 * - one client, through the repositories as the server calls them: vector search (k = 200, the
 *   candidates of a top-10 page) p50/p99 and recall@10 against an exact brute force (kept in
 *   this process while the rows are generated); hybrid search (top 10, two words) p50/p99; a
 *   small owner's collection (2,000 segments) in the same library: its pages full, none of the big
 *   owner's rows; a tag-filtered search (1 label in 5);
 * - `vidembed serve` started on the library: time until it answers a search, its RSS; then 32
 *   clients searching through it (`like`: a stored moment as the query) for 20 s: requests/s,
 *   errors, p50/p99, and RSS afterwards.
 *
 * The vectors: VIDEMBED_PGVECTOR_CENTRES names a SQLite library (vidembed.db, e.g. an eval library
 * built by `npm run eval -- search --home DIR`) whose segment vectors are the centres (real-shaped:
 * each new vector is a centre plus Gaussian noise, cosine ~0.85 to it); without it, 4,000 random
 * centres. PostgreSQL: a throwaway cluster (durable settings, shared_buffers 2GB) in
 * VIDEMBED_PGVECTOR_DIR (default: a temp dir), removed afterwards.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { request } from 'undici';
import { pgVectorSettings } from '../src/env.js';
import { PERCEPTION_EMBEDDER_ID } from '../src/models/perception/id.js';
import { hybridSearch } from '../src/search/hybrid.js';
import { PgCatalog } from '../src/store/catalog/postgres.js';
import { migratePg, openPgPool } from '../src/store/pg/migrate.js';
import { ensureHnswIndex, hnswBuildMemoryKb, hnswIndexName, packVectors, prepareVectorStore, queryVectorParam, queryVectorSql, vectorAt } from '../src/store/pg/vector-store.js';
import { findPgBin, freePort, startThrowawayCluster } from '../src/store/pg/throwaway.js';
import { cpuSecondsOf, percentile, postgresCpuSeconds, procKb, round } from './util.js';

const DIM = 512;
const PER_VIDEO = 25;
const QUERIES = 100;
const SMALL_OWNER = 2000;
export const WORDS = 'dog cat person car street beach sea sky grass tree city night day face crowd boat mountain snow red blue green bright dark indoor outdoor close wide'.split(' ');
const SHOTS = ['wide', 'medium', 'close', 'extreme_close', 'full'];
const BIN = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'bin', 'vidembed');

export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

function gaussian(rnd: () => number): () => number {
  return () => {
    let u = 0;
    while (u === 0) u = rnd();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rnd());
  };
}

function normalise(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i] * v[i];
  n = Math.sqrt(n) || 1;
  for (let i = 0; i < v.length; i++) v[i] /= n;
  return v;
}

function stats(times: number[]): { p50_ms: number; p99_ms: number } {
  const s = [...times].sort((a, b) => a - b);
  return { p50_ms: round(percentile(s, 50)), p99_ms: round(percentile(s, 99)) };
}

/** Centres: the vectors of a real library, or random ones. */
export function centres(rnd: () => number): { list: Float32Array[]; source: string } {
  const file = process.env.VIDEMBED_PGVECTOR_CENTRES;
  if (file) {
    const db = new Database(file, { readonly: true });
    const rows = db.prepare('SELECT embedding FROM segment_vectors').raw().all() as [Buffer][];
    db.close();
    const list = rows.filter(([b]) => b.byteLength === DIM * 4).map(([b]) => normalise(new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength))));
    if (list.length) return { list, source: `${list.length} segment vectors of ${file}, with noise` };
  }
  const g = gaussian(rnd);
  return { list: Array.from({ length: 4000 }, () => normalise(Float32Array.from({ length: DIM }, g))), source: '4000 random centres, with noise' };
}

/** Real-shaped vectors: a video mostly near one centre, some shots near others; noise of cosine ~0.85 to the centre. */
export class Shapes {
  private readonly rnd: () => number;
  private readonly g: () => number;
  constructor(
    readonly centres: Float32Array[],
    seed: number,
  ) {
    this.rnd = rng(seed);
    this.g = gaussian(this.rnd);
  }
  near(c: Float32Array, sigma: number): Float32Array {
    const s = sigma / Math.sqrt(DIM);
    const x = new Float32Array(DIM);
    for (let j = 0; j < DIM; j++) x[j] = c[j] + s * this.g();
    return normalise(x);
  }
  video(): Float32Array[] {
    const main = this.centres[Math.floor(this.rnd() ** 2 * this.centres.length)];
    const sigma = 0.4 + 0.5 * this.rnd();
    return Array.from({ length: PER_VIDEO }, () => this.near(this.rnd() < 0.7 ? main : this.centres[Math.floor(this.rnd() * this.centres.length)], sigma));
  }
  pick<T>(xs: T[]): T {
    return xs[Math.floor(this.rnd() * xs.length)];
  }
}

/** Exact top 10 of each query over everything generated so far (float32 dot products of unit vectors). */
export class Truth {
  readonly best: Array<{ ids: number[]; sims: number[] }>;
  constructor(private readonly queries: Float32Array[]) {
    this.best = queries.map(() => ({ ids: [], sims: [] }));
  }
  add(id: number, v: Float32Array): void {
    for (let qi = 0; qi < this.queries.length; qi++) {
      const q = this.queries[qi];
      let s = 0;
      for (let j = 0; j < DIM; j++) s += q[j] * v[j];
      const b = this.best[qi];
      if (b.sims.length === 10 && s <= b.sims[9]) continue;
      let at = b.sims.length;
      while (at > 0 && b.sims[at - 1] < s) at--;
      b.sims.splice(at, 0, s);
      b.ids.splice(at, 0, id);
      if (b.sims.length > 10) {
        b.sims.pop();
        b.ids.pop();
      }
    }
  }
}

/** Appends videos until the collection holds `upTo` segments (ids known: the library's own sequence). */
export async function grow(pool: ReturnType<typeof openPgPool>, collectionId: string, shapes: Shapes, from: number, upTo: number, truth: Truth | undefined, prefix: string): Promise<number> {
  let n = from;
  const t0 = performance.now();
  while (n < upTo) {
    const videos = Math.min(80, Math.ceil((upTo - n) / PER_VIDEO));
    const vids: string[] = [];
    const rows: { video: string; idx: number; vec: Float32Array; words: string; shot: string }[] = [];
    for (let v = 0; v < videos; v++) {
      const id = `${prefix}_${n / PER_VIDEO + v}`;
      vids.push(id);
      shapes.video().forEach((vec, idx) => rows.push({ video: id, idx, vec, words: `${shapes.pick(WORDS)} ${shapes.pick(WORDS)}`, shot: shapes.pick(SHOTS) }));
    }
    await pool.query(
      `INSERT INTO videos (id, collection_id, filename, blob_key, size_bytes, status) SELECT v, $2, v || '.mp4', 'videos/' || v, 1, 'processed' FROM unnest($1::text[]) v`,
      [vids, collectionId],
    );
    // The vectors in binary, as the library's writers send them (packVectors).
    const packed = packVectors(rows.map((r) => r.vec));
    const { rows: ids } = await pool.query<{ id: string }>(
      `INSERT INTO segments (video_id, collection_id, idx, start, "end", description, keywords, labels, dim, vec)
       SELECT u.video, $1, u.idx, u.idx * 4, u.idx * 4 + 4, u.words, to_tsvector('english', u.words), jsonb_build_object('shot_size', u.shot), ${DIM}, ${vectorAt('$7', 'u.off', String(DIM))}
       FROM unnest($2::text[], $3::int[], $4::text[], $5::text[], $6::int[]) WITH ORDINALITY AS u(video, idx, words, shot, off, ord)
       ORDER BY u.ord RETURNING id::text`,
      [collectionId, rows.map((r) => r.video), rows.map((r) => r.idx), rows.map((r) => r.words), rows.map((r) => r.shot), packed.offsets, packed.data],
    );
    if (truth) ids.forEach((r, i) => truth.add(Number(r.id), rows[i].vec));
    n += rows.length;
    if (n % 50_000 < rows.length) process.stderr.write(`pgvector bench: ${n} segments written, ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
  }
  return n;
}

function startServe(url: string, port: number, home: string, bin: string, env: Record<string, string> = {}): { child: ChildProcess; ready: Promise<void> } {
  // VIDEMBED_PGVECTOR_SERVE_PROFILE=dir: serve runs under Node's sampling profiler (a .cpuprofile in dir at its exit).
  const profile = process.env.VIDEMBED_PGVECTOR_SERVE_PROFILE;
  const node = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [];
  const child = spawn(process.execPath, [...node, bin, 'serve', '--port', String(port), '--no-worker', '--no-auth'], {
    env: { ...process.env, VIDEMBED_HOME: home, VIDEMBED_DATABASE_URL: url, VIDEMBED_WARM_IDLE_MS: '0', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const ready = new Promise<void>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('serving on')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
  return { child, ready };
}

async function search(base: string, collectionId: string, like: { video_id: string; t: number }): Promise<number> {
  const r = await request(`${base}/collections/${collectionId}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ like, top_k: 10 }) });
  await r.body.text();
  return r.statusCode;
}

export interface ServeLoadOptions {
  url: string;
  home: string;
  collectionId: string;
  /** The collection's videos (big_0 … big_{videos-1}, 25 segments each: the moments the clients ask for). */
  videos: number;
  /** The cluster's data dir (its processes' CPU is counted). */
  pgData: string;
  /** A pool on the cluster when it loads pg_stat_statements: the statements that took its time are reported. */
  statements?: ReturnType<typeof openPgPool>;
  /** Another build's CLI (a comparison on the same library); default this checkout's. */
  bin?: string;
  /** Seconds of the same load before the measured 20 s (default none: the bench's one-client runs warmed the cache). */
  warmupS?: number;
  /** What `serve`'s environment adds (a setting under test). */
  env?: Record<string, string>;
}

/**
 * `vidembed serve` started on the library: time from spawn to its first answered search, then 32
 * clients searching by a stored moment for 20 s: requests/s, errors, p50/p99, the CPU each request
 * cost the server's process (all threads), the cluster's processes and these clients, and RSS.
 */
export async function serveLoad(o: ServeLoadOptions): Promise<{ startMs: number; load: Record<string, unknown> }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const like = { video_id: 'big_0', t: 1 };
  const started = performance.now();
  const serve = startServe(o.url, port, o.home, o.bin ?? BIN, o.env);
  try {
    await serve.ready;
    for (let code = 0; code !== 200; ) {
      code = await search(base, o.collectionId, like).catch(() => 0);
      if (performance.now() - started > 120_000) throw new Error(`serve answered no search in 120 s (last status ${code})`);
      if (code !== 200) await new Promise((r) => setTimeout(r, 20));
    }
    const startMs = performance.now() - started;
    const rssAfterStart = round(procKb(serve.child.pid!, 'VmRSS') / 1024, 0);
    const clients = async (seconds: number, times: number[]): Promise<number> => {
      let errors = 0;
      const until = performance.now() + seconds * 1000;
      const client = async (k: number) => {
        const r = rng(k + 1);
        while (performance.now() < until) {
          const t0 = performance.now();
          const code = await search(base, o.collectionId, { video_id: `big_${Math.floor(r() * o.videos)}`, t: Math.floor(r() * PER_VIDEO) * 4 + 1 }).catch(() => 0);
          times.push(performance.now() - t0);
          if (code !== 200) errors++;
        }
      };
      await Promise.all(Array.from({ length: 32 }, (_, k) => client(k)));
      return errors;
    };
    if (o.warmupS) await clients(o.warmupS, []);
    // Where the CPU goes (2 cores: 100 rps leaves 20 CPU-ms a request for everything): the
    // server's process (all its threads), the cluster's processes, and these 32 clients.
    if (o.statements) await o.statements.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()');
    const cpu0 = { serve: cpuSecondsOf(serve.child.pid!), postgres: postgresCpuSeconds(o.pgData), clients: process.cpuUsage() };
    const l0 = performance.now();
    const times: number[] = [];
    const errors = await clients(20, times);
    const seconds = (performance.now() - l0) / 1000;
    const clientsCpu = process.cpuUsage(cpu0.clients);
    const perRequest = (s: number) => round((s * 1000) / Math.max(1, times.length), 1);
    const load = {
      clients: 32,
      seconds: round(seconds, 1),
      requests: times.length,
      rps: round(times.length / seconds, 1),
      errors,
      ...stats(times),
      cpu_ms_per_request: {
        serve: perRequest(cpuSecondsOf(serve.child.pid!) - cpu0.serve),
        postgres: perRequest(postgresCpuSeconds(o.pgData) - cpu0.postgres),
        clients: perRequest((clientsCpu.user + clientsCpu.system) / 1e6),
      },
      ...(o.statements ? { statements: await topStatements(o.statements, times.length) } : {}),
      rss_after_start_mb: rssAfterStart,
      rss_after_load_mb: round(procKb(serve.child.pid!, 'VmRSS') / 1024, 0),
      rss_peak_mb: round(procKb(serve.child.pid!, 'VmHWM') / 1024, 0),
      load_average_1min: round(os.loadavg()[0]),
    };
    return { startMs: round(startMs), load };
  } finally {
    serve.child.kill('SIGTERM');
    await new Promise((r) => serve.child.once('exit', r));
  }
}

/** How much of the cluster's shared memory is mapped in huge pages (the postmaster's mappings of 2 MB or larger pages), in MB; NaN off Linux. */
function hugePagesMb(dataDir: string): number {
  try {
    const postmaster = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    let kb = 0;
    let size = 0;
    for (const line of readFileSync(`/proc/${postmaster}/smaps`, 'utf8').split('\n')) {
      const m = /^(Size|KernelPageSize):\s+(\d+) kB/.exec(line);
      if (m?.[1] === 'Size') size = Number(m[2]);
      else if (m && Number(m[2]) >= 2048) kb += size;
    }
    return Math.round(kb / 1024);
  } catch {
    return NaN;
  }
}

/** VIDEMBED_PGVECTOR_EF_SWEEP=40,100,…: the ef_search values whose recall and latency are measured. */
function efSweepSetting(): number[] {
  const efSweep = (process.env.VIDEMBED_PGVECTOR_EF_SWEEP ?? '').split(',').filter(Boolean).map(Number);
  if (efSweep.some((n) => !Number.isInteger(n) || n < 1 || n > 1000)) throw new Error('VIDEMBED_PGVECTOR_EF_SWEEP: integers from 1 to 1000, comma-separated');
  return efSweep;
}

/**
 * On a kept library: recall@10 and one client's latency of the vector search (k = 200, as the
 * bench's own sweep) for each ef_search, against an exact answer (a sequential scan of the big
 * collection, ~1-2 s a query at 1M, kept in `truthFile` for the next run). The queries are the
 * bench's own (the same centres and seed: VIDEMBED_PGVECTOR_CENTRES as when it was built).
 */
async function reusedSweep(info: { url: string; collections: { big: string } }, efs: number[], truthFile: string): Promise<Record<string, unknown>[]> {
  const c = centres(rng(20261201));
  const qShapes = new Shapes(c.list, 7);
  const queries = Array.from({ length: QUERIES }, () => qShapes.near(qShapes.pick(c.list), 0.5));
  const raw = openPgPool(info.url, 2);
  let truth: number[][];
  try {
    truth = existsSync(truthFile) ? (JSON.parse(readFileSync(truthFile, 'utf8')) as number[][]) : [];
    if (truth.length !== queries.length) {
      phase(`exact top 10 of ${queries.length} queries (sequential scans; kept in ${truthFile})`);
      truth = [];
      for (const q of queries) {
        const { rows } = await raw.query<{ id: number }>(
          `SELECT id::float8 AS id FROM segments WHERE collection_id = $1 AND dim = ${DIM} ORDER BY vec <=> ${queryVectorSql('$2', DIM)}, id LIMIT 10`,
          [info.collections.big, queryVectorParam(q)],
        );
        truth.push(rows.map((r) => r.id));
      }
      writeFileSync(truthFile, JSON.stringify(truth));
    }
  } finally {
    await raw.end();
  }
  const out: Record<string, unknown>[] = [];
  for (const ef of efs) {
    phase(`ef_search ${ef}: ${queries.length} vector searches, k = 200`);
    const swept = new PgCatalog(openPgPool(info.url, 2), true, { vectorSettings: { ...pgVectorSettings(), efSearch: ef } });
    try {
      const times: number[] = [];
      let hits = 0;
      for (const [i, q] of queries.entries()) {
        const t = performance.now();
        const got = await swept.segments.forSearch!().candidates(info.collections.big, DIM, q, 200, {}, []);
        times.push(performance.now() - t);
        const top = [...got].sort((a, b) => b[1].similarity - a[1].similarity || a[0] - b[0]).slice(0, 10).map(([id]) => id);
        hits += top.filter((id) => truth[i].includes(id)).length / 10;
      }
      out.push({ ef_search: ef, recall_at_10: round(hits / queries.length, 4), ...stats(times) });
    } finally {
      await swept.close();
    }
  }
  return out;
}

/**
 * VIDEMBED_PGVECTOR_REUSE=DIR/INFO.json (a library kept by VIDEMBED_PGVECTOR_KEEP=1): only the
 * 32 clients through `serve`, on the same data, in minutes instead of a rebuild. The cluster is
 * started again (with the settings it ran with, its postmaster.opts) when it is not running.
 * VIDEMBED_PGVECTOR_BUILDS=name=path/to/bin/vidembed,… compares builds (default: this checkout),
 * VIDEMBED_PGVECTOR_ROUNDS (default 2) runs them alternating; each round has 5 s of warm-up
 * (VIDEMBED_PGVECTOR_WARMUP_S) before its measured 20 s. VIDEMBED_PGVECTOR_SERVE_ENV=K=V;K=V adds
 * to every `serve`'s environment (a setting under test); `name=path|K=V|K=V` to one build's.
 */
export async function benchPgvectorReuse(infoFile: string): Promise<Record<string, unknown>> {
  const info = JSON.parse(readFileSync(infoFile, 'utf8')) as { url: string; home: string; collections: { big: string }; data: string };
  const pool = openPgPool(info.url, 2);
  pool.on('error', () => {});
  try {
    if (!(await pool.query('SELECT 1').then(() => true, () => false))) {
      const opts = readFileSync(path.join(info.data, 'postmaster.opts'), 'utf8').trim();
      const args = opts.slice(opts.indexOf(' ') + 1); // the options after the server binary
      const bin = findPgBin()!;
      const cmd = ['-D', info.data, '-l', path.join(path.dirname(info.data), 'server.log'), '-w', '-t', '120', '-o', args.replace(/"/g, ''), 'start'];
      if (process.getuid?.() === 0) execFileSync('runuser', ['-u', 'postgres', '--', path.join(bin, 'pg_ctl'), ...cmd], { stdio: 'ignore', cwd: '/' });
      else execFileSync(path.join(bin, 'pg_ctl'), cmd, { stdio: 'ignore' });
    }
    const { rows } = await pool.query<{ n: number; statements: boolean }>(
      `SELECT (SELECT coalesce(sum(n), 0) FROM segment_counts WHERE collection_id = $1)::float8 AS n,
              EXISTS (SELECT 1 FROM pg_settings WHERE name = 'shared_preload_libraries' AND setting LIKE '%pg_stat_statements%') AS statements`,
      [info.collections.big],
    );
    const envOf = (list: string[]) => Object.fromEntries(list.filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
    const env = envOf((process.env.VIDEMBED_PGVECTOR_SERVE_ENV ?? '').split(';'));
    // name=path/to/bin/vidembed, optionally followed by |K=V|K=V: that build's own environment.
    const builds = (process.env.VIDEMBED_PGVECTOR_BUILDS ?? `this=${BIN}`).split(',').map((b) => {
      const [spec, ...own] = b.split('|');
      const at = spec.indexOf('=');
      return { name: spec.slice(0, at), bin: path.resolve(spec.slice(at + 1)), env: { ...env, ...envOf(own) } };
    });
    const rounds = Number(process.env.VIDEMBED_PGVECTOR_ROUNDS ?? 2);
    const efSweep = efSweepSetting();
    const warmupS = Number(process.env.VIDEMBED_PGVECTOR_WARMUP_S ?? 5);
    const sweep = efSweep.length ? await reusedSweep(info, efSweep, path.join(path.dirname(infoFile), 'truth.json')) : undefined;
    const out: Record<string, unknown>[] = [];
    for (let r = 0; r < rounds; r++) {
      for (const b of builds) {
        phase(`round ${r + 1}: ${b.name} serve, 32 clients for 20 s`);
        const got = await serveLoad({ url: info.url, home: info.home, collectionId: info.collections.big, videos: Math.floor(rows[0].n / PER_VIDEO), pgData: info.data, statements: rows[0].statements ? pool : undefined, bin: b.bin, warmupS, env: b.env });
        process.stderr.write(`pgvector bench: ${b.name}: ${JSON.stringify(got.load.rps)} rps, cpu ${JSON.stringify(got.load.cpu_ms_per_request)}\n`);
        out.push({ round: r + 1, build: b.name, serve_env: b.env, serve_start_to_first_search_ms: got.startMs, serve_32_clients_like_search: got.load });
      }
    }
    return { reused: infoFile, segments: rows[0].n, shared_memory_in_huge_pages_mb: hugePagesMb(info.data), serve_env: env, ...(sweep ? { ef_search_sweep_k200: sweep } : {}), runs: out };
  } finally {
    await pool.end().catch(() => {});
  }
}

/**
 * maintenance_work_mem for building the HNSW index over `segments` 512-d rows: the whole graph in
 * memory, as the product sizes it (hnswBuildMemoryKb: the halfvec + its neighbour lists at this m,
 * plus a quarter), at least 256 MB, never more than a quarter of the machine's memory nor half of
 * what is free now (a build that asks for more than the machine has is what gets a server killed).
 */
export function buildMemoryFor(segments: number, m: number, total = os.totalmem(), free = os.freemem()): string {
  const mb = (b: number) => Math.floor(b / 1048576);
  const want = Math.floor(hnswBuildMemoryKb(segments, DIM, 'halfvec', m, `${1024 * 1024}GB`) / 1024);
  const cap = Math.max(256, Math.min(mb(total / 4), mb(free / 2)));
  return `${Math.max(256, Math.min(want, cap))}MB`;
}

/** The statements that took the cluster's time (planning + execution), per request of the load. */
async function topStatements(pool: ReturnType<typeof openPgPool>, requests: number): Promise<Array<Record<string, unknown>>> {
  const { rows } = await pool.query<{ query: string; calls: string; plan_ms: number; exec_ms: number; rows: string; hit: string; read: string }>(
    `SELECT query, calls::text, total_plan_time AS plan_ms, total_exec_time AS exec_ms, rows::text, shared_blks_hit::text AS hit, shared_blks_read::text AS read
     FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY total_plan_time + total_exec_time DESC LIMIT 10`,
  );
  const n = Math.max(1, requests);
  const perCall = (x: string | number, calls: string) => Number(x) / Math.max(1, Number(calls));
  return rows.map((r) => ({
    ms_per_request: round((r.plan_ms + r.exec_ms) / n, 2),
    calls_per_request: round(Number(r.calls) / n, 2),
    plan_ms_per_call: round(r.plan_ms / Math.max(1, Number(r.calls)), 3),
    rows_per_call: round(perCall(r.rows, r.calls), 1),
    // Shared buffers found in PostgreSQL's cache and read from outside it (the OS page cache or disk), per call.
    buffers_hit_per_call: round(perCall(r.hit, r.calls), 1),
    buffers_read_per_call: round(perCall(r.read, r.calls), 1),
    query: r.query.replace(/\s+/g, ' ').slice(0, 200),
  }));
}

/** The last lines of the throwaway cluster's server log (where PostgreSQL says why a backend died). */
function serverLogTail(dir: string, lines = 25): string {
  const log = path.join(dir, 'server.log');
  if (!existsSync(log)) return '(no server log)';
  return readFileSync(log, 'utf8').split('\n').slice(-lines).join('\n');
}

/** What the bench is doing now: named in every failure, signal or early exit, so a death is never silent. */
const progress = { phase: 'starting', since: performance.now() };
function phase(name: string): void {
  progress.phase = name;
  progress.since = performance.now();
  process.stderr.write(`pgvector bench: ${name}\n`);
}
function where(): string {
  return `${progress.phase} (${((performance.now() - progress.since) / 1000).toFixed(0)} s into it)`;
}

export async function benchPgvectorScale(): Promise<Record<string, unknown>> {
  if (process.env.VIDEMBED_PGVECTOR_REUSE) return benchPgvectorReuse(process.env.VIDEMBED_PGVECTOR_REUSE);
  const sizes = (process.env.VIDEMBED_PGVECTOR_SIZES ?? '100000,1000000').split(',').map(Number).filter((n) => n > 0);
  if (!findPgBin()) return { skipped: 'PostgreSQL server not installed' };
  const parent = process.env.VIDEMBED_PGVECTOR_DIR;
  // The library's settings as a user's environment gives them (VIDEMBED_PG_HNSW_M, …; defaults in src/env.ts).
  const settings = pgVectorSettings();
  const efSweep = efSweepSetting();
  // shared_buffers: 2 GB, or an eighth of a smaller machine; one parallel maintenance worker at most
  // (2 cores here: the leader and one worker), and the log keeps what a dying backend says.
  const sharedBuffers = `${Math.min(2048, Math.floor(os.totalmem() / 1048576 / 8))}MB`;
  const parallel = String(Math.max(0, Math.min(1, os.cpus().length - 1)));
  // VIDEMBED_PGVECTOR_STATEMENTS=1: the cluster loads pg_stat_statements, and the 32 clients' load
  // reports the statements that took the cluster's time (the serve process's own queries).
  const statements = process.env.VIDEMBED_PGVECTOR_STATEMENTS === '1';
  const keep = process.env.VIDEMBED_PGVECTOR_KEEP === '1';
  const keptIds: { big?: string; small?: string } = {};
  const cluster = await startThrowawayCluster({
    durable: true,
    parent,
    settings: {
      shared_buffers: sharedBuffers,
      max_wal_size: '8GB',
      checkpoint_timeout: '30min',
      max_parallel_maintenance_workers: parallel,
      log_min_messages: 'notice',
      log_error_verbosity: 'default',
      ...(statements ? { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track_planning': 'on' } : {}),
    },
  });
  const home = mkdtempSync(path.join(os.tmpdir(), 'vidembed-pgv-home-'));
  const url = cluster.url('postgres');
  const pool = openPgPool(url, 4);
  // A pool's idle client whose backend dies emits 'error': without a listener that kills this
  // process with nothing said; with it the death is named (and the query in flight fails loudly).
  pool.on('error', (err) => process.stderr.write(`pgvector bench: a database connection died during ${where()}: ${err.message}\n`));
  let failed = false;
  // A signal (the session ending, the run stopped, a timeout's SIGTERM) names the phase and the server
  // log, stops the cluster and exits non-zero: never an exit without a word. (SIGHUP is left alone so
  // `nohup` keeps working; SIGKILL cannot be caught: then the cluster dir and its server.log stay.)
  const onSignal = (sig: NodeJS.Signals) => {
    process.stderr.write(`pgvector bench: stopped by ${sig} during ${where()}\n--- server log (last lines) ---\n${serverLogTail(cluster.dir)}\n`);
    cluster.stop();
    rmSync(home, { recursive: true, force: true });
    process.exit(sig === 'SIGINT' ? 130 : 143);
  };
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, onSignal);
  try {
    await migratePg(pool);
    const status = await prepareVectorStore(pool, 'pgvector', settings);
    if (status.mode !== 'pgvector') return { skipped: `pgvector not available: ${status.reason}` };
    const rnd = rng(20261201);
    const c = centres(rnd);
    const shapes = new Shapes(c.list, 42);
    const qShapes = new Shapes(c.list, 7);
    const catalog = new PgCatalog(openPgPool(url, 4), true);
    const big = (await catalog.collections.insert({ name: 'big', description: '', model: PERCEPTION_EMBEDDER_ID, dim: DIM, owner: 'big' })).id;
    const small = (await catalog.collections.insert({ name: 'small', description: '', model: PERCEPTION_EMBEDDER_ID, dim: DIM, owner: 'small' })).id;
    Object.assign(keptIds, { big, small });
    // The small owner's segments sit near the same centres as the big one's (near-identical neighbours).
    await grow(pool, small, new Shapes(c.list, 99), 0, SMALL_OWNER, undefined, 'small');
    const queries = Array.from({ length: QUERIES }, () => qShapes.near(qShapes.pick(c.list), 0.5));
    const truth = new Truth(queries);
    const out: Record<string, unknown>[] = [];
    let n = 0;
    for (const size of sizes) {
      let t = performance.now();
      await pool.query(`DROP INDEX IF EXISTS ${hnswIndexName(DIM)}`);
      phase(`writing segments ${n} → ${size}`);
      n = await grow(pool, big, shapes, n, size, truth, 'big');
      const insertS = (performance.now() - t) / 1000;
      await pool.query('VACUUM (ANALYZE) segments');
      const buildMemory = buildMemoryFor(n + SMALL_OWNER, settings.m);
      phase(`building the HNSW index over ${n + SMALL_OWNER} segments (maintenance_work_mem ${buildMemory}, ${parallel} parallel worker)`);
      t = performance.now();
      let lastReport = 0;
      await ensureHnswIndex(pool, DIM, 'halfvec', { ...settings, buildMemory }, {
        onProgress: (p) => {
          if (performance.now() - lastReport < 30_000) return;
          lastReport = performance.now();
          process.stderr.write(`pgvector bench: index build ${p.phase}: ${p.done}/${p.total}, ${((performance.now() - t) / 1000).toFixed(0)} s\n`);
        },
      });
      const buildS = (performance.now() - t) / 1000;
      process.stderr.write(`pgvector bench: index built in ${buildS.toFixed(1)} s\n`);
      const sizes_mb = (
        await pool.query<{ table_mb: number; index_mb: number }>(
          `SELECT round(pg_table_size('segments') / 1048576.0)::float8 AS table_mb, round(pg_relation_size('${hnswIndexName(DIM)}') / 1048576.0)::float8 AS index_mb`,
        )
      ).rows[0];

      // One client, the repositories as the server calls them.
      phase(`one client's searches at ${n + SMALL_OWNER} segments`);
      const vectorTimes: number[] = [];
      let recall = 0;
      for (const [i, q] of queries.entries()) {
        t = performance.now();
        const got = await catalog.segments.forSearch!().candidates(big, DIM, q, 200, {}, []);
        vectorTimes.push(performance.now() - t);
        const top = [...got].sort((a, b) => b[1].similarity - a[1].similarity || a[0] - b[0]).slice(0, 10).map(([id]) => id);
        recall += top.filter((id) => truth.best[i].ids.includes(id)).length / 10;
      }
      const hybridTimes: number[] = [];
      for (const [i, q] of queries.entries()) {
        t = performance.now();
        await hybridSearch(catalog.segments, catalog.videos, { collectionId: big, dim: DIM, queryVector: q, text: `${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]}`, topK: 10, filter: {}, explain: false });
        hybridTimes.push(performance.now() - t);
      }
      // The same queries again: every word has been seen once (its count and ranking are cached
      // in the process, as in a server that has answered it before); the first pass above pays
      // each word's first sight.
      const hybridAgainTimes: number[] = [];
      for (const [i, q] of queries.entries()) {
        t = performance.now();
        await hybridSearch(catalog.segments, catalog.videos, { collectionId: big, dim: DIM, queryVector: q, text: `${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]}`, topK: 10, filter: {}, explain: false });
        hybridAgainTimes.push(performance.now() - t);
      }
      // ef_search against recall and time (VIDEMBED_PGVECTOR_EF_SWEEP=40,100,200,…): each value on a
      // pool of its own (hnsw settings are set once per connection), the same 100 queries.
      const sweep: Record<string, unknown>[] = [];
      for (const ef of efSweep) {
        const swept = new PgCatalog(openPgPool(url, 2), true, { vectorSettings: { ...settings, efSearch: ef } });
        try {
          const times: number[] = [];
          let hits = 0;
          for (const [i, q] of queries.entries()) {
            t = performance.now();
            const got = await swept.segments.forSearch!().candidates(big, DIM, q, 200, {}, []);
            times.push(performance.now() - t);
            const top = [...got].sort((a, b) => b[1].similarity - a[1].similarity || a[0] - b[0]).slice(0, 10).map(([id]) => id);
            hits += top.filter((id) => truth.best[i].ids.includes(id)).length / 10;
          }
          sweep.push({ ef_search: ef, recall_at_10: round(hits / queries.length, 4), ...stats(times) });
        } finally {
          await swept.close();
        }
      }
      const filteredTimes: number[] = [];
      let filteredFull = 0;
      for (const q of queries.slice(0, 50)) {
        t = performance.now();
        const got = await catalog.segments.forSearch!().candidates(big, DIM, q, 200, { shot_size: 'close' }, []);
        filteredTimes.push(performance.now() - t);
        if (got.size === 200) filteredFull++;
      }
      const smallTimes: number[] = [];
      let smallFull = 0;
      let foreign = 0;
      const smallIds = new Set((await pool.query<{ id: number }>('SELECT id::float8 AS id FROM segments WHERE collection_id = $1', [small])).rows.map((r) => r.id));
      for (const q of queries.slice(0, 50)) {
        t = performance.now();
        const got = await catalog.segments.forSearch!().candidates(small, DIM, q, 200, {}, []);
        smallTimes.push(performance.now() - t);
        if (got.size === 200) smallFull++;
        for (const id of got.keys()) if (!smallIds.has(id)) foreign++;
      }

      // The server: start → first answered search, RSS, then 32 clients.
      phase(`serve at ${n + SMALL_OWNER} segments: start, then 32 clients for 20 s`);
      const { startMs, load } = await serveLoad({ url, home, collectionId: big, videos: Math.floor(n / PER_VIDEO), pgData: path.join(cluster.dir, 'data'), statements: statements ? pool : undefined });
      const row = {
        segments: n + SMALL_OWNER,
        insert_s: round(insertS, 1),
        index_build_s: round(buildS, 1),
        index_build_memory: buildMemory,
        ...sizes_mb,
        vector_search_k200: stats(vectorTimes),
        recall_at_10: round(recall / queries.length, 4),
        hybrid_search_top10: stats(hybridTimes),
        hybrid_search_top10_words_seen_before: stats(hybridAgainTimes),
        ...(sweep.length ? { ef_search_sweep_k200: sweep } : {}),
        filtered_search_k200_one_label_in_5: { ...stats(filteredTimes), full_pages: `${filteredFull}/50` },
        small_owner_2000_segments_k200: { ...stats(smallTimes), full_pages: `${smallFull}/50`, other_owner_rows: foreign },
        serve_start_to_first_search_ms: startMs,
        serve_32_clients_like_search: load,
        load_average_1min: round(os.loadavg()[0]),
      };
      process.stderr.write(`pgvector bench: ${JSON.stringify(row)}\n`);
      out.push(row);
    }
    await catalog.close();
    return {
      vectors: c.source,
      dim: DIM,
      settings: { ...settings, buildMemory: 'per size: the graph plus a quarter, capped by the machine (index_build_memory)' },
      postgres: `local throwaway cluster, PostgreSQL 15 + pgvector, fsync on, shared_buffers ${sharedBuffers}, max_parallel_maintenance_workers ${parallel}`,
      // PostgreSQL's huge_pages=try takes them when the kernel has them reserved (vm.nr_hugepages):
      // on some virtual machines that alone is a factor ~3 for the HNSW scan (docs/scale.md).
      shared_memory_in_huge_pages_mb: hugePagesMb(path.join(cluster.dir, 'data')),
      sizes: out,
      targets: 'at 1M: recall@10 >= 0.95, vector p50 <= 40 ms, hybrid p50 <= 60 ms and p99 <= 150 ms, 32 clients >= 100 rps with 0 errors, serve RSS <= 400 MB and flat, start <= 2 s',
    };
  } catch (err) {
    failed = true;
    const msg = `pgvector bench failed during ${where()}: ${(err as Error).message}\n--- server log (last lines) ---\n${serverLogTail(cluster.dir)}`;
    if (parent) {
      // Keep the whole log beside the data dir: the cluster goes, the reason stays.
      const keep = path.join(parent, `server-${new Date().toISOString().replace(/[:.]/g, '-')}.log`);
      if (existsSync(path.join(cluster.dir, 'server.log'))) copyFileSync(path.join(cluster.dir, 'server.log'), keep);
    }
    throw new Error(msg);
  } finally {
    for (const sig of ['SIGTERM', 'SIGINT'] as const) process.off(sig, onSignal);
    await pool.end().catch(() => {});
    if (keep && !failed) {
      // VIDEMBED_PGVECTOR_KEEP=1: the library stays for experiments on the same data (a serve on it,
      // EXPLAIN, pg_stat_statements), minutes per idea instead of a rebuild; stopping it is the user's.
      const info = { url, home, collections: { big: keptIds.big, small: keptIds.small }, data: path.join(cluster.dir, 'data'), stop: `runuser -u postgres -- ${findPgBin()}/pg_ctl -D ${path.join(cluster.dir, 'data')} -m fast stop` };
      writeFileSync(path.join(cluster.dir, 'INFO.json'), `${JSON.stringify(info, null, 2)}\n`);
      phase(`done: the cluster stays (VIDEMBED_PGVECTOR_KEEP): ${path.join(cluster.dir, 'INFO.json')}`);
    } else {
      if (!failed) phase('done: stopping the cluster');
      cluster.stop();
      rmSync(home, { recursive: true, force: true });
    }
  }
}

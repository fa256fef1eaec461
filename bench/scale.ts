/**
 * `bench -- scale1m`: one collection of 1M x 512 synthetic segments (clustered: a few thousand
 * random centres plus noise) written through the real repositories, then the server's in-memory
 * index on it: load time, vector query p50/p99 (perturbed stored vectors and fresh random ones),
 * recall@10 against an exact float32 brute force, peak RSS, and an incremental update (1k appends
 * and 1k deletions written by another connection, as the worker process does) against a full
 * reload.
 *
 * Each phase runs in a fresh child process so that its peak RSS is its own (the other bench
 * sections, and the insertion, would otherwise set the high-water mark).
 * Environment: VIDEMBED_SCALE_SEGMENTS (default 1000000), VIDEMBED_SCALE_DB (a database file to
 * keep and reuse between runs; default: a temporary one, removed afterwards).
 */
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { hybridSearch } from '../src/search/hybrid.js';
import { Store } from '../src/store/index.js';
import { SqliteCatalog } from '../src/store/catalog/sqlite.js';
import { createSimdScan } from '../src/store/simd-scan.js';
import { benchDir, percentile, round } from './util.js';

const DIM = 512;
const PER_VIDEO = 25;
const CENTRES = 4000;
const QUERIES = 200;
const WORDS = 'dog cat person car street beach sea sky grass tree city night day face crowd boat mountain snow red blue green bright dark indoor outdoor close wide'.split(' ');

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function gaussian(rnd: () => number): () => number {
  let spare: number | undefined;
  return () => {
    if (spare !== undefined) {
      const v = spare;
      spare = undefined;
      return v;
    }
    let u = 0;
    while (u === 0) u = rnd();
    const r = Math.sqrt(-2 * Math.log(u));
    const t = 2 * Math.PI * rnd();
    spare = r * Math.sin(t);
    return r * Math.cos(t);
  };
}

function normalise(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i] * v[i];
  n = Math.sqrt(n) || 1;
  for (let i = 0; i < v.length; i++) v[i] /= n;
  return v;
}

/** Clustered unit vectors: each video mostly near its own centre, some shots near others. */
class Generator {
  private readonly rnd: () => number;
  private readonly gauss: () => number;
  private readonly centres: Float32Array[];

  constructor(seed: number) {
    this.rnd = rng(seed);
    this.gauss = gaussian(this.rnd);
    this.centres = Array.from({ length: CENTRES }, () => normalise(Float32Array.from({ length: DIM }, () => this.gauss())));
  }

  /** Noise of norm 0.3-0.8 around a centre (cosine to it ~0.8-0.95), like shots of one kind of scene. */
  video(): Float32Array[] {
    // Squared uniform: some centres are far more common than others.
    const main = this.centres[Math.floor(this.rnd() ** 2 * CENTRES)];
    const sigma = (0.3 + 0.5 * this.rnd()) / Math.sqrt(DIM);
    return Array.from({ length: PER_VIDEO }, () => {
      const c = this.rnd() < 0.7 ? main : this.centres[Math.floor(this.rnd() * CENTRES)];
      const x = new Float32Array(DIM);
      for (let j = 0; j < DIM; j++) x[j] = c[j] + sigma * this.gauss();
      return normalise(x);
    });
  }

  description(): string {
    return `${WORDS[Math.floor(this.rnd() * WORDS.length)]} ${WORDS[Math.floor(this.rnd() * WORDS.length)]}`;
  }

  random(): Float32Array {
    return normalise(Float32Array.from({ length: DIM }, () => this.gauss()));
  }

  perturbed(x: Float32Array, norm: number): Float32Array {
    const s = norm / Math.sqrt(DIM);
    return normalise(Float32Array.from(x, (v) => v + s * this.gauss()));
  }

  pick(n: number): number {
    return Math.floor(this.rnd() * n);
  }
}

function insertVideos(store: Store, collectionId: string, gen: Generator, from: number, to: number, prefix = 'vid'): void {
  for (let v = from; v < to; v++) {
    const id = `${prefix}_${v}`;
    store.videos.insert({ id, collection_id: collectionId, filename: `${id}.mp4`, path: '/dev/null', size_bytes: 1 });
    store.segments.replaceForVideo(
      id,
      collectionId,
      DIM,
      gen.video().map((vector, i) => ({ idx: i, start: i * 4, end: i * 4 + 4, description: gen.description(), vector })),
    );
  }
}

/** Child: writes n segments (400 videos per transaction). */
function build(file: string, n: number): Record<string, unknown> {
  const store = Store.open(file);
  try {
    const c = store.collections.insert({ name: 'scale', description: '', model: 'synthetic', dim: DIM });
    const gen = new Generator(42);
    const videos = Math.ceil(n / PER_VIDEO);
    const batch = store.db.transaction((from: number, to: number) => insertVideos(store, c.id, gen, from, to));
    const t0 = performance.now();
    for (let v = 0; v < videos; v += 400) {
      batch(v, Math.min(videos, v + 400));
      if (v % 8000 === 0) process.stderr.write(`scale1m: ${v * PER_VIDEO} segments written, ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
    }
    return { segments: videos * PER_VIDEO, insert_s: round((performance.now() - t0) / 1000, 1) };
  } finally {
    store.close();
  }
}

function rssMb(): number {
  return round(process.memoryUsage().rss / 2 ** 20, 0);
}

function peakRssMb(): number {
  return round(process.resourceUsage().maxRSS / 1024, 0);
}

function stats(times: number[]): { p50_ms: number; p99_ms: number } {
  const s = [...times].sort((a, b) => a - b);
  return { p50_ms: round(percentile(s, 50)), p99_ms: round(percentile(s, 99)) };
}

/** Exact top 10 of every query by float32 dot product: the rows streamed once, 4096 at a time, through the f32 SIMD scan. */
function exactTop10(store: Store, collectionId: string, queries: Float32Array[]): number[][] {
  const simd = createSimdScan();
  if (!simd) throw new Error('no WebAssembly SIMD');
  const block = 4096;
  const qOff = 0;
  const mOff = queries.length * DIM * 4;
  const outOff = mOff + block * DIM * 4;
  simd.memory.grow(Math.ceil((outOff + block * 4) / 65536));
  queries.forEach((q, i) => new Float32Array(simd.memory.buffer, qOff + i * DIM * 4, DIM).set(q));
  const best = queries.map(() => ({ ids: [] as number[], sims: [] as number[] }));
  const ids = new Float64Array(block);
  let n = 0;
  const flush = () => {
    const out = new Float32Array(simd.memory.buffer, outOff, n);
    queries.forEach((_, qi) => {
      simd.scan(qOff + qi * DIM * 4, mOff, n, DIM, outOff);
      const b = best[qi];
      for (let r = 0; r < n; r++) {
        const s = out[r];
        if (b.sims.length === 10 && s <= b.sims[9]) continue;
        let at = b.sims.length;
        while (at > 0 && b.sims[at - 1] < s) at--;
        b.sims.splice(at, 0, s);
        b.ids.splice(at, 0, ids[r]);
        if (b.sims.length > 10) {
          b.sims.pop();
          b.ids.pop();
        }
      }
    });
    n = 0;
  };
  const rows = store.db
    .prepare('SELECT s.id, v.embedding FROM segments s JOIN segment_vectors v ON v.segment_id = s.id WHERE s.collection_id = ?')
    .raw()
    .iterate(collectionId) as Iterable<[number, Buffer]>;
  for (const [id, blob] of rows) {
    new Uint8Array(simd.memory.buffer, mOff + n * DIM * 4, DIM * 4).set(blob);
    ids[n++] = id;
    if (n === block) flush();
  }
  if (n) flush();
  return best.map((b) => b.ids);
}

/** Child: the in-memory index on a built database (see the file comment). */
async function measure(file: string): Promise<Record<string, unknown>> {
  const load0 = os.loadavg()[0];
  const rssStart = rssMb();
  const store = Store.open(file, { memoryIndex: true });
  const c = store.db.prepare("SELECT id FROM collections WHERE name = 'scale'").get() as { id: string };
  const index = store.segments.memoryIndex!;
  store.segments.ensureVectorTable(DIM);

  let t = performance.now();
  const rows = index.refresh(c.id, DIM);
  const loadMs = performance.now() - t;
  const rssLoaded = rssMb();

  // Queries: half stored vectors with noise (cosine ~0.97 to the original), half fresh random ones.
  const gen = new Generator(7);
  const [lo, hi] = store.db.prepare('SELECT MIN(id), MAX(id) FROM segments WHERE collection_id = ?').raw().get(c.id) as [number, number];
  const queries: Float32Array[] = [];
  const kinds: ('perturbed' | 'random')[] = [];
  const stored = store.segments.vectors(DIM, Array.from({ length: QUERIES / 2 }, () => lo + gen.pick(hi - lo + 1)));
  for (const v of stored.values()) {
    queries.push(gen.perturbed(v, 0.25));
    kinds.push('perturbed');
  }
  while (queries.length < QUERIES) {
    queries.push(gen.random());
    kinds.push('random');
  }
  const first = performance.now();
  store.segments.nearest(c.id, DIM, queries[0], 10);
  const firstQueryMs = performance.now() - first;
  const times: number[] = [];
  const got: number[][] = [];
  const reranked0 = index.stats.reranked;
  for (const q of queries) {
    t = performance.now();
    const hits = store.segments.nearest(c.id, DIM, q, 10);
    times.push(performance.now() - t);
    got.push(hits.map((h) => h.segmentId));
  }
  const rerankedPerQuery = (index.stats.reranked - reranked0) / queries.length;
  // Hybrid search as the server runs it (top_k 10 asks the vector side for 200 candidates).
  const hybridTimes: number[] = [];
  for (let i = 0; i < 50; i++) {
    t = performance.now();
    const cat = new SqliteCatalog(store);
    await hybridSearch(cat.segments, cat.videos, { collectionId: c.id, dim: DIM, queryVector: queries[i * 4], text: `${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]}`, topK: 10, filter: {}, explain: false });
    hybridTimes.push(performance.now() - t);
  }
  const peakAfterQueries = peakRssMb();
  const rssAfterQueries = rssMb();

  process.stderr.write('scale1m: exact brute force for recall...\n');
  t = performance.now();
  const truth = exactTop10(store, c.id, queries);
  const truthS = (performance.now() - t) / 1000;
  const recall = (kind?: string) => {
    const r = queries.map((_, i) => i).filter((i) => !kind || kinds[i] === kind).map((i) => got[i].filter((id) => truth[i].includes(id)).length / 10);
    return { mean: round(r.reduce((a, b) => a + b, 0) / r.length, 4), min: round(Math.min(...r), 2), perfect: r.filter((x) => x === 1).length, queries: r.length };
  };

  // Incremental update: another connection (the worker is another process) appends 40 videos
  // (1000 segments) and deletes 40 (1000 segments); the next query catches up.
  process.stderr.write('scale1m: incremental update...\n');
  const writer = Store.open(file);
  const wgen = new Generator(99);
  const prefix = `new${Date.now()}`;
  const deleted = (writer.db.prepare('SELECT id FROM videos WHERE collection_id = ? ORDER BY id LIMIT 40').pluck().all(c.id) as string[]);
  const deletedSegments = new Set(writer.db.prepare(`SELECT id FROM segments WHERE video_id IN (SELECT value FROM json_each(?))`).pluck().all(JSON.stringify(deleted)) as number[]);
  const deletedVectors = writer.segments.vectors(DIM, [...deletedSegments].slice(0, 100));
  t = performance.now();
  writer.db.transaction(() => {
    insertVideos(writer, c.id, wgen, 0, 40, prefix);
    for (const v of deleted) {
      writer.segments.deleteForVideo(v, DIM);
      writer.videos.delete(v);
    }
  })();
  const writeMs = performance.now() - t;
  const appendedProbe = writer.segments.vectors(DIM, writer.db.prepare("SELECT id FROM segments WHERE video_id = ? AND idx = 3").pluck().all(`${prefix}_7`) as number[]);
  writer.close();
  const fullLoads = index.stats.fullLoads;
  t = performance.now();
  index.refresh(c.id, DIM);
  const catchUpMs = performance.now() - t;
  const probe = [...appendedProbe.entries()][0];
  const probeHit = store.segments.nearest(c.id, DIM, probe[1], 1)[0];
  let deletedReturned = 0;
  for (const q of queries.slice(0, 50)) deletedReturned += store.segments.nearest(c.id, DIM, q, 10).filter((h) => deletedSegments.has(h.segmentId)).length;
  // Each deleted vector as the query: before the update it was its own best match.
  for (const v of deletedVectors.values()) deletedReturned += store.segments.nearest(c.id, DIM, v, 10).filter((h) => deletedSegments.has(h.segmentId)).length;
  const incremental = {
    appended: 1000,
    deleted: deletedSegments.size,
    write_ms: round(writeMs),
    catch_up_ms: round(catchUpMs),
    full_reloads_during_update: index.stats.fullLoads - fullLoads,
    appended_vector_found_first: probeHit?.segmentId === probe[0],
    deleted_returned: deletedReturned,
  };
  const stats0 = { ...index.stats };
  store.close();

  // A full reload of the updated collection, for comparison (a fresh index in a fresh connection).
  const again = Store.open(file, { memoryIndex: true });
  t = performance.now();
  again.segments.memoryIndex!.refresh(c.id, DIM);
  const reloadMs = performance.now() - t;
  again.close();

  return {
    segments: rows,
    dim: DIM,
    load_s: round(loadMs / 1000),
    first_query_ms: round(firstQueryMs),
    query_k10: stats(times),
    reranked_per_query: round(rerankedPerQuery, 1),
    hybrid_search_top10: { ...stats(hybridTimes), target_p50_ms: 100 },
    recall_at_10: { all: recall(), perturbed_stored: recall('perturbed'), fresh_random: recall('random') },
    rss_mb: { process_start: rssStart, after_load: rssLoaded, after_queries: rssAfterQueries, peak_before_recall_check: peakAfterQueries },
    incremental,
    full_reload_s: round(reloadMs / 1000),
    exact_brute_force_s: round(truthS, 1),
    index_stats: stats0,
    load_average_1min: { start: round(load0), end: round(os.loadavg()[0]) },
  };
}

function runChild(args: string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`scale1m ${args[0]} exited with ${code}`));
      try {
        resolve(JSON.parse(out) as Record<string, unknown>);
      } catch (err) {
        reject(err);
      }
    });
  });
}

export async function benchScale1m(): Promise<Record<string, unknown>> {
  const n = Number(process.env.VIDEMBED_SCALE_SEGMENTS ?? 1_000_000);
  const keep = process.env.VIDEMBED_SCALE_DB;
  const dir = keep ? undefined : benchDir();
  const file = keep ?? path.join(dir!, 'scale.db');
  try {
    // A kept database is reused as it is: the previous run's incremental update is part of it.
    const built = keep && existsSync(keep) ? { reused: keep } : await runChild(['build', file, String(n)]);
    const measured = await runChild(['measure', file]);
    return { machine_cpus: os.cpus().length, build: built, ...measured };
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [mode, file, n] = process.argv.slice(2);
  const out = mode === 'build' ? build(file, Number(n)) : await measure(file);
  process.stdout.write(JSON.stringify(out) + '\n');
  process.exit(0);
}

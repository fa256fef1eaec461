/**
 * One measurement of issue 31's "on to the goals" against one build, in a process of its own (so two
 * builds never share a tfjs backend or a module cache): `node dist/bench/goals-child.js <dist> <cli|http|ingest> [clip]`,
 * where `<dist>` is a build's `dist` folder (this checkout's or the previous release's). It drives
 * that build's own CLI, server and pipeline; only this harness is shared. Prints one JSON object.
 *
 * - cli: `vidembed search` in a new process each time, answered by the warm process the first
 *   search left behind (the `cli` section's warm figure), on an empty collection.
 * - http: `vidembed serve --no-worker` on 10k segments, 32 clients sending distinct query texts
 *   (every request embeds its text), after a 128-request warm-up: rps, p50, p99. GOALS_HTTP_CLIENTS and
 *   GOALS_HTTP_REQUESTS change the clients and requests (4 clients measure the server's CPU per
 *   search with little contention: what to compare two builds by).
 * - ingest: the build's own analysis (`analyzeVideo` with the analyzers it runs before its
 *   embedder, pixel taggers in their thread, 4 s segments at 1 fps) of a silent 30 s 1080p clip,
 *   after a warm-up on its first 8 s, as the `ingest` section measures it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { Pool } from 'undici';
import { benchDir, childrenCpuSeconds, cpuSecondsOf, percentile, procKb, round, startServe } from './util.js';
import { readFileSync } from 'node:fs';


const [distArg, section, clip] = process.argv.slice(2);
const dist = path.resolve(distArg ?? '');
const bin = path.resolve(dist, '../bin/vidembed');

/** A module of the measured build, by its path under dist/src; the first of `candidates` that exists (folders moved between releases). */
async function load<T>(...candidates: string[]): Promise<T> {
  for (const c of candidates) {
    const file = path.join(dist, 'src', c);
    if (existsSync(file)) return (await import(pathToFileURL(file).href)) as T;
  }
  throw new Error(`none of ${candidates.join(', ')} in ${dist}`);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

function timeCli(args: string[], env: NodeJS.ProcessEnv): number {
  const t = performance.now();
  const r = spawnSync(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`vidembed ${args.join(' ')} failed: ${r.stderr}`);
  return performance.now() - t;
}

interface StoreLike {
  db: { prepare(sql: string): { pluck(): { all(): unknown[] } } };
  collections: { insert(c: Record<string, unknown>): { id: string } };
  keys: { create(k: Record<string, unknown>): { key: string } };
  videos: { insert(v: Record<string, unknown>): void; markProcessed(id: string, tagsJson: string | null): void };
  segments: { replaceForVideo(id: string, col: string, dim: number, segs: unknown[]): void };
  close(): void;
}
type StoreMod = { Store: { open(file: string): StoreLike } };

async function cli(runs = 9): Promise<Record<string, unknown>> {
  const { warmSocketPath } = await load<{ warmSocketPath(home: string): string }>('runtime/warm.js');
  const { Store } = await load<StoreMod>('store/index.js');
  const home = mkdtempSync(path.join(os.tmpdir(), 'vidembed-goals-cli-'));
  const env = { ...process.env, VIDEMBED_HOME: home, VIDEMBED_WORKER_IDLE_MS: '5000', VIDEMBED_WARM_IDLE_MS: '60000' };
  try {
    timeCli(['collection', 'create', 'bench'], env);
    const first = timeCli(['search', 'first of the session', '--collection', 'bench'], env);
    const sock = warmSocketPath(home);
    const t0 = Date.now();
    while (!existsSync(sock) && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 100));
    if (!existsSync(sock)) throw new Error('no warm process came up');
    await new Promise((r) => setTimeout(r, 3000)); // its models load in the background
    const warm = Array.from({ length: runs }, (_, i) => timeCli(['search', `a red car on a wet street, take ${i}`, '--collection', 'bench'], env));
    const noop = Array.from({ length: 5 }, () => timeCli(['--version'], env));
    return { runs, warm_ms: { p50: Math.round(median(warm)), min: Math.round(Math.min(...warm)), max: Math.round(Math.max(...warm)) }, first_search_ms: Math.round(first), version_ms_p50: Math.round(median(noop)) };
  } finally {
    const store = Store.open(path.join(home, 'vidembed.db'));
    for (const pid of store.db.prepare('SELECT pid FROM workers').pluck().all() as number[]) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // gone already
      }
    }
    store.close();
    rmSync(home, { recursive: true, force: true });
  }
}

const QUERIES = ['a dog on the grass', 'people walking in a city street', 'sunset over the sea', 'a close-up of a face', 'a red car', 'snow on the mountains', 'a crowd at night', 'a boat on the water', 'children playing football', 'trees in a park', 'a cat indoors', 'aerial view of a beach'];

async function http(segments = 10_000, clients = 32, total = 1500): Promise<Record<string, unknown>> {
  const { Store } = await load<StoreMod>('store/index.js');
  const { getEmbedder } = await load<{ getEmbedder(): { id: string; dim: number } }>('embedders/registry.js', 'models/registry.js');
  const { pathsFor } = await load<{ pathsFor(home: string): { dbFile: string } }>('config.js');
  const dir = benchDir();
  const home = path.join(dir, 'home');
  const store = Store.open(pathsFor(home).dbFile);
  const embedder = getEmbedder();
  const c = store.collections.insert({ name: 'bench', description: '', model: embedder.id, dim: embedder.dim });
  const { key } = store.keys.create({ name: 'bench', qps: 1e6, owner: 'default' });
  let s = 1;
  const rnd = () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
  for (let v = 0; v < segments / 25; v++) {
    store.videos.insert({ id: `vid_${v}`, collection_id: c.id, filename: `v${v}.mp4`, path: '/dev/null', size_bytes: 1 });
    store.segments.replaceForVideo(`vid_${v}`, c.id, embedder.dim, Array.from({ length: 25 }, (_, i) => {
      const vec = new Float32Array(embedder.dim).map(() => rnd() - 0.5);
      const n = Math.hypot(...vec);
      return { idx: i, start: i * 4, end: i * 4 + 4, description: QUERIES[(v + i) % QUERIES.length], vector: vec.map((x) => x / n) };
    }));
    // Processed, as a library that is searched is (an unprocessed one adds "N videos are still processing" to every answer).
    store.videos.markProcessed(`vid_${v}`, null);
  }
  store.close();
  const port = 18000 + Math.floor(Math.random() * 2000);
  // GOALS_SERVER_NODE_ARGS: node flags for the server (e.g. `--cpu-prof --cpu-prof-dir=DIR` to profile it).
  const server = await startServe(home, port, { bin, nodeArgs: process.env.GOALS_SERVER_NODE_ARGS?.split(' ').filter(Boolean) });
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: clients });
  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  try {
    const run = async (n: number, tag: string) => {
      const lat: number[] = [];
      let next = 0;
      let failed = 0;
      const t0 = performance.now();
      await Promise.all(Array.from({ length: clients }, async () => {
        while (next < n) {
          const i = next++;
          const body = JSON.stringify({ text: `${QUERIES[i % QUERIES.length]} ${tag} ${i}`, top_k: 10 });
          const t = performance.now();
          const res = await pool.request({ method: 'POST', path: `/collections/${c.id}/search`, headers, body });
          await res.body.text();
          if (res.statusCode !== 200) failed++;
          lat.push(performance.now() - t);
        }
      }));
      const wall = (performance.now() - t0) / 1000;
      lat.sort((a, b) => a - b);
      return { requests: n, failed, rps: round(n / wall, 1), p50_ms: round(percentile(lat, 50)), p99_ms: round(percentile(lat, 99)) };
    };
    await run(128, 'warm');
    const cpu0 = cpuSecondsOf(server.pid!);
    const main0 = cpuSecondsOf(server.pid!, server.pid!);
    const clients0 = process.cpuUsage();
    const measured = await run(total, 'measured');
    const clientsCpu = process.cpuUsage(clients0);
    // The server's CPU per request (event loop and encoder threads): what a loaded machine changes least.
    const serverCpuMs = ((cpuSecondsOf(server.pid!) - cpu0) * 1000) / total;
    // Of which its event loop (the main thread: HTTP, auth, the search itself); the rest is the
    // text encoder's threads and V8's helpers (garbage collection).
    const mainCpuMs = ((cpuSecondsOf(server.pid!, server.pid!) - main0) * 1000) / total;
    // The 32 clients (this process: undici, JSON) share the 2 cores with the server.
    const clientsCpuMs = (clientsCpu.user + clientsCpu.system) / 1000 / total;
    // The server's memory after the load (all threads: the event loop, the text encoder's).
    const rssMb = procKb(server.pid!, 'VmRSS') / 1024;
    const peakMb = procKb(server.pid!, 'VmHWM') / 1024;
    return { segments, clients, distinct_queries: true, ...measured, server_cpu_ms_per_request: round(serverCpuMs, 1), server_main_thread_cpu_ms_per_request: round(mainCpuMs, 1), clients_cpu_ms_per_request: round(clientsCpuMs, 1), server_rss_mb: Math.round(rssMb), server_peak_rss_mb: Math.round(peakMb) };
  } finally {
    await pool.close();
    server.kill('SIGTERM');
    await new Promise((r) => server.on('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

async function ingest(file: string, seconds: number): Promise<Record<string, unknown>> {
  type Emb = { id: string; load(): Promise<void> };
  const { getEmbedder } = await load<{ getEmbedder(): Emb }>('embedders/registry.js', 'models/registry.js');
  const { analyzersFor } = await load<{ analyzersFor(e: Emb): Promise<{ name: string; version: string | number }[]> }>('capabilities/index.js', 'analysis/index.js');
  const { analyzeVideo } = await load<{ analyzeVideo(f: string, e: Emb, o: Record<string, unknown>): Promise<{ segments: unknown[] }> }>('pipeline/pipeline.js');
  const embedder = getEmbedder();
  await embedder.load();
  const analyzers = await analyzersFor(embedder);
  const opts = { segmentSeconds: 4, fps: 1, analyzers, pixelThread: true };
  await analyzeVideo(path.join(path.dirname(file), 'warm.mp4'), embedder, opts);
  const cpu0 = process.cpuUsage();
  const ff0 = childrenCpuSeconds();
  const t0 = performance.now();
  const out = await analyzeVideo(file, embedder, opts);
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const ffmpegCpu = childrenCpuSeconds() - ff0;
  return { seconds, analyzers: analyzers.map((a) => `${a.name}@${a.version}`), segments: out.segments.length, wall_s: round(wall), realtime_factor: round(seconds / wall), node_cpu_s: round((cpu.user + cpu.system) / 1e6), ffmpeg_cpu_s: round(ffmpegCpu) };
}

async function main(): Promise<void> {
  let out: Record<string, unknown>;
  if (section === 'cli') out = await cli();
  else if (section === 'http') out = await http(10_000, Number(process.env.GOALS_HTTP_CLIENTS ?? 32), Number(process.env.GOALS_HTTP_REQUESTS ?? 1500));
  else if (section === 'ingest') out = await ingest(clip!, Number(process.env.GOALS_CLIP_SECONDS ?? 30));
  else throw new Error(`unknown section ${section}`);
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`goals-child ${section} failed: ${(err as Error).stack}\n`);
    process.exit(1);
  },
);

import { openAsBlob, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { FormData, Pool, request } from 'undici';
import { getEmbedder } from '../src/embedders/registry.js';
import { Store } from '../src/store/index.js';
import { encoderThreads, pathsFor } from '../src/config.js';
import { benchDir, percentile, procKb, round, startServe } from './util.js';

const QUERIES = ['a dog on the grass', 'people walking in a city street', 'sunset over the sea', 'a close-up of a face', 'a red car', 'snow on the mountains', 'a crowd at night', 'a boat on the water', 'children playing football', 'trees in a park', 'a cat indoors', 'aerial view of a beach'];



/**
 * A real `vidembed serve` in a child process, driven from this process over loopback:
 * search at 10k segments with 1, 8 and 32 concurrent clients sending distinct queries (every text
 * is new to the server, so its query cache never answers), the same with repeated queries (all
 * cache hits), encode_text throughput, and the server's RSS while it receives a 100 MB upload
 * (streamed to disk, so it should barely move). The server's text encoder threads come from
 * VIDEMBED_ENCODER_THREADS in this process's environment (0: encoding on the event loop).
 */
export async function benchHttp(opts: { segments?: number; largeSegments?: number; concurrency?: number; requests?: number } = {}): Promise<Record<string, unknown>> {
  const segments = opts.segments ?? 10000;
  const largeSegments = opts.largeSegments ?? 100000;
  const concurrency = opts.concurrency ?? 32;
  const total = opts.requests ?? 1500;
  const threads = encoderThreads();
  const dir = benchDir();
  const home = path.join(dir, 'home');
  const store = Store.open(pathsFor(home).dbFile);
  const embedder = getEmbedder();
  const c = store.collections.insert({ name: 'bench', description: '', model: embedder.id, dim: embedder.dim });
  const { key } = store.keys.create({ name: 'bench', qps: 1e6, owner: 'default' });
  let s = 1;
  const rnd = () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
  // Videos of 25 segments with random unit vectors; each description one of the query phrases.
  const addVideos = (into: Store, from: number, to: number) => {
    for (let v = from; v < to; v++) {
      into.videos.insert({ id: `vid_${v}`, collection_id: c.id, filename: `v${v}.mp4`, path: '/dev/null', size_bytes: 1 });
      into.segments.replaceForVideo(`vid_${v}`, c.id, embedder.dim, Array.from({ length: 25 }, (_, i) => {
        const vec = new Float32Array(embedder.dim).map(() => rnd() - 0.5);
        const n = Math.hypot(...vec);
        return { idx: i, start: i * 4, end: i * 4 + 4, description: QUERIES[(v + i) % QUERIES.length], vector: vec.map((x) => x / n) };
      }));
    }
  };
  addVideos(store, 0, segments / 25);
  store.close();
  const port = 18000 + Math.floor(Math.random() * 2000);
  const server = await startServe(home, port);
  const base = `http://127.0.0.1:${port}`;
  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  const pool = new Pool(base, { connections: concurrency });
  try {
    const run = async (n: number, make: (i: number) => { path: string; body: string }, clients = concurrency) => {
      const lat: number[] = [];
      let next = 0;
      let failed = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (next < n) {
            const i = next++;
            const { path: p, body } = make(i);
            const t = performance.now();
            const res = await pool.request({ method: 'POST', path: p, headers, body });
            await res.body.text();
            if (res.statusCode !== 200) failed++;
            lat.push(performance.now() - t);
          }
        }),
      );
      const wall = (performance.now() - t0) / 1000;
      lat.sort((a, b) => a - b);
      return { requests: n, failed, rps: round(n / wall, 1), p50_ms: round(percentile(lat, 50)), p99_ms: round(percentile(lat, 99)) };
    };
    // Distinct texts: each run has its own tag, so no text is ever sent twice (no cache hit).
    const queryText = (run: string, i: number) => `${QUERIES[i % QUERIES.length]} ${run} ${i}`;
    const searchBody = (run: string) => (i: number) => ({ path: `/collections/${c.id}/search`, body: JSON.stringify({ text: queryText(run, i), top_k: 10 }) });
    await run(128, searchBody('warm')); // warm-up: model load in every encoder thread, JIT
    const byClientsRun = async (tag: string) => {
      const out: Record<string, unknown> = {};
      for (const clients of [1, 8, 32]) {
        const n = clients === 1 ? Math.round(total / 10) : clients === 8 ? Math.round(total / 2) : total;
        out[`c${clients}`] = { concurrency: clients, ...(await run(n, searchBody(`${tag}c${clients}`), clients)) };
      }
      return out;
    };
    const byClients = await byClientsRun('');
    const search = byClients.c32 as Record<string, number>;
    // The same 200 texts over and over (sent once before, so every request is a cache hit).
    await run(200, searchBody('repeat'));
    const cached = await run(total, (i) => searchBody('repeat')(i % 200));
    const encodeText = await run(Math.round(total / 2), (i) => ({ path: '/video_embedding/encode_text', body: JSON.stringify({ text: `${QUERIES[i % QUERIES.length]} number ${i}` }) }));

    // The same at 100k segments: the rest written while the server runs (its index catches up).
    const more = Store.open(pathsFor(home).dbFile);
    addVideos(more, segments / 25, largeSegments / 25);
    more.close();
    await run(64, searchBody('warm100k'));
    const large = await byClientsRun('large');

    const big = path.join(dir, 'big.mp4');
    writeFileSync(big, Buffer.alloc(100 * 1024 * 1024, 1));
    const idleKb = procKb(server.pid!, 'VmRSS');
    let peakKb = idleKb;
    const timer = setInterval(() => (peakKb = Math.max(peakKb, procKb(server.pid!, 'VmRSS'))), 50);
    const form = new FormData();
    form.set('file', await openAsBlob(big), 'big.mp4');
    const t = performance.now();
    const up = await request(`${base}/collections/${c.id}/videos/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
    await up.body.text();
    const uploadS = (performance.now() - t) / 1000;
    clearInterval(timer);
    return {
      encoder_threads: threads,
      search: { segments, ...search, target_rps: 150, target_p99_ms: 300, note: 'each request embeds its (distinct) query text with USE before the KNN' },
      search_by_clients: { segments, distinct_queries: true, ...byClients, target_p99_ms: { c8: 100, c32: 300 } },
      search_by_clients_100k: { segments: largeSegments, distinct_queries: true, ...large },
      search_cached_repeat: { segments, concurrency, distinct_texts: 200, ...cached },
      encode_text: { concurrency, ...encodeText },
      upload_100mb: { status: up.statusCode, seconds: round(uploadS), server_rss_idle_mb: round(idleKb / 1024, 1), server_rss_peak_mb: round(peakKb / 1024, 1), rss_increase_mb: round((peakKb - idleKb) / 1024, 1), target_increase_mb: 300 },
    };
  } finally {
    await pool.close();
    server.kill('SIGTERM');
    await new Promise((r) => server.on('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

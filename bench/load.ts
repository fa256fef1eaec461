import { openAsBlob, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { FormData, request } from 'undici';
import { pathsFor, DEFAULTS } from '../src/config.js';
import { Store } from '../src/store/index.js';
import { benchDir, makeMovingPhotoClip, percentile, procKb, round, startServe } from './util.js';


function rssMb(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmHWM'): number {
  return round(procKb(pid, field) / 1024, 1);
}


/**
 * Issue 21's load: a real `vidembed serve` (its default caps, src/env.ts `syncLimits`) on loopback
 * gets 12 synchronous `encode_video` of a 20 s clip at once (from 4 keys) and 3 tensor uploads of
 * the largest size (320 MiB of uint8, from 3 keys) while /healthz is asked every 50 ms. Every
 * request must be answered 200, 429 or 503 (with Retry-After); the figure is /healthz's p99
 * (target ≤ 100 ms) and the server's peak RSS.
 */
export async function benchLoad(opts: { encodes?: number; uploads?: number; tensorBytes?: number } = {}): Promise<Record<string, unknown>> {
  const encodes = opts.encodes ?? 12;
  const uploads = opts.uploads ?? 3;
  const tensorBytes = opts.tensorBytes ?? DEFAULTS.maxTensorBytes;
  const dir = benchDir();
  const home = path.join(dir, 'home');
  const clip = makeMovingPhotoClip(path.join(dir, 'clip20s.mp4'), { seconds: 20, width: 640, height: 360 });
  const store = Store.open(pathsFor(home).dbFile);
  const keys = Array.from({ length: 4 }, (_, i) => store.keys.create({ name: `k${i}`, qps: 1e6 }).key);
  store.close();
  const port = 20000 + Math.floor(Math.random() * 2000);
  const server = await startServe(home, port);
  const base = `http://127.0.0.1:${port}`;
  try {
    // Warm: one encode alone loads the models, so the figure is about load, not start-up.
    const warm = await request(`${base}/video_embedding/encode_video`, { method: 'POST', headers: { 'x-api-key': keys[0], 'content-type': 'application/json' }, body: JSON.stringify({ video_base64: readFileSync(clip).toString('base64') }) });
    await warm.body.text();
    const idleRss = rssMb(server.pid!, 'VmRSS');

    // Every body is made before the clock starts: building 3 × 427 MB of JSON here (and undici
    // turning a string body into bytes) stops this process's event loop for seconds, which the
    // /healthz prober below would count as the server's.
    const video = Buffer.from(JSON.stringify({ video_base64: readFileSync(clip).toString('base64') }));
    const tensorBodies = Array.from({ length: uploads }, (_, i) => {
      const frames = Math.floor(tensorBytes / (3 * 224 * 224));
      const data = Buffer.alloc(frames * 3 * 224 * 224, i + 1).toString('base64');
      return Buffer.from(JSON.stringify({ service: 'embedding', request_id: `load-${i}`, video_input: { data, shape: [1, frames, 3, 224, 224], dtype: 'uint8' } }));
    });

    let stop = false;
    const health: number[] = [];
    const healthFails: number[] = [];
    const prober = (async () => {
      while (!stop) {
        const t = performance.now();
        const r = await request(`${base}/healthz`);
        await r.body.text();
        health.push(performance.now() - t);
        if (r.statusCode !== 200) healthFails.push(r.statusCode);
        await new Promise((res) => setTimeout(res, 50));
      }
    })();

    const answers: { what: string; status: number; retryAfter?: string; seconds: number }[] = [];
    const t0 = performance.now();
    const send = async (what: string, url: string, key: string, body: Buffer) => {
      const t = performance.now();
      try {
        const r = await request(`${base}${url}`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body, headersTimeout: 600_000, bodyTimeout: 600_000 });
        await r.body.text();
        answers.push({ what, status: r.statusCode, retryAfter: r.headers['retry-after'] as string | undefined, seconds: round((performance.now() - t) / 1000) });
      } catch (err) {
        answers.push({ what, status: 0, seconds: round((performance.now() - t) / 1000), retryAfter: (err as Error).message });
      }
    };
    await Promise.all([
      ...Array.from({ length: encodes }, (_, i) => send('encode_video', '/video_embedding/encode_video', keys[i % keys.length], video)),
      ...Array.from({ length: uploads }, (_, i) => send('tensor_upload', '/files/upload/tensors', keys[i % keys.length], tensorBodies[i])),
    ]);
    const wallS = round((performance.now() - t0) / 1000);
    stop = true;
    await prober;
    const sorted = [...health].sort((a, b) => a - b);
    const count = (what: string) => {
      const by: Record<string, number> = {};
      for (const a of answers.filter((x) => x.what === what)) by[a.status] = (by[a.status] ?? 0) + 1;
      return by;
    };
    const unexpected = answers.filter((a) => ![200, 429, 503].includes(a.status) || (a.status !== 200 && !a.retryAfter));
    return {
      encodes,
      tensor_uploads: uploads,
      tensor_bytes: tensorBytes,
      wall_s: wallS,
      encode_video: count('encode_video'),
      tensor_upload: count('tensor_upload'),
      every_answer_200_429_503: unexpected.length === 0,
      unexpected,
      healthz: {
        samples: sorted.length,
        p50_ms: round(percentile(sorted, 50), 1),
        p99_ms: round(percentile(sorted, 99), 1),
        max_ms: round(sorted[sorted.length - 1] ?? NaN, 1),
        not_200: healthFails.length,
        target_p99_ms: 100,
      },
      server_rss_idle_mb: idleRss,
      server_rss_peak_mb: rssMb(server.pid!),
    };
  } finally {
    server.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

/** /healthz latencies of one server, each with when it was asked (ms, performance.now()). */
class HealthProbe {
  readonly samples: { at: number; ms: number; ok: boolean }[] = [];
  private stopped = false;
  private running: Promise<void>;

  constructor(base: string, everyMs = 50) {
    this.running = (async () => {
      while (!this.stopped) {
        const at = performance.now();
        let ok = false;
        try {
          const r = await request(`${base}/healthz`, { headersTimeout: 120_000, bodyTimeout: 120_000 });
          await r.body.text();
          ok = r.statusCode === 200;
        } catch {
          ok = false;
        }
        this.samples.push({ at, ms: performance.now() - at, ok });
        await new Promise((res) => setTimeout(res, everyMs));
      }
    })();
  }

  /** p50, p99 and max of the probes asked between `from` and `to`. */
  figures(from: number, to: number): { samples: number; p50_ms: number; p99_ms: number; max_ms: number; not_200: number } {
    const within = this.samples.filter((s) => s.at >= from && s.at < to);
    const sorted = within.map((s) => s.ms).sort((a, b) => a - b);
    return {
      samples: sorted.length,
      p50_ms: round(percentile(sorted, 50), 1),
      p99_ms: round(percentile(sorted, 99), 1),
      max_ms: round(sorted[sorted.length - 1] ?? NaN, 1),
      not_200: within.filter((s) => !s.ok).length,
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }
}

/**
 * Issue 30's target: `serve`'s own worker must not stall the server. Two real `vidembed serve`
 * (default settings, each with its worker) run side by side: one processes a long 720p video (its
 * worker busy), the other has nothing to do. /healthz of both is asked every 50 ms throughout, so
 * both see the same machine (the same other load): the figure is the busy server's p99 over the
 * idle one's, in three windows: both idle; the busy one's worker processing the video (with a
 * small upload every 10 s, timed to its answer); the same plus the load bench's load (`benchLoad`:
 * 12 synchronous encodes of a 20 s clip and 3 tensor uploads of the largest size, at once).
 * Target: p99 ratio ≤ 1.5 in each window. `bin` runs the same
 * against another build's CLI (VIDEMBED_BENCH_BEFORE_BIN in `npm run bench -- serve_worker`:
 * before and after in one run).
 */
export async function benchServeWorker(opts: { videoSeconds?: number; windowS?: number; encodes?: number; uploads?: number; bin?: string } = {}): Promise<Record<string, unknown>> {
  const videoSeconds = opts.videoSeconds ?? 600;
  const windowS = opts.windowS ?? 60;
  const encodes = opts.encodes ?? 12;
  const uploads = opts.uploads ?? 3;
  const dir = benchDir();
  try {
    process.stderr.write(`serve_worker: making a ${videoSeconds} s 720p video...\n`);
    const long = makeMovingPhotoClip(path.join(dir, 'long.mp4'), { seconds: videoSeconds, width: 1280, height: 720, preset: 'ultrafast' });
    const clip = makeMovingPhotoClip(path.join(dir, 'clip20s.mp4'), { seconds: 20, width: 640, height: 360 });
    const small = makeMovingPhotoClip(path.join(dir, 'small.mp4'), { seconds: 2, width: 320, height: 180 });
    const run = async (bin: string | undefined) => {
      const servers = await Promise.all(
        ['busy', 'idle'].map(async (name, i) => {
          const home = path.join(dir, `${name}-${bin ? 'other' : 'this'}`);
          const store = Store.open(pathsFor(home).dbFile);
          const key = store.keys.create({ name, qps: 1e6 }).key;
          store.close();
          const port = 22000 + i * 1000 + Math.floor(Math.random() * 1000);
          const proc = await startServe(home, port, { worker: true, bin });
          return { name, base: `http://127.0.0.1:${port}`, key, proc };
        }),
      );
      const [busy, idle] = servers;
      const json = (key: string) => ({ 'x-api-key': key, 'content-type': 'application/json' });
      try {
        const encodeBody = Buffer.from(JSON.stringify({ video_base64: readFileSync(clip).toString('base64') }));
        // Made before any clock starts (building them stops this process's event loop for seconds).
        const frames = Math.floor(DEFAULTS.maxTensorBytes / (3 * 224 * 224));
        const tensorBodies = Array.from({ length: uploads }, (_, i) =>
          Buffer.from(JSON.stringify({ service: 'embedding', request_id: `sw-${i}`, video_input: { data: Buffer.alloc(frames * 3 * 224 * 224, i + 1).toString('base64'), shape: [1, frames, 3, 224, 224], dtype: 'uint8' } })),
        );
        const encode = async () => {
          const t = performance.now();
          const r = await request(`${busy.base}/video_embedding/encode_video`, { method: 'POST', headers: json(busy.key), body: encodeBody, headersTimeout: 600_000, bodyTimeout: 600_000 });
          await r.body.text();
          return { status: r.statusCode, seconds: round((performance.now() - t) / 1000) };
        };
        // Warm: the busy server's analysis threads load their models, so the windows measure load, not start-up.
        await encode();
        const col = (await (await request(`${busy.base}/collections`, { method: 'POST', headers: json(busy.key), body: JSON.stringify({ name: 'bench' }) })).body.json()) as { collection_id: string };
        const upload = async (file: string) => {
          const form = new FormData();
          form.set('file', await openAsBlob(file), path.basename(file));
          const t = performance.now();
          const r = await request(`${busy.base}/collections/${col.collection_id}/videos/upload`, { method: 'POST', headers: { 'x-api-key': busy.key }, body: form, headersTimeout: 600_000, bodyTimeout: 600_000 });
          const body = (await r.body.json()) as { video_id: string };
          return { status: r.statusCode, seconds: round((performance.now() - t) / 1000), videoId: body.video_id };
        };
        const progress = async (id: string) => (await (await request(`${busy.base}/videos/${id}/status`, { headers: { 'x-api-key': busy.key } })).body.json()) as { status: string; progress?: number };
        const probes = { busy: new HealthProbe(busy.base), idle: new HealthProbe(idle.base) };
        const windowOf = (from: number, to: number) => {
          const b = probes.busy.figures(from, to);
          const i = probes.idle.figures(from, to);
          return { busy_server: b, idle_server: i, p99_ratio: round(b.p99_ms / i.p99_ms, 2) };
        };
        try {
          // 1. Both idle.
          let t0 = performance.now();
          await new Promise((r) => setTimeout(r, 10_000));
          const bothIdle = windowOf(t0, performance.now());

          // 2. The busy server's worker on the long video, a small upload every 10 s.
          const up = await upload(long);
          await (async () => {
            for (let i = 0; i < 600 && (await progress(up.videoId)).status !== 'processing'; i++) await new Promise((r) => setTimeout(r, 500));
          })();
          t0 = performance.now();
          const smallUploads: number[] = [];
          while (performance.now() - t0 < windowS * 1000) {
            smallUploads.push((await upload(small)).seconds);
            await new Promise((r) => setTimeout(r, 10_000));
          }
          const workerBusy = { ...windowOf(t0, performance.now()), small_upload_bytes: statSync(small).size, small_uploads_answered_s: smallUploads, video: await progress(up.videoId) };

          // 3. The same, and the load bench's load: 12 synchronous encodes and 3 largest tensor uploads at once.
          t0 = performance.now();
          const sent = await Promise.all([
            ...Array.from({ length: encodes }, () => encode().then((a) => ({ what: 'encode_video', ...a }))),
            ...tensorBodies.map(async (body) => {
              const t = performance.now();
              const r = await request(`${busy.base}/files/upload/tensors`, { method: 'POST', headers: json(busy.key), body, headersTimeout: 600_000, bodyTimeout: 600_000 });
              await r.body.text();
              return { what: 'tensor_upload', status: r.statusCode, seconds: round((performance.now() - t) / 1000) };
            }),
          ]);
          const by: Record<string, Record<string, number>> = {};
          for (const a of sent) (by[a.what] ??= {})[a.status] = (by[a.what]?.[a.status] ?? 0) + 1;
          const withEncodes = { ...windowOf(t0, performance.now()), encodes, tensor_uploads: tensorBodies.length, answers: by, slowest_s: Math.max(...sent.map((a) => a.seconds)), video: await progress(up.videoId) };
          return { both_idle: bothIdle, worker_busy: workerBusy, worker_busy_and_load_bench: withEncodes };
        } finally {
          await probes.busy.stop();
          await probes.idle.stop();
        }
      } finally {
        for (const s of servers) s.proc.kill('SIGTERM');
        await Promise.all(servers.map((s) => new Promise((r) => (s.proc.exitCode !== null ? r(undefined) : s.proc.on('exit', r)))));
      }
    };
    const after = await run(undefined);
    const beforeBin = opts.bin ?? process.env.VIDEMBED_BENCH_BEFORE_BIN;
    const before = beforeBin ? await run(beforeBin) : undefined;
    return { video_seconds: videoSeconds, window_s: windowS, target_p99_ratio: 1.5, this_build: after, ...(before ? { other_build: { bin: beforeBin, ...before } } : {}) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

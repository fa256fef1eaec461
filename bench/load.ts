import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
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

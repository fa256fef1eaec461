/**
 * `npm run bench -- goals`: issue 31's "on to the goals" — CLI warm search (≤ 150 ms), HTTP search
 * with 32 clients on a small collection (≥ 300 rps, p99 ≤ 200 ms), ingest of a silent 30 s 1080p clip
 * (≥ 6x real time) — for this build and the previous release in the same run, when
 * VIDEMBED_BENCH_PREVIOUS names the previous release's `dist` folder (a built checkout of it, e.g.
 * `git worktree add --detach ../prev fc4569f && cd ../prev && ln -s ../main/node_modules && npx tsc`).
 * VIDEMBED_BENCH_BASELINES=name=dist,... adds more builds; GOALS_SECTIONS=cli,http runs only those sections. Rounds alternate the order of the builds (GOALS_ROUNDS, default 2); each measurement runs in a
 * process of its own ({@link ./goals-child.ts}). `load_average` is the 1-minute load before each.
 */
import { execFileSync, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchDir, ffmpegBin, makeMovingPhotoClip, round } from './util.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const THIS_DIST = path.resolve(HERE, '..');
const SECTIONS = ['cli', 'http', 'ingest'] as const;
type Section = (typeof SECTIONS)[number];

/** The sections to run: GOALS_SECTIONS=cli,http (default all, in SECTIONS order); an unknown name is an error. */
export function goalSections(env: string | undefined): Section[] {
  const asked = (env ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (asked.length === 0) return [...SECTIONS];
  for (const s of asked) if (!(SECTIONS as readonly string[]).includes(s)) throw new Error(`GOALS_SECTIONS: unknown section "${s}" (${SECTIONS.join(', ')})`);
  return SECTIONS.filter((s) => asked.includes(s));
}

function child(dist: string, section: string, clip: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [path.join(HERE, 'goals-child.js'), dist, section, clip], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.on('error', reject);
    p.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`${section} on ${dist} exited ${code}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').pop()!));
      } catch (err) {
        reject(new Error(`${section} on ${dist}: no JSON (${(err as Error).message}): ${out.slice(0, 300)}`));
      }
    });
  });
}

const figure: Record<Section, (r: Record<string, any>) => Record<string, number>> = {
  cli: (r) => ({ warm_p50_ms: r.warm_ms.p50 }),
  http: (r) => ({ rps: r.rps, p99_ms: r.p99_ms, server_cpu_ms_per_request: r.server_cpu_ms_per_request, server_main_thread_cpu_ms_per_request: r.server_main_thread_cpu_ms_per_request, clients_cpu_ms_per_request: r.clients_cpu_ms_per_request, server_rss_mb: r.server_rss_mb }),
  ingest: (r) => ({ realtime_factor: r.realtime_factor, cpu_s: round(r.node_cpu_s + r.ffmpeg_cpu_s) }),
};

export async function benchGoals(): Promise<Record<string, unknown>> {
  const previous = process.env.VIDEMBED_BENCH_PREVIOUS ? path.resolve(process.env.VIDEMBED_BENCH_PREVIOUS) : undefined;
  const rounds = Number(process.env.GOALS_ROUNDS ?? 2);
  const sections = goalSections(process.env.GOALS_SECTIONS);
  const builds: Record<string, string> = { current: THIS_DIST, ...(previous ? { previous } : {}) };
  // More builds side by side: VIDEMBED_BENCH_BASELINES=name=dist,name=dist (e.g. main before a change).
  for (const pair of (process.env.VIDEMBED_BENCH_BASELINES ?? '').split(',').filter(Boolean)) {
    const [name, dist] = pair.split('=');
    if (!name || !dist) throw new Error(`VIDEMBED_BENCH_BASELINES takes name=dist pairs, not "${pair}"`);
    builds[name] = path.resolve(dist);
  }
  const dir = benchDir();
  try {
    const clip = makeMovingPhotoClip(path.join(dir, 'in.mp4'), { seconds: 30, width: 1920, height: 1080 });
    execFileSync(ffmpegBin(), ['-hide_banner', '-loglevel', 'error', '-y', '-i', clip, '-t', '8', '-c', 'copy', path.join(dir, 'warm.mp4')]);
    const runs: Record<string, Record<string, unknown>[]> = {};
    for (let round_ = 0; round_ < rounds; round_++) {
      const order = Object.keys(builds);
      if (round_ % 2 === 1) order.reverse();
      for (const section of sections) {
        for (const name of order) {
          const load = round(os.loadavg()[0]);
          process.stderr.write(`goals: round ${round_ + 1} ${section} ${name} (load ${load})...\n`);
          const r = await child(builds[name], section, clip);
          (runs[`${section}.${name}`] ??= []).push({ round: round_ + 1, load_average: load, ...r });
        }
      }
    }
    const summary: Record<string, unknown> = {};
    for (const section of sections) {
      summary[section] = Object.fromEntries(Object.keys(builds).map((name) => [name, (runs[`${section}.${name}`] ?? []).map((r) => figure[section](r))]));
    }
    return {
      builds,
      targets: { cli_warm_p50_ms: 150, http_c32_rps: 300, http_c32_p99_ms: 200, ingest_30s_1080p_realtime_factor: 6 },
      summary,
      runs,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

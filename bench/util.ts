import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function ffmpegBin(): string {
  return process.env.VIDEMBED_FFMPEG || (createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string }).path;
}

export function benchDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'vidembed-bench-'));
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** A real photo from ../shared/eval moving under a crop window: h264, so decode cost is realistic. */
export function makeMovingPhotoClip(out: string, opts: { seconds: number; width: number; height: number; photo?: string; preset?: string }): string {
  const photo = opts.photo ?? path.resolve(process.cwd(), '../shared/eval/photos/plasma-workspace-wallpapers__Path_1920x1080.jpg');
  const { width: w, height: h, seconds } = opts;
  // Scale the photo 1.5x and pan a w x h window across it, back and forth, for the whole clip.
  const vf = `scale=${Math.round(w * 1.5)}:${Math.round(h * 1.5)},crop=${w}:${h}:x='(iw-ow)/2*(1+sin(t/4))':y='(ih-oh)/2*(1+cos(t/5))',format=yuv420p`;
  execFileSync(
    ffmpegBin(),
    ['-hide_banner', '-loglevel', 'error', '-y', '-loop', '1', '-framerate', '30', '-i', photo, '-t', String(seconds), '-vf', vf,
      '-c:v', 'libx264', '-preset', opts.preset ?? 'veryfast', '-crf', '23', '-g', '60', '-r', '30', out],
    { stdio: 'inherit' },
  );
  return out;
}

/** The CLI of this checkout (from dist/bench). */
export const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/vidembed');

/**
 * `vidembed serve --no-worker` on `port` with its home at `home`, once it says it is serving;
 * `worker: true`: with its own worker (serve's default). `bin`: another build's CLI (a comparison);
 * `nodeArgs`: node's own flags (e.g. --cpu-prof).
 */
export async function startServe(home: string, port: number, opts: { worker?: boolean; bin?: string; nodeArgs?: string[] } = {}): Promise<ChildProcess> {
  const args = ['serve', '--port', String(port), ...(opts.worker ? [] : ['--no-worker'])];
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), opts.bin ?? BIN, ...args], { env: { ...process.env, VIDEMBED_HOME: home }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('serving on')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
  return child;
}

/** The fields of a /proc stat file after the command (state is [0], ppid [1], utime [11], stime [12], cutime [13], cstime [14]). */
function statFields(file: string): string[] {
  const stat = readFileSync(file, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** CPU seconds (user + sys) consumed so far by this process's waited-for children; NaN off Linux. */
export function childrenCpuSeconds(): number {
  try {
    const f = statFields('/proc/self/stat');
    return (Number(f[13]) + Number(f[14])) / 100;
  } catch {
    return NaN;
  }
}

/** CPU seconds (user + sys) of a process (all threads), or of one of its threads (`tid`; the main thread's tid is the pid). */
export function cpuSecondsOf(pid: number, tid?: number): number {
  const f = statFields(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`);
  return (Number(f[11]) + Number(f[12])) / 100;
}

/**
 * CPU seconds (user + sys) of a PostgreSQL server and its live processes (backends, background
 * workers): the postmaster's pid from DATA/postmaster.pid and every process whose parent it is.
 * A backend that exits between two readings takes its CPU with it, so over a window where
 * connections stay open (a server's pool) the difference is the cluster's work; NaN off Linux.
 */
export function postgresCpuSeconds(dataDir: string): number {
  try {
    const postmaster = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    let total = cpuSecondsOf(postmaster);
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const f = statFields(`/proc/${entry}/stat`);
        if (Number(f[1]) === postmaster) total += (Number(f[11]) + Number(f[12])) / 100;
      } catch {
        // gone between the listing and the read
      }
    }
    return total;
  } catch {
    return NaN;
  }
}

/** A field of a process's /proc status, in kB (VmRSS now, VmHWM its peak). */
export function procKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

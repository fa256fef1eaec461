import os from 'node:os';
import { ffmpegDiesWithParent, ffmpegOverride, ffmpegThreads } from '../env.js';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { VidembedError } from '../api/errors.js';

let cachedPath: string | undefined;

/**
 * Absolute path of the ffmpeg binary: `$VIDEMBED_FFMPEG` when set, else the static build shipped by
 * `@ffmpeg-installer/ffmpeg` (ffmpeg 4.1; there is no ffprobe, probing parses `ffmpeg -i`).
 */
export function ffmpegPath(): string {
  const fromEnv = ffmpegOverride();
  if (fromEnv) return fromEnv;
  if (cachedPath) return cachedPath;
  try {
    const mod = createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string };
    cachedPath = mod.path;
  } catch (err) {
    throw new VidembedError(
      `ffmpeg not found: @ffmpeg-installer/ffmpeg could not be loaded (${String(err)}); set VIDEMBED_FFMPEG to an ffmpeg binary`,
      { cause: err },
    );
  }
  return cachedPath;
}

/**
 * Decoder threads per ffmpeg process. Default 1: the engine decodes while the models run on the
 * other core, and frame threading costs ~40% more CPU for the same frames (see bench/media.ts).
 * `VIDEMBED_FFMPEG_THREADS=0` lets ffmpeg choose (fastest wall time on an idle machine).
 */
export function decoderThreads(): number {
  return ffmpegThreads();
}

/** Arguments every invocation starts with: quiet, no stdin, no stats. */
export const BASE_ARGS = ['-hide_banner', '-nostdin', '-nostats'] as const;

export interface FfmpegResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
}

export interface RunOptions {
  signal?: AbortSignal;
  /** Collect stdout (default true). */
  stdout?: boolean;
  /** Written to ffmpeg's stdin, which is then closed (read it with `-i pipe:0`). Default: stdin closed at once. */
  input?: Buffer | Uint8Array;
}

let setprivPath: string | null | undefined;

/**
 * On Linux, util-linux's `setpriv --pdeathsig KILL` (present on Debian and most distributions)
 * makes the kernel kill ffmpeg the moment its parent dies — even by SIGKILL, when no handler of
 * ours can run — so a killed server or worker leaves no decoder running. Elsewhere ffmpeg still
 * dies at its next write into the closed pipe.
 */
function deathSignalWrapper(): string | null {
  if (setprivPath !== undefined) return setprivPath;
  setprivPath = null;
  if (process.platform === 'linux' && ffmpegDiesWithParent()) {
    for (const p of ['/usr/bin/setpriv', '/bin/setpriv']) if (existsSync(p)) setprivPath = p;
  }
  return setprivPath;
}

/**
 * Spawns ffmpeg with piped stdio. The caller owns the process (and must kill it when done).
 * `nice`: runs it at that lower priority (setpriority on its pid, right after the spawn).
 */
export function spawnFfmpeg(args: readonly string[], opts: { nice?: number } = {}): ChildProcessWithoutNullStreams {
  const bin = ffmpegPath();
  if (!ffmpegOverride() && !existsSync(bin)) {
    throw new VidembedError('ffmpeg binary missing; reinstall @ffmpeg-installer/ffmpeg or set VIDEMBED_FFMPEG');
  }
  const wrapper = deathSignalWrapper();
  const argv = [...BASE_ARGS, ...args];
  const spawnOpts = { stdio: ['pipe', 'pipe', 'pipe'] as ['pipe', 'pipe', 'pipe'], windowsHide: true };
  const child = wrapper ? spawn(wrapper, ['--pdeathsig', 'KILL', '--', bin, ...argv], spawnOpts) : spawn(bin, argv, spawnOpts);
  if (opts.nice && child.pid) lowerPriority(child.pid, opts.nice);
  return child;
}

/** Lowers a process's priority by `nice` (best effort: a platform that refuses leaves it as it is). */
export function lowerPriority(pid: number, nice: number): void {
  try {
    os.setPriority(pid, Math.min(19, Math.max(os.getPriority(pid), nice)));
  } catch {
    /* not allowed here, or gone already */
  }
}

/**
 * Runs ffmpeg to completion and collects its output. Never rejects on a non-zero exit code (the
 * caller interprets stderr); rejects on spawn failure and with the signal's reason on abort.
 */
export function runFfmpeg(args: readonly string[], opts: RunOptions = {}): Promise<FfmpegResult> {
  const { signal } = opts;
  const collect = opts.stdout !== false;
  return new Promise<FfmpegResult>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    let child: ChildProcessWithoutNullStreams;
    try {
      child = spawnFfmpeg(args);
    } catch (err) {
      reject(err);
      return;
    }
    const out: Buffer[] = [];
    const err = new StderrTail();
    // ffmpeg may exit before reading all its input (bad arguments, -frames:v reached): its exit
    // code and stderr tell what happened, so a broken pipe here is not an error of its own.
    child.stdin.on('error', () => {});
    if (opts.input) child.stdin.end(opts.input);
    else child.stdin.end();
    child.stdout.on('data', (b: Buffer) => {
      if (collect) out.push(b);
    });
    child.stderr.on('data', (b: Buffer) => err.push(b));
    const onAbort = () => child.kill('SIGKILL');
    signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (e) => {
      signal?.removeEventListener('abort', onAbort);
      reject(new VidembedError(`cannot run ffmpeg: ${e.message}`, { cause: e }));
    });
    child.on('close', (code, sig) => {
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) {
        reject(abortReason(signal));
        return;
      }
      resolve({ code, signal: sig, stdout: Buffer.concat(out), stderr: err.text() });
    });
  });
}

export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? Object.assign(new Error('The operation was aborted'), { name: 'AbortError' });
}

/** Keeps the last `maxBytes` of a process's stderr (ffmpeg can be chatty on broken files). */
export class StderrTail {
  private chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly maxBytes = 64 * 1024) {}
  push(b: Buffer): void {
    this.chunks.push(b);
    this.size += b.length;
    while (this.size > this.maxBytes && this.chunks.length > 1) {
      this.size -= this.chunks.shift()!.length;
    }
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

const NOISE = [
  /^At least one output file must be specified/,
  /^Conversion failed!?$/,
  /^Press \[q\] to stop/,
  /^Stream mapping:/,
  /^\s*Stream #\d/,
  /^\s*(Metadata|Side data|Duration|Input #|Output #)/,
  /^frame=\s*\d+/,
  /^size=/,
  /^video:\d+kB/,
  /^\s*[A-Za-z_ -]+\s*: /, // metadata key : value
  /Last message repeated/,
  /^Exiting normally/,
  /^\[Parsed_showinfo/,
];

/**
 * The last line of ffmpeg's stderr that says something about the input, with `[h264 @ 0x55…]`
 * prefixes made readable (`h264: …`); undefined when there is none.
 */
export function lastMeaningfulLine(stderr: string): string | undefined {
  const lines = stderr.split(/\r?\n|\r/).map((l) => l.trim()).filter(Boolean);
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i];
    if (NOISE.some((re) => re.test(line))) continue;
    return cleanLine(line);
  }
  return undefined;
}

/** `[mov,mp4,m4a,3gp,3g2,mj2 @ 0x4a3c2c0] moov atom not found` → `mov,mp4,m4a,3gp,3g2,mj2: moov atom not found`. */
export function cleanLine(line: string): string {
  return line.replace(/^\[([^\]@]+?) @ 0x[0-9a-f]+\]\s*/i, '$1: ').trim();
}

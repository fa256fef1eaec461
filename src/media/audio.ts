import { MediaError, ValidationError } from '../api/errors.js';
import { lastMeaningfulLine, runFfmpeg, spawnFfmpeg } from './ffmpeg.js';
import { probeDetails } from './probe.js';

export interface AudioOptions {
  /** Output sample rate in Hz (default 16000). */
  sampleRate?: number;
  /** Seconds; window to extract. */
  start?: number;
  end?: number;
  signal?: AbortSignal;
}

/**
 * The first (default) audio track as mono float32 PCM (`-ac 1`, channels averaged) at
 * `sampleRate`; an empty array when the file has no audio. Holds the whole result in memory
 * (64 KB per second at 16 kHz).
 */
export async function extractAudio(file: string, opts: AudioOptions = {}): Promise<Float32Array> {
  const sampleRate = opts.sampleRate ?? 16000;
  if (!(Number.isInteger(sampleRate) && sampleRate >= 1000 && sampleRate <= 192000)) {
    throw new ValidationError(`sampleRate must be an integer in [1000, 192000], got ${String(sampleRate)}`, ['sampleRate']);
  }
  const start = opts.start ?? 0;
  if (!(Number.isFinite(start) && start >= 0)) throw new ValidationError(`start must be >= 0, got ${String(opts.start)}`, ['start']);
  if (opts.end !== undefined && !(Number.isFinite(opts.end) && opts.end > start)) {
    throw new ValidationError(`end must be greater than start, got ${String(opts.end)}`, ['end']);
  }
  const info = await probeDetails(file, { signal: opts.signal });
  const as = info.audioStream;
  if (!as) return new Float32Array(0);
  const args = ['-v', 'error'];
  if (start > 0) args.push('-ss', String(Number(start.toFixed(6))));
  args.push('-i', file, '-map', `0:${as.index}`, '-vn', '-sn', '-dn');
  if (opts.end !== undefined) args.push('-t', String(Number((opts.end - start).toFixed(6))));
  args.push('-ac', '1', '-ar', String(sampleRate), '-f', 'f32le', '-acodec', 'pcm_f32le', 'pipe:1');
  const res = await runFfmpeg(args, { signal: opts.signal });
  if (res.code !== 0 && res.stdout.length === 0) {
    const pastEnd = start > 0 && info.durationSec > 0 && start >= info.durationSec;
    if (pastEnd) return new Float32Array(0);
    throw new MediaError(`${file}: could not decode audio (${lastMeaningfulLine(res.stderr) ?? `ffmpeg exited with code ${String(res.code)}`})`);
  }
  const n = Math.floor(res.stdout.length / 4);
  const out = new Float32Array(n);
  new Uint8Array(out.buffer).set(res.stdout.subarray(0, n * 4));
  return out;
}

/**
 * The default audio track as 16-bit mono PCM at `sampleRate` (default 16000), streamed chunk by
 * chunk from one ffmpeg process: memory holds one pipe buffer whatever the length (a 3-hour talk
 * is 345 MB of PCM that never exists at once). Nothing when the file has no audio track; a decode
 * error mid-stream ends the stream (what was decoded stands). Ending the iteration early kills ffmpeg.
 */
export async function* streamPcm(file: string, opts: { sampleRate?: number; signal?: AbortSignal; streamIndex?: number; nice?: number } = {}): AsyncGenerator<Buffer> {
  const sampleRate = opts.sampleRate ?? 16000;
  let index = opts.streamIndex;
  if (index === undefined) {
    const info = await probeDetails(file, { signal: opts.signal });
    if (!info.audioStream) return;
    index = info.audioStream.index;
  }
  const child = spawnFfmpeg(['-v', 'error', '-i', file, '-map', `0:${index}`, '-vn', '-sn', '-dn', '-ac', '1', '-ar', String(sampleRate), '-f', 's16le', '-acodec', 'pcm_s16le', 'pipe:1'], { nice: opts.nice });
  child.stdin.end();
  child.stderr.resume();
  const onAbort = () => child.kill('SIGKILL');
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    let carry: Buffer | undefined;
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      // Whole samples only: a chunk may end inside one.
      let buf = carry ? Buffer.concat([carry, chunk]) : chunk;
      carry = undefined;
      if (buf.length & 1) {
        carry = buf.subarray(buf.length - 1);
        buf = buf.subarray(0, buf.length - 1);
      }
      if (buf.length) yield buf;
    }
    if (opts.signal?.aborted) throw opts.signal.reason ?? new Error('aborted');
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

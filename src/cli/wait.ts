import { pollMs as envPollMs } from '../env.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AsyncStatusResponse, ReindexResponse, VideoService, VideoStatusResponse } from '../api/types.js';
import { WAIT_UNTIL, type WaitUntil } from '../api/defaults.js';
import { ValidationError } from '../api/errors.js';
import { DEFAULTS } from '../config.js';
import type { Ora } from 'ora';
import { type OutputOptions } from './output.js';
import { spinner } from './spinner.js';

function pollMs(): number {
  return envPollMs(DEFAULTS.pollMs);
}

/**
 * While waiting, Ctrl-C stops the waiting at once — not the work, which goes on in the worker —
 * says how to follow it, and exits 130. Without a terminal (a log, a script), where the spinner
 * is silent, one line says what is being waited for.
 */
function interruptible(spin: Ora, follow: string, what: string, opts: OutputOptions): () => void {
  const onInt = () => {
    spin.stop();
    process.stderr.write(`stopped waiting; the work goes on in the background: ${follow}\n`);
    process.exit(130);
  };
  process.once('SIGINT', onInt);
  if (!opts.json && !process.stderr.isTTY) process.stderr.write(`${what}: waiting (Ctrl-C stops the waiting, not the work)\n`);
  return () => process.off('SIGINT', onInt);
}

export interface WaitOptions extends OutputOptions {
  label?: string;
  /** `complete` (default): every lane done; `searchable`: the picture lane done (speech may land later). */
  until?: WaitUntil;
  /** false: the caller says what Ctrl-C stopped (a folder upload: src/cli/commands/upload.ts). */
  interrupt?: false;
}

/** What `--until` takes; anything else is the caller's error. */
export function waitUntil(value: string | undefined): WaitUntil {
  if (value === undefined) return 'complete';
  if ((WAIT_UNTIL as readonly string[]).includes(value)) return value as WaitUntil;
  throw new ValidationError([{ loc: ['until'], msg: `must be one of ${WAIT_UNTIL.join(', ')}`, type: 'value_error.enum' }]);
}

/**
 * Polls a video's status (every 2 s, as the API document's client does) until it settles (or is
 * searchable, with `until`). With `interrupt: false` the caller says what Ctrl-C stopped.
 */
export async function waitForVideo(service: VideoService, videoId: string, opts: WaitOptions): Promise<VideoStatusResponse> {
  const spin = spinner(`${opts.label ?? videoId}: uploaded`, opts).start();
  const done =
    opts.interrupt === false
      ? () => {
          if (!opts.json && !process.stderr.isTTY) process.stderr.write(`${opts.label ?? videoId}: waiting (Ctrl-C stops the waiting, not the work)\n`);
          return () => spin.stop();
        }
      : () => interruptible(spin, `vidembed video status ${videoId} --wait`, opts.label ?? videoId, opts);
  const release = done();
  try {
    return await pollVideo(service, videoId, opts, spin);
  } finally {
    release();
  }
}

/** What is still running for a video, in words ("speech running"). */
export function stillRunning(st: Pick<VideoStatusResponse, 'analysis'>): string {
  const open = Object.entries(st.analysis ?? {}).filter(([, a]) => a.status === 'pending' || a.status === 'running');
  return open.map(([name, a]) => `${name} ${a.status}`).join(', ');
}

async function pollVideo(service: VideoService, videoId: string, opts: WaitOptions, spin: Ora): Promise<VideoStatusResponse> {
  for (;;) {
    const st = await service.videoStatus(videoId);
    if (st.status === 'processed') {
      spin.succeed(`${opts.label ?? videoId}: processed`);
      return st;
    }
    if (opts.until === 'searchable' && st.searchable && st.status !== 'failed') {
      const rest = stillRunning(st);
      spin.succeed(`${opts.label ?? videoId}: searchable${rest ? ` (${rest})` : ''}`);
      return st;
    }
    if (st.status === 'failed') {
      spin.fail(`${opts.label ?? videoId}: failed: ${st.error_message ?? 'unknown error'}`);
      return st;
    }
    spin.text = `${opts.label ?? videoId}: ${st.status}${st.progress !== undefined ? ` ${Math.round(st.progress)}%` : ''}`;
    await sleep(pollMs());
  }
}

export async function waitForTask(service: VideoService, requestId: string, opts: OutputOptions): Promise<AsyncStatusResponse> {
  const spin = spinner(`${requestId}: pending`, opts).start();
  const done = interruptible(spin, `vidembed task status ${requestId}`, requestId, opts);
  try {
    return await pollTask(service, requestId, spin);
  } finally {
    done();
  }
}

async function pollTask(service: VideoService, requestId: string, spin: Ora): Promise<AsyncStatusResponse> {
  for (;;) {
    const st = await service.taskStatus(requestId);
    if (st.status === 'completed') {
      spin.succeed(`${requestId}: completed`);
      return st;
    }
    if (st.status === 'failed') {
      spin.fail(`${requestId}: failed: ${st.error_message ?? 'unknown error'}`);
      return st;
    }
    spin.text = `${requestId}: ${st.status}`;
    await sleep(pollMs());
  }
}

/** "3m 20s" from milliseconds (seconds under a minute). */
export function formatEta(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m ${String(s % 60).padStart(2, '0')}s` : `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

/** Progress of a set of videos in [0, 1]: the mean of each one's (settled: 1), and how many settled. */
export function overallProgress(states: VideoStatusResponse[]): { fraction: number; settled: number; failed: number } {
  let sum = 0;
  let settled = 0;
  let failed = 0;
  for (const st of states) {
    if (st.status === 'processed' || st.status === 'failed') {
      sum += 1;
      settled++;
      if (st.status === 'failed') failed++;
    } else sum += Math.min(0.99, (st.progress ?? 0) / 100);
  }
  return { fraction: states.length ? sum / states.length : 1, settled, failed };
}

/**
 * Waits for the videos a reindex queued, with progress and an estimate of the time left (from the
 * pace so far). Answers how many settled as failed.
 */
export async function waitForReindex(service: VideoService, res: ReindexResponse, opts: OutputOptions & { label: string }): Promise<{ failed: number; seconds: number }> {
  const ids = res.video_ids ?? [];
  const started = Date.now();
  const spin = spinner(`${opts.label}: 0/${ids.length} videos`, opts).start();
  const done = interruptible(spin, `vidembed collection show ${opts.label}`, `reindex of ${opts.label}`, opts);
  try {
    let last: VideoStatusResponse[] = [];
    for (;;) {
      const open = last.length ? last.filter((st) => st.status !== 'processed' && st.status !== 'failed').map((st) => st.video_id) : ids;
      const fresh = await Promise.all(open.map((id) => service.videoStatus(id).catch((): VideoStatusResponse => ({ video_id: id, status: 'failed', error_message: 'deleted meanwhile' }))));
      const byId = new Map([...last, ...fresh].map((st) => [st.video_id, st]));
      last = ids.map((id) => byId.get(id)!).filter(Boolean);
      const { fraction, settled, failed } = overallProgress(last);
      const elapsed = Date.now() - started;
      if (settled === ids.length) {
        const msg = `${opts.label}: ${settled} video${settled === 1 ? '' : 's'} done in ${formatEta(elapsed)}${failed ? `, ${failed} failed` : ''}`;
        if (failed) spin.fail(msg);
        else spin.succeed(msg);
        return { failed, seconds: elapsed / 1000 };
      }
      const eta = fraction > 0.02 ? ` — about ${formatEta((elapsed / fraction) * (1 - fraction))} left` : '';
      spin.text = `${opts.label}: ${settled}/${ids.length} videos, ${Math.round(fraction * 100)}%${eta}`;
      if (!process.stderr.isTTY && !opts.json) process.stderr.write(`${spin.text}\n`);
      await sleep(pollMs());
    }
  } finally {
    done();
  }
}

import { pollMs as envPollMs } from '../env.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AsyncStatusResponse, VideoService, VideoStatusResponse } from '../api/types.js';
import { DEFAULTS } from '../config.js';
import type { Ora } from 'ora';
import { spinner, type OutputOptions } from './output.js';

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

/**
 * Polls a video's status (every 2 s, as the API document's client does) until it settles. With
 * `interrupt: false` the caller says what Ctrl-C stopped (a folder upload: src/cli/commands/upload.ts).
 */
export async function waitForVideo(service: VideoService, videoId: string, opts: OutputOptions & { label?: string; interrupt?: false }): Promise<VideoStatusResponse> {
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

async function pollVideo(service: VideoService, videoId: string, opts: OutputOptions & { label?: string }, spin: Ora): Promise<VideoStatusResponse> {
  for (;;) {
    const st = await service.videoStatus(videoId);
    if (st.status === 'processed') {
      spin.succeed(`${opts.label ?? videoId}: processed`);
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

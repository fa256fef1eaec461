import { setTimeout as sleep } from 'node:timers/promises';
import type { AsyncStatusResponse, VideoService, VideoStatusResponse } from '../api/types.js';
import { DEFAULTS } from '../engine/config.js';
import { spinner, type OutputOptions } from './output.js';

function pollMs(): number {
  return Number(process.env.VIDEMBED_POLL_MS) || DEFAULTS.pollMs;
}

/** Polls a video's status (every 2 s, as the API document's client does) until it settles. */
export async function waitForVideo(service: VideoService, videoId: string, opts: OutputOptions & { label?: string }): Promise<VideoStatusResponse> {
  const spin = spinner(`${opts.label ?? videoId}: uploaded`, opts).start();
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

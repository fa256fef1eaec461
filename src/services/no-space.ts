/**
 * Videos that failed for lack of space (ENOSPC, "database or disk is full") are not failed for
 * good: their message says so, and idle workers queue them again once the disks have room
 * (`Jobs.retryNoSpace`), as `reprocess` does by hand. Both go through `requeueVideo`, which also
 * clears the old error, so the answer is the new state (docs/operations.md).
 */
import { statfs } from 'node:fs/promises';
import type { Catalog, VideoRow } from '../store/catalog/types.js';

/** The message of a video whose processing ran out of space. */
export const NO_SPACE_FAILURE = "the server's storage was full while processing this video; it is retried once space is freed (or reprocess it)";

/** Room a disk must have before videos that failed for lack of space are retried. */
export const MIN_FREE_BYTES = 256 * 1024 ** 2;

/** Queues the video's processing again (its waiting or running job cancelled); a failed video is 'processing' again at once, its error cleared. */
export async function requeueVideo(catalog: Catalog, video: Pick<VideoRow, 'id' | 'status'>): Promise<void> {
  await catalog.transaction(async (tx) => {
    await tx.queue.cancelFor(video.id);
    await tx.queue.enqueue('video.process', video.id);
    if (video.status === 'failed') await tx.videos.markProcessing(video.id);
  });
}

/** True when every one of `dirs` (that exists) is on a file system with at least `minFree` bytes available. */
export async function haveRoom(dirs: string[], minFree = MIN_FREE_BYTES): Promise<boolean> {
  for (const dir of dirs) {
    const st = await statfs(dir).catch(() => undefined);
    if (st && st.bavail * st.bsize < minFree) return false;
  }
  return true;
}

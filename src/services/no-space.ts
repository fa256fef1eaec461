/**
 * Videos that failed for lack of space (ENOSPC, "database or disk is full") are not failed for
 * good: their message says so, and idle workers queue them again once the disks have room
 * (`Jobs.retryNoSpace`), as `reprocess` does by hand. Both go through `requeueVideo`, which also
 * clears the old error, so the answer is the new state (docs/operations.md).
 */
import { statfs } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Catalog, VideoRow } from '../store/catalog/types.js';

/** The message of a video whose processing ran out of space. */
export const NO_SPACE_FAILURE = "the server's storage was full while processing this video; it is retried once space is freed (or reprocess it)";

/**
 * Room a disk must have before videos that failed for lack of space are retried: 256 MiB, or a
 * quarter of a smaller file system (a 200 MiB disk never has 256 MiB free).
 */
export const MIN_FREE_BYTES = 256 * 1024 ** 2;

/**
 * A disk with less room than this is full (calls that write answer 507): 16 MiB, or a sixteenth of
 * a smaller file system. /healthz says so and /readyz answers 503 (src/server/health.ts).
 */
export const FULL_BELOW_BYTES = 16 * 1024 ** 2;

/** What statfs says of a file system: its free blocks for us, all its blocks, their size. */
export type DiskStats = Pick<import('node:fs').StatsFs, 'bavail' | 'blocks' | 'bsize'>;
export type StatDisk = (dir: string) => Promise<DiskStats | undefined>;

const statDisk: StatDisk = (dir) => statfs(dir).catch(() => undefined);

/** The directories a library writes to on this machine: its home (the SQLite file, uploads), a directory blob store's root, the temp dir. */
export function libraryDirs(lib: { paths: { home: string }; blobPath?: (key: string) => string }): string[] {
  const dirs = [lib.paths.home, os.tmpdir()];
  if (lib.blobPath) dirs.push(path.dirname(lib.blobPath('probe')));
  return [...new Set(dirs)];
}

/**
 * Queues the video's processing again (its waiting or running job cancelled). A failed or processed
 * video is 'processing' again at once (progress 0, the old error cleared), so what the caller is
 * answered is the state it is now in; one still 'uploaded' waits for its first processing as it was.
 */
export async function requeueVideo(catalog: Catalog, video: Pick<VideoRow, 'id' | 'status'>): Promise<void> {
  await catalog.transaction(async (tx) => {
    await tx.queue.cancelFor(video.id);
    await tx.queue.enqueue('video.process', video.id);
    if (video.status !== 'uploaded') await tx.videos.markProcessing(video.id);
  });
}

/** True when every one of `dirs` (that exists) is on a file system with `minFree` bytes available (a quarter of a smaller one). */
export async function haveRoom(dirs: string[], minFree = MIN_FREE_BYTES, stat: StatDisk = statDisk): Promise<boolean> {
  for (const dir of dirs) {
    const st = await stat(dir);
    if (st && st.bavail * st.bsize < Math.min(minFree, (st.blocks * st.bsize) / 4)) return false;
  }
  return true;
}

/** How many of `dirs` (that exist) are on a full file system (FULL_BELOW_BYTES). */
export async function fullDisks(dirs: string[], stat: StatDisk = statDisk): Promise<number> {
  let full = 0;
  for (const dir of dirs) {
    const st = await stat(dir);
    if (st && st.bavail * st.bsize < Math.min(FULL_BELOW_BYTES, (st.blocks * st.bsize) / 16)) full++;
  }
  return full;
}

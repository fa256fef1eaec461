/**
 * Partial uploads: a multipart file is written to `uploads/<pid>.<id>.part` before the engine
 * takes it. A process killed mid-upload leaves its part behind; the server removes, at start,
 * every part whose process is gone (and parts from before the pid was in the name), never one a
 * live server on the same home is writing.
 */
import { readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { pidAlive } from '../runtime/processes.js';
import { newId } from '../store/ids.js';

export function partialUploadPath(uploadsDir: string): string {
  return path.join(uploadsDir, `${process.pid}.${newId('vid')}.part`);
}

/** Removes the parts no live process is writing; returns how many. */
export async function cleanPartialUploads(uploadsDir: string): Promise<number> {
  let removed = 0;
  for (const name of await readdir(uploadsDir).catch(() => [] as string[])) {
    if (!name.endsWith('.part')) continue;
    const pid = /^(\d+)\./.exec(name)?.[1];
    if (pid !== undefined && Number(pid) !== process.pid && pidAlive(Number(pid))) continue;
    await unlink(path.join(uploadsDir, name)).then(
      () => removed++,
      () => {},
    );
  }
  return removed;
}

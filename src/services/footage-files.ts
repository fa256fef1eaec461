/**
 * The user's footage on disk: which files are videos (by extension, for walking folders), walking
 * a folder, and the content fingerprint that knows a file indexed in place again after it was moved
 * or renamed (issue 22).
 */
import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import path from 'node:path';

/** File extensions taken from folders and globs (`upload DIR`, `rescan`). */
export const VIDEO_EXTENSIONS = ['.mp4', '.m4v', '.mov', '.mkv', '.webm', '.avi', '.ogv', '.ogg', '.mpg', '.mpeg', '.wmv', '.flv', '.3gp', '.mts', '.m2ts', '.ts', '.mxf'];

export const isVideoFile = (file: string): boolean => VIDEO_EXTENSIONS.includes(path.extname(file).toLowerCase());

/** Every regular file under `dir` (recursive), leaving out hidden names and never following symbolic links. */
export async function walkFiles(dir: string, out: string[] = []): Promise<string[]> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.')) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) await walkFiles(p, out);
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/** How much of each of the three places the fingerprint reads. */
export const FINGERPRINT_CHUNK = 1024 * 1024;

/**
 * The content fingerprint of a file indexed in place: `fp1:` and the SHA-256 of the text
 * `vidembed-fp1 <size>\n` followed by the first, middle and last MiB of the file (the whole file
 * when it is at most 3 MiB). Reading 3 MiB instead of the whole file keeps a rescan of terabytes
 * fast; video files that differ anywhere that matters differ in size or in those three places
 * (headers, index, and the middle of the picture data). A rename or move keeps it; a re-export,
 * a trim or an edit changes it.
 */
export async function fingerprintFile(file: string, size: number): Promise<string> {
  const hash = createHash('sha256').update(`vidembed-fp1 ${size}\n`);
  const fh = await open(file, 'r');
  try {
    const read = async (start: number, length: number) => {
      const buf = Buffer.alloc(length);
      const { bytesRead } = await fh.read(buf, 0, length, start);
      hash.update(buf.subarray(0, bytesRead));
    };
    if (size <= 3 * FINGERPRINT_CHUNK) await read(0, size);
    else {
      await read(0, FINGERPRINT_CHUNK);
      await read(Math.floor(size / 2 - FINGERPRINT_CHUNK / 2), FINGERPRINT_CHUNK);
      await read(size - FINGERPRINT_CHUNK, FINGERPRINT_CHUNK);
    }
  } finally {
    await fh.close();
  }
  return `fp1:${hash.digest('hex')}`;
}

/** A file's modification time as stored (ISO 8601, milliseconds). */
export const mtimeOf = (st: Stats): string => new Date(Math.floor(st.mtimeMs)).toISOString();

/**
 * The user's footage on disk: which files are videos (by extension, for walking folders), walking
 * a folder, and the content fingerprint that knows a file indexed in place again after it was moved
 * or renamed (issue 22).
 */
import { createHash } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { mkdtemp, open, readdir, readlink, realpath, rm, stat, symlink, type FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { NotFoundError } from '../api/errors.js';

/** A video's original file: where it is on this machine's disk, if it is, and its bytes by range. */
export interface VideoFile {
  filename: string;
  size: number;
  /** The file on this machine (a directory store, or a video stored before blob keys); none in an object store. */
  path?: string;
  /** Its bytes, or the bytes `start`..`end` (inclusive). At most one stream for a file opened in place. */
  open(range?: { start: number; end?: number }): import('node:stream').Readable;
  /** Lets go of a file opened in place when no stream was taken (a stream closes it when it ends). */
  release?(): Promise<void>;
}

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
  const fh = await open(file, 'r');
  try {
    return await fingerprintHandle(fh, size);
  } finally {
    await fh.close();
  }
}

/** The fingerprint (fingerprintFile) of an open file. */
export async function fingerprintHandle(fh: FileHandle, size: number): Promise<string> {
  const hash = createHash('sha256').update(`vidembed-fp1 ${size}\n`);
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
  return `fp1:${hash.digest('hex')}`;
}

/** A file's modification time as stored (ISO 8601, milliseconds). */
export const mtimeOf = (st: Stats): string => new Date(Math.floor(st.mtimeMs)).toISOString();

/**
 * Why a file indexed in place cannot be read now: it is gone, or the file at its path is not the
 * file that was indexed (replaced by a link elsewhere, out of the library's folders, or changed).
 * The message names the user's file, never where a link points.
 */
export class FootageUnavailableError extends NotFoundError {
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${file} ${reason}`);
  }
}

/** What a file indexed in place must still be, to be read. */
export interface FootageExpectation {
  /** The absolute path it was indexed at. */
  path: string;
  /** Its size when indexed (undefined: not known yet — a file being added). */
  size?: number;
  /** Its content fingerprint when indexed (checked with `content`). */
  fingerprint?: string | null;
  /**
   * Folders it must lie in after every link is followed (a server's library roots, a collection's
   * folders); none given: only where it was indexed counts.
   */
  roots?: string[];
  /** Folders it must never lie in (the library's own data: its database, keys, blobs). */
  forbidden?: string[];
  /** Check the content fingerprint too (before its bytes are read for a user or processed). */
  content?: boolean;
}

/** A file indexed in place, opened and checked: read it through this handle only. */
export interface OpenedFootage {
  /** Where the opened file really is (every link followed). */
  realPath: string;
  size: number;
  mtime: string;
  /**
   * A path that names exactly the opened file for another process (ffmpeg), with the file's own
   * name (ffmpeg's format hints, messages that name the user's file): on Linux a link in a
   * private temp folder to the descriptor's /proc entry, which a swap of the user's path after
   * the check cannot change; elsewhere the checked real path. Removed by close().
   */
  processPath(): Promise<string>;
  /** Its fingerprint (computed from the open file). */
  fingerprint(): Promise<string>;
  /** Its bytes, or `start`..`end` (inclusive); the handle closes when the stream ends. One stream per handle. */
  stream(range?: { start: number; end?: number }): import('node:stream').Readable;
  close(): Promise<void>;
}

const PROC_FD = process.platform === 'linux';

/** Fingerprints already verified, by the identity and state of the file (device, inode, size, times). */
const verified = new Map<string, string>();
const VERIFIED_MAX = 4096;

function inside(file: string, dirs: string[]): boolean {
  return dirs.some((d) => file === d || file.startsWith(d.endsWith(path.sep) ? d : d + path.sep));
}

/** Real paths of folders (a folder that does not exist stands for itself). */
export async function realDirs(dirs: string[]): Promise<string[]> {
  return Promise.all(dirs.map((d) => realpath(path.resolve(d)).catch(() => path.resolve(d))));
}

/**
 * Opens a file indexed in place and checks the OPENED file, not the path (issue 30): it must be a
 * regular file; where it really is (read from the open descriptor, so a link swapped in after the
 * check changes nothing) must be the path it was indexed at — or that path with the folders'
 * links as they are now — inside `roots` when given and never inside `forbidden`; its size and,
 * with `content`, its fingerprint must be those it was indexed with. Anything else is a
 * FootageUnavailableError with the reason. FIFOs and devices are refused without blocking.
 */
export async function openFootage(want: FootageExpectation): Promise<OpenedFootage> {
  const file = want.path;
  let fh: FileHandle;
  try {
    fh = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new FootageUnavailableError(file, code === 'ENOENT' || code === 'ENOTDIR' ? 'is not there any more (moved, renamed or deleted outside vidembed?): `vidembed rescan` follows moved files' : `cannot be opened (${code ?? 'error'})`);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new FootageUnavailableError(file, 'is not a regular file any more');
    const real = await openedRealPath(fh, file, st);
    const indexedHere = real === file || real === path.join(await realpath(path.dirname(file)).catch(() => path.dirname(file)), path.basename(file));
    if (!indexedHere) throw new FootageUnavailableError(file, 'was replaced by a link to another file: it is not served or read (`vidembed rescan` after putting the file back)');
    if (want.forbidden?.length && inside(real, await realDirs(want.forbidden))) throw new FootageUnavailableError(file, "lies inside the library's own data folder: it is not served or read");
    if (want.roots && !inside(real, await realDirs(want.roots))) throw new FootageUnavailableError(file, 'is outside the library folders: it is not served or read');
    if (want.size !== undefined && st.size !== want.size) throw new FootageUnavailableError(file, 'changed since it was indexed: `vidembed rescan` processes it again');
    const key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
    let fp: string | undefined = verified.get(key);
    const fingerprint = async () => {
      fp ??= await fingerprintHandle(fh, st.size);
      return fp;
    };
    if (want.content && want.fingerprint) {
      if ((await fingerprint()) !== want.fingerprint) throw new FootageUnavailableError(file, 'changed since it was indexed: `vidembed rescan` processes it again');
      if (verified.size >= VERIFIED_MAX) verified.delete(verified.keys().next().value!);
      verified.set(key, want.fingerprint);
    }
    let streamed = false;
    let linkDir: Promise<string> | undefined;
    return {
      realPath: real,
      size: st.size,
      mtime: mtimeOf(st),
      async processPath() {
        if (!PROC_FD) return real;
        linkDir ??= mkdtemp(path.join(os.tmpdir(), 'vidembed-footage-'));
        const link = path.join(await linkDir, path.basename(file));
        await symlink(`/proc/${process.pid}/fd/${fh.fd}`, link).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'EEXIST') throw err;
        });
        return link;
      },
      fingerprint,
      stream(range) {
        if (streamed) throw new Error('openFootage: one stream per handle');
        streamed = true;
        return fh.createReadStream({ ...(range ? { start: range.start, end: range.end } : {}), autoClose: true });
      },
      async close() {
        if (linkDir) await rm(await linkDir, { recursive: true, force: true }).catch(() => {});
        if (!streamed) await fh.close().catch(() => {});
      },
    };
  } catch (err) {
    await fh.close().catch(() => {});
    throw err;
  }
}

/**
 * Where an open file really is: on Linux the descriptor's own link in /proc (the file that was
 * opened, whatever the path names now); elsewhere the path's real path, accepted only when it is
 * the same file (device and inode) as the one opened.
 */
async function openedRealPath(fh: FileHandle, file: string, st: Stats): Promise<string> {
  if (PROC_FD) {
    const link = await readlink(`/proc/self/fd/${fh.fd}`).catch(() => undefined);
    if (link && !link.endsWith(' (deleted)')) return link;
    if (link) throw new FootageUnavailableError(file, 'was deleted while it was being opened');
  }
  const real = await realpath(file).catch(() => undefined);
  const now = real ? await stat(real).catch(() => undefined) : undefined;
  if (!real || !now || now.dev !== st.dev || now.ino !== st.ino) throw new FootageUnavailableError(file, 'changed while it was being opened');
  return real;
}

/**
 * Every regular file under `dir` (recursive, hidden names left out) for a scan in place, by real
 * path: a symbolic link is followed when it leads inside `roots` (a file, or a folder not walked
 * yet), and listed in `skipped` with the reason when it leads out or nowhere.
 */
export async function walkFootage(dir: string, roots: string[], skipped: (file: string, reason: string) => void): Promise<string[]> {
  const realRoots = await realDirs(roots);
  const out: string[] = [];
  const seen = new Set<string>();
  const walk = async (real: string) => {
    if (seen.has(real)) return;
    seen.add(real);
    for (const e of await readdir(real, { withFileTypes: true })) {
      if (e.name.startsWith('.')) continue;
      const p = path.join(real, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) out.push(p);
      else if (e.isSymbolicLink()) {
        const target = await realpath(p).catch(() => undefined);
        const st = target ? await stat(target).catch(() => undefined) : undefined;
        if (!target || !st) skipped(p, 'a link that leads nowhere');
        else if (!inside(target, realRoots)) skipped(p, 'a link out of the library folders');
        else if (st.isDirectory()) await walk(target);
        else if (st.isFile()) out.push(target);
      }
    }
  };
  await walk(await realpath(dir));
  return [...new Set(out)];
}

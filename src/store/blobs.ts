import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { PassThrough, type Readable } from 'node:stream';

/**
 * Where the library's files live, by key (never by a machine's path): uploaded videos
 * (`videos/<id>.<ext>`), thumbnails (`thumbs/<id>/…`), tensor payloads. `LocalBlobStore` is a
 * directory (`VIDEMBED_STORAGE_URL=file:///dir`, one every node mounts); `S3BlobStore`
 * (src/store/s3-blobs.ts, `s3://bucket/prefix`) is an S3-compatible bucket: `put`/`putFile` are
 * PUTs (multipart for large files), `get`/`stream` GETs, `has` a HEAD, `deletePrefix` a listing and
 * deletes, and `localFile` downloads to a temporary file for ffmpeg (and removes it in `release`).
 * `openBlobStore` (src/store/blob-stores.ts) picks one from VIDEMBED_STORAGE_URL.
 *
 * Both stores refuse a key outside `KEY_RE` ("bad blob key: …") and answer a missing key with a
 * `BlobNotFoundError` naming it (`get`, `stream`, `localFile`); `delete` and `deletePrefix` of
 * nothing are no error.
 */
export interface BlobStore {
  put(key: string, data: Buffer | Readable): Promise<void>;
  /** Stores a file's bytes under `key`; `move` lets the store take the file itself (same disk: a rename). */
  putFile(key: string, file: string, opts?: { move?: boolean }): Promise<void>;
  /** A file on this machine with the blob's bytes, for tools that read files (ffmpeg); `release` when done. */
  localFile(key: string): Promise<{ path: string; release(): Promise<void> }>;
  delete(key: string): Promise<void>;
  get(key: string): Promise<Buffer>;
  has(key: string): Promise<boolean>;
  /** The blob's bytes, or those from `start` to `end` (inclusive, as HTTP ranges and fs streams count). */
  stream(key: string, range?: { start: number; end?: number }): Readable;
  /** Removes every blob under `prefix` (a key's folder); nothing there is no error. */
  deletePrefix(prefix: string): Promise<void>;
  /** The bytes of every blob under `prefix` (a key's folder, as for deletePrefix); 0 when none (storage quotas). */
  bytesUnder(prefix: string): Promise<number>;
  /** Every blob under `prefix`'s folder with when it was last written (ms since the epoch), in no set order (retention). */
  listUnder(prefix: string): AsyncIterable<{ key: string; modifiedMs: number }>;
  /**
   * Optional: puts the blob `from` at `to` (replacing it) and removes `from`, cheaply (a rename).
   * Stores without it are moved by `moveBlob` (a copy, then a delete).
   */
  move?(from: string, to: string): Promise<void>;
}

/** Moves a blob to another key: the store's own move where it has one, else a streamed copy and a delete. */
export async function moveBlob(blobs: BlobStore, from: string, to: string): Promise<void> {
  if (blobs.move) return blobs.move(from, to);
  await blobs.put(to, blobs.stream(from));
  await blobs.delete(from);
}

export const KEY_RE = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_.-]+)*$/;

/** Throws "bad blob key" for a key outside KEY_RE or one that climbs out (`..`). */
export function checkBlobKey(key: string): string {
  if (!KEY_RE.test(key) || key.includes('..')) throw new Error(`bad blob key: ${key}`);
  return key;
}

/** No blob under this key; `code` is ENOENT, as a missing file's error is. */
export class BlobNotFoundError extends Error {
  readonly code = 'ENOENT';
  constructor(readonly key: string) {
    super(`no blob at key ${key}`);
    this.name = 'BlobNotFoundError';
  }
}

const isNotFound = (e: unknown) => (e as NodeJS.ErrnoException | null)?.code === 'ENOENT' || (e as NodeJS.ErrnoException | null)?.code === 'EISDIR';

export class LocalBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  private file(key: string): string {
    return path.join(this.root, checkBlobKey(key));
  }

  async put(key: string, data: Buffer | Readable): Promise<void> {
    const file = this.file(key);
    await mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    if (Buffer.isBuffer(data)) await writeFile(tmp, data);
    else await pipeline(data, createWriteStream(tmp));
    await rename(tmp, file);
  }

  async putFile(key: string, src: string, opts: { move?: boolean } = {}): Promise<void> {
    const file = this.file(key);
    await mkdir(path.dirname(file), { recursive: true });
    if (opts.move) {
      try {
        await rename(src, file);
        return;
      } catch {
        // another disk: copy below, then remove the source
      }
    }
    const tmp = `${file}.${process.pid}.tmp`;
    await copyFile(src, tmp);
    await rename(tmp, file);
    if (opts.move) await unlink(src).catch(() => {});
  }

  async localFile(key: string): Promise<{ path: string; release(): Promise<void> }> {
    const file = this.file(key);
    if (!(await this.has(key))) throw new BlobNotFoundError(key);
    return { path: file, release: async () => {} };
  }

  async delete(key: string): Promise<void> {
    await rm(this.file(key), { force: true });
  }

  async get(key: string): Promise<Buffer> {
    const file = this.file(key);
    try {
      return await readFile(file);
    } catch (e) {
      throw isNotFound(e) ? new BlobNotFoundError(key) : e;
    }
  }

  async has(key: string): Promise<boolean> {
    const file = this.file(key);
    try {
      return (await stat(file)).isFile();
    } catch {
      return false;
    }
  }

  stream(key: string, range?: { start: number; end?: number }): Readable {
    const src = createReadStream(this.file(key), range && { start: range.start, end: range.end });
    const out = new PassThrough();
    src.once('error', (e) => out.destroy(isNotFound(e) ? new BlobNotFoundError(key) : e));
    out.once('close', () => src.destroy());
    return src.pipe(out);
  }

  async deletePrefix(prefix: string): Promise<void> {
    await rm(this.file(prefix), { recursive: true, force: true });
  }

  async move(from: string, to: string): Promise<void> {
    const dest = this.file(to);
    await mkdir(path.dirname(dest), { recursive: true });
    try {
      await rename(this.file(from), dest);
    } catch (e) {
      throw isNotFound(e) ? new BlobNotFoundError(from) : e;
    }
  }

  async *listUnder(prefix: string): AsyncGenerator<{ key: string; modifiedMs: number }> {
    const walk = async function* (dir: string, key: string): AsyncGenerator<{ key: string; modifiedMs: number }> {
      for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) yield* walk(p, `${key}/${e.name}`);
        else if (e.isFile() && !e.name.endsWith('.tmp')) {
          const st = await stat(p).catch(() => undefined);
          if (st) yield { key: `${key}/${e.name}`, modifiedMs: st.mtimeMs };
        }
      }
    };
    yield* walk(this.file(prefix), prefix);
  }

  async bytesUnder(prefix: string): Promise<number> {
    const walk = async (p: string): Promise<number> => {
      const st = await stat(p).catch(() => undefined);
      if (!st) return 0;
      if (!st.isDirectory()) return st.size;
      let n = 0;
      for (const name of await readdir(p).catch(() => [] as string[])) n += await walk(path.join(p, name));
      return n;
    };
    return walk(this.file(prefix));
  }

  /** Where a key lives on disk (the local CLI shows it; other stores have no path). */
  pathOf(key: string): string {
    return this.file(key);
  }
}

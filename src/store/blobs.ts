import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, mkdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';

/**
 * Where the library's files live, by key (never by a machine's path): uploaded videos
 * (`videos/<id>.<ext>`), thumbnails (`thumbs/<id>/…`), tensor payloads. `LocalBlobStore` is a
 * directory (`VIDEMBED_STORAGE_URL=file:///dir`, one every node mounts). An S3-compatible store
 * fits the same calls: `put`/`putFile` are PUTs, `get`/`stream` GETs, `deletePrefix` a listing and
 * deletes, and `localFile` downloads to a temporary file for ffmpeg (and removes it in `release`).
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
  stream(key: string): Readable;
  /** Removes every blob under `prefix` (a key's folder); nothing there is no error. */
  deletePrefix(prefix: string): Promise<void>;
}

const KEY_RE = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_.-]+)*$/;

export class LocalBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  private file(key: string): string {
    if (!KEY_RE.test(key) || key.includes('..')) throw new Error(`bad blob key: ${key}`);
    return path.join(this.root, key);
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
    return { path: this.file(key), release: async () => {} };
  }

  async delete(key: string): Promise<void> {
    await rm(this.file(key), { force: true });
  }

  async get(key: string): Promise<Buffer> {
    return readFile(this.file(key));
  }

  async has(key: string): Promise<boolean> {
    try {
      return (await stat(this.file(key))).isFile();
    } catch {
      return false;
    }
  }

  stream(key: string): Readable {
    return createReadStream(this.file(key));
  }

  async deletePrefix(prefix: string): Promise<void> {
    await rm(this.file(prefix), { recursive: true, force: true });
  }

  /** Where a key lives on disk (the local CLI shows it; other stores have no path). */
  pathOf(key: string): string {
    return this.file(key);
  }
}

import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';

/**
 * Where tensor payloads live between upload and use. Local directory by default; an
 * S3-compatible store (R2) can implement the same four calls.
 */
export interface BlobStore {
  put(key: string, data: Buffer | Readable): Promise<void>;
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

import { Readable } from 'node:stream';
import { readFile } from 'node:fs/promises';
import { BlobNotFoundError, checkBlobKey, type BlobStore } from '../blobs.js';

/**
 * Blobs held in this process's memory, beside the in-memory catalog (tests of engine logic). Keys
 * follow the rules of every store (src/store/blobs.ts). It has no files: `localFile`, which only
 * ffmpeg needs, refuses, so a test that decodes media cannot run on it by mistake.
 */
export class MemoryBlobStore implements BlobStore {
  private readonly blobs = new Map<string, Buffer>();
  private readonly written = new Map<string, number>();

  /** The clock the store stamps writes with (tests of retention move it). */
  constructor(private readonly now: () => number = Date.now) {}

  private bytes(key: string): Buffer {
    const b = this.blobs.get(checkBlobKey(key));
    if (!b) throw new BlobNotFoundError(key);
    return b;
  }

  async put(key: string, data: Buffer | Readable): Promise<void> {
    checkBlobKey(key);
    if (Buffer.isBuffer(data)) {
      this.set(key, Buffer.from(data));
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of data) chunks.push(Buffer.from(c as Buffer));
    this.set(key, Buffer.concat(chunks));
  }

  private set(key: string, data: Buffer): void {
    this.blobs.set(key, data);
    this.written.set(key, this.now());
  }

  async putFile(key: string, file: string): Promise<void> {
    this.set(checkBlobKey(key), await readFile(file));
  }

  async *listUnder(prefix: string): AsyncGenerator<{ key: string; modifiedMs: number }> {
    for (const key of [...this.blobs.keys()]) if (key.startsWith(`${prefix}/`)) yield { key, modifiedMs: this.written.get(key) ?? 0 };
  }

  /**
   * No file on disk: `memory:<key>`, a name only the fake media of unit tests reads (from this
   * store: test/helpers/fake-media.ts). ffmpeg cannot open it: decoding media is for end-to-end tests.
   */
  async localFile(key: string): Promise<{ path: string; release(): Promise<void> }> {
    this.bytes(key);
    return { path: `memory:${key}`, release: async () => {} };
  }

  async move(from: string, to: string): Promise<void> {
    const b = this.bytes(from);
    this.set(checkBlobKey(to), b);
    this.blobs.delete(from);
  }

  async delete(key: string): Promise<void> {
    this.blobs.delete(checkBlobKey(key));
  }

  async get(key: string): Promise<Buffer> {
    return Buffer.from(this.bytes(key));
  }

  async has(key: string): Promise<boolean> {
    return this.blobs.has(checkBlobKey(key));
  }

  stream(key: string, range?: { start: number; end?: number }): Readable {
    const b = this.bytes(key);
    return Readable.from([range ? b.subarray(range.start, range.end === undefined ? undefined : range.end + 1) : b]);
  }

  async bytesUnder(prefix: string): Promise<number> {
    let n = 0;
    for (const [key, b] of this.blobs) if (key === prefix || key.startsWith(`${prefix}/`)) n += b.length;
    return n;
  }

  async deletePrefix(prefix: string): Promise<void> {
    for (const key of [...this.blobs.keys()]) if (key === prefix || key.startsWith(`${prefix}/`)) this.blobs.delete(key);
  }

  /** Every key held (tests check what was stored or freed). */
  keys(): string[] {
    return [...this.blobs.keys()].sort();
  }
}

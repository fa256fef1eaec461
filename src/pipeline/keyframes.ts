/**
 * A video's keyframes as the per-keyframe analyzers read them (one per segment, at the size the
 * decoder served: src/pipeline/pipeline.ts `onKeyframe`), kept losslessly so that such an analyzer
 * (ImageNet, on-screen text) can run again — after a model is pulled or its version changes —
 * without decoding the video, with the very pixels it would have read (src/pipeline/rerun.ts).
 *
 * One file per video: each keyframe's RGB rows, each row but the first as its difference to the
 * row above (PNG's "Up" filter: smooth pictures become runs of small numbers), deflated; then a
 * JSON index (times, sizes, offsets, the segment whose facts a keyframe reused); then the index's
 * length and the magic. Written one keyframe at a time to a file (memory holds one keyframe),
 * read back one keyframe at a time.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { promisify } from 'node:util';
import { deflate, inflate } from 'node:zlib';
import type { Frame } from '../media/types.js';

const MAGIC = Buffer.from('VKF1');
const deflateAsync = promisify(deflate);
const inflateAsync = promisify(inflate);
/** zlib level: 3 costs a quarter of 6's time for a few per cent more bytes. */
const LEVEL = 3;

export interface KeyframeEntry {
  idx: number;
  start: number;
  end: number;
  t: number;
  width: number;
  height: number;
  /** The segment whose keyframe facts this one reused (src/pipeline/keyframe-reuse.ts). */
  reuseFrom?: number;
  offset: number;
  length: number;
}

/** Rows as differences to the row above (in place on a copy), and back. */
export function filterUp(data: Uint8Array, width: number): Uint8Array {
  const stride = width * 3;
  const out = new Uint8Array(data.length);
  out.set(data.subarray(0, stride));
  for (let i = stride; i < data.length; i++) out[i] = (data[i] - data[i - stride]) & 0xff;
  return out;
}

export function unfilterUp(data: Uint8Array, width: number): Uint8Array {
  const stride = width * 3;
  const out = new Uint8Array(data.length);
  out.set(data.subarray(0, stride));
  for (let i = stride; i < data.length; i++) out[i] = (data[i] + out[i - stride]) & 0xff;
  return out;
}

/** Writes a video's keyframes to `file`, one at a time (`add`), then the index (`close`). */
export class KeyframeWriter {
  private fh: FileHandle | undefined;
  private offset = MAGIC.length;
  private readonly entries: KeyframeEntry[] = [];
  private chain: Promise<void> = Promise.resolve();

  constructor(readonly file: string) {}

  /** Queues one keyframe (its bytes are copied at once; the caller may release the frame). */
  add(k: { idx: number; start: number; end: number; frame: Frame; reuseFrom?: number }): Promise<void> {
    const filtered = filterUp(k.frame.data, k.frame.width);
    const { t, width, height } = k.frame;
    this.chain = this.chain.then(async () => {
      this.fh ??= await open(this.file, 'w');
      if (this.offset === MAGIC.length && this.entries.length === 0) await this.fh.write(MAGIC, 0, MAGIC.length, 0);
      const packed = await deflateAsync(filtered, { level: LEVEL });
      await this.fh.write(packed, 0, packed.length, this.offset);
      this.entries.push({ idx: k.idx, start: k.start, end: k.end, t, width, height, ...(k.reuseFrom !== undefined ? { reuseFrom: k.reuseFrom } : {}), offset: this.offset, length: packed.length });
      this.offset += packed.length;
    });
    return this.chain;
  }

  /** Writes the index and closes the file; the keyframes it holds, by idx. */
  async close(): Promise<number> {
    await this.chain;
    this.fh ??= await open(this.file, 'w');
    if (this.entries.length === 0) await this.fh.write(MAGIC, 0, MAGIC.length, 0);
    const index = Buffer.from(JSON.stringify({ version: 1, frames: this.entries }));
    const tail = Buffer.alloc(8);
    tail.writeUInt32LE(index.length, 0);
    MAGIC.copy(tail, 4);
    await this.fh.write(Buffer.concat([index, tail]), 0, index.length + tail.length, this.offset);
    await this.fh.close();
    this.fh = undefined;
    return this.entries.length;
  }

  /** Stops writing (the file stays for the caller to remove). */
  async abort(): Promise<void> {
    await this.chain.catch(() => {});
    await this.fh?.close().catch(() => {});
    this.fh = undefined;
  }
}

/** A keyframe file opened for reading: its index, and each keyframe's pixels on demand. */
export class KeyframeReader {
  private constructor(
    private readonly fh: FileHandle,
    readonly entries: KeyframeEntry[],
  ) {}

  static async open(file: string): Promise<KeyframeReader> {
    const fh = await open(file, 'r');
    try {
      const { size } = await fh.stat();
      const tail = Buffer.alloc(8);
      if (size < MAGIC.length + 8) throw new Error('too short');
      await fh.read(tail, 0, 8, size - 8);
      if (!tail.subarray(4).equals(MAGIC)) throw new Error('not a keyframe file');
      const len = tail.readUInt32LE(0);
      const index = Buffer.alloc(len);
      await fh.read(index, 0, len, size - 8 - len);
      const parsed = JSON.parse(index.toString('utf8')) as { version: number; frames: KeyframeEntry[] };
      if (parsed.version !== 1) throw new Error(`keyframe file version ${parsed.version}`);
      return new KeyframeReader(fh, parsed.frames);
    } catch (err) {
      await fh.close();
      throw new Error(`unreadable keyframe file: ${(err as Error).message}`, { cause: err });
    }
  }

  async frame(e: KeyframeEntry): Promise<Frame> {
    const packed = Buffer.alloc(e.length);
    await this.fh.read(packed, 0, e.length, e.offset);
    const filtered = await inflateAsync(packed);
    if (filtered.length !== e.width * e.height * 3) throw new Error(`keyframe ${e.idx} holds ${filtered.length} bytes, not ${e.width}x${e.height}x3`);
    return { t: e.t, width: e.width, height: e.height, data: unfilterUp(filtered, e.width) };
  }

  async close(): Promise<void> {
    await this.fh.close();
  }
}

/**
 * A video's keyframes as the per-keyframe analyzers read them (one per segment, at the size the
 * decoder served: src/pipeline/pipeline.ts `onKeyframe`), kept losslessly so that such an analyzer
 * (ImageNet, on-screen text) can run again — after a model is pulled or its version changes —
 * without decoding the video, with the very pixels it would have read (src/pipeline/rerun.ts).
 *
 * Two blobs per video: the frames (`frames.bin`: "VKF1", then each keyframe's RGB rows, each row
 * but the first as its difference to the row above — PNG's "Up" filter: smooth pictures become
 * runs of small numbers — deflated) and their index (`index.json`: times, sizes, offsets, the
 * segment whose facts a keyframe reused). Written one keyframe at a time to a file (memory holds
 * one keyframe); read back one keyframe at a time, by byte range, from any blob store.
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

  /** Closes the file; its index (what `KeyframeReader` reads the file with). */
  async close(): Promise<Buffer> {
    await this.chain;
    this.fh ??= await open(this.file, 'w');
    if (this.entries.length === 0) await this.fh.write(MAGIC, 0, MAGIC.length, 0);
    await this.fh.close();
    this.fh = undefined;
    return Buffer.from(JSON.stringify({ version: 1, frames: this.entries } satisfies KeyframeIndex));
  }

  /** Stops writing (the file stays for the caller to remove). */
  async abort(): Promise<void> {
    await this.chain.catch(() => {});
    await this.fh?.close().catch(() => {});
    this.fh = undefined;
  }
}

export interface KeyframeIndex {
  version: 1;
  frames: KeyframeEntry[];
}

/** Reads byte ranges of the frames file (`start`..`end` inclusive), wherever it is kept. */
export type RangeReader = (start: number, end: number) => Promise<Buffer>;

/** A video's keyframes for reading: their index, and each keyframe's pixels on demand. */
export class KeyframeReader {
  readonly entries: KeyframeEntry[];

  constructor(
    index: Buffer,
    private readonly read: RangeReader,
  ) {
    const parsed = JSON.parse(index.toString('utf8')) as KeyframeIndex;
    if (parsed.version !== 1) throw new Error(`keyframe index version ${String(parsed.version)}`);
    this.entries = parsed.frames;
  }

  async frame(e: KeyframeEntry): Promise<Frame> {
    const packed = await this.read(e.offset, e.offset + e.length - 1);
    if (packed.length !== e.length) throw new Error(`keyframe ${e.idx}: ${packed.length} of ${e.length} bytes`);
    const filtered = await inflateAsync(packed);
    if (filtered.length !== e.width * e.height * 3) throw new Error(`keyframe ${e.idx} holds ${filtered.length} bytes, not ${e.width}x${e.height}x3`);
    return { t: e.t, width: e.width, height: e.height, data: unfilterUp(filtered, e.width) };
  }
}

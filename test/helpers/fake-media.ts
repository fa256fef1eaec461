import { readFile, writeFile } from 'node:fs/promises';
import { MediaError } from '../../src/api/errors.js';
import type { MediaPort } from '../../src/media/port.js';
import type { Frame, ProbeResult, SampleOptions } from '../../src/media/types.js';
import type { MemoryBlobStore } from '../../src/store/memory/blobs.js';

/**
 * The media port without ffmpeg, for unit tests of services (src/media/port.ts): a "video file"
 * is a JSON recipe (`fakeVideo`) — seconds of solid colours, a soundtrack or none — and its frames,
 * soundtrack, thumbnails and probe follow from it, deterministically, in microseconds. Files are
 * read from disk or, for `memory:<key>` (MemoryBlobStore.localFile), from the memory store.
 * It counts what it was asked (`calls`), and the priority each soundtrack was decoded at (`nice`).
 */
export interface FakeVideo {
  seconds: number;
  width?: number;
  height?: number;
  /** Each second's colour (the last one repeats). */
  colours: Array<[number, number, number]>;
  /** A soundtrack: `tone` (sound throughout), `silence`; absent: no audio track. */
  audio?: 'tone' | 'silence';
  /** Fails like a broken file: `probe` (not media at all), `frames` (no frame decodes). */
  broken?: 'probe' | 'frames';
  /** The container and codec the probe reports (default mp4/h264: a browser plays it). */
  container?: string;
  videoCodec?: string;
}

export function fakeVideo(v: FakeVideo): Buffer {
  return Buffer.from(JSON.stringify({ fake_video: 1, ...v }));
}

/** Writes a fake video to `file` (uploads read a path). */
export async function writeFakeVideo(file: string, v: FakeVideo): Promise<string> {
  await writeFile(file, fakeVideo(v));
  return file;
}

export class FakeMedia implements MediaPort {
  readonly decodesOnThreads = false;
  readonly calls = { probe: 0, frames: 0, audio: 0, thumbnails: 0, proxy: 0 };
  readonly nice: number[] = [];
  /** Frames taken from each file (a test of "no decode" counts them). */
  framesRead = 0;

  constructor(private readonly blobs?: MemoryBlobStore) {}

  async read(file: string): Promise<FakeVideo> {
    const bytes = file.startsWith('memory:') && this.blobs ? await this.blobs.get(file.slice('memory:'.length)) : await readFile(file);
    let v: FakeVideo & { fake_video?: number };
    try {
      v = JSON.parse(bytes.toString('utf8')) as FakeVideo & { fake_video?: number };
    } catch {
      throw new MediaError(`${basename(file)} is not a video (not a fake video's recipe)`);
    }
    if (v.fake_video !== 1) throw new MediaError(`${basename(file)} is not a video`);
    return v;
  }

  async probe(file: string): Promise<ProbeResult> {
    this.calls.probe++;
    const v = await this.read(file);
    if (v.broken === 'probe') throw new MediaError(`${basename(file)}: Invalid data found when processing input`);
    return {
      durationSec: v.seconds,
      width: v.width ?? 64,
      height: v.height ?? 36,
      fps: 25,
      hasVideo: true,
      hasAudio: v.audio !== undefined,
      videoCodec: v.videoCodec ?? 'h264',
      ...(v.audio ? { audioCodec: 'aac' } : {}),
      pixFmt: 'yuv420p',
      container: v.container ?? 'mov,mp4,m4a,3gp,3g2,mj2',
      rotation: 0,
    };
  }

  async *frames(file: string, opts: SampleOptions): AsyncGenerator<Frame> {
    this.calls.frames++;
    const v = await this.read(file);
    if (v.broken) throw new MediaError(`${basename(file)}: no frame could be decoded`);
    const w0 = v.width ?? 64;
    const h0 = v.height ?? 36;
    const k = Math.min(1, opts.maxSide / Math.max(w0, h0));
    const width = Math.max(2, 2 * Math.round((w0 * k) / 2));
    const height = Math.max(2, 2 * Math.round((h0 * k) / 2));
    const step = 1 / opts.fps;
    for (let i = 0; i * step < v.seconds; i++) {
      if (opts.signal?.aborted) throw opts.signal.reason ?? new Error('aborted');
      const t = Math.round(i * step * 1000) / 1000;
      const [r, g, b] = v.colours[Math.min(Math.floor(t), v.colours.length - 1)];
      const data = new Uint8Array(width * height * 3);
      // A little texture (a gradient) so that frames are pictures, not flat fields.
      for (let y = 0; y < height; y++) {
        for (let x = 0; x < width; x++) {
          const p = (y * width + x) * 3;
          const d = (x + y) % 16;
          data[p] = Math.min(255, r + d);
          data[p + 1] = Math.min(255, g + d);
          data[p + 2] = Math.min(255, b + d);
        }
      }
      this.framesRead++;
      yield { t, width, height, data };
    }
  }

  async *audio(file: string, opts: { signal?: AbortSignal; nice?: number } = {}): AsyncGenerator<Buffer> {
    this.calls.audio++;
    this.nice.push(opts.nice ?? 0);
    const v = await this.read(file);
    if (!v.audio) return;
    const rate = 16000;
    for (let s = 0; s < Math.ceil(v.seconds); s++) {
      if (opts.signal?.aborted) throw opts.signal.reason ?? new Error('aborted');
      const n = Math.round(rate * Math.min(1, v.seconds - s));
      const buf = Buffer.alloc(n * 2);
      if (v.audio === 'tone') for (let i = 0; i < n; i++) buf.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * (300 + 50 * (i % 7)) * i) / rate)), i * 2);
      yield buf;
    }
  }

  async thumbnails(frames: Frame[]): Promise<Buffer[]> {
    this.calls.thumbnails++;
    return frames.map((f) => Buffer.from(`jpeg ${f.width}x${f.height} @${f.t}`));
  }

  async playbackProxy<T>(file: string, _name: string, use: (proxy: string) => Promise<T>): Promise<T> {
    this.calls.proxy++;
    const out = `${file}.proxy`;
    await writeFile(out, Buffer.from('proxy'));
    return use(out);
  }

  async assertVideo(file: string): Promise<void> {
    const v = await this.read(file);
    if (v.broken === 'probe') throw new MediaError(`${basename(file)} is not a video`);
  }
}

function basename(file: string): string {
  return file.replace(/^memory:/, '').split('/').pop() ?? file;
}

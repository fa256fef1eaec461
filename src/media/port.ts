/**
 * Media as a port: everything the engine asks of a video file — what it holds, its frames, its
 * soundtrack, thumbnails, a copy a browser plays, whether it is a video at all — behind one
 * interface, like the store. `ffmpegMedia` (ffmpeg-media.ts) is the one adapter that runs ffmpeg;
 * services take whatever the Library was given (tests: a fake that makes frames from a recipe,
 * test/helpers/fake-media.ts), so their logic is tested in milliseconds.
 *
 * Which file is opened is not this port's business: the Library hands it a path it has already
 * checked (src/services/library.ts localVideoFile).
 */
import type { DecodeTuning } from './frames.js';
import type { Frame, ProbeResult, SampleOptions } from './types.js';

export interface MediaPort {
  /** What the file holds (duration, size, streams); rejects with a MediaError when it is not media. */
  probe(file: string, opts?: { signal?: AbortSignal }): Promise<ProbeResult>;
  /** Frames sampled at `fps`, longest side `maxSide`, in time order, one at a time. */
  frames(file: string, opts: SampleOptions & DecodeTuning): AsyncIterable<Frame>;
  /**
   * The default soundtrack as 16 kHz mono s16le PCM, chunk by chunk (nothing when there is none).
   * `nice`: the decoder runs at that lower priority (the speech lane's).
   */
  audio(file: string, opts?: { signal?: AbortSignal; nice?: number }): AsyncIterable<Buffer>;
  /** One JPEG per frame (the keyframes' thumbnails). */
  thumbnails(frames: Frame[], opts?: { signal?: AbortSignal }): Promise<Buffer[]>;
  /**
   * Makes a copy of the video a browser plays, hands its path to `use` (which stores it) and
   * removes it afterwards. Rejects with a MediaError naming `name` when it cannot be made.
   */
  playbackProxy<T>(file: string, name: string, use: (proxy: string) => Promise<T>, opts?: { signal?: AbortSignal }): Promise<T>;
  /** Rejects with a MediaError naming `name` unless the file is a video (not text, a still, audio only). */
  assertVideo(file: string, name: string): Promise<void>;
  /**
   * True when the pipeline may decode the file on a worker thread of its own with this adapter's
   * decoder (ffmpeg: the pixel thread, src/pipeline/pixel-thread.ts); a fake is read on the caller's thread.
   */
  readonly decodesOnThreads: boolean;
}

/**
 * The frames of a video and what the {@link Segmenter} makes of them, as one stream of events for
 * the pipeline: each decoded frame (with its signature hash), each segment as soon as the cut
 * detector can close it, then the end (whole-video pixel tags, signature, duration).
 *
 * Two sources of the same events:
 * - {@link inThreadEvents}: the segmenter runs on the caller's thread, between the model calls.
 * - {@link workerThreadEvents}: a worker thread (node:worker_threads) reads ffmpeg's frames and runs
 *   the segmenter, then hands each frame over to the caller (its ArrayBuffer is transferred, not
 *   copied). The caller's thread is left to the models, ffmpeg decodes in its own process, and the
 *   pixel taggers use what is left of the cores. Reading ffmpeg's pipe in the worker also keeps
 *   ffmpeg decoding while the caller's thread is inside a long model call.
 *   Backpressure: the worker stops reading once `maxInFlight` frames are with the caller and not
 *   yet released (the pipeline releases a segment's frames once it has analysed it), so memory
 *   holds at most that many frames whatever the video's length.
 *
 * Worker threads are kept for the next video (unref'd: they never keep a process alive). The worker
 * script is the compiled `pixel-worker.js` beside this file, or under `dist/` when this file runs
 * from the TypeScript sources (vitest): run `npm run build` first.
 */
import { Worker } from 'node:worker_threads';
import * as errors from '../api/errors.js';
import { errorFromWire, type WireError } from '../api/errors.js';
import { abortReason } from '../media/ffmpeg.js';
import type { PHash } from '../media/phash.js';
import type { Frame } from '../media/types.js';
import type { VideoSignature } from '../duplicates/duplicates.js';
import { workerScript } from '../threads/worker-script.js';
import { Segmenter, type SegmenterOptions, type SegmentRange } from './segmenter.js';
import type { PixelWork } from '../analysis/types.js';
import type { FramingPixelCues } from '../tagging/framing.js';
import type { PixelTags } from '../tagging/index.js';
import type { HorizonEstimate } from '../tagging/pixels.js';

export type PixelEvent =
  | { kind: 'frame'; frame: Frame; hash?: PHash }
  | { kind: 'segment'; segment: SegmentRange }
  | { kind: 'end'; pixels: PixelTags | null; signature?: VideoSignature; duration: number };

/** A stream of events, and how the consumer gives frames back (backpressure; a no-op in-thread). */
export interface PixelEventSource {
  events: AsyncGenerator<PixelEvent>;
  release(frames: number): void;
  /** Pixel work the analyzers may hand to the worker thread while their models run (worker only). */
  pixelWork?: PixelWork;
}

/** The segmenter on the caller's thread, over any stream of frames. */
export function inThreadEvents(frames: AsyncIterable<Frame>, opts: SegmenterOptions): PixelEventSource {
  async function* run(): AsyncGenerator<PixelEvent> {
    const seg = new Segmenter(opts);
    for await (const frame of frames) {
      const r = seg.push(frame);
      if (!r) continue;
      yield { kind: 'frame', frame, hash: r.hash };
      for (const segment of r.segments) yield { kind: 'segment', segment };
    }
    const end = seg.finish();
    for (const segment of end.segments) yield { kind: 'segment', segment };
    yield { kind: 'end', pixels: end.pixels, signature: end.signature, duration: end.duration };
  }
  return { events: run(), release: () => {} };
}

// ---- the wire -------------------------------------------------------------------------------------

export interface PixelJob {
  file: string;
  /** sampleFrames options (the signal stays with the caller: `stop` aborts the decode). */
  sample: { fps: number; maxSide: number; fastDecode?: boolean };
  segmenter: SegmenterOptions;
  /** Frames handed over and not yet released before the worker stops reading. */
  maxInFlight: number;
}

export type ToWorker =
  | { type: 'start'; job: PixelJob }
  | { type: 'release'; frames: number }
  | { type: 'stop' }
  /** Horizon and framing cues of one frame (a copy of a keyframe the caller keeps using). */
  | { type: 'framing'; id: number; t: number; width: number; height: number; data: ArrayBuffer };

export type FromWorker =
  | { type: 'frame'; t: number; width: number; height: number; data: ArrayBuffer; hash?: PHash }
  | { type: 'segment'; segment: SegmentRange }
  | { type: 'end'; pixels: PixelTags | null; signature?: VideoSignature; duration: number }
  | { type: 'error'; error: WireError }
  /** The job is over (after `end`, `error` or a `stop`): the worker is free. */
  | { type: 'idle' }
  | { type: 'framing'; id: number; result?: { horizon: HorizonEstimate; cues: FramingPixelCues }; error?: WireError };

/** A frame's pixels as a buffer that can be transferred (copied only when the view does not own its buffer). */
export function transferable(data: Uint8Array): ArrayBuffer {
  if (data.byteOffset === 0 && data.byteLength === data.buffer.byteLength && data.buffer instanceof ArrayBuffer) return data.buffer;
  return data.slice().buffer as ArrayBuffer;
}

// ---- the worker threads --------------------------------------------------------------------------

function workerUrl(): URL {
  return workerScript(import.meta.url, 'src/pipeline/pixel-worker.js', (m) => new errors.VidembedError(`the pixel taggers' worker script: ${m}`));
}

/** Idle workers, kept for the next video (warm code). */
const idle: Worker[] = [];
const MAX_IDLE = 2;

function takeWorker(): Worker {
  const w = idle.pop();
  if (w) {
    w.ref();
    return w;
  }
  return new Worker(workerUrl());
}

function giveBack(w: Worker): void {
  if (idle.length >= MAX_IDLE) {
    void w.terminate();
    return;
  }
  w.removeAllListeners('message');
  w.unref();
  idle.push(w);
  // A worker that dies while idle is simply forgotten.
  w.removeAllListeners('error');
  w.removeAllListeners('exit');
  w.once('exit', () => {
    const i = idle.indexOf(w);
    if (i >= 0) idle.splice(i, 1);
  });
  w.on('error', () => {});
}

/** Terminates the idle workers (tests; a process exits without it). */
export async function closePixelWorkers(): Promise<void> {
  await Promise.all(idle.splice(0).map((w) => w.terminate()));
}

/** The segmenter in a worker thread that also decodes `job.file` (see the file header). */
export function workerThreadEvents(job: PixelJob, signal?: AbortSignal): PixelEventSource {
  const worker = takeWorker();
  const queue: FromWorker[] = [];
  let wake: (() => void) | undefined;
  let crashed: Error | undefined;
  let jobOver = false; // the worker said `idle`
  let done = false; // the consumer is finished with it
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const framings = new Map<number, { resolve: (r: { horizon: HorizonEstimate; cues: FramingPixelCues }) => void; reject: (e: Error) => void }>();
  let nextFraming = 0;
  const failFramings = (err: Error) => {
    for (const f of framings.values()) f.reject(err);
    framings.clear();
  };
  const onMessage = (m: FromWorker) => {
    if (m.type === 'framing') {
      const f = framings.get(m.id);
      framings.delete(m.id);
      if (m.result) f?.resolve(m.result);
      else f?.reject(errorFromWire(m.error ?? { name: 'Error', message: 'no framing result' }));
      return;
    }
    if (m.type === 'idle') {
      jobOver = true;
      if (done) giveBack(worker);
    } else queue.push(m);
    notify();
  };
  const onError = (err: Error) => {
    crashed = new errors.VidembedError(`the pixel taggers' worker thread failed: ${err.message}`, { cause: err });
    failFramings(crashed);
    notify();
  };
  const onExit = (code: number) => {
    crashed ??= new errors.VidembedError(`the pixel taggers' worker thread exited (code ${code})`);
    failFramings(crashed);
    notify();
  };
  worker.on('message', onMessage);
  worker.on('error', onError);
  worker.on('exit', onExit);
  const onAbort = () => {
    worker.postMessage({ type: 'stop' } satisfies ToWorker);
    notify();
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  worker.postMessage({ type: 'start', job } satisfies ToWorker);

  const finish = () => {
    if (done) return;
    done = true;
    failFramings(new errors.VidembedError('the video is no longer being analysed'));
    signal?.removeEventListener('abort', onAbort);
    worker.off('error', onError);
    worker.off('exit', onExit);
    if (crashed) {
      void worker.terminate();
      return;
    }
    if (jobOver) giveBack(worker);
    else worker.postMessage({ type: 'stop' } satisfies ToWorker); // given back when it says `idle`
  };

  async function* run(): AsyncGenerator<PixelEvent> {
    try {
      for (;;) {
        if (signal?.aborted) throw abortReason(signal);
        const m = queue.shift();
        if (!m) {
          if (crashed) throw crashed;
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          continue;
        }
        if (m.type === 'frame') {
          yield { kind: 'frame', frame: { t: m.t, width: m.width, height: m.height, data: new Uint8Array(m.data) }, hash: m.hash };
        } else if (m.type === 'segment') {
          yield { kind: 'segment', segment: m.segment };
        } else if (m.type === 'end') {
          yield { kind: 'end', pixels: m.pixels, signature: m.signature, duration: m.duration };
          return;
        } else if (m.type === 'error') {
          throw errorFromWire(m.error);
        }
      }
    } finally {
      finish();
    }
  }
  return {
    events: run(),
    release: (frames: number) => {
      if (!done && frames > 0) worker.postMessage({ type: 'release', frames } satisfies ToWorker);
    },
    pixelWork: {
      framing: (frame: Frame) =>
        new Promise((resolve, reject) => {
          if (done || crashed) {
            reject(crashed ?? new errors.VidembedError('the video is no longer being analysed'));
            return;
          }
          const id = nextFraming++;
          framings.set(id, { resolve, reject });
          const data = frame.data.slice().buffer as ArrayBuffer; // the caller's models read the frame meanwhile
          worker.postMessage({ type: 'framing', id, t: frame.t, width: frame.width, height: frame.height, data } satisfies ToWorker, [data]);
        }),
    },
  };
}

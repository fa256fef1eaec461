/**
 * Worker thread of the ingest pipeline (src/pipeline/pixel-thread.ts explains the protocol): decodes
 * a video with ffmpeg, runs the {@link Segmenter} (pixel taggers, cuts, signature) on every frame,
 * and transfers each frame to the main thread, which runs the models. One job at a time; between
 * frames it also measures the horizon and framing cues of keyframes the analyzers hand it.
 */
import { parentPort } from 'node:worker_threads';
import { sampleFrames } from '../media/frames.js';
import { framingPixelCues } from '../tagging/framing.js';
import { estimateHorizon } from '../tagging/pixels.js';
import { errorToWire } from '../api/errors.js';
import { transferable, type FromWorker, type PixelJob, type ToWorker } from './pixel-thread.js';
import { Segmenter } from './segmenter.js';

const port = parentPort;
if (!port) throw new Error('pixel-worker.js runs as a worker thread');

let job: { ac: AbortController; inFlight: number; wake?: () => void } | null = null;

const post = (m: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

port.on('message', (m: ToWorker) => {
  if (m.type === 'start') void run(m.job);
  else if (m.type === 'release') {
    if (!job) return;
    job.inFlight -= m.frames;
    job.wake?.();
  } else if (m.type === 'stop') {
    if (!job) return; // a stop that crossed the end of the job
    job.ac.abort();
    job.wake?.();
  } else if (m.type === 'framing') {
    // Runs between two frames of the decode (or while it waits for the caller).
    try {
      const frame = { t: m.t, width: m.width, height: m.height, data: new Uint8Array(m.data) };
      post({ type: 'framing', id: m.id, result: { horizon: estimateHorizon(frame), cues: framingPixelCues(frame) } });
    } catch (err) {
      post({ type: 'framing', id: m.id, error: errorToWire(err) });
    }
  }
});

async function run(spec: PixelJob): Promise<void> {
  const state: NonNullable<typeof job> = { ac: new AbortController(), inFlight: 0 };
  job = state;
  const { signal } = state.ac;
  try {
    const seg = new Segmenter(spec.segmenter);
    for await (const frame of sampleFrames(spec.file, { ...spec.sample, signal })) {
      const r = seg.push(frame);
      if (!r) continue;
      while (state.inFlight >= spec.maxInFlight && !signal.aborted) {
        await new Promise<void>((resolve) => {
          state.wake = resolve;
        });
        state.wake = undefined;
      }
      if (signal.aborted) break;
      const data = transferable(frame.data);
      state.inFlight++;
      post({ type: 'frame', t: frame.t, width: frame.width, height: frame.height, data, hash: r.hash }, [data]);
      for (const segment of r.segments) post({ type: 'segment', segment });
    }
    if (!signal.aborted) {
      const end = seg.finish();
      for (const segment of end.segments) post({ type: 'segment', segment });
      const sig = end.signature;
      post(
        { type: 'end', pixels: end.pixels, signature: sig, duration: end.duration },
        sig ? [sig.times.buffer as ArrayBuffer, sig.hashes.buffer as ArrayBuffer, sig.flat.buffer as ArrayBuffer] : [],
      );
    }
  } catch (err) {
    if (!signal.aborted) post({ type: 'error', error: errorToWire(err) });
  } finally {
    job = null;
    post({ type: 'idle' });
  }
}

/**
 * The pixel taggers in a worker thread (src/pipeline/pixel-thread.ts) give exactly what they give on
 * the pipeline's own thread: same segment boundaries, tags, confidences, vectors, whole-video pixel
 * tags and signature, on real clips made with the real ffmpeg (pans, a still shot and hard cuts),
 * and the same perception facts when the keyframes' framing cues are measured in the worker;
 * the same errors for files that are not videos; an abort stops the decode; the worker hands over
 * no more frames than the pipeline allows. Needs `npm run build` (the worker runs compiled code).
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PerceptionAnalyzer } from '../../src/analysis/perception.js';
import { analyzeVideo, type AnalyzedVideo } from '../../src/pipeline/pipeline.js';
import { closePixelWorkers, workerThreadEvents, type PixelEvent } from '../../src/pipeline/pixel-thread.js';
import type { Frame } from '../../src/media/types.js';
import type { Embedder, SegmentContext, SegmentEmbedding } from '../../src/embedders/types.js';
import { evalPhoto, evalPhotosDir, makeConcatClip, makePanClip, makeStillClip, makeTextFileAsMp4, makeZoomClip, removeDir, requireSharedData, tempDir } from '../helpers/clips.js';

const haveData = requireSharedData([evalPhotosDir]);

/** A model-free embedder wanting 512-px frames (what perception asks the decoder for). */
class PixelSumEmbedder implements Embedder {
  readonly id = 'pixel-sum-8';
  readonly dim = 8;
  readonly frameMaxSide = 512;
  async load(): Promise<void> {}
  async embedText(): Promise<never> {
    throw new Error('not used');
  }
  async embedSegment(frames: Frame[], ctx: SegmentContext): Promise<SegmentEmbedding> {
    const v = new Float32Array(this.dim);
    for (const f of frames) for (let i = 0; i < f.data.length; i += 7) v[i % this.dim] += f.data[i];
    const n = Math.hypot(...v) || 1;
    return { vector: v.map((x) => x / n), description: `${frames.length} frames at ${frames.map((f) => f.t).join(',')}`, details: { tags: ctx.tags } };
  }
  async dispose(): Promise<void> {}
}

/** Everything an ingest keeps, in a comparable form (CPU time is the only thing allowed to differ). */
function comparable(a: AnalyzedVideo) {
  const { cpuMs: _cpu, ...pixels } = a.pixels;
  return {
    media: a.media,
    segments: a.segments.map((s) => ({ ...s, vector: Array.from(s.vector) })),
    videoVector: Array.from(a.videoVector),
    pixels,
    signature: a.signature && { times: Array.from(a.signature.times), hashes: Array.from(a.signature.hashes), flat: Array.from(a.signature.flat) },
  };
}

describe.skipIf(!haveData)('pixel taggers in a worker thread', () => {
  let dir: string;
  let cuts: string;
  const embedder = new PixelSumEmbedder();

  beforeAll(async () => {
    dir = tempDir();
    const size = { width: 640, height: 360 };
    const pan = await makePanClip(evalPhoto('python3-skimage__astronaut'), path.join(dir, 'pan.mp4'), { ...size, seconds: 6, direction: 'right' });
    const still = await makeStillClip(evalPhoto('python3-skimage__coffee'), path.join(dir, 'still.mp4'), { ...size, seconds: 3, noise: 6 });
    const zoom = await makeZoomClip(evalPhoto('python3-skimage__rocket'), path.join(dir, 'zoom.mp4'), { ...size, seconds: 5, direction: 'in' });
    cuts = await makeConcatClip([pan, still, zoom], path.join(dir, 'cuts.mp4'));
  });

  afterAll(async () => {
    await closePixelWorkers();
    removeDir(dir);
  });

  it('gives the same segments, tags, vectors, pixel tags and signature as the in-thread path', async () => {
    const opts = { segmentSeconds: 4, fps: 1, signature: true };
    const inThread = await analyzeVideo(cuts, embedder, { ...opts, pixelThread: false });
    const worker = await analyzeVideo(cuts, embedder, { ...opts, pixelThread: true });
    // The clip really has cuts and several segments (else the comparison proves little).
    expect(inThread.pixels.cuts.length).toBeGreaterThanOrEqual(2);
    expect(inThread.segments.length).toBeGreaterThanOrEqual(4);
    expect(inThread.segments.map((s) => s.tags.camera_movement.label)).toContain('pan_right');
    expect(comparable(worker)).toEqual(comparable(inThread));
    // A worker kept from the first video gives the same again.
    expect(comparable(await analyzeVideo(cuts, embedder, { ...opts, pixelThread: true }))).toEqual(comparable(inThread));
  });

  it('with the real perception models (framing cues measured in the worker), gives the same facts, tags and details', async () => {
    const perception = new PerceptionAnalyzer({ frameMaxSide: 512 });
    await perception.load();
    const opts = { segmentSeconds: 4, fps: 1, analyzers: [perception] };
    const inThread = await analyzeVideo(cuts, embedder, { ...opts, pixelThread: false });
    const worker = await analyzeVideo(cuts, embedder, { ...opts, pixelThread: true });
    expect(inThread.segments.some((s) => (s.analysis.perception.details as { keyframes: Array<{ cues?: unknown }> }).keyframes[0].cues)).toBe(true);
    expect(comparable(worker)).toEqual(comparable(inThread));
  });

  it('fails with the same error on a file that is not a video', async () => {
    const bad = makeTextFileAsMp4(path.join(dir, 'text.mp4'));
    const a = await analyzeVideo(bad, embedder, { segmentSeconds: 4, fps: 1, pixelThread: false }).catch((e: Error) => e);
    const b = await analyzeVideo(bad, embedder, { segmentSeconds: 4, fps: 1, pixelThread: true }).catch((e: Error) => e);
    expect(a).toBeInstanceOf(Error);
    expect(b).toBeInstanceOf(Error);
    expect((b as Error).name).toBe((a as Error).name);
    expect((b as Error).message).toBe((a as Error).message);
  });

  it('stops on abort with the signal reason, and the worker serves the next video', async () => {
    const ac = new AbortController();
    const reason = new Error('stop now');
    let segments = 0;
    const slow: Embedder = Object.assign(Object.create(embedder) as Embedder, {
      embedSegment: async (frames: Frame[], ctx: SegmentContext) => {
        if (++segments === 1) ac.abort(reason);
        return embedder.embedSegment(frames, ctx);
      },
    });
    await expect(analyzeVideo(cuts, slow, { segmentSeconds: 4, fps: 1, pixelThread: true, signal: ac.signal })).rejects.toBe(reason);
    const after = await analyzeVideo(cuts, embedder, { segmentSeconds: 4, fps: 1, pixelThread: true });
    expect(after.segments.length).toBeGreaterThanOrEqual(4);
  });

  it('hands over at most maxInFlight frames that were not released', async () => {
    const maxInFlight = 5;
    const src = workerThreadEvents({ file: cuts, sample: { fps: 4, maxSide: 128 }, segmenter: { segmentSeconds: 4, fps: 1 }, maxInFlight });
    const it = src.events[Symbol.asyncIterator]();
    const frames: PixelEvent[] = [];
    while (frames.length < maxInFlight) {
      const r = await it.next();
      expect(r.done).toBe(false);
      if (r.value.kind === 'frame') frames.push(r.value);
    }
    // Nothing more comes until frames are released (the worker waits; no timing is asserted).
    const next = it.next();
    const nothing = await Promise.race([next.then(() => 'event'), new Promise((r) => setTimeout(() => r('waiting'), 300))]);
    expect(nothing).toBe('waiting');
    src.release(1);
    let r = await next;
    while (!r.done && r.value.kind !== 'frame') r = await it.next();
    expect(r.done).toBe(false);
    await it.return(undefined);
  });
});

/**
 * Keyframe reuse (src/pipeline/keyframe-reuse.ts): the thumbnail difference, which segments the
 * pipeline offers reuse to (always against the last *analysed* keyframe, never a reused one),
 * ImageNet reusing the classes it found with the same confidences, and — with the real perception
 * models and the real ffmpeg — a still clip whose facts, tags, descriptions and vectors are the
 * same with and without the skip, while a pan never reuses.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImagenetAnalyzer } from '../../src/analysis/imagenet.js';
import { PerceptionAnalyzer } from '../../src/analysis/perception.js';
import type { Analyzer, AnalyzerContext, AnalyzerOutput } from '../../src/analysis/types.js';
import { keyframeReuse } from '../../src/config.js';
import { KEYFRAME_REUSE, keyframeDiff, keyframeThumb } from '../../src/pipeline/keyframe-reuse.js';
import { analyzeFrames, analyzeVideo, type AnalyzedVideo } from '../../src/pipeline/pipeline.js';
import { closePixelWorkers } from '../../src/pipeline/pixel-thread.js';
import type { Frame } from '../../src/media/types.js';
import type { ImagenetClassifier } from '../../src/models/imagenet/classifier.js';
import { PerceptionEmbedder } from '../../src/embedders/perception.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { evalPhoto, evalPhotosDir, makePanClip, makeStillClip, removeDir, requireSharedData, tempDir } from '../helpers/clips.js';

/** A 64×36 frame: a diagonal gradient in 60..180 plus `lift` grey levels. */
function gradient(t: number, lift: number, width = 64, height = 36): Frame {
  const data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const v = 60 + Math.round((120 * (x + y)) / (width + height)) + lift;
      data.set([v, v, v], (y * width + x) * 3);
    }
  }
  return { t, width, height, data };
}

/** Records what the pipeline offered it; reuses when offered. */
class RecordingAnalyzer implements Analyzer {
  readonly name = 'recording';
  readonly version = '1';
  readonly frameMaxSide = 64;
  readonly offers: Array<number | undefined> = [];
  async load(): Promise<void> {}
  async analyzeSegment(frames: Frame[], ctx: AnalyzerContext): Promise<AnalyzerOutput> {
    this.offers.push(ctx.reuse?.from);
    const prev = ctx.reuse?.analysis[this.name];
    if (prev && ctx.reuse) return { ...prev, details: { reused_from: ctx.reuse.from } };
    return { facts: [{ kind: 'thing', label: `seen at ${frames[frames.length >> 1].t}`, confidence: 0.5 }] };
  }
  async dispose(): Promise<void> {}
}

describe('keyframe reuse', () => {
  it('measures the mean absolute difference of 32-px grey thumbnails', () => {
    const a = keyframeThumb(gradient(0, 0));
    expect(keyframeDiff(a, keyframeThumb(gradient(1, 0)))).toBe(0);
    expect(keyframeDiff(a, keyframeThumb(gradient(1, 10)))).toBeCloseTo(10 / 255, 6);
    expect(keyframeDiff(a, keyframeThumb(gradient(1, 0, 66, 36)))).toBe(1); // another frame size never matches
    expect(keyframeReuse({})).toBe(true);
    expect(keyframeReuse({ VIDEMBED_KEYFRAME_REUSE: '0' })).toBe(false);
  });

  it('offers reuse against the last analysed keyframe, so a slow drift cannot chain', async () => {
    // Each segment is a little brighter: 0.6 x the threshold from the previous one, 1.2 x from two back.
    const step = Math.ceil(0.6 * KEYFRAME_REUSE.maxDiff * 255);
    const frames: Frame[] = [];
    for (let s = 0; s < 5; s++) for (let k = 0; k < 4; k++) frames.push(gradient(s + k / 4, s * step));
    const rec = new RecordingAnalyzer();
    const run = (keyframeReuse: boolean) => analyzeFrames(frames, new FakeEmbedder(), { segmentSeconds: 1, fps: 1, analyzers: [rec], keyframeReuse });
    const out = await run(true);
    expect(out.segments).toHaveLength(5);
    // 0 analysed; 1 reuses 0; 2 is 1.2 x from 0: analysed; 3 reuses 2; 4 analysed.
    expect(rec.offers).toEqual([undefined, 0, undefined, 2, undefined]);
    expect(out.segments.map((s) => s.details?.reused_from)).toEqual([undefined, 0, undefined, 2, undefined]);
    expect(out.segments[1].analysis.recording.facts).toEqual(out.segments[0].analysis.recording.facts);
    rec.offers.length = 0;
    await run(false);
    expect(rec.offers).toEqual([undefined, undefined, undefined, undefined, undefined]);
  });

  it('ImageNet reuses the classes it found, with the same confidences, without classifying', async () => {
    let calls = 0;
    const classifier = {
      version: 'fake',
      classify: async () => {
        calls++;
        return [{ label: 'tabby', synonyms: ['tabby', 'tabby cat'], p: 0.91234 }, { label: 'fig', synonyms: ['fig'], p: 0.04 }];
      },
      dispose: async () => {},
    } as unknown as ImagenetClassifier;
    const inet = new ImagenetAnalyzer(classifier);
    const first = await inet.analyzeSegment([gradient(0, 0)], { start: 0, end: 1 });
    const again = await inet.analyzeSegment([gradient(1, 1)], { start: 1, end: 2, reuse: { from: 0, analysis: { imagenet: first } } });
    expect(calls).toBe(1);
    expect(again.facts).toEqual(first.facts);
    expect(again.facts[0]).toMatchObject({ kind: 'thing', label: 'tabby cat', confidence: 0.912 });
    expect(again.details).toEqual({ ...first.details, reused_from: 0 });
    // No reuse offered (or nothing of its own to reuse): it classifies.
    await inet.analyzeSegment([gradient(2, 2)], { start: 2, end: 3, reuse: { from: 0, analysis: {} } });
    expect(calls).toBe(2);
  });
});

const haveData = requireSharedData([evalPhotosDir]);

describe.skipIf(!haveData)('keyframe reuse with the real perception models and ffmpeg', () => {
  let dir: string;
  let still: string;
  let pan: string;
  const perception = new PerceptionAnalyzer({ frameMaxSide: 512 });
  const embedder = new PerceptionEmbedder({}, undefined, perception);

  beforeAll(async () => {
    dir = tempDir();
    // A locked-off shot of a photo with people in it: one keyframe-interval, so every frame decodes the same.
    still = await makeStillClip(evalPhoto('opencv-doc__messi5'), path.join(dir, 'still.mp4'), { width: 640, height: 360, seconds: 12, gop: 300 });
    pan = await makePanClip(evalPhoto('opencv-doc__messi5'), path.join(dir, 'pan.mp4'), { width: 640, height: 360, seconds: 9, direction: 'right', pxPerSec: 60 });
    await embedder.load();
  });

  afterAll(async () => {
    await closePixelWorkers();
    removeDir(dir);
  });

  const run = (file: string, reuse: boolean): Promise<AnalyzedVideo> =>
    analyzeVideo(file, embedder, { segmentSeconds: 4, fps: 1, analyzers: [perception], keyframeReuse: reuse });
  const kept = (a: AnalyzedVideo) =>
    a.segments.map((s) => ({ start: s.start, end: s.end, facts: s.analysis.perception.facts, tags: s.tags, description: s.description, vector: Array.from(s.vector) }));

  it('a still clip gives the same facts, tags and vectors with and without the skip', async () => {
    perception.resetTimings();
    const fresh = await run(still, false);
    const detectorCalls = perception.timings.detector.calls;
    perception.resetTimings();
    const reused = await run(still, true);
    expect(fresh.segments.length).toBeGreaterThanOrEqual(3);
    expect(kept(reused)).toEqual(kept(fresh));
    expect(fresh.segments.every((s) => s.details?.reused_from === undefined)).toBe(true);
    expect(reused.segments.map((s) => s.details?.reused_from)).toEqual(reused.segments.map((_, i) => (i === 0 ? undefined : 0)));
    expect(perception.reused).toBe(reused.segments.length - 1);
    expect(perception.timings.detector.calls).toBe(detectorCalls - (reused.segments.length - 1));
    expect(kept(reused)[0].facts.map((f) => f.label)).toContain('person');
  });

  it('a pan reuses nothing', async () => {
    const out = await run(pan, true);
    expect(out.segments.length).toBeGreaterThanOrEqual(2);
    expect(out.segments.every((s) => s.details?.reused_from === undefined)).toBe(true);
  });
});

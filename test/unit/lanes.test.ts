/**
 * Capabilities on lanes, as the services run them (src/services/lane-*.ts), on fake media
 * (test/helpers/fake-media.ts), in-memory stores and fake models: a video is searchable by its
 * pictures before speech lands; either lane may settle first with the same result; a capability
 * that crashes fails only itself; a reindex runs only what changed, on the stored keyframes, and
 * gives what a fresh ingest gives; a delete while a lane runs leaves no file. Jobs are run one
 * at a time here (`step`), so the order of the lanes is the test's to choose.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobKind } from '../../src/api/defaults.js';
import type { Analyzer, AnalyzerContext, AnalyzerOutput } from '../../src/analysis/types.js';
import { builtinCapabilities, type CapabilityDecl } from '../../src/capabilities/index.js';
import type { Embedder, SegmentContext, SegmentEmbedding, TextEmbedding } from '../../src/embedders/types.js';
import type { Frame } from '../../src/media/types.js';
import { LocalEngine } from '../../src/runtime/engine.js';
import { SpeechAnalyzer } from '../../src/speech/analyzer.js';
import { parseDict, setDictForTests } from '../../src/speech/phonetic.js';
import type { SpeechEngine, SpokenWord } from '../../src/speech/types.js';
import { MemoryBlobStore } from '../../src/store/memory/blobs.js';
import { MemoryCatalog } from '../../src/store/memory/catalog.js';
import { FakeAnalyzer, meanColour } from '../helpers/fake-analyzer.js';
import { FakeMedia, writeFakeVideo, type FakeVideo } from '../helpers/fake-media.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'vidembed-lanes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Says "quarterly revenue grew" once per second of audio it is given. */
class SayingEngine implements SpeechEngine {
  readonly name = 'fake';
  readonly version = 'fake-1';
  readonly language = 'en';
  async transcribe(chunks: AsyncIterable<Buffer>, onWord: (w: SpokenWord) => void): Promise<void> {
    let t = 0;
    for await (const c of chunks) {
      for (const [i, w] of ['quarterly', 'revenue', 'grew'].entries()) onWord({ w, start: t + i * 0.3, end: t + i * 0.3 + 0.25, conf: 0.9 });
      t += c.length / 32000;
    }
  }
}

/** A keyframe classifier: the keyframe's strongest channel as a thing ("apple" red, "leaf" green, "sky" blue). */
class ThingsAnalyzer implements Analyzer {
  readonly name = 'things';
  readonly version = 'things-1';
  readonly frameMaxSide = 64;
  keyframes = 0;
  async load(): Promise<void> {}
  async analyzeSegment(frames: Frame[], ctx: AnalyzerContext): Promise<AnalyzerOutput> {
    const prev = ctx.reuse?.analysis.things;
    if (ctx.reuse && prev) return { facts: prev.facts.map((f) => ({ ...f })), details: { reused_from: ctx.reuse.from } };
    this.keyframes++;
    const [r, g, b] = meanColour([frames[frames.length >> 1]]);
    const names = ['apple', 'leaf', 'sky'];
    const i = [r, g, b].indexOf(Math.max(r, g, b));
    return { facts: [{ kind: 'thing', label: names[i], confidence: Math.round(Math.max(r, g, b) * 1000) / 1000 }] };
  }
  async dispose(): Promise<void> {}
}

/** The ImageNet-like capability: reads a keyframe, runs where "installed". */
function thingsCapability(a: ThingsAnalyzer, installed: { value: boolean }): CapabilityDecl {
  return {
    name: 'things',
    kind: 'frame',
    lane: 'pictures',
    outputs: ['facts'],
    wanted: 'when-read',
    media: () => ['keyframe'],
    inputs: () => ['pixels'],
    version: () => a.version,
    availability: () => (installed.value ? { available: true } : { available: false, reason: 'not installed: pull it' }),
    analyzer: async () => a,
  };
}

/** An embedder that pools facts (like the perception tier): a segment's vector from the words of its facts. */
class FactsEmbedder implements Embedder {
  readonly id = 'facts-16';
  readonly dim = 16;
  readonly frameMaxSide = 64;
  constructor(readonly consumes: readonly string[] = ['fake', 'things']) {}
  async load(): Promise<void> {}
  async embedText(text: string): Promise<TextEmbedding> {
    return { vector: vectorOf(text.split(/\s+/)), truncated: false };
  }
  async embedSegment(_frames: Frame[], ctx: SegmentContext): Promise<SegmentEmbedding> {
    const words = Object.values(ctx.analysis ?? {}).flatMap((a) => a.facts.map((f) => `${f.label}:${f.confidence}`));
    return { vector: vectorOf(words), description: words.join(', ') };
  }
  async dispose(): Promise<void> {}
}

function vectorOf(words: string[]): Float32Array {
  const v = new Float32Array(16);
  for (const w of words) {
    const h = createHash('sha256').update(w).digest();
    for (let i = 0; i < 16; i++) v[i] += (h[i] - 127.5) / 127.5;
  }
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}

interface Rig {
  engine: LocalEngine;
  catalog: MemoryCatalog;
  blobs: MemoryBlobStore;
  media: FakeMedia;
  things: ThingsAnalyzer;
  installed: { value: boolean };
}

function rig(extra: Analyzer[] = []): Rig {
  const catalog = new MemoryCatalog();
  const blobs = new MemoryBlobStore();
  const media = new FakeMedia(blobs);
  const things = new ThingsAnalyzer();
  const installed = { value: true };
  const capabilities = builtinCapabilities({ analyzers: [new FakeAnalyzer(), ...extra], speechFor: () => new SpeechAnalyzer(new SayingEngine()) }).with([thingsCapability(things, installed)]);
  const embedder = new FactsEmbedder(['fake', 'things', ...extra.map((a) => a.name)]);
  const engine = new LocalEngine({
    home: path.join(dir, 'never-created'),
    catalog,
    blobs,
    media,
    capabilities,
    embedderFor: () => embedder,
    checkVideo: (f, name) => media.assertVideo(f, name),
  });
  return { engine, catalog, blobs, media, things, installed };
}

/** Runs one job of these kinds to its end (as a worker would); false when none is queued. */
async function step(r: Rig, kinds?: JobKind[]): Promise<boolean> {
  const job = await r.catalog.queue.claim('test-worker', 60_000, kinds);
  if (!job) return false;
  const ctx = { signal: new AbortController().signal, job: { id: job.id, token: job.token }, settled: false };
  const outcome = await r.engine.runJob(job, ctx);
  if (outcome === 'done' && !ctx.settled) await r.catalog.queue.complete(job.id, job.token);
  if (outcome === 'failed') await r.catalog.queue.fail(job.id, job.token, 'failed');
  return true;
}

async function drain(r: Rig, kinds?: JobKind[]): Promise<void> {
  while (await step(r, kinds));
}

let n = 0;
async function upload(r: Rig, collection: string, v: FakeVideo): Promise<string> {
  const file = await writeFakeVideo(path.join(dir, `v${++n}.mp4`), v);
  return (await r.engine.uploadVideo(collection, { path: file, filename: `clip${n}.mp4`, force: true })).video_id;
}

const CLIP: FakeVideo = { seconds: 12, colours: [[200, 20, 20], [200, 20, 20], [200, 20, 20], [200, 20, 20], [20, 200, 20], [20, 200, 20], [20, 200, 20], [20, 200, 20], [20, 20, 200]], audio: 'tone' };

/** What a video's segments hold, comparable across two ingests (ids and times of writing left out). */
async function contentOf(r: Rig, videoId: string) {
  const rows = await r.catalog.segments.listForVideo(videoId);
  const vectors = await r.catalog.segments.vectors(16, rows.map((x) => x.id));
  return rows.map((x) => ({ idx: x.idx, start: x.start, end: x.end, description: x.description, facts: x.facts_json, tags: x.tags_json, labels: x.labels, vector: [...vectors.get(x.id)!] }));
}

beforeEach(() => {
  setDictForTests(parseDict(['quarterly K W AO1 R T ER0 L IY0', 'revenue R EH1 V AH0 N UW2', 'grew G R UW1'].join('\n')));
});
afterEach(() => setDictForTests(undefined));

describe('lanes', () => {
  it('a video is searchable by its pictures before speech lands; its hits gain what was said once speech is merged', async () => {
    const r = rig();
    const col = (await r.engine.createCollection({ name: 'talks', model: 'facts-16' })).collection_id;
    const id = await upload(r, col, CLIP);
    expect(await step(r, ['video.process'])).toBe(true);
    const queued = await r.engine.videoStatus(id);
    expect(queued).toMatchObject({ status: 'processing', searchable: false });
    expect(Object.values(queued.analysis!).every((a) => a.status === 'pending')).toBe(true);
    expect(new Set(Object.values(queued.analysis!).map((a) => a.lane))).toEqual(new Set(['pictures', 'speech']));

    expect(await step(r, ['video.pictures'])).toBe(true);
    const pictures = await r.engine.videoStatus(id);
    expect(pictures).toMatchObject({ status: 'processing', searchable: true });
    expect(pictures.analysis!.speech).toMatchObject({ status: 'pending', lane: 'speech' });
    expect(pictures.analysis!.things).toMatchObject({ status: 'done', version: 'things-1' });
    const before = await r.engine.search(col, { text: 'apple', top_k: 3 });
    expect(before.results[0]?.video_id).toBe(id);
    expect((await r.engine.videoTranscript(id)).reason).toMatch(/not heard yet/);

    expect(await step(r, ['video.speech'])).toBe(true);
    const done = await r.engine.videoDetails(id);
    expect(done).toMatchObject({ status: 'processed', searchable: true });
    expect(done.analysis!.speech).toMatchObject({ status: 'done', version: 'fake-1+soundtrack-3' });
    expect(done.segments.every((s) => (s.tags as Record<string, { label: string }>).audio?.label === 'speech')).toBe(true);
    expect((done.tags as Record<string, { label: string }>).audio?.label).toBe('speech');
    expect((await r.engine.videoTranscript(id)).words.length).toBeGreaterThan(0);
    const said = await r.engine.search(col, { text: 'quarterly revenue grew', top_k: 3 });
    expect(said.results[0]).toMatchObject({ video_id: id, said: expect.objectContaining({ matched: ['quarterly', 'revenue', 'grew'] }) });
  });

  it('either lane may settle first: the segments, facts, keywords and vectors come out the same', async () => {
    const r = rig();
    const col = (await r.engine.createCollection({ name: 'order', model: 'facts-16' })).collection_id;
    const a = await upload(r, col, CLIP);
    const b = await upload(r, col, CLIP);
    await drain(r, ['video.process']);
    // a: pictures first; b: speech first (the picture lane then joins what was heard).
    const jobs = await r.catalog.queue.pending();
    const run = async (video: string, kind: JobKind) => {
      const j = jobs.find((x) => x.refId === video && x.kind === kind)!;
      const claimed = await r.catalog.queue.claim('w', 60_000, [kind]);
      expect(claimed?.id).toBe(j.id);
      const ctx = { signal: new AbortController().signal, job: { id: j.id, token: claimed!.token }, settled: false };
      expect(await r.engine.runJob(claimed!, ctx)).toBe('done');
    };
    await run(a, 'video.pictures');
    await run(a, 'video.speech');
    await run(b, 'video.speech');
    expect((await r.engine.videoStatus(b)).searchable).toBe(false);
    await run(b, 'video.pictures');
    expect(await contentOf(r, b)).toEqual(await contentOf(r, a));
    // What was said is indexed as spoken terms (`zw…`, src/speech/phonetic.ts), what was seen as words.
    const terms = await r.catalog.segments.termMatches(col, ['zwquarterly', 'apple'], 100);
    for (const t of ['zwquarterly', 'apple']) expect(new Set((await r.catalog.segments.videosOf(col, terms.get(t)!)).values())).toEqual(new Set([a, b]));
  });

  it('a capability that crashes fails only itself: the video is processed and searchable, its vectors made without it', async () => {
    class Crashy extends FakeAnalyzer {
      calls = 0;
      override async analyzeSegment(frames: Frame[], ctx: AnalyzerContext): Promise<AnalyzerOutput> {
        if (++this.calls === 2) throw new Error('the model ran out of memory');
        return { facts: [{ kind: 'mood', label: 'cheerful', confidence: 0.9 }], ...(await super.analyzeSegment(frames, ctx)).tags };
      }
    }
    const r = rig([new Crashy('crashy')]);
    const col = (await r.engine.createCollection({ name: 'crash', model: 'facts-16' })).collection_id;
    const id = await upload(r, col, CLIP);
    await drain(r);
    const d = await r.engine.videoDetails(id);
    expect(d).toMatchObject({ status: 'processed', searchable: true });
    expect(d.analysis!.crashy).toMatchObject({ status: 'failed', message: 'the model ran out of memory' });
    expect(d.analysis!.fake).toMatchObject({ status: 'done' });
    expect(d.segments.length).toBeGreaterThan(1);
    for (const s of d.segments) expect(Object.keys(s.facts ?? {})).not.toContain('crashy');
    // The same video without the crashing analyzer: the same vectors.
    const plain = rig();
    const c2 = (await plain.engine.createCollection({ name: 'plain', model: 'facts-16' })).collection_id;
    const id2 = await upload(plain, c2, CLIP);
    await drain(plain);
    expect((await contentOf(r, id)).map((s) => s.vector)).toEqual((await contentOf(plain, id2)).map((s) => s.vector));
  });

  it('a picture lane that makes no segments fails the video, naming its file; the speech lane then has nothing to do', async () => {
    const r = rig();
    const col = (await r.engine.createCollection({ name: 'broken', model: 'facts-16' })).collection_id;
    const id = await upload(r, col, { ...CLIP, broken: 'frames' });
    await drain(r);
    const st = await r.engine.videoStatus(id);
    expect(st).toMatchObject({ status: 'failed', searchable: false, error_message: expect.stringMatching(/no frame could be decoded/) });
    expect(st.analysis!.pixels.status).toBe('failed');
    expect(st.analysis!.speech).toMatchObject({ status: 'skipped', reason: 'the video could not be analysed' });
    expect(await r.catalog.queue.pendingCount()).toBe(0);
    expect(r.blobs.keys().filter((k) => !k.startsWith('videos/'))).toEqual([]);
  });

  it('the speech lane decodes the soundtrack at its lower priority (nice 10); the picture lane at the worker\'s', async () => {
    const r = rig();
    const col = (await r.engine.createCollection({ name: 'nice', model: 'facts-16' })).collection_id;
    await upload(r, col, CLIP);
    await drain(r);
    expect(r.media.nice).toEqual([10]);
    expect(r.media.calls.audio).toBe(1);
  });
});

describe('reindex: only what changed runs again', () => {
  it('after a model is installed: that capability, the vectors and the keywords, on the stored keyframes — the same as a fresh ingest', async () => {
    const r = rig();
    r.installed.value = false;
    const col = (await r.engine.createCollection({ name: 'pull', model: 'facts-16' })).collection_id;
    const id = await upload(r, col, CLIP);
    await drain(r);
    expect((await r.engine.videoStatus(id)).analysis!.things).toMatchObject({ status: 'skipped', reason: 'not installed: pull it' });
    expect((await r.engine.reindexCollection(col)).queued).toBe(0); // nothing changed yet

    r.installed.value = true; // "models pull"
    const framesBefore = r.media.framesRead;
    const audioBefore = r.media.calls.audio;
    const res = await r.engine.reindexCollection(col);
    expect(res).toMatchObject({ queued: 1, video_ids: [id], decodes: 0, capabilities: { things: 1, embedding: 1, keywords: 1 } });
    expect((await r.engine.videoStatus(id)).analysis!.things.status).toBe('pending');
    expect((await r.engine.videoStatus(id)).analysis!.perception).toBeUndefined(); // (fake analyzers here: `fake` stands)
    expect((await r.engine.videoStatus(id)).analysis!.fake.status).toBe('done');
    await drain(r);
    expect(r.media.framesRead).toBe(framesBefore); // no decode
    expect(r.media.calls.audio).toBe(audioBefore); // speech did not run again
    expect(await r.engine.videoStatus(id)).toMatchObject({ status: 'processed', analysis: expect.objectContaining({ things: expect.objectContaining({ status: 'done' }) }) });

    // A fresh ingest with the model installed from the start.
    const fresh = rig();
    const c2 = (await fresh.engine.createCollection({ name: 'fresh', model: 'facts-16' })).collection_id;
    const id2 = await upload(fresh, c2, CLIP);
    await drain(fresh);
    const a = await contentOf(r, id);
    const b = await contentOf(fresh, id2);
    expect(a.map(({ vector: _v, ...rest }) => rest)).toEqual(b.map(({ vector: _v, ...rest }) => rest));
    for (const [i, s] of a.entries()) for (const [k, x] of s.vector.entries()) expect(Math.abs(x - b[i].vector[k])).toBeLessThan(1e-5);
    // Keyframe reuse held: a keyframe nearly identical to the one before reused its things, as at ingest.
    expect(r.things.keyframes).toBe(fresh.things.keyframes);
    expect((await r.engine.reindexCollection(col)).queued).toBe(0);
  });

  it('--all runs everything again (with a decode); a failed capability runs again by itself', async () => {
    const r = rig();
    const col = (await r.engine.createCollection({ name: 'all', model: 'facts-16' })).collection_id;
    const id = await upload(r, col, CLIP);
    await drain(r);
    const res = await r.engine.reindexCollection(col, { all: true });
    expect(res).toMatchObject({ queued: 1, decodes: 1 });
    expect(Object.keys(res.capabilities!).sort()).toEqual(['embedding', 'fake', 'keywords', 'levels', 'pixels', 'signature', 'speech', 'things'].sort());
    const frames = r.media.framesRead;
    await drain(r);
    expect(r.media.framesRead).toBeGreaterThan(frames);
    await r.catalog.analysis.set(id, [{ capability: 'levels', status: 'failed', version: 'soundtrack-2', message: 'x' }]);
    expect((await r.engine.reindexCollection(col)).capabilities).toEqual({ levels: 1 });
  });
});

describe('nothing written for a video outlives it', () => {
  it('a delete while the picture lane runs: its settle is refused and what it staged goes; nothing of the video is left', async () => {
    const r = rig();
    const col = (await r.engine.createCollection({ name: 'gone', model: 'facts-16' })).collection_id;
    const id = await upload(r, col, CLIP);
    await drain(r, ['video.process']);
    const job = (await r.catalog.queue.claim('w', 60_000, ['video.pictures']))!;
    const ctx = { signal: new AbortController().signal, job: { id: job.id, token: job.token }, settled: false };
    const running = r.engine.runJob(job, ctx);
    await r.engine.deleteVideo(id);
    expect(await running).toBe('failed');
    await drain(r);
    expect(r.blobs.keys()).toEqual([]);
  });
});

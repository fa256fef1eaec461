/**
 * `video.pictures`: the picture lane of one video. It runs the lane's pending capabilities — at
 * ingest all of them, in one decode (src/pipeline/pipeline.ts); after a reindex only those that
 * changed, on the stored keyframes when that is all they read (src/pipeline/rerun.ts), else with a
 * decode of the whole lane — and settles them with the segments in one fenced transaction. What the
 * speech lane heard before it finished is joined in then; what it hears later, the speech lane
 * merges itself (lane-speech.ts).
 */
import { MediaError } from '../api/errors.js';
import type { Tags } from '../api/types.js';
import { analysisOf, keywordsOf, storedFacts } from '../analysis/keywords.js';
import { SettleAgain } from './lane-job.js';
import { frameAnalyzers, recipeOf, type CapabilityContext, type PlannedCapability } from '../capabilities/index.js';
import { storeSignature } from '../duplicates/duplicates.js';
import { phashToHex } from '../media/phash.js';
import { displaySize } from '../media/probe.js';
import { KeyframeWriter } from '../pipeline/keyframes.js';
import { keyframeReader } from './keyframe-source.js';
import { analyzeVideo, type AnalyzedSegment, type AnalyzedVideo } from '../pipeline/pipeline.js';
import { rerunOnKeyframes, type StoredSegment } from '../pipeline/rerun.js';
import { buildTags, retagVideo } from '../pipeline/tags.js';
import type { CollectionRow, NewSegment, VideoRow } from '../store/catalog/types.js';
import { makeTempDir } from '../util/temp.js';
import { DEFAULTS } from '../config.js';
import { keepKeyframes } from '../env.js';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { StagedArtifacts, stagingPrefix, VIDEO_ARTIFACTS } from './artifacts.js';
import { LaneJob, type LaneRun } from './lane-job.js';
import { preparePlayback } from './playback.js';
import { heardTrack } from './lane-speech.js';
import type { JobContext } from './job-types.js';

export class PicturesLaneJob extends LaneJob {
  readonly lane = 'pictures' as const;

  protected async work(run: LaneRun, ctx: JobContext): Promise<void> {
    const { lib } = this;
    const { video, collection, plan, capCtx, mine } = run;
    const embedder = lib.embedder(collection.model);
    if (video.size_bytes === 0) throw new MediaError(`${video.filename} is empty (0 bytes)`);
    const staged = new StagedArtifacts(lib.blobs, stagingPrefix(ctx.job));
    run.onEnd(() => staged.discard());
    const keyframesOnly = await this.keyframesSuffice(run);
    if (keyframesOnly) return this.rerun(run, ctx, staged);

    // The whole lane, from a decode: every capability of it runs (the segments are made anew).
    const lane = plan.filter((p) => p.lane === 'pictures');
    run.running(lane.filter((p) => p.available).map((p) => p.name));
    const { analyzers, missing } = await frameAnalyzers(lib.capabilities, plan, capCtx, new Set(lane.map((p) => p.name)));
    const file = await lib.localVideoFile(video);
    run.onEnd(() => file.release());
    run.redactAs(file.path, video.filename);
    const tmp = await makeTempDir('job');
    run.onEnd(() => rm(tmp, { recursive: true, force: true }));
    const keyframes = keepKeyframes() ? new KeyframeWriter(path.join(tmp, 'keyframes.bin')) : undefined;
    run.onEnd(async () => keyframes?.abort());
    const analyzed = await analyzeVideo(file.path, embedder, {
      analyzers,
      media: lib.media,
      thumbnails: true,
      signature: true,
      segmentSeconds: DEFAULTS.segmentSeconds,
      fps: DEFAULTS.fps,
      signal: ctx.signal,
      onProgress: (f) => run.progress(f),
      ...(keyframes ? { onKeyframe: (k) => keyframes.add(k) } : {}),
    });
    for (const [name, why] of missing) analyzed.failed.set(name, why);
    await this.stageThumbnails(staged, video.id, analyzed.segments.map((s) => s.thumbnail));
    staged.replaceFolder(VIDEO_ARTIFACTS.keyframes(video.id));
    if (keyframes) {
      const index = await keyframes.close();
      await staged.putFile(VIDEO_ARTIFACTS.keyframeFrames(video.id), keyframes.file, { move: true });
      await staged.put(VIDEO_ARTIFACTS.keyframeIndex(video.id), index);
    }
    // From the same file the analysis read (the video's source, wherever it is kept).
    const playback = await preparePlayback(staged, lib.media, video, file.path, analyzed.media, { signal: ctx.signal });
    const media = { duration: analyzed.media.durationSec, ...displaySize(analyzed.media), fps: analyzed.media.fps, codec: analyzed.media.videoCodec, playback };

    // What the speech lane heard already is joined now; what it hears later it merges itself.
    const versions = new Map(plan.map((p) => [p.name, p.version]));
    const states = lane.map((p) => (p.available ? (analyzed.failed.has(p.name) ? run.failedState(p, analyzed.failed.get(p.name)!) : run.doneState(p)) : run.skippedState(p)));
    let heard: Awaited<ReturnType<typeof heardTrack>> | undefined;
    await run.settle(
      async (tx) => {
        await heard!.check(tx);
        const segments = analyzed.segments.map((s) => ({ ...s, analysis: { ...s.analysis }, tags: { ...s.tags } }));
        heard!.join(segments);
        const tags = JSON.stringify(buildTags({ ...analyzed, segments }, embedder.id));
        await tx.segments.replaceForVideo(video.id, collection.id, collection.dim, toNewSegments(segments, versions));
        if (analyzed.signature) await storeSignature(tx, video.id, analyzed.signature);
        await tx.videos.setMediaInfo(video.id, media);
        await tx.collections.setRecipe(collection.id, recipeFor(await tx.collections.byId(collection.id), capCtx, plan));
        return { states, tagsJson: tags };
      },
      staged,
      async () => {
        heard = await heardTrack(lib, run);
      },
    );
  }

  /**
   * True when every pending capability of this lane reads at most a keyframe and the video's
   * keyframes and outputs are stored: then no decode is needed.
   */
  private async keyframesSuffice(run: LaneRun): Promise<boolean> {
    const { lib } = this;
    if (!run.mine.length) return false;
    for (const name of run.mine) {
      const d = lib.capabilities.get(name);
      if (d.media(run.capCtx).some((m) => m !== 'keyframe')) return false;
    }
    if (!(await lib.blobs.has(VIDEO_ARTIFACTS.keyframeIndex(run.video.id)))) return false;
    const rows = await lib.catalog.segments.listForVideo(run.video.id);
    // Segments from before their outputs were kept whole (descriptions, terms) cannot be made again from them.
    return rows.length > 0 && rows.every((r) => r.facts_json && Object.values(JSON.parse(r.facts_json) as Record<string, { facts?: unknown }>).every((o) => Array.isArray(o.facts)));
  }

  /** Runs the pending capabilities on the stored keyframes and the stored outputs of the others. */
  private async rerun(run: LaneRun, ctx: JobContext, staged: StagedArtifacts): Promise<void> {
    const { lib } = this;
    const { video, collection, plan, capCtx, mine } = run;
    const embedder = lib.embedder(collection.model);
    const rerunSet = new Set(mine);
    const available = plan.filter((p) => rerunSet.has(p.name) && p.available);
    run.running(available.map((p) => p.name));
    const { analyzers, missing } = await frameAnalyzers(lib.capabilities, plan, capCtx, rerunSet);
    const rows = await lib.catalog.segments.listForVideo(video.id);
    const vectors = await lib.catalog.segments.vectors(collection.dim, rows.map((r) => r.id));
    const stored: StoredSegment[] = rows.map((r) => ({
      idx: r.idx,
      start: r.start,
      end: r.end,
      // What a capability that now re-runs, or is skipped now, said before goes.
      analysis: Object.fromEntries(Object.entries(analysisOf(r.facts_json)).filter(([n]) => !rerunSet.has(n))),
      tags: r.tags_json ? JSON.parse(r.tags_json) : {},
      ...(r.details_json ? { details: JSON.parse(r.details_json) as Record<string, unknown> } : {}),
      description: r.description,
      vector: vectors.get(r.id)!,
      ...(r.phash ? { phash: r.phash } : {}),
    }));
    const reader = await keyframeReader(lib.blobs, video.id);
    const failed = new Map(missing);
    const order = plan.map((p) => p.name);
    const frameCaps = new Set(plan.filter((p) => p.kind === 'frame').map((p) => p.name));
    const segments = await rerunOnKeyframes(reader, stored, { analyzers, embedder: rerunSet.has('embedding') ? embedder : undefined, order, frameCapabilities: frameCaps, signal: ctx.signal, onProgress: (f) => run.progress(f) }, failed);
    const versions = new Map(plan.map((p) => [p.name, p.version]));
    // A stored output keeps the version that made it.
    for (const r of rows) for (const [n, v] of Object.entries(JSON.parse(r.facts_json ?? '{}') as Record<string, { version?: string }>)) if (!rerunSet.has(n)) versions.set(n, v.version ?? '');
    const states = plan.filter((p) => rerunSet.has(p.name)).map((p) => (p.available ? (failed.has(p.name) ? run.failedState(p, failed.get(p.name)!) : run.doneState(p)) : run.skippedState(p)));
    const ids = rows.map((r) => r.id).join(',');
    await run.settle(async (tx) => {
      // Another lane revised the segments meanwhile (speech landed): do it again on theirs.
      if ((await tx.segments.listForVideo(video.id)).map((r) => r.id).join(',') !== ids) throw new SettleAgain('the segments changed while the lane ran');
      const newSegs = toNewSegments(segments, versions).map((s, i) => ({ ...s, ...(stored[i].phash ? { phash: stored[i].phash } : {}) }));
      await tx.segments.replaceForVideo(video.id, collection.id, collection.dim, newSegs);
      const old = (await tx.videos.byId(video.id))?.tags_json;
      const tagsJson = old ? JSON.stringify(retagVideo(JSON.parse(old) as Tags, segments)) : undefined;
      await tx.collections.setRecipe(collection.id, recipeFor(await tx.collections.byId(collection.id), capCtx, plan));
      return { states, ...(tagsJson !== undefined ? { tagsJson } : {}) };
    }, staged);
  }

  /** Keyframe thumbnails of a video's segments and its poster (the middle segment's), staged. */
  private async stageThumbnails(staged: StagedArtifacts, videoId: string, jpegs: (Buffer | undefined)[]): Promise<void> {
    const dir = VIDEO_ARTIFACTS.thumbs(videoId);
    staged.replaceFolder(dir);
    for (const [i, jpeg] of jpegs.entries()) if (jpeg) await staged.put(`${dir}/${i}.jpg`, jpeg);
    const poster = jpegs[jpegs.length >> 1] ?? jpegs.find(Boolean);
    if (poster) await staged.put(`${dir}/poster.jpg`, poster);
  }
}

/** Segments as the store takes them: each capability's output kept whole, the keywords of all of them. */
export function toNewSegments(segments: AnalyzedSegment[], versions: ReadonlyMap<string, string>): NewSegment[] {
  return segments.map((s) => ({
    idx: s.idx,
    start: s.start,
    end: s.end,
    description: s.description,
    details: s.details,
    keywords: keywordsOf(s.analysis),
    facts: storedFacts(s.analysis, versions),
    tags: s.tags, // every tag kind's label is filterable (src/store/segments.ts NewSegment.tags)
    phash: s.phash && !s.phash.flat ? phashToHex(s.phash) : undefined,
    vector: s.vector,
  }));
}

/** The collection's recipe with what this plan made its vectors with (the speech setting and language kept). */
export function recipeFor(collection: Pick<CollectionRow, 'recipe_json'> | undefined, ctx: CapabilityContext, plan: PlannedCapability[]): Record<string, string> {
  const old = collection?.recipe_json ? (JSON.parse(collection.recipe_json) as Record<string, string>) : {};
  const consumed = new Set(ctx.embedder.consumes ?? []);
  const kept = Object.fromEntries(Object.entries(old).filter(([k]) => !consumed.has(k)));
  return { ...kept, ...recipeOf(ctx.embedder, plan) };
}

export type { AnalyzedVideo, VideoRow };

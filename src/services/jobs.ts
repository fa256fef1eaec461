/**
 * One handler per job kind (`video.process`, `task.embedding`, `task.tagging`), run by workers
 * (src/runtime/worker.ts). Each writes its results only while its claim still holds the job (the
 * fencing token), and completes the job in the same transaction as its results.
 */
import os from 'node:os';
import { MediaError, VidembedError, errorMessage } from '../api/errors.js';
import type { AsyncSubmitRequest, TensorRef } from '../api/types.js';
import { keywordsOf, recipeOf, storedFacts } from '../analysis/keywords.js';
import { displaySize } from '../media/probe.js';
import { phashToHex } from '../media/phash.js';
import type { QueuedJob } from '../store/queue/types.js';
import { asNoSpace, asUnavailable } from '../store/unavailable.js';
import { haveRoom, NO_SPACE_FAILURE, requeueVideo } from './no-space.js';
import { joinTaskPayload, taskBlobPrefix } from './task-payloads.js';
import type { CatalogTx } from '../store/catalog/types.js';
import { DEFAULTS } from '../config.js';
import { storeSignature } from '../duplicates/duplicates.js';
import { analyzeVideo } from '../pipeline/pipeline.js';
import { buildTags } from '../pipeline/tags.js';
import { speechLanguageOf, speechSettingOf, storeTranscript } from '../speech/store.js';
import type { AnalysisService } from './analysis.js';
import { preparePlayback } from './playback.js';
import type { Library } from './library.js';
import { emitTaskEvent, emitVideoEvent, failTask, failVideo } from './webhook-events.js';

export interface JobContext {
  signal: AbortSignal;
  /** The claim the work runs under: its results land only while the token still holds the job. */
  job?: { id: string; token: number };
  /** Set by the handler when it settled the job itself, in the transaction of its results. */
  settled?: boolean;
}

export type JobOutcome = 'done' | 'failed';

/** What a job kind's handler does with one claimed job, and with its subject when the queue gives up. */
export interface JobHandler {
  run(refId: string, ctx: JobContext): Promise<JobOutcome>;
  fail(refId: string, message: string): Promise<void>;
}

/**
 * Writes `write`'s results and completes the job in one transaction, only while the claim holds
 * it: a worker whose lease passed to another claim writes nothing, and one killed after the commit
 * leaves nothing to redo. Without a claim (a direct call) the results just land.
 */
async function settle(lib: Library, ctx: JobContext, write: (tx: CatalogTx) => Promise<void>): Promise<JobOutcome> {
  const held = await lib.catalog.transaction(async (tx) => {
    if (ctx.job && !(await tx.queue.complete(ctx.job.id, ctx.job.token))) return false;
    await write(tx);
    return true;
  });
  if (held && ctx.job) ctx.settled = true;
  return held ? 'done' : 'failed';
}

function failureMessage(err: unknown): string {
  if (err instanceof VidembedError) return err.message;
  return `internal error: ${errorMessage(err)}`;
}

/** `video.process`: analyses a stored video and replaces its segments, vectors, tags and thumbnails. */
export class VideoProcessJob implements JobHandler {
  constructor(private readonly lib: Library) {}

  async run(videoId: string, ctx: JobContext): Promise<JobOutcome> {
    const { lib } = this;
    const video = await lib.catalog.videos.byId(videoId);
    if (!video) return 'failed';
    const collection = await lib.catalog.collections.byId(video.collection_id);
    if (!collection) return 'failed';
    await lib.catalog.videos.markProcessing(videoId);
    let file: { path: string; release(): Promise<void> } | undefined;
    try {
      const embedder = lib.embedder(collection.model);
      if (video.size_bytes === 0) throw new MediaError(`${video.filename} is empty (0 bytes)`);
      const analyzers = await lib.analyzersFor(embedder);
      const speechSetting = speechSettingOf(collection.recipe_json);
      const speech = lib.speechFor(speechSetting, speechLanguageOf(collection.recipe_json));
      file = await lib.localVideoFile(video);
      const analyzed = await analyzeVideo(file.path, embedder, {
        analyzers,
        speech,
        thumbnails: true,
        signature: true,
        segmentSeconds: DEFAULTS.segmentSeconds,
        fps: DEFAULTS.fps,
        signal: ctx.signal,
        onProgress: (f) => void lib.catalog.videos.setProgress(videoId, f * 99).catch(() => {}),
      });
      await this.storeThumbnails(videoId, analyzed.segments.map((s) => s.thumbnail));
      await storeTranscript(lib.blobs, videoId, analyzed.transcript ?? { engine: '', language: '', words: [], duration: analyzed.media.durationSec, reason: analyzed.noTranscript ?? 'no speech analysis' });
      // From the same file the analysis read (the video's source, wherever it is kept).
      const playback = await preparePlayback(lib.blobs, video, file.path, analyzed.media, { signal: ctx.signal });
      await lib.catalog.videos.setMediaInfo(videoId, {
        duration: analyzed.media.durationSec,
        ...displaySize(analyzed.media),
        fps: analyzed.media.fps,
        codec: analyzed.media.videoCodec,
        playback,
      });
      const segments = analyzed.segments.map((s) => ({
        idx: s.idx,
        start: s.start,
        end: s.end,
        description: s.description,
        details: s.details,
        keywords: keywordsOf(s.analysis),
        facts: storedFacts(s.analysis, [...analyzers, speech]),
        tags: s.tags, // every tag kind's label is filterable (src/store/segments.ts NewSegment.tags)
        phash: s.phash && !s.phash.flat ? phashToHex(s.phash) : undefined,
        vector: s.vector,
      }));
      return await settle(lib, ctx, async (tx) => {
        await tx.segments.replaceForVideo(videoId, collection.id, collection.dim, segments);
        if (analyzed.signature) await storeSignature(tx, videoId, analyzed.signature);
        await tx.videos.markProcessed(videoId, JSON.stringify(buildTags(analyzed, embedder.id)));
        await emitVideoEvent(tx, 'video.processed', videoId); // webhooks: the outbox row, in this transaction
        await tx.collections.setRecipe(collection.id, { ...recipeOf(embedder, analyzers), speech_setting: speechSetting, speech: speech.version });
      });
    } catch (err) {
      // Shutdown, or the store out of reach: the job goes back to the queue (the worker waits for the store).
      if (ctx.signal.aborted || asUnavailable(err)) throw err;
      // Out of space: a message the retry sweep recognizes (no-space.ts), not a failure for good.
      await failVideo(lib.catalog, videoId, asNoSpace(err) ? NO_SPACE_FAILURE : failureMessage(lib.redact(err, file ? [[file.path, video.filename]] : [])));
      await lib.catalog.signatures.delete(videoId); // an upload's quick signature stands for nothing now
      return 'failed';
    } finally {
      await file?.release();
    }
  }

  async fail(videoId: string, message: string): Promise<void> {
    await failVideo(this.lib.catalog, videoId, message);
  }

  /** Keyframe thumbnails of a video's segments and its poster (the middle segment's), in the blob store. */
  private async storeThumbnails(videoId: string, jpegs: (Buffer | undefined)[]): Promise<void> {
    const { blobs } = this.lib;
    await blobs.deletePrefix(`thumbs/${videoId}`);
    for (const [i, jpeg] of jpegs.entries()) if (jpeg) await blobs.put(`thumbs/${videoId}/${i}.jpg`, jpeg);
    const poster = jpegs[jpegs.length >> 1] ?? jpegs.find(Boolean);
    if (poster) await blobs.put(`thumbs/${videoId}/poster.jpg`, poster);
  }
}

/** `task.embedding` and `task.tagging`: a submitted task's result, fenced like a video's. */
export class TaskJob implements JobHandler {
  constructor(
    private readonly lib: Library,
    private readonly analysis: AnalysisService,
  ) {}

  async run(requestId: string, ctx: JobContext): Promise<JobOutcome> {
    const { lib, analysis } = this;
    const task = await lib.catalog.tasks.byId(requestId);
    if (!task) return 'failed';
    await lib.catalog.tasks.markProcessing(requestId);
    const payload = taskBlobPrefix(task.owner, task.id);
    try {
      const req = await joinTaskPayload(lib.blobs, task.request_json);
      const tensor = req.tensor ? (req as AsyncSubmitRequest & { tensor: TensorRef }) : undefined;
      let result: unknown;
      if (task.kind === 'tagging') {
        result = tensor ? await analysis.tagTensor(tensor, ctx.signal) : await analysis.tagVideo(req, { signal: ctx.signal });
      } else {
        const res = tensor ? await analysis.encodeTensor(tensor, ctx.signal) : await analysis.encodeVideo(req, { signal: ctx.signal });
        result = { embedding: res.video_embedding, embeddings: res.embeddings, segments: res.segments, model: res.model, dim: res.dim };
      }
      const outcome = await settle(lib, ctx, async (tx) => {
        await tx.tasks.complete(requestId, result);
        await emitTaskEvent(tx, 'task.done', requestId); // webhooks: the outbox row, in this transaction
      });
      if (outcome === 'done') await lib.blobs.deletePrefix(payload); // the result stays; the payload is done with
      return outcome;
    } catch (err) {
      if (ctx.signal.aborted || asUnavailable(err)) throw err;
      await failTask(lib.catalog, requestId, failureMessage(lib.redact(err, [])));
      await lib.blobs.deletePrefix(payload);
      return 'failed';
    }
  }

  async fail(requestId: string, message: string): Promise<void> {
    await failTask(this.lib.catalog, requestId, message);
    const task = await this.lib.catalog.tasks.byId(requestId);
    if (task) await this.lib.blobs.deletePrefix(taskBlobPrefix(task.owner, task.id));
  }
}

/** The handlers by job kind, and what workers call. */
export class Jobs {
  private readonly handlers: Record<string, JobHandler>;

  constructor(
    private readonly lib: Library,
    analysis: AnalysisService,
  ) {
    const task = new TaskJob(lib, analysis);
    this.handlers = { 'video.process': new VideoProcessJob(lib), 'task.embedding': task, 'task.tagging': task };
  }

  /** Runs one claimed job to its end state. Never throws for a failure of the work itself. */
  async run(job: Pick<QueuedJob, 'kind' | 'refId'>, ctx: JobContext): Promise<JobOutcome> {
    const handler = this.handlers[job.kind];
    return handler ? handler.run(job.refId, ctx) : 'failed';
  }

  /** Marks the subject of a job failed (used when the queue gives up on a job). */
  async failSubject(job: Pick<QueuedJob, 'kind' | 'refId'>, message: string): Promise<void> {
    await this.handlers[job.kind]?.fail(job.refId, message);
  }

  /**
   * Fails the videos and tasks that no job will finish any more: their job was failed (or gave
   * up) but the process stopped before it could fail them too. Workers run it when they start and
   * every 30 s while idle. Returns how many it failed.
   */
  async failStranded(): Promise<number> {
    const why = (lastError: string | null) => `processing stopped: ${lastError ?? 'its job was lost'}`;
    const videos = await this.lib.catalog.videos.stranded();
    for (const v of videos) await failVideo(this.lib.catalog, v.id, why(v.last_error));
    const tasks = await this.lib.catalog.tasks.stranded();
    for (const t of tasks) await failTask(this.lib.catalog, t.id, why(t.last_error));
    return videos.length + tasks.length;
  }

  /**
   * Queues again the videos that failed for lack of space, once the home's and the temp dir's disks
   * have room (`room` decides; tests pass their own). Workers run it while idle. Returns how many.
   */
  async retryNoSpace(room: () => Promise<boolean> = () => haveRoom([this.lib.paths.home, os.tmpdir()]), limit = 100): Promise<number> {
    const ids = await this.lib.catalog.videos.failedWith(NO_SPACE_FAILURE, limit);
    if (ids.length === 0 || !(await room())) return 0;
    for (const id of ids) await requeueVideo(this.lib.catalog, { id, status: 'failed' });
    await this.lib.onWorkQueued();
    return ids.length;
  }

  /**
   * Loads the embedders the library's collections use (a warm process does this once, so the
   * first search it answers for the CLI is as quick as the next). Failures are left for the call
   * that needs the model to report.
   */
  async preloadEmbedders(): Promise<void> {
    const models = new Set((await this.lib.catalog.collections.list(1000, 0)).map((c) => c.model));
    for (const id of models) await this.lib.embedder(id).load().catch(() => {});
  }
}

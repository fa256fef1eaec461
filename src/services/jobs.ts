/**
 * One handler per job kind (`video.process` plans a video's lanes, `video.pictures` and
 * `video.speech` run them, `task.embedding`, `task.tagging`), run by workers
 * (src/runtime/worker.ts). Each writes its results only while its claim still holds the job (the
 * fencing token), and completes the job in the same transaction as its results.
 */
import os from 'node:os';
import { JOB_KINDS, type JobKind } from '../api/defaults.js';
import type { AsyncSubmitRequest, TensorRef } from '../api/types.js';
import { LANES, type LaneDecl } from '../capabilities/index.js';
import type { QueuedJob } from '../store/queue/types.js';
import { asUnavailable } from '../store/unavailable.js';
import { haveRoom, NO_SPACE_FAILURE, requeueVideo } from './no-space.js';
import { joinTaskPayload, taskBlobPrefix } from './task-payloads.js';
import type { CatalogTx } from '../store/catalog/types.js';
import type { AnalysisService } from './analysis.js';
import type { Library } from './library.js';
import type { JobContext, JobHandler, JobOutcome } from './job-types.js';
import { failureMessage } from './lane-job.js';
import { PicturesLaneJob } from './lane-pictures.js';
import { SpeechLaneJob } from './lane-speech.js';
import { queueAnalysis } from './video-analysis.js';
import { sweepArtifacts } from './artifacts.js';
import { sweepTempDirs } from '../util/temp.js';
import { emitTaskEvent, failTask, failVideo } from './webhook-events.js';

export type { JobContext, JobHandler, JobOutcome } from './job-types.js';

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


/**
 * `video.process`: plans a video's analysis — every capability of its collection, as the registry
 * says now — and queues one job per lane (lane-pictures.ts, lane-speech.ts), in one fenced
 * transaction. Uploads, reprocessing and the retry after a full disk queue it; a reindex queues
 * the lanes of only what changed (src/services/collections.ts).
 */
export class VideoPlanJob implements JobHandler {
  constructor(private readonly lib: Library) {}

  async run(videoId: string, ctx: JobContext): Promise<JobOutcome> {
    const { lib } = this;
    const video = await lib.catalog.videos.byId(videoId);
    if (!video) return 'failed';
    const collection = await lib.catalog.collections.byId(video.collection_id);
    if (!collection) return 'failed';
    let plan;
    try {
      plan = await lib.capabilities.plan(lib.capabilityContext(collection));
    } catch (err) {
      if (ctx.signal.aborted || asUnavailable(err)) throw err;
      await failVideo(lib.catalog, videoId, failureMessage(lib.redact(err)));
      return 'failed';
    }
    return settle(lib, ctx, async (tx) => {
      await queueAnalysis(tx, { id: videoId, owner: collection.owner }, plan);
    });
  }

  async fail(videoId: string, message: string): Promise<void> {
    await failVideo(this.lib.catalog, videoId, message);
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
  private readonly handlers: Partial<Record<JobKind, JobHandler>> & Record<string, JobHandler | undefined>;

  constructor(
    private readonly lib: Library,
    analysis: AnalysisService,
  ) {
    const task = new TaskJob(lib, analysis);
    const lanes: Record<LaneDecl['jobKind'], JobHandler> = { 'video.pictures': new PicturesLaneJob(lib), 'video.speech': new SpeechLaneJob(lib) };
    this.handlers = { 'video.process': new VideoPlanJob(lib), ...lanes, 'task.embedding': task, 'task.tagging': task };
    // Every lane's job kind has a handler, and every kind a handler: checked now, not when a job comes.
    for (const lane of LANES) if (!this.handlers[lane.jobKind]) throw new Error(`lane "${lane.name}" runs jobs of kind ${lane.jobKind}, which no handler takes`);
    const missing = JOB_KINDS.filter((k) => !this.handlers[k]);
    if (missing.length) throw new Error(`no handler for job kind(s) ${missing.join(', ')}`);
  }

  /** The job kinds there are handlers for (what workers claim). */
  kinds(): JobKind[] {
    return Object.keys(this.handlers) as JobKind[];
  }

  /**
   * Runs one claimed job to its end state. Never throws for a failure of the work itself; a job of
   * a kind nobody handles (an older or newer release queued it) throws, naming it.
   */
  async run(job: Pick<QueuedJob, 'kind' | 'refId'>, ctx: JobContext): Promise<JobOutcome> {
    const handler = this.handlers[job.kind];
    if (!handler) throw new Error(`no handler for job kind "${job.kind}" (known: ${Object.keys(this.handlers).join(', ')})`);
    return handler.run(job.refId, ctx);
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
   * Removes what stopped processes left behind: this program's temp dirs of processes that are
   * gone (a playback copy's, a download's: src/util/temp.ts), staged files of jobs that no longer
   * run and files of videos that no longer exist (src/services/artifacts.ts; at most every
   * `artifactsEveryMs`, as it lists the blob store). Answers what it did, as log lines.
   */
  async sweepLeftovers(opts: { artifactsEveryMs?: number; graceMs?: number } = {}): Promise<string[]> {
    const out: string[] = [];
    const dirs = await sweepTempDirs();
    if (dirs.length) out.push(`removed ${dirs.length} temp dir(s) left by stopped processes`);
    const every = opts.artifactsEveryMs ?? 60 * 60_000;
    if (Date.now() - this.artifactsSweptAt >= every) {
      this.artifactsSweptAt = Date.now();
      const n = await sweepArtifacts(this.lib.blobs, this.lib.catalog, { graceMs: opts.graceMs });
      if (n) out.push(`removed ${n} file(s) or staging folder(s) of deleted videos and stopped jobs`);
    }
    return out;
  }

  private artifactsSweptAt = 0;

  /**
   * Loads the embedders the library's collections use (a warm process does this once, so the
   * first search it answers for the CLI is as quick as the next). Failures are left for the call
   * that needs the model to report.
   */
  async preloadEmbedders(): Promise<void> {
    const models = new Set((await this.lib.catalog.collections.list(1000, 0)).map((c) => c.model));
    for (const id of models) {
      // A model that is not installed (any more) throws at once: its videos fail with the fix in their message.
      await Promise.resolve()
        .then(() => this.lib.embedder(id).load())
        .catch(() => {});
    }
  }
}

/**
 * What every lane's job does around its work (lane-pictures.ts, lane-speech.ts): finds its
 * video's pending capabilities of its lane, marks them running, reports progress, and settles —
 * the lane's results, its capabilities' states and the video's status in one transaction, only
 * while the job's claim holds (the fencing token), the video held against the other lane's settle;
 * then moves what it staged into place. A lane that fails fails its own capabilities; the video
 * fails only when its picture lane could make no segments.
 */
import { errorMessage, VidembedError } from '../api/errors.js';
import { laneOf, type CapabilityContext, type LaneName, type PlannedCapability } from '../capabilities/index.js';
import type { CapabilityStateInput, CatalogTx, CollectionRow, VideoRow } from '../store/catalog/types.js';
import { asNoSpace, asUnavailable } from '../store/unavailable.js';
import type { StagedArtifacts } from './artifacts.js';
import type { JobContext, JobHandler, JobOutcome } from './job-types.js';
import type { Library } from './library.js';
import { NO_SPACE_FAILURE } from './no-space.js';
import { isOpen, progressOf, settleVideo } from './video-analysis.js';

/** Thrown inside a settle when what it read moved under it: the settle is made again (a few times). */
export class SettleAgain extends Error {
  constructor(why: string) {
    super(why);
    this.name = 'SettleAgain';
  }
}

const SETTLE_ATTEMPTS = 4;

export function failureMessage(err: unknown): string {
  if (err instanceof VidembedError) return err.message;
  return `internal error: ${errorMessage(err)}`;
}

/** One run of a lane on one video: what it works on, and the helpers its work uses. */
export class LaneRun {
  private readonly ends: Array<() => unknown> = [];
  private readonly names: [string, string][] = [];
  private lastProgress = 0;
  settled = false;

  constructor(
    private readonly lib: Library,
    readonly lane: LaneName,
    readonly video: VideoRow,
    readonly collection: CollectionRow,
    readonly plan: PlannedCapability[],
    readonly capCtx: CapabilityContext,
    /** This lane's capabilities still to run for the video. */
    readonly mine: string[],
    private readonly ctx: JobContext,
  ) {}

  /** Runs `f` when the run ends, whatever the outcome (last added first). */
  onEnd(f: () => unknown): void {
    this.ends.unshift(f);
  }

  async end(): Promise<void> {
    for (const f of this.ends.splice(0)) await Promise.resolve(f()).catch(() => {});
  }

  /** A path of this machine that an error message must name as the user's file. */
  redactAs(file: string, name: string): void {
    this.names.push([file, name]);
  }

  redact(err: unknown): unknown {
    return this.lib.redact(err, this.names);
  }

  /** Marks capabilities running (best effort: a settle writes their end state anyway). */
  running(names: string[]): void {
    if (!names.length) return;
    void this.lib.catalog.analysis
      .set(this.video.id, names.map((n) => ({ capability: n, status: 'running', version: this.plan.find((p) => p.name === n)?.version ?? null })))
      .catch(() => {});
  }

  /** The lane is `fraction` done: the video's progress is the mean of its lanes'. */
  progress(fraction: number): void {
    if (fraction - this.lastProgress < 0.01 && fraction < 1) return;
    this.lastProgress = fraction;
    const { catalog, capabilities } = this.lib;
    const lanes = new Map(capabilities.all().map((d) => [d.name, d.lane] as const));
    void catalog.analysis
      .forVideo(this.video.id)
      .then((rows) => catalog.videos.setProgress(this.video.id, progressOf(rows, lanes, this.lane, fraction)))
      .catch(() => {});
  }

  doneState(p: PlannedCapability): CapabilityStateInput {
    return { capability: p.name, status: 'done', version: p.version };
  }

  skippedState(p: PlannedCapability): CapabilityStateInput {
    return { capability: p.name, status: 'skipped', version: p.version, message: p.reason ?? null };
  }

  failedState(p: PlannedCapability, message: string): CapabilityStateInput {
    return { capability: p.name, status: 'failed', version: p.version, message: errorMessage(this.redact(new Error(message))) };
  }

  /**
   * Writes the lane's results (`write`, inside the transaction: store calls only), its
   * capabilities' states and the video's status, only while the claim holds the job, with the
   * video held; then moves the staged files into place. `write` may throw SettleAgain when what it
   * (or `prepare`) read before moved: the settle is made again, `prepare` first.
   */
  async settle(
    write: (tx: CatalogTx) => Promise<{ states: CapabilityStateInput[]; tagsJson?: string | null }>,
    staged?: StagedArtifacts,
    /** Reads what `write` needs from outside the store (before each attempt). */
    prepare?: () => Promise<void>,
  ): Promise<void> {
    const { lib, ctx, video } = this;
    for (let attempt = 1; ; attempt++) {
      try {
        await prepare?.();
        const held = await lib.catalog.transaction(async (tx) => {
          if (ctx.job && !(await tx.queue.complete(ctx.job.id, ctx.job.token))) return false;
          await tx.analysis.lock(video.id);
          if (!(await tx.videos.byId(video.id))) return false;
          const { states, tagsJson } = await write(tx);
          await tx.analysis.set(video.id, states);
          await settleVideo(tx, video.id, tagsJson !== undefined ? { tagsJson } : {});
          return true;
        });
        if (!held) {
          await staged?.discard();
          return;
        }
        this.settled = true;
        if (ctx.job) ctx.settled = true;
        if (staged) {
          await staged.commit();
          await staged.keepIfVideo(lib.catalog, video.id);
        }
        return;
      } catch (err) {
        if (err instanceof SettleAgain && attempt < SETTLE_ATTEMPTS) continue;
        throw err;
      }
    }
  }
}

/** A lane's job: run(…) finds the work and settles it; subclasses do the work. */
export abstract class LaneJob implements JobHandler {
  abstract readonly lane: LaneName;

  constructor(protected readonly lib: Library) {}

  protected abstract work(run: LaneRun, ctx: JobContext): Promise<void>;

  async run(videoId: string, ctx: JobContext): Promise<JobOutcome> {
    const { lib } = this;
    const video = await lib.catalog.videos.byId(videoId);
    if (!video) return 'failed';
    const collection = await lib.catalog.collections.byId(video.collection_id);
    if (!collection) return 'failed';
    const laneOfCap = new Map(lib.capabilities.all().map((d) => [d.name, d.lane] as const));
    const rows = await lib.catalog.analysis.forVideo(videoId);
    const mine = rows.filter((r) => laneOfCap.get(r.capability) === this.lane && isOpen(r.status)).map((r) => r.capability);
    const capCtx = lib.capabilityContext(collection);
    const plan = await lib.capabilities.plan(capCtx);
    const run = new LaneRun(lib, this.lane, video, collection, plan, capCtx, mine, ctx);
    try {
      if (!mine.length) {
        // Nothing left for this lane (replanned meanwhile): the job is done.
        await run.settle(async () => ({ states: [] }));
        return 'done';
      }
      await this.work(run, ctx);
      return run.settled ? 'done' : 'failed';
    } catch (err) {
      // Shutdown, or the store out of reach: the job goes back to the queue (the worker waits for the store).
      if (ctx.signal.aborted || asUnavailable(err)) throw err;
      await this.failLane(run, asNoSpace(err) ? NO_SPACE_FAILURE : failureMessage(run.redact(err)));
      return 'failed';
    } finally {
      await run.end();
    }
  }

  /** The queue gave up on the job (its worker stopped every time). */
  async fail(videoId: string, message: string): Promise<void> {
    const { lib } = this;
    const video = await lib.catalog.videos.byId(videoId);
    const collection = video && (await lib.catalog.collections.byId(video.collection_id));
    if (!video || !collection) return;
    const capCtx = lib.capabilityContext(collection);
    const run = new LaneRun(lib, this.lane, video, collection, await lib.capabilities.plan(capCtx), capCtx, [], { signal: AbortSignal.abort() });
    await this.failLane(run, message);
  }

  /**
   * The lane's open capabilities failed with `message`. A picture lane that made no segments
   * fails the video (and its other lanes, which have nothing to join to); another lane fails only
   * its own capabilities.
   */
  protected async failLane(run: LaneRun, message: string): Promise<void> {
    const { lib } = this;
    const videoId = run.video.id;
    const laneOfCap = new Map(lib.capabilities.all().map((d) => [d.name, d.lane] as const));
    const searchableLane = laneOf(this.lane).searchable;
    await lib.catalog.transaction(async (tx) => {
      if (!(await tx.videos.byId(videoId))) return;
      await tx.analysis.lock(videoId);
      const rows = await tx.analysis.forVideo(videoId);
      const hasSegments = (await tx.segments.listForVideo(videoId)).length > 0;
      const fatal = searchableLane && !hasSegments;
      const states: CapabilityStateInput[] = rows
        .filter((r) => isOpen(r.status) && (laneOfCap.get(r.capability) === this.lane || fatal))
        .map((r) =>
          laneOfCap.get(r.capability) === this.lane
            ? { capability: r.capability, status: 'failed', version: r.version, message }
            : { capability: r.capability, status: 'skipped', version: r.version, message: 'the video could not be analysed' },
        );
      await tx.analysis.set(videoId, states);
      // The other lanes' jobs find nothing open and end (their capabilities are skipped).
      if (fatal) await tx.signatures.delete(videoId); // an upload's quick signature stands for nothing now
      await settleVideo(tx, videoId, fatal ? { failed: message } : {});
    });
  }
}

export { NO_SPACE_FAILURE };

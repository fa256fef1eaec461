/**
 * What a job writes for a video besides the catalog — thumbnails, keyframes, the playback copy,
 * the transcript, what the soundtrack held — goes first under a name of the job's own
 * (`staging/<job>/…`), and into place only once the job's results committed under its claim
 * (the fenced settle). A settle that is refused (the video was deleted, another claim took the
 * job) removes the staged files; a process killed in between leaves them under `staging/`, which
 * housekeeping removes once their job is no longer running (`sweepArtifacts`). After the move the
 * video is looked up again: a delete that came in between took its rows, and maybe not yet these
 * files, so they are removed then. Nothing written for a video outlives it.
 */
import { randomBytes } from 'node:crypto';
import { moveBlob, type BlobStore } from '../store/blobs.js';
import type { Catalog } from '../store/catalog/types.js';

/** The blob keys (or folders) a video's artefacts live under, by kind. */
export const VIDEO_ARTIFACTS = {
  thumbs: (id: string) => `thumbs/${id}`,
  /** A folder: `frames.bin` and `index.json` (src/pipeline/keyframes.ts). */
  keyframes: (id: string) => `keyframes/${id}`,
  keyframeFrames: (id: string) => `keyframes/${id}/frames.bin`,
  keyframeIndex: (id: string) => `keyframes/${id}/index.json`,
  soundtrack: (id: string) => `soundtrack/${id}.json`,
  transcript: (id: string) => `transcripts/${id}.json`,
  playback: (id: string) => `playback/${id}.mp4`,
};

/** Where the artefacts of every video are, and how a key names its video (housekeeping's sweep). */
const ARTIFACT_PREFIXES: Array<{ prefix: string; video: (key: string) => string | undefined }> = [
  { prefix: 'thumbs', video: (k) => k.split('/')[1] },
  { prefix: 'keyframes', video: (k) => k.split('/')[1] },
  { prefix: 'soundtrack', video: (k) => /^soundtrack\/([^/]+)\.json$/.exec(k)?.[1] },
  { prefix: 'transcripts', video: (k) => /^transcripts\/([^/]+)\.json$/.exec(k)?.[1] },
  { prefix: 'playback', video: (k) => /^playback\/([^/]+)\.mp4$/.exec(k)?.[1] },
];

const STAGING = 'staging';

/** The staging folder of one claim of a job: `staging/<job id>.<token>.<random>`. */
export function stagingPrefix(job: { id: string; token: number } | undefined): string {
  const own = randomBytes(4).toString('hex');
  return `${STAGING}/${job ? `${job.id}.${job.token}` : 'direct'}.${own}`;
}

/** The files a job writes for one video, staged until it commits. */
export class StagedArtifacts {
  private readonly staged = new Map<string, string>();
  /** Folders whose old files go when the staged ones move in (a video's thumbnails: a new set). */
  private readonly replaced = new Set<string>();
  /** Keys removed when the staged files move in (a playback copy no longer needed). */
  private readonly dropped = new Set<string>();

  constructor(
    private readonly blobs: BlobStore,
    readonly prefix: string,
  ) {}

  private stage(key: string): string {
    const at = `${this.prefix}/${key}`;
    this.staged.set(key, at);
    return at;
  }

  async put(key: string, data: Buffer): Promise<void> {
    await this.blobs.put(this.stage(key), data);
  }

  async putFile(key: string, file: string, opts: { move?: boolean } = {}): Promise<void> {
    await this.blobs.putFile(this.stage(key), file, opts);
  }

  /** The old files under `folder` go when the staged ones move in. */
  replaceFolder(folder: string): void {
    this.replaced.add(folder);
  }

  /** `key` goes when the staged files move in (unless one of them takes its place). */
  drop(key: string): void {
    this.dropped.add(key);
  }

  /** Moves every staged file into place (after the settle committed), then removes the staging folder. */
  async commit(): Promise<void> {
    for (const folder of this.replaced) await this.blobs.deletePrefix(folder);
    for (const key of this.dropped) if (!this.staged.has(key)) await this.blobs.delete(key).catch(() => {});
    for (const [key, at] of this.staged) await moveBlob(this.blobs, at, key);
    await this.blobs.deletePrefix(this.prefix);
  }

  /** Removes what was staged (the settle was refused, or the job failed). */
  async discard(): Promise<void> {
    await this.blobs.deletePrefix(this.prefix).catch(() => {});
  }

  /**
   * After `commit`: when the video is gone (a delete came in between), removes what was just
   * moved into place. Answers whether the video is still there.
   */
  async keepIfVideo(catalog: Pick<Catalog, 'videos'>, videoId: string): Promise<boolean> {
    if (await catalog.videos.byId(videoId)) return true;
    for (const key of this.staged.keys()) await this.blobs.delete(key).catch(() => {});
    for (const folder of this.replaced) await this.blobs.deletePrefix(folder).catch(() => {});
    return false;
  }
}

/**
 * Housekeeping: removes staged files whose job is no longer running under that claim (a process
 * killed between its work and its settle), and artefacts of videos that no longer exist (a delete
 * that raced a job's move, or an earlier release that left them), each once older than `graceMs`
 * (a job in flight, a video being uploaded). Answers how many blobs it removed.
 */
export async function sweepArtifacts(blobs: BlobStore, catalog: Pick<Catalog, 'videos' | 'queue'>, opts: { graceMs?: number; now?: number } = {}): Promise<number> {
  const grace = opts.graceMs ?? 10 * 60_000;
  const now = opts.now ?? Date.now();
  let removed = 0;
  const staging = new Map<string, number>();
  for await (const { key, modifiedMs } of blobs.listUnder(STAGING)) {
    const folder = key.split('/').slice(0, 2).join('/');
    staging.set(folder, Math.max(staging.get(folder) ?? 0, modifiedMs));
  }
  for (const [folder, newest] of staging) {
    if (now - newest < grace) continue;
    const [jobId, token] = folder.slice(STAGING.length + 1).split('.');
    const job = jobId && jobId !== 'direct' ? await catalog.queue.get(jobId) : undefined;
    if (job && job.status === 'running' && String(job.token) === token) continue;
    await blobs.deletePrefix(folder);
    removed++;
  }
  const known = new Map<string, boolean>();
  const exists = async (id: string) => {
    if (!known.has(id)) known.set(id, Boolean(await catalog.videos.byId(id)));
    return known.get(id)!;
  };
  for (const { prefix, video } of ARTIFACT_PREFIXES) {
    const gone: string[] = [];
    for await (const { key, modifiedMs } of blobs.listUnder(prefix)) {
      const id = video(key);
      if (!id || now - modifiedMs < grace || (await exists(id))) continue;
      gone.push(key);
    }
    for (const key of gone) await blobs.delete(key).catch(() => {});
    removed += gone.length;
  }
  return removed;
}

/** Videos: upload, status, details, thumbnails, the original file, list, delete, reprocess, near-duplicates. */
import { requeueVideo } from './no-space.js';
import { checkStorageQuota } from './quota.js';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { BadRequestError, NotFoundError, PayloadTooLargeError } from '../api/errors.js';
import { thumbnailUrl } from '../api/paths.js';
import type { Principal } from '../api/principal.js';
import type {
  DeleteResponse,
  DuplicatesRequest,
  DuplicatesResponse,
  IngestFile,
  ListVideosRequest,
  UploadVideoResponse,
  VideoDetails,
  VideoStatusResponse,
  VideoSummary,
  TranscriptResponse,
} from '../api/types.js';
import { loadTranscript } from '../speech/store.js';
import { LIMITS } from '../api/defaults.js';
import { checkJobLimit, checkUploadLimit, checkVideoLength } from '../api/limits.js';
import { probe } from '../media/probe.js';
import { newId } from '../store/ids.js';
import type { VideoRow } from '../store/videos.js';
import { DUPLICATE_THRESHOLDS, findDuplicateGroups, nearDuplicateOf, sampleSignature, storeSignature, type VideoSignature } from '../duplicates/duplicates.js';
import type { Library, VideoFile } from './library.js';
import { playbackUrl, proxyFile } from './playback.js';
import { InPlaceService } from './in-place.js';
import { findVideos } from './find-videos.js';
import { withFileState } from './video-summary.js';

/** How long a transcript read waits for the file of a transcript its capability says is done (it lands just after the settle). */
const TRANSCRIPT_LANDING_MS = 3_000;

export class VideosService {
  constructor(private readonly lib: Library) {}

  async upload(p: Principal, collectionIdOrName: string, file: IngestFile): Promise<UploadVideoResponse> {
    const { lib } = this;
    if (file.inPlace) return new InPlaceService(lib).add(p, collectionIdOrName, file.path, { force: file.force });
    const collection = await lib.collection(p, collectionIdOrName);
    const st = await stat(file.path).catch(() => undefined);
    if (!st) throw new NotFoundError(`file not found: ${file.path}`);
    if (st.isDirectory()) throw new BadRequestError(`${file.path} is a directory, not a video file`);
    if (!st.isFile()) throw new BadRequestError(`${file.path} is not a regular file`);
    if (st.size > lib.maxUploadBytes) {
      throw new PayloadTooLargeError(`${file.filename} is ${st.size} bytes, over the ${lib.maxUploadBytes}-byte upload limit`);
    }
    checkUploadLimit(p.limits, file.filename, st.size);
    await checkJobLimit(p.limits, lib.catalog.queue, collection.owner, 1);
    if (p.limits?.maxVideoSeconds) {
      // A file that does not probe is stored as usual: its processing says what is wrong with it.
      const seconds = (await probe(file.path).catch(() => undefined))?.durationSec ?? 0;
      checkVideoLength(p.limits, file.filename, seconds);
    }
    // The same bytes twice in one collection are one video: answer with it (unless forced).
    const sha256 = await sha256File(file.path, file.onProgress);
    const existing = file.force ? undefined : await lib.catalog.videos.byContent(collection.id, sha256);
    if (existing) {
      if (file.move) await unlink(file.path).catch(() => {});
      return { video_id: existing.id, status: existing.status, duplicate: true };
    }
    // Only videos are videos: text, a still image or audio is refused before anything is stored.
    await lib.checkVideo(file.path, file.filename);
    // Near-duplicates (asked for): a quick decode of the file's own, compared with the collection's
    // signatures before anything is stored. A file that does not decode is stored as usual (its
    // processing will say what is wrong with it).
    let quick: VideoSignature | undefined;
    if (file.skipDuplicates && !file.force) {
      quick = await sampleSignature(file.path).catch(() => undefined);
      const near = quick && (await nearDuplicateOf(lib.catalog, collection.id, quick));
      if (near) {
        if (file.move) await unlink(file.path).catch(() => {});
        const { video, coverage, similarity } = near;
        return { video_id: video.id, status: video.status, duplicate: true, near_duplicate: { filename: video.filename, coverage: round3(coverage), similarity: round3(similarity) } };
      }
    }
    await checkStorageQuota(lib, p, st.size); // a duplicate (answered above) adds nothing
    const id = newId('vid');
    const key = `videos/${id}${safeExtension(file.filename)}`;
    await lib.blobs.putFile(key, file.path, { move: file.move });
    try {
      await lib.catalog.transaction(async (tx) => {
        await tx.videos.insert({ id, collection_id: collection.id, filename: path.basename(file.filename), blob_key: key, size_bytes: st.size, content_sha256: sha256 });
        await tx.queue.enqueue('video.process', id, undefined, collection.owner);
        // Later files of the same upload compare with this one before it is processed.
        if (quick) await storeSignature(tx, id, quick);
      });
    } catch (err) {
      await lib.blobs.delete(key).catch(() => {});
      throw err;
    }
    await lib.onWorkQueued();
    return { video_id: id, status: 'uploaded' };
  }

  async status(p: Principal, videoId: string): Promise<VideoStatusResponse> {
    const v = await this.lib.video(p, videoId);
    const out: VideoStatusResponse = { video_id: v.id, status: v.status };
    if (v.status === 'processing' && v.progress !== null) out.progress = v.progress;
    if (v.status === 'processed') out.progress = 100;
    if (v.status === 'failed' && v.error_message) out.error_message = v.error_message;
    return { ...out, ...(await this.analysis(v)) };
  }

  /**
   * Each capability's state for the video (`analysis`), and whether it answers searches
   * (`searchable`: its segments are made; speech may still be on its way). A video processed
   * before capabilities were recorded has no `analysis` and is searchable once processed.
   */
  private async analysis(v: VideoRow): Promise<{ searchable: boolean; analysis?: NonNullable<VideoStatusResponse['analysis']> }> {
    const rows = await this.lib.catalog.analysis.forVideo(v.id);
    if (!rows.length) return { searchable: v.status === 'processed' };
    const lane = (name: string) => (this.lib.capabilities.has(name) ? this.lib.capabilities.get(name).lane : 'pictures');
    const segmentMakers = new Set(this.lib.capabilities.all().filter((d) => d.outputs.includes('segments')).map((d) => d.name));
    const analysis: NonNullable<VideoStatusResponse['analysis']> = {};
    // In the registry's order (the order they run in), the ones it no longer knows last.
    const order = this.lib.capabilities.names();
    const rank = (n: string) => (order.includes(n) ? order.indexOf(n) : order.length);
    rows.sort((a, b) => rank(a.capability) - rank(b.capability));
    for (const r of rows) {
      analysis[r.capability] = {
        status: r.status,
        lane: lane(r.capability),
        ...(r.version ? { version: r.version } : {}),
        ...(r.status === 'skipped' && r.message ? { reason: r.message } : {}),
        ...(r.status === 'failed' && r.message ? { message: r.message } : {}),
      };
    }
    const made = rows.filter((r) => segmentMakers.has(r.capability));
    return { searchable: made.length ? made.every((r) => r.status === 'done') : v.status === 'processed', analysis };
  }

  /** A video with its tags and segments (`video show`, `GET /videos/{id}`). */
  async details(p: Principal, videoId: string): Promise<VideoDetails> {
    const v = await this.lib.video(p, videoId);
    const segments = (await this.lib.catalog.segments.listForVideo(videoId)).map((s) => ({
      start: s.start,
      end: s.end,
      thumbnail_url: thumbnailUrl(v.id, s.start),
      description: s.description,
      tags: s.tags_json ? (JSON.parse(s.tags_json) as Record<string, unknown>) : undefined,
      facts: s.facts_json ? publishedFacts(s.facts_json) : undefined,
    }));
    const playback_url = playbackUrl(v);
    return {
      ...(await withFileState(this.lib, v, await this.lib.catalog.folders.list(v.collection_id))),
      ...(await this.analysis(v)),
      ...(v.playback ? { playback: v.playback } : {}),
      ...(playback_url ? { playback_url } : {}),
      tags: v.tags_json ? (JSON.parse(v.tags_json) as Record<string, unknown>) : undefined,
      segments,
    };
  }

  /** What is said in a video (`video transcript`, `GET /videos/{id}/transcript`). */
  async transcript(p: Principal, videoId: string): Promise<TranscriptResponse> {
    const v = await this.lib.video(p, videoId);
    let t = await loadTranscript(this.lib.blobs, v.id);
    // The speech lane moves the transcript into place just after its settle commits: a read in
    // between sees the capability done and no file yet. Wait for it (briefly), not answer "none".
    for (let waited = 0; !t && waited < TRANSCRIPT_LANDING_MS && (await this.transcriptDone(v)); waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      t = await loadTranscript(this.lib.blobs, v.id);
    }
    if (!t) {
      const reason =
        (await this.noTranscript(v)) ??
        ((await this.transcriptDone(v))
          ? 'the transcript is missing: `vidembed video reprocess`'
          : v.status === 'processed'
            ? 'processed before speech was indexed: `vidembed video reprocess`'
            : `not processed yet (status ${v.status})`);
      return { video_id: v.id, engine: '', language: '', duration: 0, words: [], reason };
    }
    const words = t.words.map(({ w, start, end, conf }) => ({ w, start, end, conf }));
    return { video_id: v.id, engine: t.engine, language: t.language, duration: t.duration, words, ...(t.reason ? { reason: t.reason } : {}) };
  }

  /** True when the capability that writes the video's transcript is done (so its file is, or is about to be, in place). */
  private async transcriptDone(v: VideoRow): Promise<boolean> {
    const writers = new Set(this.lib.capabilities.all().filter((d) => d.outputs.includes('transcript')).map((d) => d.name));
    return (await this.lib.catalog.analysis.forVideo(v.id)).some((x) => writers.has(x.capability) && x.status === 'done');
  }

  /** Why a video has no transcript, from the state of the capability that writes it (skipped: speech off, no engine; running; failed). */
  private async noTranscript(v: VideoRow): Promise<string | undefined> {
    const writers = new Set(this.lib.capabilities.all().filter((d) => d.outputs.includes('transcript')).map((d) => d.name));
    const r = (await this.lib.catalog.analysis.forVideo(v.id)).find((x) => writers.has(x.capability));
    if (!r) return undefined;
    if (r.status === 'skipped' || r.status === 'failed') return r.message ?? `${r.capability} ${r.status}`;
    if (r.status === 'pending' || r.status === 'running') return `not heard yet (${r.capability} ${r.status}; the pictures may already be searchable)`;
    return undefined;
  }

  /**
   * The JPEG of the segment at `t` seconds (the keyframe of the segment holding that moment, else
   * the nearest), or the video's poster without `t`. 404 before the video is processed.
   */
  async thumbnail(p: Principal, videoId: string, t?: number): Promise<Buffer> {
    const v = await this.lib.video(p, videoId);
    let key = `thumbs/${v.id}/poster.jpg`;
    if (t !== undefined) {
      const segs = await this.lib.catalog.segments.listForVideo(v.id);
      const at = segs.find((s) => t >= s.start && t < s.end) ?? segs.reduce<(typeof segs)[number] | undefined>((best, s) => (!best || Math.abs(s.start - t) < Math.abs(best.start - t) ? s : best), undefined);
      if (at) key = `thumbs/${v.id}/${at.idx}.jpg`;
    }
    if (!(await this.lib.blobs.has(key))) throw new NotFoundError(`no thumbnail for ${videoId} yet (status ${v.status})`);
    return this.lib.blobs.get(key);
  }

  /**
   * Where a video's thumbnails are on this machine's disk (`vidembed video show`): the poster and
   * one JPEG per segment, by segment index; absent before processing or with a store that has no
   * paths.
   */
  async thumbnailFiles(p: Principal, videoId: string): Promise<{ poster?: string; segments: (string | undefined)[] }> {
    const v = await this.lib.video(p, videoId);
    const { blobs, blobPath } = this.lib;
    if (!blobPath) return { segments: [] };
    const at = async (key: string) => ((await blobs.has(key)) ? blobPath(key) : undefined);
    const segs = await this.lib.catalog.segments.listForVideo(v.id);
    return { poster: await at(`thumbs/${v.id}/poster.jpg`), segments: await Promise.all(segs.map((s) => at(`thumbs/${v.id}/${s.idx}.jpg`))) };
  }

  /** A video's original file (the server streams it with Range support; the CLI shows its path). */
  async file(p: Principal, videoId: string): Promise<VideoFile> {
    return this.lib.videoFile(await this.lib.video(p, videoId));
  }

  /** The playback proxy of a video whose own file browsers do not play (`GET /videos/{id}/playback`). */
  async playbackFile(p: Principal, videoId: string): Promise<VideoFile> {
    return proxyFile(this.lib, await this.lib.video(p, videoId));
  }

  async list(p: Principal, collectionIdOrName: string, req: ListVideosRequest = {}): Promise<VideoSummary[]> {
    const collection = await this.lib.collection(p, collectionIdOrName);
    const status = req.status || undefined;
    const rows = await this.lib.catalog.videos.page(collection.id, { status, limit: req.limit ?? LIMITS.list.default, offset: req.offset ?? 0 });
    const folders = await this.lib.catalog.folders.list(collection.id);
    return Promise.all(rows.map((v) => withFileState(this.lib, v, folders)));
  }

  /** The videos a name stands for: an id, a file name or a path in place (GET /videos?name=, src/services/find-videos.ts). */
  async find(p: Principal, name: string, opts: { collection?: string } = {}): Promise<VideoSummary[]> {
    return findVideos(this.lib, p, name, opts);
  }

  /** Removes a video: its pending job, segments, vectors, keywords and file (the disk is freed; a file in place is the user's and stays). */
  async delete(p: Principal, videoId: string): Promise<DeleteResponse> {
    const v = await this.lib.video(p, videoId);
    const collection = (await this.lib.catalog.collections.byId(v.collection_id))!;
    await this.lib.catalog.transaction(async (tx) => {
      await tx.queue.cancelFor(v.id);
      await tx.segments.deleteForVideo(v.id, collection.dim);
      await tx.videos.delete(v.id);
      // A file in place stays out of later scans until the user adds it again (issue 30).
      if (v.fingerprint !== null) await tx.folders.exclude(collection.id, v.fingerprint, v.path);
    });
    await this.lib.removeVideoFiles(v);
    return { id: v.id, deleted: true };
  }

  /** Processes a video again (after a failure, or to pick up new analyzers). */
  async reprocess(p: Principal, videoId: string): Promise<VideoStatusResponse> {
    const v = await this.lib.video(p, videoId);
    const owner = (await this.lib.catalog.collections.byId(v.collection_id))?.owner;
    await checkJobLimit(p.limits, this.lib.catalog.queue, owner ?? p.owner, 1);
    // A failed video answers its new state ('processing', the old error gone), not the failure.
    await requeueVideo(this.lib.catalog, v);
    await this.lib.onWorkQueued();
    return this.status(p, v.id);
  }

  /** Groups of near-identical videos of a collection: re-encoded, resized or trimmed copies (docs/engine.md). */
  async duplicates(p: Principal, collectionIdOrName: string, req: DuplicatesRequest = {}): Promise<DuplicatesResponse> {
    const collection = await this.lib.collection(p, collectionIdOrName);
    return findDuplicateGroups(this.lib.catalog, collection, { minSimilarity: req.min_similarity ?? DUPLICATE_THRESHOLDS.minSimilarity, segments: req.segments === true });
  }
}

/** Each capability's facts as the API shows them (its version and facts: what is kept beside them for re-runs stays inside). */
function publishedFacts(json: string): Record<string, unknown> {
  const stored = JSON.parse(json) as Record<string, { version?: string; facts?: unknown }>;
  return Object.fromEntries(Object.entries(stored).map(([name, s]) => [name, { version: s.version ?? '', facts: s.facts ?? [] }]));
}

/** The file's SHA-256, reporting the bytes read so far (the upload's progress: the copy that follows reads them again from the page cache). */
async function sha256File(file: string, onProgress?: (bytes: number) => void): Promise<string> {
  const hash = createHash('sha256');
  let read = 0;
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
    read += (chunk as Buffer).length;
    onProgress?.(read);
  }
  return hash.digest('hex');
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/** Keeps a short alphanumeric extension so ffmpeg can use it as a hint; never a path. */
function safeExtension(filename: string): string {
  const ext = path.extname(path.basename(filename)).toLowerCase();
  return /^\.[a-z0-9]{1,8}$/.test(ext) ? ext : '';
}

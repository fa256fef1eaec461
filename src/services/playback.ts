/**
 * Playback in a browser (docs/web.md): at ingest, a video whose own file a browser does not play
 * gets a playback proxy (src/media/playback.ts), stored as the blob `playback/<id>.mp4`; the API
 * hands out `playback_url`, the URL that plays — the original's when it plays as it is.
 */
import { NotFoundError, errorMessage } from '../api/errors.js';
import { playsInBrowser, type PlaybackProbe } from '../media/playback.js';
import type { MediaPort } from '../media/port.js';
import type { StagedArtifacts } from './artifacts.js';
import type { BlobStore } from '../store/blobs.js';
import type { VideoPlayback, VideoRow } from '../store/videos.js';
import type { VideoFile } from './footage-files.js';

export function playbackKey(videoId: string): string {
  return `playback/${videoId}.mp4`;
}

/**
 * Decides how a browser will play the video whose file (on this machine, whatever stores it) is
 * `file`, and stages the proxy when one is needed (it moves into place with the job's results). A proxy that cannot be made leaves the video
 * searchable: 'none', and the reason in `note`.
 */
export async function preparePlayback(
  staged: Pick<StagedArtifacts, 'putFile' | 'drop'>,
  media: Pick<MediaPort, 'playbackProxy'>,
  video: Pick<VideoRow, 'id' | 'filename'>,
  file: string,
  probed: PlaybackProbe,
  opts: { signal?: AbortSignal; note?: (why: string) => void } = {},
): Promise<VideoPlayback> {
  staged.drop(playbackKey(video.id)); // a reprocess starts from nothing
  if (playsInBrowser(probed).plays) return 'original';
  try {
    await media.playbackProxy(file, video.filename, (proxy) => staged.putFile(playbackKey(video.id), proxy, { move: true }), { signal: opts.signal });
    return 'proxy';
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    opts.note?.(errorMessage(err));
    return 'none';
  }
}

/** The URL that plays the video in a browser; undefined before processing or when nothing plays. */
export function playbackUrl(v: Pick<VideoRow, 'id' | 'playback'>): string | undefined {
  const id = encodeURIComponent(v.id);
  if (v.playback === 'original') return `/videos/${id}/file`;
  if (v.playback === 'proxy') return `/videos/${id}/playback`;
  return undefined;
}

/** The proxy's bytes by range, for GET /videos/{id}/playback; 404 when the video has none. */
export async function proxyFile(lib: { blobs: BlobStore; blobPath?: (key: string) => string }, v: VideoRow): Promise<VideoFile> {
  const { blobs } = lib;
  const key = playbackKey(v.id);
  if (v.playback !== 'proxy' || !(await blobs.has(key))) throw new NotFoundError(`${v.filename} has no playback copy${v.playback === 'original' ? ': its own file plays (GET /videos/{id}/file)' : ''}`);
  const filename = `${v.filename.replace(/\.[^./]*$/, '')}.mp4`;
  const open = (range?: { start: number; end?: number }) => blobs.stream(key, range);
  const path = lib.blobPath?.(key);
  // A file on this disk is measured where it is (the server stats `path`); a bucket's is read once.
  return path ? { filename, size: 0, path, open } : { filename, size: (await blobs.get(key)).length, open };
}

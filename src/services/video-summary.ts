/** A video as the API lists it (VideoSummary): its row, and the state of its file when it is in place. */
import type { VideoSummary } from '../api/types.js';
import type { VideoRow } from '../store/videos.js';
import type { Library } from './library.js';
import path from 'node:path';

export function toVideoSummary(v: VideoRow): VideoSummary {
  const out: VideoSummary = { video_id: v.id, collection_id: v.collection_id, filename: v.filename, status: v.status, size_bytes: v.size_bytes, created_at: v.created_at };
  if (v.status === 'processing' && v.progress !== null) out.progress = v.progress;
  if (v.status === 'failed' && v.error_message) out.error_message = v.error_message;
  if (v.duration !== null) out.duration = v.duration;
  if (v.width !== null) out.width = v.width;
  if (v.height !== null) out.height = v.height;
  if (v.fps !== null) out.fps = v.fps;
  if (v.codec) out.codec = v.codec;
  return out;
}

/**
 * A video's summary, saying whether a video in place still finds its file (and if not, why: the
 * library's footage check) and where it is in the folder it was indexed from (`folders`: its
 * collection's, src/services/find-videos.ts).
 */
export async function withFileState(lib: Pick<Library, 'footageProblem'>, v: VideoRow, folders: readonly string[]): Promise<VideoSummary> {
  const out = toVideoSummary(v);
  if (v.fingerprint === null) return out;
  out.in_place = true;
  const rel = relativePath(v, folders);
  if (rel) out.relative_path = rel;
  const problem = await lib.footageProblem(v);
  if (problem) Object.assign(out, { missing: true, missing_reason: problem });
  return out;
}

/**
 * A video in place's path relative to the outermost of its collection's folders that holds it, with
 * `/` between names (`card-01/C0001.MP4`); undefined for a video the library holds or a file
 * indexed on its own.
 */
export function relativePath(v: Pick<VideoRow, 'fingerprint' | 'path'>, folders: readonly string[]): string | undefined {
  if (v.fingerprint === null || !v.path) return undefined;
  let best: string | undefined;
  for (const dir of folders) {
    const rel = path.relative(dir, v.path);
    if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) continue;
    if (best === undefined || rel.length > best.length) best = rel;
  }
  return best?.split(path.sep).join('/');
}

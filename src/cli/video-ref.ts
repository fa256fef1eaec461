/**
 * A video as the user names it on the command line (issue 33): its id (`vid_…`), its file name
 * (`INTERVIEW_01.mp4`) or its path in place (`card-01/C0001.MP4`, `./card-01/C0001.MP4`, an
 * absolute path). Names are looked up by the service (GET /videos?name= on a server), so a remote
 * CLI finds them as the local one does; a name that fits several videos lists them and fails.
 */
import path from 'node:path';
import { ConflictError, NotFoundError } from '../api/errors.js';
import type { VideoSummary } from '../api/types.js';
import type { CliContext } from './context.js';

/** What newId('vid') makes: taken as an id without a lookup (and by servers older than the lookup). */
const VIDEO_ID = /^vid_[A-Za-z0-9_-]{8,}$/;

/** How a video is shown where several are listed: its path in its folder, else its file name. */
export function videoName(v: Pick<VideoSummary, 'filename' | 'relative_path'>): string {
  return v.relative_path ?? v.filename;
}

/**
 * The id of the one video `ref` names. On this machine, a path that starts with `./`, `../` or `/`
 * (or `~`, already expanded by the shell) is made absolute first, so it finds the video in place at
 * that file; a server is sent the name as typed (its paths are not this machine's).
 */
export async function resolveVideo(ctx: CliContext, ref: string, opts: { collection?: string } = {}): Promise<string> {
  if (VIDEO_ID.test(ref) && !opts.collection) return ref;
  return (await lookupVideo(ctx, ref, opts)).video_id;
}

/** The one video `ref` names, as the API lists it (whether it is in place, its file missing…). */
export async function lookupVideo(ctx: CliContext, ref: string, opts: { collection?: string } = {}): Promise<VideoSummary> {
  const name = !ctx.remoteBaseUrl && /^(\.{1,2}[\\/]|[\\/])/.test(ref) ? path.resolve(ref) : ref;
  const found = await ctx.service.findVideos({ name, collection: opts.collection });
  if (found.length === 1) return found[0];
  if (found.length === 0) {
    throw new NotFoundError(`video not found: ${ref} (neither a video id nor a file name or path the library knows; \`vidembed video list\` shows them)`);
  }
  const names = new Map((await ctx.service.listCollections({ limit: 1000 }).catch(() => [])).map((c) => [c.id, c.name]));
  const lines = found.slice(0, 20).map((v) => `  ${v.video_id}  ${videoName(v)}  (collection ${names.get(v.collection_id) ?? v.collection_id})${v.missing ? '  file missing' : ''}`);
  if (found.length > 20) lines.push(`  … and ${found.length - 20} more`);
  throw new ConflictError(`"${ref}" is ${found.length} videos: name one by its id, by a longer path, or with --collection:\n${lines.join('\n')}`);
}

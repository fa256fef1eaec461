/**
 * Videos by name (issue 33): every command that takes a video id also takes the file's name
 * (`C0001.MP4`) or its path relative to the folder it was indexed from in place
 * (`card-01/C0001.MP4`), so that the same name on several cards is told apart. The lookup is a
 * service (GET /videos?name=), so a remote CLI resolves names on the server exactly as the local
 * one does; the CLI turns several matches into a list of candidates.
 *
 * Rules, in order:
 * - a video id the caller may see is that video;
 * - otherwise the name's last part is a file name, looked up exactly (case counts) among the
 *   videos of the collection given, else of every collection the caller may see;
 * - a name with `/` in it keeps the videos in place whose path ends with it (at a `/`): the path
 *   relative to their folder (`card-01/C0001.MP4`), a longer end, or the whole absolute path.
 */
import path from 'node:path';
import { BadRequestError } from '../api/errors.js';
import type { Principal } from '../api/principal.js';
import type { VideoSummary } from '../api/types.js';
import type { CollectionRow } from '../store/collections.js';
import type { VideoRow } from '../store/videos.js';
import type { Library } from './library.js';
import { relativePath, withFileState } from './video-summary.js';

/** At most this many candidates are answered (a name that fits more is no name). */
export const MAX_FOUND = 100;

/** `\` and repeated `/` as one `/`, no leading `./`, no trailing `/`. */
export function normalizeName(name: string): string {
  return name
    .trim()
    .replace(/\\/g, '/')
    .replace(/\/{2,}/g, '/')
    .replace(/^(\.\/)+/, '')
    .replace(/(.)\/+$/, '$1');
}

/** Does a video (in place) answer to a name with `/` in it: its relative path, a longer end of its path, or the path itself? */
function pathFits(v: VideoRow, rel: string | undefined, name: string): boolean {
  if (rel === name) return true;
  if (v.fingerprint === null || !v.path) return false;
  const full = v.path.split(path.sep).join('/');
  return full === name || full.endsWith(`/${name}`);
}

/** The videos a name (or id) stands for, as `p` may see them: none, one, or several to choose from. */
export async function findVideos(lib: Library, p: Principal, name: string, opts: { collection?: string } = {}): Promise<VideoSummary[]> {
  const given = normalizeName(name);
  if (!given) throw new BadRequestError('a video id or file name is needed');
  const only = opts.collection ? await lib.collection(p, opts.collection) : undefined;
  const byId = await lib.catalog.videos.byId(given);
  if (byId && (!only || byId.collection_id === only.id)) {
    const mine = await lib.video(p, given).catch(() => undefined);
    if (mine) return [await withFileState(lib, mine, await lib.catalog.folders.list(mine.collection_id))];
  }
  const collections: CollectionRow[] = only ? [only] : await lib.catalog.collections.list(10_000, 0, p.admin ? null : p.owner);
  const filename = given.slice(given.lastIndexOf('/') + 1);
  if (!filename || filename === '.' || filename === '..') return [];
  const rows = await lib.catalog.videos.byFilename(
    collections.map((c) => c.id),
    filename,
    given.includes('/') ? 10 * MAX_FOUND : MAX_FOUND,
  );
  const folders = new Map<string, string[]>();
  const out: VideoSummary[] = [];
  for (const v of rows) {
    if (!folders.has(v.collection_id)) folders.set(v.collection_id, await lib.catalog.folders.list(v.collection_id));
    const dirs = folders.get(v.collection_id)!;
    if (given.includes('/') && !pathFits(v, relativePath(v, dirs), given)) continue;
    out.push(await withFileState(lib, v, dirs));
    if (out.length === MAX_FOUND) break;
  }
  return out;
}

/**
 * Footage indexed in place (issue 22): a video is the user's own file at its path — nothing is
 * copied (thumbnails, signatures and transcripts are still stored), processing reads the file
 * where it lies, and deleting the video never deletes the file. Each video keeps its path, size,
 * modification time and content fingerprint (src/services/footage-files.ts), so `rescan` sees
 * files that are new, changed, moved or renamed (same fingerprint → same video, new path) and
 * gone. On a server only folders under the library roots an admin configured (`serve --library
 * DIR`) may be indexed in place, never a path a client makes up.
 */
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { BadRequestError, ForbiddenError, NotFoundError, errorMessage } from '../api/errors.js';
import type { Principal } from '../api/principal.js';
import type { RescanResponse, UploadVideoResponse } from '../api/types.js';
import type { CollectionRow } from '../store/collections.js';
import { newId } from '../store/ids.js';
import type { VideoRow } from '../store/videos.js';
import { fingerprintFile, isVideoFile, mtimeOf, walkFiles } from './footage-files.js';
import type { Library } from './library.js';

export class InPlaceService {
  constructor(private readonly lib: Library) {}

  /**
   * Indexes one file where it lies: refused unless it is a video; the same fingerprint in the
   * collection is the same video (at a new path when the old one is gone: it moved).
   */
  async add(p: Principal, collectionIdOrName: string, file: string, opts: { force?: boolean } = {}): Promise<UploadVideoResponse> {
    const collection = await this.lib.collection(p, collectionIdOrName);
    return this.addTo(collection, path.resolve(file), opts);
  }

  private async addTo(collection: CollectionRow, file: string, opts: { force?: boolean } = {}): Promise<UploadVideoResponse & { moved_from?: string }> {
    const { lib } = this;
    const st = await stat(file).catch(() => undefined);
    if (!st) throw new NotFoundError(`file not found: ${file}`);
    if (!st.isFile()) throw new BadRequestError(`${file} is not a regular file`);
    await lib.checkVideo(file, file);
    const fingerprint = await fingerprintFile(file, st.size);
    const seen = { path: file, filename: path.basename(file), size_bytes: st.size, fingerprint, file_mtime: mtimeOf(st) };
    const existing = opts.force ? undefined : await lib.catalog.videos.byFingerprint(collection.id, fingerprint);
    if (existing) {
      if (existing.path !== file && !(await exists(existing.path))) {
        await lib.catalog.videos.fileSeen(existing.id, seen);
        return { video_id: existing.id, status: existing.status, moved_from: existing.path };
      }
      return { video_id: existing.id, status: existing.status, duplicate: true };
    }
    const id = newId('vid');
    await lib.catalog.transaction(async (tx) => {
      await tx.videos.insert({ id, collection_id: collection.id, ...seen });
      await tx.queue.enqueue('video.process', id);
    });
    await lib.onWorkQueued();
    return { video_id: id, status: 'uploaded' };
  }

  /** Remembers a folder as indexed in place for the collection (`rescan` walks it again). */
  async addFolder(p: Principal, collectionIdOrName: string, dir: string): Promise<void> {
    const collection = await this.lib.collection(p, collectionIdOrName);
    const abs = path.resolve(dir);
    const st = await stat(abs).catch(() => undefined);
    if (!st?.isDirectory()) throw new NotFoundError(`folder not found: ${dir}`);
    await this.lib.catalog.folders.add(collection.id, abs);
  }

  /**
   * Brings a collection's footage in place up to date with the disk: its folders walked for new
   * video files, every video in place checked (unchanged, changed: re-processed, moved or renamed:
   * followed by its fingerprint, gone: reported missing). With `roots` (a server's library roots),
   * only folders and files inside them are read.
   */
  async rescan(p: Principal, collectionIdOrName: string, opts: { roots?: string[] } = {}): Promise<RescanResponse> {
    const { lib } = this;
    const collection = await this.lib.collection(p, collectionIdOrName);
    const guard = opts.roots ? await rootGuard(opts.roots) : undefined;
    const folders = await lib.catalog.folders.list(collection.id);
    const out: RescanResponse = { collection_id: collection.id, collection_name: collection.name, folders, added: [], changed: [], moved: [], missing: [], unchanged: 0, skipped: [] };

    // What is on disk now.
    const onDisk = new Set<string>();
    for (const dir of folders) {
      if (guard && !(await guard(dir))) {
        out.skipped.push({ file: dir, reason: 'outside the library folders this server was started with' });
        continue;
      }
      const files = await walkFiles(dir).catch(() => undefined);
      if (!files) {
        out.skipped.push({ file: dir, reason: 'folder not found' });
        continue;
      }
      for (const f of files) {
        if (!isVideoFile(f)) out.skipped.push({ file: f, reason: 'not a video file (by its extension)' });
        else if (!guard || (await guard(f))) onDisk.add(f);
        else out.skipped.push({ file: f, reason: 'a link out of the library folders' });
      }
    }

    // The videos in place: still there (unchanged or changed), or gone for now.
    const videos = (await lib.catalog.videos.listByCollection(collection.id)).filter((v) => v.fingerprint !== null);
    const known = new Set(videos.map((v) => v.path));
    const gone: VideoRow[] = [];
    for (const v of videos) {
      const st = await stat(v.path).catch(() => undefined);
      if (!st?.isFile()) {
        gone.push(v);
        continue;
      }
      onDisk.delete(v.path);
      if (st.size === v.size_bytes && mtimeOf(st) === v.file_mtime) {
        out.unchanged++;
        continue;
      }
      const fingerprint = await fingerprintFile(v.path, st.size);
      await lib.catalog.videos.fileSeen(v.id, { path: v.path, filename: path.basename(v.path), size_bytes: st.size, fingerprint, file_mtime: mtimeOf(st) });
      if (fingerprint === v.fingerprint) out.unchanged++;
      else {
        await this.reprocess(v.id);
        out.changed.push({ video_id: v.id, file: v.path });
      }
    }

    // New files: a gone video's fingerprint (moved or renamed), else a new video.
    const goneByFingerprint = new Map(gone.map((v) => [v.fingerprint!, v]));
    for (const f of [...onDisk].sort()) {
      if (known.has(f)) continue;
      try {
        const st = await stat(f);
        const fingerprint = await fingerprintFile(f, st.size);
        const was = goneByFingerprint.get(fingerprint);
        if (was) {
          await lib.catalog.videos.fileSeen(was.id, { path: f, filename: path.basename(f), size_bytes: st.size, fingerprint, file_mtime: mtimeOf(st) });
          goneByFingerprint.delete(fingerprint);
          out.moved.push({ video_id: was.id, from: was.path, to: f });
          continue;
        }
        const added = await this.addTo(collection, f);
        if (added.duplicate) out.skipped.push({ file: f, reason: `the same file as ${added.video_id}` });
        else out.added.push({ video_id: added.video_id, file: f });
      } catch (err) {
        out.skipped.push({ file: f, reason: errorMessage(err).replace(`${f} is not a video: `, 'not a video: ') });
      }
    }
    for (const v of goneByFingerprint.values()) out.missing.push({ video_id: v.id, file: v.path });
    return out;
  }

  /**
   * A server's scan (`POST /collections/{id}/library-scan`): only inside the library roots its
   * admin configured. A folder named is resolved inside a root (links followed; out of every root:
   * 403), remembered for the collection and scanned with the collection's other folders.
   */
  async libraryScan(p: Principal, collectionIdOrName: string, req: { path?: string }, roots: string[]): Promise<RescanResponse> {
    const collection = await this.lib.collection(p, collectionIdOrName);
    if (!roots.length) throw new ForbiddenError('this server indexes no folders in place: its admin starts it with `vidembed serve --library DIR`');
    if (req.path !== undefined) await this.lib.catalog.folders.add(collection.id, await libraryFolder(roots, req.path));
    return this.rescan(p, collection.id, { roots });
  }

  private async reprocess(videoId: string): Promise<void> {
    await this.lib.catalog.transaction(async (tx) => {
      await tx.queue.cancelFor(videoId);
      await tx.queue.enqueue('video.process', videoId);
    });
    await this.lib.onWorkQueued();
  }
}

async function exists(file: string): Promise<boolean> {
  return (await stat(file).catch(() => undefined))?.isFile() === true;
}

/**
 * A check that a path (a folder or file, as given or after following every symbolic link) lies
 * inside one of the library roots — `..`, absolute paths elsewhere and links out are refused.
 */
export async function rootGuard(roots: string[]): Promise<(file: string) => Promise<boolean>> {
  const real = await Promise.all(roots.map((r) => realpath(path.resolve(r)).catch(() => path.resolve(r))));
  const inside = (f: string) => real.some((r) => f === r || f.startsWith(r.endsWith(path.sep) ? r : r + path.sep));
  return async (file) => {
    const abs = path.resolve(file);
    const resolved = await realpath(abs).catch(() => undefined);
    return resolved !== undefined && inside(resolved);
  };
}

/** A folder a client names on a server: inside a library root (after links), or refused (403). */
export async function libraryFolder(roots: string[], given: string): Promise<string> {
  if (!roots.length) throw new ForbiddenError('this server indexes no folders in place: start it with `vidembed serve --library DIR`');
  const candidates = path.isAbsolute(given) ? [given] : roots.map((r) => path.join(r, given));
  const guard = await rootGuard(roots);
  for (const c of candidates) {
    const st = await stat(c).catch(() => undefined);
    if (st?.isDirectory() && (await guard(c))) return realpath(c);
  }
  throw new ForbiddenError(`${given} is not a folder inside this server's library folders (${roots.length} configured with --library)`);
}

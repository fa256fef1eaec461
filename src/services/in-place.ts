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
import { FootageUnavailableError, isVideoFile, openFootage, walkFootage } from './footage-files.js';
import type { Library } from './library.js';

export class InPlaceService {
  constructor(private readonly lib: Library) {}

  /**
   * Indexes one file where it lies (the user names it: a file deleted from the collection before
   * comes back): refused unless it is a video; the same fingerprint in the collection is the same
   * video (at a new path when the old one is gone: it moved).
   */
  async add(p: Principal, collectionIdOrName: string, file: string, opts: { force?: boolean } = {}): Promise<UploadVideoResponse> {
    const collection = await this.lib.collection(p, collectionIdOrName);
    const real = await realpath(path.resolve(file)).catch(() => undefined);
    if (!real) throw new NotFoundError(`file not found: ${file}`);
    return this.addTo(collection, real, { ...opts, given: file, readmit: true });
  }

  /**
   * Indexes the file at `file` (a real path), reading it only through a checked, open descriptor
   * (src/services/footage-files.ts openFootage), so what is fingerprinted and probed is the file
   * that is recorded.
   */
  private async addTo(
    collection: CollectionRow,
    file: string,
    opts: { force?: boolean; given?: string; readmit?: boolean; roots?: string[] } = {},
  ): Promise<UploadVideoResponse & { moved_from?: string }> {
    const { lib } = this;
    const name = opts.given ?? file;
    const opened = await openFootage({ path: file, roots: opts.roots, forbidden: [lib.paths.home] }).catch((err: unknown) => {
      if (err instanceof FootageUnavailableError) throw err.reason.startsWith('is not a regular file') ? new BadRequestError(`${name} is not a regular file`) : new NotFoundError(`${name} ${err.reason}`);
      throw err;
    });
    let seen: { path: string; filename: string; size_bytes: number; fingerprint: string; file_mtime: string };
    try {
      await lib.checkVideo(await opened.processPath(), name);
      seen = { path: file, filename: path.basename(file), size_bytes: opened.size, fingerprint: await opened.fingerprint(), file_mtime: opened.mtime };
    } finally {
      await opened.close();
    }
    if (opts.readmit) await lib.catalog.folders.include(collection.id, seen.fingerprint);
    const existing = opts.force ? undefined : await lib.catalog.videos.byFingerprint(collection.id, seen.fingerprint);
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
   * followed by its fingerprint, gone or replaced: reported missing with the reason). Links are
   * followed only when they lead inside `roots` (a server's library roots), or locally inside the
   * collection's folders; the others are listed as skipped. Files deleted from the collection stay
   * out unless `includeDeleted`.
   */
  async rescan(p: Principal, collectionIdOrName: string, opts: { roots?: string[]; includeDeleted?: boolean } = {}): Promise<RescanResponse> {
    const { lib } = this;
    const collection = await this.lib.collection(p, collectionIdOrName);
    const roots = opts.roots ?? (lib.libraryRoots.length ? lib.libraryRoots : undefined);
    const guard = roots ? await rootGuard(roots) : undefined;
    const folders = await lib.catalog.folders.list(collection.id);
    const out: RescanResponse = { collection_id: collection.id, collection_name: collection.name, folders, added: [], changed: [], moved: [], missing: [], unchanged: 0, skipped: [] };
    const skip = (file: string, reason: string) => out.skipped.push({ file, reason });

    // What is on disk now, by real path.
    const onDisk = new Set<string>();
    for (const dir of folders) {
      if (guard && !(await guard(dir))) {
        skip(dir, 'outside the library folders this server was started with');
        continue;
      }
      const files = await walkFootage(dir, roots ?? folders, skip).catch(() => undefined);
      if (!files) {
        skip(dir, 'folder not found');
        continue;
      }
      for (const f of files) {
        if (!isVideoFile(f)) skip(f, 'not a video file (by its extension)');
        else onDisk.add(f);
      }
    }

    // The videos in place: still there (unchanged or changed), or gone or replaced for now.
    const videos = (await lib.catalog.videos.listByCollection(collection.id)).filter((v) => v.fingerprint !== null);
    const known = new Set(videos.map((v) => v.path));
    const gone: { video: VideoRow; reason: string }[] = [];
    for (const v of videos) {
      let opened;
      try {
        opened = await openFootage({ path: v.path, roots, forbidden: [lib.paths.home] });
      } catch (err) {
        if (!(err instanceof FootageUnavailableError)) throw err;
        gone.push({ video: v, reason: err.reason });
        continue;
      }
      try {
        onDisk.delete(opened.realPath);
        known.add(opened.realPath);
        if (opened.realPath === v.path && opened.size === v.size_bytes && opened.mtime === v.file_mtime) {
          out.unchanged++;
          continue;
        }
        // Changed, or recorded at a path with links in its folders (kept from now on by its real path).
        const fingerprint = await opened.fingerprint();
        await lib.catalog.videos.fileSeen(v.id, { path: opened.realPath, filename: path.basename(opened.realPath), size_bytes: opened.size, fingerprint, file_mtime: opened.mtime });
        if (fingerprint === v.fingerprint) out.unchanged++;
        else {
          await this.reprocess(v.id);
          out.changed.push({ video_id: v.id, file: opened.realPath });
        }
      } finally {
        await opened.close();
      }
    }

    // New files: a gone video's fingerprint (moved or renamed), a file deleted from the collection
    // (left out), else a new video.
    const goneByFingerprint = new Map(gone.map((g) => [g.video.fingerprint!, g]));
    const excluded = await lib.catalog.folders.excluded(collection.id);
    for (const f of [...onDisk].sort()) {
      if (known.has(f)) continue;
      try {
        const opened = await openFootage({ path: f, roots: roots ?? folders, forbidden: [lib.paths.home] });
        let seen;
        try {
          seen = { path: f, filename: path.basename(f), size_bytes: opened.size, fingerprint: await opened.fingerprint(), file_mtime: opened.mtime };
        } finally {
          await opened.close();
        }
        if (excluded.has(seen.fingerprint)) {
          if (!opts.includeDeleted) {
            skip(f, 'deleted from this collection (`vidembed rescan --include-deleted` or `vidembed upload --in-place FILE` adds it again)');
            continue;
          }
          await lib.catalog.folders.include(collection.id, seen.fingerprint);
        }
        const was = goneByFingerprint.get(seen.fingerprint);
        if (was) {
          await lib.catalog.videos.fileSeen(was.video.id, seen);
          goneByFingerprint.delete(seen.fingerprint);
          out.moved.push({ video_id: was.video.id, from: was.video.path, to: f });
          continue;
        }
        const added = await this.addTo(collection, f, { roots: roots ?? folders });
        if (added.duplicate) skip(f, `the same file as ${added.video_id}`);
        else out.added.push({ video_id: added.video_id, file: f });
      } catch (err) {
        skip(f, err instanceof FootageUnavailableError ? err.reason : errorMessage(err).replace(`${f} is not a video: `, 'not a video: '));
      }
    }
    for (const g of goneByFingerprint.values()) out.missing.push({ video_id: g.video.id, file: g.video.path, reason: g.reason });
    return out;
  }

  /**
   * A server's scan (`POST /collections/{id}/library-scan`): only inside the library roots its
   * admin configured. A folder named is resolved inside a root (links followed; out of every root:
   * 403), remembered for the collection and scanned with the collection's other folders.
   */
  async libraryScan(p: Principal, collectionIdOrName: string, req: { path?: string; include_deleted?: boolean }, roots: string[]): Promise<RescanResponse> {
    const collection = await this.lib.collection(p, collectionIdOrName);
    if (!roots.length) throw new ForbiddenError('this server indexes no folders in place: its admin starts it with `vidembed serve --library DIR`');
    if (req.path !== undefined) await this.lib.catalog.folders.add(collection.id, await libraryFolder(roots, req.path));
    return this.rescan(p, collection.id, { roots, includeDeleted: req.include_deleted === true });
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

/**
 * Search by example, measured on a half's library (built by ensureLibrary): each item's picture,
 * changed the way an editor's reference still differs from the footage — cropped to the central
 * 80 %, brighter (+0.06) and more saturated (×1.3), re-encoded as JPEG — is the query
 * (`image_path`); for a video item, a frame grab at 40 % of its length, changed the same way.
 * Recall@1 is the share whose own item comes first; chance is 1/n.
 *
 * Then `like`: a few items are re-encoded at another size and bitrate and added to the library;
 * each copy, as `like {video_id}`, must find its original first (and never itself).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalEngine } from '../src/runtime/engine.js';
import { Worker } from '../src/runtime/worker.js';
import type { CatalogRow } from './catalog.js';
import { run } from './clips.js';
import { libraryFileName } from './search-quality.js';

export const QUERY_CHANGE = 'crop=trunc(iw*0.4)*2:trunc(ih*0.4)*2,eq=brightness=0.06:saturation=1.3';

/**
 * The picture query of issue 29, fixed once: "a cropped (70%), colour-shifted copy" — the central
 * 70 % of the width and of the height, the hues turned by 30° and saturated ×1.3, a little brighter
 * (+0.06), re-encoded as JPEG. Chosen before any measurement and never changed after.
 */
export const CROP_SHIFT_CHANGE = 'crop=trunc(iw*0.35)*2:trunc(ih*0.35)*2,hue=h=30:s=1.3,eq=brightness=0.06';

export interface ExampleQuality {
  n: number;
  recallAt1: number;
  chanceAt1: number;
  ranks: { item: string; rank: number; top: string }[];
}

const r3 = (x: number): number => Math.round(x * 1000) / 1000;
const fileOf = libraryFileName;

/** The changed picture of an item (made once into `dir`). */
export async function queryPicture(r: CatalogRow, dir: string, durationOf: (r: CatalogRow) => number, change: string = QUERY_CHANGE): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const out = join(dir, `${r.name}.${change === QUERY_CHANGE ? 'query' : changeTag(change)}.jpg`);
  if (!existsSync(out)) {
    const seek = r.kind === 'video' ? ['-ss', (durationOf(r) * 0.4).toFixed(2)] : [];
    await run(['-y', ...seek, '-i', r.file, '-frames:v', '1', '-vf', change, '-q:v', '4', out]);
  }
  return out;
}

/** A short file-name tag of a change (its hash), so pictures of different changes never mix. */
function changeTag(change: string): string {
  let h = 2166136261;
  for (let i = 0; i < change.length; i++) h = Math.imul(h ^ change.charCodeAt(i), 16777619);
  return `q${(h >>> 0).toString(36)}`;
}

/**
 * Each item's changed picture as the query (`change`: QUERY_CHANGE, or CROP_SHIFT_CHANGE, issue
 * 29's); `pictureCheck: false` measures the picture embedding alone (no geometric check of the
 * top candidates' keyframes: src/search/picture-check.ts). `seenFirst`: right first results that
 * say *seen*.
 */
export async function evaluateImageQueries(
  engine: LocalEngine,
  collectionId: string,
  rows: CatalogRow[],
  dir: string,
  opts: { change?: string; pictureCheck?: boolean } = {},
): Promise<ExampleQuality & { seenFirst: number }> {
  const videos = await engine.listVideos(collectionId, { limit: 1000 });
  const duration = new Map(videos.map((v) => [v.filename, v.duration ?? 0]));
  const ranks: ExampleQuality['ranks'] = [];
  let seenFirst = 0;
  for (const r of rows) {
    const picture = await queryPicture(r, dir, (x) => duration.get(fileOf(x)) ?? 0, opts.change);
    const res = await engine.search(collectionId, { image_path: picture, top_k: 100 }, { pictureCheck: opts.pictureCheck });
    const at = res.results.findIndex((x) => x.filename === fileOf(r));
    if (at === 0 && res.results[0].kinds?.includes('seen')) seenFirst++;
    ranks.push({ item: r.name, rank: at < 0 ? rows.length : at + 1, top: res.results[0]?.filename ?? '' });
  }
  return { n: rows.length, recallAt1: r3(ranks.filter((q) => q.rank === 1).length / rows.length), chanceAt1: r3(1 / rows.length), ranks, seenFirst };
}

/**
 * The "N of 8": eight photos of a half, one from each of the first eight sources (Debian
 * packages) in catalog order, each its source's first photo. Fixed before any measurement.
 */
export function eightPhotos(rows: CatalogRow[]): CatalogRow[] {
  const bySource = new Map<string, CatalogRow>();
  for (const r of rows) if (r.kind === 'photo' && !bySource.has(r.source)) bySource.set(r.source, r);
  return [...bySource.values()].slice(0, 8);
}

export interface LikeOutcome {
  item: string;
  /** Rank of the original among the results of `like {copy}`. */
  rank: number;
  /** Whether the copy came back in its own results (it never may). */
  selfReturned: boolean;
}

/**
 * Re-encodes `picks` (items already in the library) at half the width and a low bitrate, adds the
 * copies, and asks `like` with each copy. The copies stay in the collection (a separate home).
 */
export async function evaluateLike(engine: LocalEngine, collectionId: string, picks: CatalogRow[], dir: string): Promise<LikeOutcome[]> {
  mkdirSync(dir, { recursive: true });
  const videos = await engine.listVideos(collectionId, { limit: 1000 });
  const originals = new Map(videos.map((v) => [v.filename, v.video_id]));
  const copies: { item: CatalogRow; id: string }[] = [];
  for (const r of picks) {
    const original = (await engine.videoFile(originals.get(fileOf(r))!)).path!;
    const out = join(dir, `${r.name}.copy.mp4`);
    if (!existsSync(out)) {
      await run(['-y', '-i', original, '-vf', "scale='2*trunc(iw/4)':-2", '-c:v', 'libx264', '-preset', 'veryfast', '-b:v', '300k', '-an', out]);
    }
    copies.push({ item: r, id: (await engine.uploadVideo(collectionId, { path: out, filename: `copy of ${fileOf(r)}`, force: true })).video_id });
  }
  await new Worker(engine, { idleExitMs: 200, pollMs: 50 }).run(new AbortController().signal);
  const out: LikeOutcome[] = [];
  for (const c of copies) {
    const res = await engine.search(collectionId, { like: { video_id: c.id }, top_k: 100 });
    const at = res.results.findIndex((x) => x.filename === fileOf(c.item));
    out.push({ item: c.item.name, rank: at < 0 ? 1000 : at + 1, selfReturned: res.results.some((x) => x.video_id === c.id) });
  }
  return out;
}

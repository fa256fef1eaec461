/**
 * Search by picture (issue 29): each item's picture changed — CROP_SHIFT_CHANGE (the central 70 %,
 * hues turned, brighter: the issue's "cropped (70%), colour-shifted copy") and, for comparison, the
 * milder QUERY_CHANGE — searched with `image_path` twice in the same run: the picture embedding
 * alone (`pictureCheck: false`, the release before) and with the geometric check of the top
 * candidates' keyframes (src/search/picture-check.ts). Per item: the rank of its own clip before
 * and after, the first result's evidence, every result's evidence parts (eval/fit-picture.ts fits
 * the seen curve of pictures on the tuning half's), the time per query.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { SearchResult } from '../src/api/types.js';
import type { LocalEngine } from '../src/runtime/engine.js';
import type { CatalogRow } from './catalog.js';
import { CROP_SHIFT_CHANGE, eightPhotos, QUERY_CHANGE, queryPicture } from './example-queries.js';
import { libraryFileName } from './search-quality.js';

export type PictureChange = 'crop-shift' | 'mild';
export const PICTURE_CHANGES: Record<PictureChange, string> = { 'crop-shift': CROP_SHIFT_CHANGE, mild: QUERY_CHANGE };

export interface PictureOutcome {
  item: string;
  source: string;
  kind: CatalogRow['kind'];
  change: PictureChange;
  /** Rank of the item's own clip with the picture embedding alone (no geometric check), and with it (1000: not in the first 20). */
  rankBefore: number;
  rank: number;
  first: { filename: string; confidence: number; label: string; kinds: string[]; parts?: Record<string, number> };
  /** Every result with its evidence parts (the fit's samples): right or not. */
  results: Array<{ right: boolean; parts: Record<string, number>; confidence: number }>;
  msBefore: number;
  ms: number;
}

export async function evaluatePictureQueries(engine: LocalEngine, collectionId: string, rows: CatalogRow[], dir: string, changes: PictureChange[]): Promise<PictureOutcome[]> {
  const videos = await engine.listVideos(collectionId, { limit: 1000 });
  const duration = new Map(videos.map((v) => [v.filename, v.duration ?? 0]));
  mkdirSync(dir, { recursive: true });
  const out: PictureOutcome[] = [];
  for (const change of changes) {
    for (const r of rows) {
      const picture = await queryPicture(r, dir, (x) => duration.get(libraryFileName(x)) ?? 0, PICTURE_CHANGES[change]);
      const right = (x: SearchResult) => x.filename === libraryFileName(r);
      let t0 = performance.now();
      const before = await engine.search(collectionId, { image_path: picture, top_k: 20 }, { pictureCheck: false });
      const msBefore = performance.now() - t0;
      t0 = performance.now();
      const res = await engine.search(collectionId, { image_path: picture, top_k: 20 }, { explain: true });
      const ms = performance.now() - t0;
      const at = res.results.findIndex(right);
      const atBefore = before.results.findIndex(right);
      const f = res.results[0];
      out.push({
        item: r.name,
        source: r.source,
        kind: r.kind,
        change,
        rankBefore: atBefore < 0 ? 1000 : atBefore + 1,
        rank: at < 0 ? 1000 : at + 1,
        first: { filename: f?.filename ?? '', confidence: f?.confidence ?? 0, label: f?.confidence_label ?? '', kinds: f?.kinds ?? [], parts: f?.evidence?.seen?.parts },
        results: res.results.map((x) => ({ right: right(x), parts: x.evidence?.seen?.parts ?? {}, confidence: x.confidence ?? 0 })),
        msBefore,
        ms,
      });
    }
  }
  return out;
}

export interface PictureFigures {
  change: PictureChange;
  group: 'photos' | 'eight photos' | 'video frames';
  n: number;
  r1Before: number;
  r1: number;
  r5Before: number;
  r5: number;
  /** Right first results that say *seen*. */
  seenFirst: number;
  high: number;
  highRight: number;
  medianMsBefore: number;
  medianMs: number;
}

/** Figures per change and group: all photos, the eight (eightPhotos), video frames. */
export function pictureFigures(out: PictureOutcome[], rows: CatalogRow[]): PictureFigures[] {
  const eight = new Set(eightPhotos(rows).map((r) => r.name));
  const groups: Array<[PictureFigures['group'], (o: PictureOutcome) => boolean]> = [
    ['photos', (o) => o.kind === 'photo'],
    ['eight photos', (o) => eight.has(o.item)],
    ['video frames', (o) => o.kind === 'video'],
  ];
  const figures: PictureFigures[] = [];
  for (const change of Object.keys(PICTURE_CHANGES) as PictureChange[]) {
    for (const [group, pick] of groups) {
      const xs = out.filter((o) => o.change === change && pick(o));
      if (!xs.length) continue;
      const med = (f: (o: PictureOutcome) => number) => Math.round(xs.map(f).sort((a, b) => a - b)[xs.length >> 1]);
      const high = xs.filter((o) => o.first.label === 'high');
      figures.push({
        change,
        group,
        n: xs.length,
        r1Before: xs.filter((o) => o.rankBefore === 1).length,
        r1: xs.filter((o) => o.rank === 1).length,
        r5Before: xs.filter((o) => o.rankBefore <= 5).length,
        r5: xs.filter((o) => o.rank <= 5).length,
        seenFirst: xs.filter((o) => o.rank === 1 && o.first.kinds.includes('seen')).length,
        high: high.length,
        highRight: high.filter((o) => o.rank === 1).length,
        medianMsBefore: med((o) => o.msBefore),
        medianMs: med((o) => o.ms),
      });
    }
  }
  return figures;
}

export function formatPictureFigures(label: string, figures: PictureFigures[]): string {
  return figures
    .map(
      (f) =>
        `${label} ${f.change}, ${f.group}: R@1 before ${f.r1Before}/${f.n}, after ${f.r1}/${f.n}; R@5 ${f.r5Before} → ${f.r5}; right first says seen ${f.seenFirst}/${f.r1}; first labelled high ${f.high} (right ${f.highRight}); median ${f.medianMsBefore} → ${f.medianMs} ms a query`,
    )
    .join('\n');
}

/**
 * `node dist/eval/picture-queries.js HOME [--half tuning|check] [--variant base|imagenet] [--out FILE]`:
 * search by picture on a half's picture-only library (`eval-<half>` in HOME/<variant>, built by
 * eval/mixed-build.ts or `npm run eval -- search`): each item's picture changed by the issue's
 * transform (CROP_SHIFT_CHANGE: the central 70 %, hues turned, brighter) and, for comparison, by
 * the milder QUERY_CHANGE, searched with `image_path`. Prints per item the rank of its own clip and
 * the first result's evidence; photos (the target: "on photos you never saw") apart from
 * video frames. With `--out`, every weighed result's evidence parts go to FILE (the picture fit).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SearchResult } from '../src/api/types.js';
import { loadSearchCatalog, type CatalogRow } from './catalog.js';
import { CROP_SHIFT_CHANGE, QUERY_CHANGE, queryPicture } from './example-queries.js';
import { openVariant, type Variant } from './mixed-library.js';
import { libraryFileName } from './search-quality.js';
import { inHalf, type Half } from './split.js';

export interface PictureOutcome {
  item: string;
  source: string;
  kind: CatalogRow['kind'];
  change: 'crop-shift' | 'mild';
  rank: number;
  first: { filename: string; confidence: number; label: string; kinds: string[]; parts?: Record<string, number> };
  /** Every result with its evidence parts (the fit's samples): right or not. */
  results: Array<{ right: boolean; parts: Record<string, number>; confidence: number }>;
  ms: number;
}

async function main(): Promise<void> {
  const [home] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const arg = (name: string) => {
    const at = process.argv.indexOf(name);
    return at >= 0 ? process.argv[at + 1] : undefined;
  };
  if (!home) throw new Error('usage: node dist/eval/picture-queries.js HOME [--half tuning|check] [--variant base|imagenet] [--out FILE]');
  const half = (arg('--half') ?? 'tuning') as Half;
  const variant = (arg('--variant') ?? 'imagenet') as Variant;
  const changes = (arg('--changes') ?? 'crop-shift,mild').split(',') as PictureOutcome['change'][];
  const rows = inHalf(loadSearchCatalog(), half);
  const engine = await openVariant(home, variant);
  const out: PictureOutcome[] = [];
  try {
    const col = (await engine.listCollections({ limit: 1000 })).find((c) => c.name === `eval-${half}`);
    if (!col) throw new Error(`${home}/${variant} holds no eval-${half} collection: build it with eval/mixed-build.ts`);
    const videos = await engine.listVideos(col.id, { limit: 1000 });
    const duration = new Map(videos.map((v) => [v.filename, v.duration ?? 0]));
    const dir = join(home, variant, 'picture-queries');
    mkdirSync(dir, { recursive: true });
    for (const change of changes) {
      for (const r of rows) {
        const picture = await queryPicture(r, dir, (x) => duration.get(libraryFileName(x)) ?? 0, change === 'mild' ? QUERY_CHANGE : CROP_SHIFT_CHANGE);
        const t0 = performance.now();
        const res = await engine.search(col.id, { image_path: picture, top_k: 20 }, { explain: true });
        const ms = performance.now() - t0;
        const right = (x: SearchResult) => x.filename === libraryFileName(r);
        const at = res.results.findIndex(right);
        const f = res.results[0];
        out.push({
          item: r.name,
          source: r.source,
          kind: r.kind,
          change,
          rank: at < 0 ? 1000 : at + 1,
          first: { filename: f?.filename ?? '', confidence: f?.confidence ?? 0, label: f?.confidence_label ?? '', kinds: f?.kinds ?? [], parts: f?.evidence?.seen?.parts },
          results: res.results.map((x) => ({ right: right(x), parts: x.evidence?.seen?.parts ?? {}, confidence: x.confidence ?? 0 })),
          ms,
        });
      }
    }
  } finally {
    await engine.close();
  }
  for (const change of changes) {
    for (const kind of ['photo', 'video'] as const) {
      const xs = out.filter((o) => o.change === change && o.kind === kind);
      if (!xs.length) continue;
      const r1 = xs.filter((o) => o.rank === 1).length;
      const r5 = xs.filter((o) => o.rank <= 5).length;
      const high = xs.filter((o) => o.first.label === 'high');
      const seen = xs.filter((o) => o.rank === 1 && o.first.kinds.includes('seen')).length;
      const ms = xs.map((o) => o.ms).sort((a, b) => a - b);
      process.stderr.write(
        `${half} ${variant} ${change} ${kind}s: R@1 ${r1}/${xs.length}, R@5 ${r5}/${xs.length}, first says seen ${seen}/${r1}; first labelled high ${high.length} (right ${high.filter((o) => o.rank === 1).length}); median ${ms[ms.length >> 1].toFixed(0)} ms\n`,
      );
      for (const o of xs) if (o.rank !== 1 || process.argv.includes('-v')) process.stderr.write(`  ${String(o.rank).padStart(4)}  ${o.item}  → ${o.first.filename} ${o.first.label} ${o.first.confidence} ${JSON.stringify(o.first.parts ?? {})}\n`);
    }
  }
  const file = arg('--out');
  if (file) writeFileSync(file, JSON.stringify({ half, variant, commit: process.env.GIT_COMMIT ?? '', outcomes: out }, null, 1));
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`picture-queries failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);

/**
 * Text → photo retrieval with the perception embedder: every catalog photo is embedded as a
 * one-frame segment, every caption is a query; the rank of the photo it describes gives
 * recall@1, recall@5 and the mean reciprocal rank.
 */
import { decodeImage } from '../src/media/frames.js';
import type { Frame } from '../src/media/types.js';
import { PerceptionEmbedder } from '../src/embedders/perception.js';
import type { CatalogRow } from './catalog.js';
import { EVAL_FRAME_SIDE } from './framing-eval.js';

export interface RetrievalResult {
  n: number;
  recallAt1: number;
  recallAt5: number;
  mrr: number;
  /** Recall@1 of a random ranking, for scale. */
  chanceAt1: number;
  queries: Array<{ photo: string; query: string; rank: number; top: string }>;
  ms: { total: number; embedPerPhoto: number };
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

const r3 = (x: number): number => Math.round(x * 1000) / 1000;

export async function evaluateRetrieval(
  photos: CatalogRow[],
  frameOf: (row: CatalogRow) => Promise<Frame> = (r) => decodeImage(r.file, EVAL_FRAME_SIDE),
  log: (s: string) => void = () => {},
): Promise<RetrievalResult> {
  const t0 = performance.now();
  const embedder = new PerceptionEmbedder();
  await embedder.load();
  const items: Array<{ row: CatalogRow; vector: Float32Array }> = [];
  for (const row of photos) {
    const frame = await frameOf(row);
    // A fresh keyframe for every photo: no reuse of the previous segment's analysis.
    const e = await embedder.embedSegment([{ ...frame, t: 0 }], { start: 0, end: 1 });
    items.push({ row, vector: e.vector });
  }
  const tEmbed = performance.now() - t0;
  const queries: RetrievalResult['queries'] = [];
  for (const { row } of items) {
    const q = (await embedder.embedText(row.caption)).vector;
    const order = items.map((it) => ({ name: it.row.name, sim: dot(q, it.vector) })).sort((a, b) => b.sim - a.sim);
    const rank = order.findIndex((o) => o.name === row.name) + 1;
    queries.push({ photo: row.name, query: row.caption, rank, top: order[0].name });
    log(`  ${String(rank).padStart(2)}  ${row.caption.slice(0, 70)}`);
  }
  await embedder.dispose();
  const n = queries.length;
  return {
    n,
    recallAt1: r3(queries.filter((q) => q.rank === 1).length / n),
    recallAt5: r3(queries.filter((q) => q.rank <= 5).length / n),
    mrr: r3(queries.reduce((s, q) => s + 1 / q.rank, 0) / n),
    chanceAt1: r3(1 / n),
    queries,
    ms: { total: Math.round(performance.now() - t0), embedPerPhoto: Math.round(tEmbed / Math.max(1, n)) },
  };
}

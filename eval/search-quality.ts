/**
 * Search quality as users get it: every catalog item of a half becomes a video in a collection of
 * its own half (photos as 6 s still clips, videos as they are), ingested by the real engine (same
 * pipeline, analyzers, store and hybrid search as `vidembed upload` / `search`), then each item's
 * text — written by a person who looked at it — is a query. The rank of the item it describes
 * gives recall@1, recall@5 and MRR (each with a 95 % bootstrap interval); chance is 1/n. The query is
 * what a person would type (`more/`'s `query` column) where the catalog has one, else the caption
 * (`column` 'query'), or the caption always (`column` 'caption'): the two are reported apart. Halves never share a
 * collection, so nothing
 * measured on the check half depends on the tuning half or the other way round.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { LocalEngine } from '../src/runtime/engine.js';
import { Worker } from '../src/runtime/worker.js';
import type { SearchResult } from '../src/api/types.js';
import { QUERY_GROUPS, queryText, type CatalogRow, type QueryColumn, type QueryGroup } from './catalog.js';
import { bootstrapInterval, labelReliability, type LabelBin } from './metrics.js';
import { pool, run } from './clips.js';
import type { ShortQueryFigures } from './short-queries.js';
import type { Half } from './split.js';

export interface QueryOutcome {
  item: string;
  group: QueryGroup;
  query: string;
  rank: number;
  top: string;
  /** The right item's result, when it was in the answer. */
  hit?: SearchResult;
  /** The first result (what the user sees first). */
  first?: SearchResult;
  /** The first five results: right or not, with their confidence (the reliability table). */
  top5: Array<{ right: boolean; confidence: number; label: string }>;
}

/** R@1, R@5 and MRR of a set of queries, each with its 95 % bootstrap interval (eval/metrics.ts). */
export interface Figures {
  n: number;
  recallAt1: number;
  recallAt5: number;
  mrr: number;
  interval: { recallAt1: [number, number]; recallAt5: [number, number]; mrr: [number, number] };
}

export interface SearchQuality extends Figures {
  /** Short queries ("a dog", several right answers; eval/short-queries.ts): column query only. */
  short?: ShortQueryFigures;
  half: Half;
  /** Which text of each item was the query (`query`: what a person would type, where written; else the caption). */
  column: QueryColumn;
  chanceAt1: number;
  chanceAt5: number;
  /** Per query kind (scene, animal, object, people, action). */
  byGroup: Partial<Record<QueryGroup, Figures>>;
  /** The items that have a written `query` (more/) alone: with column `query`, only typed-style queries. */
  written?: Figures;
  queries: QueryOutcome[];
  /** Mean confidence of right answers at rank 1 vs of wrong first answers (separation). */
  confidence?: { rightFirst: number; wrongFirst: number };
  /** Share right per confidence label: of the first results, and of the first five. */
  reliability: { first: LabelBin[]; top5: LabelBin[] };
  ms: { ingest: number; search: number };
}

const r3 = (x: number): number => Math.round(x * 1000) / 1000;

/** A photo as a 6 s still clip (what a user would upload; the pipeline sees 2 segments). */
export async function stillClip(photo: string, out: string): Promise<string> {
  if (!existsSync(out)) {
    await run(['-y', '-loop', '1', '-i', photo, '-t', '6', '-r', '25', '-vf', "scale='2*trunc(min(960,iw)/2)':-2,format=yuv420p", '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-an', out]);
  }
  return out;
}

export interface LibraryOptions {
  /** Engine home (kept across runs by `--home`); the library is built once per half. */
  home: string;
  log?: (s: string) => void;
  /** The collection's embedder (default: the engine's default, the perception tier). */
  model?: string;
}

/** The half's collection in `home`, ingested through the real engine (built once, then reused). */
/** The file name an eval item has in its library (photos are ingested as 6 s still clips). */
export const libraryFileName = (r: Pick<CatalogRow, 'kind' | 'name'>): string => (r.kind === 'photo' ? `${r.name}.mp4` : r.name);

export async function ensureLibrary(engine: LocalEngine, rows: CatalogRow[], half: Half, opts: LibraryOptions): Promise<string> {
  const name = `eval-${half}`;
  const existing = (await engine.listCollections({ limit: 1000 })).find((c) => c.name === name);
  if (existing && existing.video_count === rows.length) return existing.id;
  if (existing) throw new Error(`${opts.home} holds a partial ${name} collection: remove the directory and run again`);
  const clipDir = join(opts.home, 'clips');
  mkdirSync(clipDir, { recursive: true });
  const id = (await engine.createCollection({ name, model: opts.model })).collection_id;
  const files = await pool(rows, 2, async (r) => (r.kind === 'photo' ? stillClip(r.file, join(clipDir, `${r.name}.mp4`)) : r.file));
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    await engine.uploadVideo(id, { path: files[i], filename: libraryFileName(r) });
  }
  const t0 = performance.now();
  opts.log?.(`  ${half}: ingesting ${rows.length} items…`);
  await new Worker(engine, { idleExitMs: 200, pollMs: 50 }).run(new AbortController().signal);
  opts.log?.(`  ${half}: ingested in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return id;
}

/** R@1, R@5, MRR with bootstrap intervals, from ranks. */
export function figuresOf(ranks: number[]): Figures {
  const r1 = (xs: number[]) => xs.filter((r) => r === 1).length / Math.max(1, xs.length);
  const r5 = (xs: number[]) => xs.filter((r) => r <= 5).length / Math.max(1, xs.length);
  const mrr = (xs: number[]) => xs.reduce((s, r) => s + 1 / r, 0) / Math.max(1, xs.length);
  return {
    n: ranks.length,
    recallAt1: r3(r1(ranks)),
    recallAt5: r3(r5(ranks)),
    mrr: r3(mrr(ranks)),
    interval: { recallAt1: bootstrapInterval(ranks, r1), recallAt5: bootstrapInterval(ranks, r5), mrr: bootstrapInterval(ranks, mrr) },
  };
}

export async function evaluateSearchQuality(
  engine: LocalEngine,
  collectionId: string,
  rows: CatalogRow[],
  half: Half,
  log: (s: string) => void = () => {},
  column: QueryColumn = 'query',
): Promise<SearchQuality> {
  const t0 = performance.now();
  const queries: QueryOutcome[] = [];
  const fileOf = libraryFileName;
  for (const r of rows) {
    const text = queryText(r, column);
    const res = await engine.search(collectionId, { text, top_k: 100 });
    const at = res.results.findIndex((x) => x.filename === fileOf(r));
    const rank = at < 0 ? rows.length : at + 1;
    const top5 = res.results.slice(0, 5).map((x) => ({ right: x.filename === fileOf(r), confidence: x.confidence ?? 0, label: x.confidence_label ?? 'low' }));
    queries.push({ item: r.name, group: r.group, query: text, rank, top: res.results[0]?.filename ?? '', hit: res.results[at], first: res.results[0], top5 });
    log(`  ${String(rank).padStart(3)}  ${top5[0]?.label.padEnd(6) ?? ''} ${text.slice(0, 80)}`);
  }
  const n = queries.length;
  const conf = (qs: QueryOutcome[]) => (qs.length ? r3(qs.reduce((s, q) => s + (q.first?.confidence ?? 0), 0) / qs.length) : 0);
  const hasConfidence = queries.some((q) => typeof q.first?.confidence === 'number');
  const byGroup: SearchQuality['byGroup'] = {};
  for (const g of QUERY_GROUPS) {
    const qs = queries.filter((q) => q.group === g);
    if (qs.length) byGroup[g] = figuresOf(qs.map((q) => q.rank));
  }
  const labels = ['high', 'medium', 'low'] as const;
  const writtenRanks = queries.filter((_, i) => rows[i].query !== undefined).map((q) => q.rank);
  return {
    half,
    column,
    ...figuresOf(queries.map((q) => q.rank)),
    chanceAt1: r3(1 / n),
    chanceAt5: r3(Math.min(1, 5 / n)),
    byGroup,
    written: writtenRanks.length ? figuresOf(writtenRanks) : undefined,
    queries,
    confidence: hasConfidence ? { rightFirst: conf(queries.filter((q) => q.rank === 1)), wrongFirst: conf(queries.filter((q) => q.rank !== 1)) } : undefined,
    reliability: {
      first: labelReliability(queries.flatMap((q) => q.top5.slice(0, 1).map((t) => ({ label: t.label, confidence: t.confidence, correct: t.right }))), labels),
      top5: labelReliability(queries.flatMap((q) => q.top5.map((t) => ({ label: t.label, confidence: t.confidence, correct: t.right }))), labels),
    },
    ms: { ingest: 0, search: Math.round(performance.now() - t0) },
  };
}

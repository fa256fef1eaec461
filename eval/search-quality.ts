/**
 * Search quality as users get it: every catalog item of a half becomes a video in a collection of
 * its own half (photos as 6 s still clips, videos as they are), ingested by the real engine (same
 * pipeline, analyzers, store and hybrid search as `vidembed upload` / `search`), then each item's
 * caption — written by a person who looked at it — is a query. The rank of the item it describes
 * gives recall@1, recall@5 and MRR; chance is 1/n. Halves never share a collection, so nothing
 * measured on the check half depends on the tuning half or the other way round.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { LocalEngine } from '../src/engine/engine.js';
import { Worker } from '../src/engine/worker.js';
import type { SearchResult } from '../src/api/types.js';
import type { CatalogRow } from './catalog.js';
import { pool, run } from './clips.js';
import type { Half } from './split.js';

export interface QueryOutcome {
  item: string;
  query: string;
  rank: number;
  top: string;
  /** The right item's result, when it was in the answer. */
  hit?: SearchResult;
  /** The first result (what the user sees first). */
  first?: SearchResult;
}

export interface SearchQuality {
  half: Half;
  n: number;
  recallAt1: number;
  recallAt5: number;
  mrr: number;
  chanceAt1: number;
  chanceAt5: number;
  queries: QueryOutcome[];
  /** Mean confidence of right answers at rank 1 vs of wrong first answers (separation). */
  confidence?: { rightFirst: number; wrongFirst: number };
  ms: { ingest: number; search: number };
}

const r3 = (x: number): number => Math.round(x * 1000) / 1000;

/** A photo as a 6 s still clip (what a user would upload; the pipeline sees 2 segments). */
async function stillClip(photo: string, out: string): Promise<string> {
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
    await engine.uploadVideo(id, { path: files[i], filename: r.kind === 'photo' ? `${r.name}.mp4` : r.name });
  }
  const t0 = performance.now();
  opts.log?.(`  ${half}: ingesting ${rows.length} items…`);
  await new Worker(engine, { idleExitMs: 200, pollMs: 50 }).run(new AbortController().signal);
  opts.log?.(`  ${half}: ingested in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return id;
}

export async function evaluateSearchQuality(engine: LocalEngine, collectionId: string, rows: CatalogRow[], half: Half, log: (s: string) => void = () => {}): Promise<SearchQuality> {
  const t0 = performance.now();
  const queries: QueryOutcome[] = [];
  const fileOf = (r: CatalogRow) => (r.kind === 'photo' ? `${r.name}.mp4` : r.name);
  for (const r of rows) {
    const res = await engine.search(collectionId, { text: r.caption, top_k: 100 });
    const at = res.results.findIndex((x) => x.filename === fileOf(r));
    const rank = at < 0 ? rows.length : at + 1;
    queries.push({ item: r.name, query: r.caption, rank, top: res.results[0]?.filename ?? '', hit: res.results[at], first: res.results[0] });
    log(`  ${String(rank).padStart(3)}  ${r.caption.slice(0, 80)}`);
  }
  const n = queries.length;
  const conf = (qs: QueryOutcome[]) => (qs.length ? r3(qs.reduce((s, q) => s + ((q.first as { confidence?: number } | undefined)?.confidence ?? 0), 0) / qs.length) : 0);
  const hasConfidence = queries.some((q) => typeof (q.first as { confidence?: number } | undefined)?.confidence === 'number');
  return {
    half,
    n,
    recallAt1: r3(queries.filter((q) => q.rank === 1).length / n),
    recallAt5: r3(queries.filter((q) => q.rank <= 5).length / n),
    mrr: r3(queries.reduce((s, q) => s + 1 / q.rank, 0) / n),
    chanceAt1: r3(1 / n),
    chanceAt5: r3(Math.min(1, 5 / n)),
    queries,
    confidence: hasConfidence ? { rightFirst: conf(queries.filter((q) => q.rank === 1)), wrongFirst: conf(queries.filter((q) => q.rank !== 1)) } : undefined,
    ms: { ingest: 0, search: Math.round(performance.now() - t0) },
  };
}

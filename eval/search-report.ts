/**
 * The human summary of the search eval (`npm run eval -- search`): per library (with and without
 * the ImageNet analyzer), per half and query column, R@1 / R@5 / MRR with their 95 % bootstrap
 * intervals, per query kind, the tuning–check gap, and the confidence labels' reliability.
 */
import { execFileSync } from 'node:child_process';
import type { QueryColumn } from './catalog.js';
import { BOOTSTRAP, formatLabelReliability } from './metrics.js';
import type { Figures, SearchQuality } from './search-quality.js';
import type { Half } from './split.js';
import { formatShortQueries } from './short-queries.js';

export type SearchReport = Record<string, Partial<Record<Half, Record<QueryColumn, SearchQuality>>>>;

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
const ci = (c: [number, number]): string => `[${(100 * c[0]).toFixed(0)}–${(100 * c[1]).toFixed(0)}]`;

export function formatFigures(f: Figures): string {
  return `R@1 ${pct(f.recallAt1)} ${ci(f.interval.recallAt1)}, R@5 ${pct(f.recallAt5)} ${ci(f.interval.recallAt5)}, MRR ${f.mrr.toFixed(3)} [${f.interval.mrr[0].toFixed(2)}–${f.interval.mrr[1].toFixed(2)}]`;
}

/** The commit the figures were measured on (`+dirty` when the tree has changes), or `unknown`. */
export function commitOf(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no', '--', 'src', 'eval'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return dirty ? `${head}+dirty` : head;
  } catch {
    return 'unknown';
  }
}

export function formatSearch(report: SearchReport, commit = commitOf()): string {
  const lines = [
    `SEARCH (query → the item it describes, through the real engine; each half its own collection; commit ${commit};`,
    `  [..] = 95 % bootstrap interval, ${BOOTSTRAP.resamples} resamples of the queries, seed ${BOOTSTRAP.seed};`,
    `  column "query" = what a person would type where written (more/), else the caption; "caption" = the caption always)`,
  ];
  for (const [variant, halves] of Object.entries(report)) {
    for (const [half, columns] of Object.entries(halves) as Array<[Half, Record<QueryColumn, SearchQuality>]>) {
      for (const q of Object.values(columns)) {
        lines.push(`  ${variant.padEnd(8)} ${half.padEnd(6)} ${q.column.padEnd(7)} n=${q.n}: ${formatFigures(q)} (chance ${pct(q.chanceAt1)} / ${pct(q.chanceAt5)})`);
        for (const [g, f] of Object.entries(q.byGroup)) lines.push(`      ${g.padEnd(7)} n=${String(f.n).padStart(2)}: ${formatFigures(f)}`);
        if (q.written) lines.push(`      more/ items alone (a written query) n=${q.written.n}: ${formatFigures(q.written)}`);
      }
    }
    const t = halves.tuning?.query;
    const c = halves.check?.query;
    if (t && c) lines.push(`  ${variant.padEnd(8)} tuning − check R@1 (column query): ${(t.recallAt1 - c.recallAt1).toFixed(3)}`);
  }
  lines.push('', 'SHORT QUERIES ("a dog", "fruit", "a boat": every item whose person-written text names it is right; eval/short-queries.ts)');
  for (const [variant, halves] of Object.entries(report)) {
    for (const [half, columns] of Object.entries(halves) as Array<[Half, Record<QueryColumn, SearchQuality>]>) {
      if (columns.query.short) lines.push(formatShortQueries(`${variant.padEnd(8)} ${half.padEnd(6)}`, columns.query.short));
    }
  }
  lines.push('', 'SEARCH CONFIDENCE (share of results that are the item asked for, by label; column query)');
  for (const [variant, halves] of Object.entries(report)) {
    for (const [half, columns] of Object.entries(halves) as Array<[Half, Record<QueryColumn, SearchQuality>]>) {
      const q = columns.query;
      lines.push(formatLabelReliability(`  ${variant} ${half}: first results`, q.reliability.first));
      lines.push(formatLabelReliability(`  ${variant} ${half}: first five results`, q.reliability.top5));
    }
  }
  return lines.join('\n') + '\n';
}

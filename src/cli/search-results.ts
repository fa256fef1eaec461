/**
 * The search answer on a terminal: likely matches (confidence high or medium) first, then the rest
 * under a "weaker matches" line, each keeping its rank (what `vidembed open N` plays); when nothing
 * is likely, one line says so before the weaker ones. `--json` and exports are not shaped here.
 */
import type { SearchResult } from '../api/types.js';
import { formatSeconds, formatTable } from './output.js';

/** A result the engine calls likely: confidence label high or medium (low = a weaker match). */
export function isLikely(r: Pick<SearchResult, 'confidence_label'>): boolean {
  return r.confidence_label === 'high' || r.confidence_label === 'medium';
}

export const WEAKER_LINE = 'weaker matches:';
export const NOTHING_LIKELY_LINE = 'no likely match; the closest ones are weak:';

/** The lines a person reads: likely first, then the weaker ones under their own line. */
export function formatSearchResults(results: SearchResult[], opts: { first: number; explain?: boolean; width?: number }): string {
  const head = ['rank', 'video', 'file', 'relevance', 'confidence', 'moment'];
  if (opts.explain) head.push('what was seen');
  const row = (r: SearchResult, rank: number): (string | number)[] => {
    const conf = r.confidence === undefined ? '' : `${r.confidence_label ?? ''} ${r.confidence.toFixed(2)}`.trim();
    const cells: (string | number)[] = [rank, r.video_id, r.filename, (r.relevance ?? r.similarity).toFixed(3), conf, `${formatSeconds(r.start)}–${formatSeconds(r.end)}`];
    if (opts.explain) {
      cells.push(
        `${r.description ?? ''}${r.matched_words?.length ? ` [matched: ${r.matched_words.join(', ')}]` : ''}${r.confidence_reason ? ` [confidence: ${r.confidence_reason}]` : ''}`,
      );
    }
    return cells;
  };
  const ranked = results.map((r, i) => ({ r, rank: opts.first + i }));
  const likely = ranked.filter((x) => isLikely(x.r));
  const weaker = ranked.filter((x) => !isLikely(x.r));
  const out: string[] = [];
  if (likely.length) out.push(formatTable(head, likely.map((x) => row(x.r, x.rank)), opts.width));
  if (weaker.length) {
    out.push(likely.length ? WEAKER_LINE : NOTHING_LIKELY_LINE);
    out.push(formatTable(head, weaker.map((x) => row(x.r, x.rank)), opts.width));
  }
  return out.join('\n') + '\n';
}

/**
 * The search answer on a terminal: likely matches (confidence high or medium) first, then the rest
 * under a "weaker matches" line, each keeping its rank (what `vidembed open N` plays); when nothing
 * is likely, one line says so before the weaker ones. Each hit carries a badge of the kinds of
 * evidence that matched (`seen`, `said`, `written`, or a combination) and the snippet that matched.
 * Relevance is not shown (it is the confidence, unrounded); `--explain` adds each kind's
 * probability and the raw parts its curve read. `--json` and exports are not shaped here.
 */
import type { SearchResult } from '../api/types.js';
import { formatSeconds, formatTable } from './output.js';

/** A result the engine calls likely: confidence label high or medium (low = a weaker match). */
export function isLikely(r: Pick<SearchResult, 'confidence_label'>): boolean {
  return r.confidence_label === 'high' || r.confidence_label === 'medium';
}

export const WEAKER_LINE = 'weaker matches:';
export const NOTHING_LIKELY_LINE = 'no likely match; the closest ones are weak:';

type Kind = 'seen' | 'said' | 'written';
const KINDS: Kind[] = ['seen', 'said', 'written'];

/** The badge of a hit: the kinds of evidence that matched, joined (`seen+said`). */
export function evidenceBadge(r: Pick<SearchResult, 'kinds'>): string {
  return (r.kinds ?? []).join('+') || 'seen';
}

/** What matched, shortest useful form: the snippet of the surest kind (said: the words around the match). */
export function evidenceSnippet(r: Pick<SearchResult, 'kinds' | 'evidence'>, max = 60): string {
  const ev = r.evidence ?? {};
  const kinds = [...(r.kinds ?? [])].sort((a, b) => (ev[b]?.probability ?? 0) - (ev[a]?.probability ?? 0));
  for (const k of kinds) {
    const s = ev[k]?.snippet;
    if (!s) continue;
    const text = k === 'said' ? `"${s}"` : k === 'written' ? `on screen "${s}"` : s;
    return text.length > max ? `${text.slice(0, max - 1)}…` : text;
  }
  return '';
}

/** `--explain`: each kind's probability and the raw numbers its curve read. */
export function evidenceExplained(r: Pick<SearchResult, 'kinds' | 'evidence' | 'relevance'>): string {
  const parts = KINDS.filter((k) => r.evidence?.[k]).map((k) => {
    const e = r.evidence[k]!;
    const raw = e.parts ? ` (${Object.entries(e.parts).map(([n, v]) => `${n} ${v}`).join(', ')})` : '';
    return `${k} ${e.probability.toFixed(2)}${raw}`;
  });
  return `${parts.join('; ')}; relevance ${r.relevance.toFixed(3)}`;
}

/** The lines a person reads: likely first, then the weaker ones under their own line. */
export function formatSearchResults(results: SearchResult[], opts: { first: number; explain?: boolean; width?: number }): string {
  const head = ['rank', 'video', 'file', 'confidence', 'evidence', 'moment'];
  if (opts.explain) head.push('why');
  const row = (r: SearchResult, rank: number): (string | number)[] => {
    const conf = `${r.confidence_label ?? ''} ${r.confidence.toFixed(2)}`.trim();
    const snippet = evidenceSnippet(r);
    const cells: (string | number)[] = [rank, r.video_id, r.filename, conf, `${evidenceBadge(r)}${snippet ? `: ${snippet}` : ''}`, `${formatSeconds(r.start)}–${formatSeconds(r.end)}`];
    if (opts.explain) {
      cells.push(
        `${evidenceExplained(r)}${r.description ? ` [${r.description}]` : ''}${r.matched_words?.length ? ` [matched: ${r.matched_words.join(', ')}]` : ''}${r.confidence_reason ? ` [confidence: ${r.confidence_reason}]` : ''}`,
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

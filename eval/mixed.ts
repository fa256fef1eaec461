/**
 * The mixed eval (`npm run eval -- mixed`): search as users have it, in one collection holding a
 * half's picture items and its recorded speech under footage (eval/mixed-library.ts). Per half:
 *
 * - picture R@1/R@5 of the items' queries in the mixed library against the picture-only one;
 * - spoken leaks: picture queries (the items' and the short ones) whose result is a talk clip that
 *   came because of what was said (its kinds hold `said`), by confidence label, first and top 5;
 * - reliability of the confidence labels of first results (right / n per label), over every query
 *   kind, and per combination of evidence kinds (seen, said, written…);
 * - phrase R@1: each phrase of each recording (2–4 words of its transcript) as a plain text search
 *   and as a `said` search; right when the first result's recording says the phrase.
 *
 * It also returns every query's first ten results with their evidence (`samples`), which
 * eval/fit-evidence.ts fits the evidence model on (the tuning half's only).
 */
import type { SearchResult } from '../src/api/types.js';
import type { LocalEngine } from '../src/runtime/engine.js';
import { queryText, type CatalogRow } from './catalog.js';
import { labelReliability, type LabelBin } from './metrics.js';
import { isTalkFile, talkFileName } from './mixed-library.js';
import { figuresOf, libraryFileName, type Figures } from './search-quality.js';
import { isRelevant, SHORT_QUERIES } from './short-queries.js';
import { phrasesOf, saysPhrase, type SpeechItem } from './speech-data.js';
import type { Half } from './split.js';

export type QueryType = 'picture' | 'short' | 'phrase';
const LABELS = ['high', 'medium', 'low'] as const;

/** One result of one query, as the fit reads it. */
export interface Sample {
  query: string;
  type: QueryType;
  /** How the query was asked: a plain search, or `said` (the transcripts alone). */
  mode: 'plain' | 'said';
  /** The source package of the item the query was written for (picture, phrase); '' for short queries. */
  source: string;
  rank: number;
  filename: string;
  talk: boolean;
  right: boolean;
  confidence: number;
  label: string;
  kinds: string[];
  evidence: SearchResult['evidence'];
}

export interface LeakFigures {
  queries: number;
  /** Queries whose first result is a spoken leak, by its label. */
  first: Record<(typeof LABELS)[number], number>;
  firstShare: number;
  /** Queries with a spoken leak among their first five. */
  top5: number;
  /** The leaking queries and what came first. */
  examples: Array<{ query: string; first: string; label: string; said?: string }>;
}

export interface MixedFigures {
  half: Half;
  picture: { mixed: Figures; pictureOnly: Figures; r1Ratio: number };
  leaks: { items: LeakFigures; short: LeakFigures };
  /** First results of every plain query (picture, short, phrase): right / n per label. */
  reliability: LabelBin[];
  /** Queries whose first result is labelled high, and the share of all queries. */
  highShare: number;
  /** The same per combination of evidence kinds of the first result ("seen", "said", "seen+written"…). */
  byKinds: Record<string, LabelBin[]>;
  /** First results labelled by each kind alone: each kind's own probability read as a label. */
  perKind: Record<string, LabelBin[]>;
  phrase: { n: number; plainR1: number; saidR1: number };
  /** Hits carrying a spoken match (every query, plain and said): how many windows hold every matched word. */
  windows: { n: number; holdWords: number };
  samples: Sample[];
}

const r3 = (x: number): number => Math.round(x * 1000) / 1000;
const labelOf = (p: number): string => (p >= 0.7 ? 'high' : p >= 0.4 ? 'medium' : 'low');
const isSaidLeak = (r: SearchResult | undefined): boolean => !!r && isTalkFile(r.filename) && r.kinds.includes('said');

function leakFigures(outcomes: Array<{ query: string; results: SearchResult[] }>): LeakFigures {
  const first = { high: 0, medium: 0, low: 0 };
  const examples: LeakFigures['examples'] = [];
  let top5 = 0;
  for (const o of outcomes) {
    const f = o.results[0];
    if (isSaidLeak(f)) {
      first[f.confidence_label]++;
      examples.push({ query: o.query, first: f.filename, label: f.confidence_label, said: f.said?.text });
    }
    if (o.results.slice(0, 5).some(isSaidLeak)) top5++;
  }
  const n = outcomes.length;
  return { queries: n, first, firstShare: r3((first.high + first.medium + first.low) / Math.max(1, n)), top5, examples };
}

/**
 * `ids.pictureOnly`: the half's picture-only collection, searched with the same queries; or, when
 * one collection is measured before and after the talk clips join it (the e2e gate), the items'
 * ranks it gave before (`pictureOnlyRanks`, in the order of `rows`).
 */
export async function evaluateMixed(
  engine: LocalEngine,
  ids: { mixed: string; pictureOnly?: string; pictureOnlyRanks?: number[] },
  rows: CatalogRow[],
  talks: SpeechItem[],
  half: Half,
  log: (s: string) => void = () => {},
): Promise<MixedFigures> {
  const samples: Sample[] = [];
  const firsts: Array<{ right: boolean; result: SearchResult }> = [];
  const record = (query: string, type: QueryType, mode: Sample['mode'], source: string, results: SearchResult[], right: (r: SearchResult) => boolean) => {
    results.slice(0, 10).forEach((r, i) =>
      samples.push({ query, type, mode, source, rank: i + 1, filename: r.filename, talk: isTalkFile(r.filename), right: right(r), confidence: r.confidence, label: r.confidence_label, kinds: r.kinds, evidence: r.evidence }),
    );
    if (mode === 'plain' && results[0]) firsts.push({ right: right(results[0]), result: results[0] });
  };
  const windows = { n: 0, holdWords: 0 };
  const search = async (collection: string, body: { text?: string; said?: string }) => {
    const results = (await engine.search(collection, { ...body, top_k: 100 }, { explain: true })).results;
    for (const r of results.slice(0, 10)) {
      if (!r.said) continue;
      windows.n++;
      if (r.start <= r.said.start && r.end >= r.said.end) windows.holdWords++;
    }
    return results;
  };

  // Picture queries: the items' own (in both libraries) and the short ones.
  const mixedRanks: number[] = [];
  const onlyRanks: number[] = [];
  const itemOutcomes: Array<{ query: string; results: SearchResult[] }> = [];
  for (const r of rows) {
    const text = queryText(r, 'query');
    const right = (x: SearchResult) => x.filename === libraryFileName(r);
    const mixed = await search(ids.mixed, { text });
    const rankIn = (res: SearchResult[]) => {
      const at = res.findIndex(right);
      return at < 0 ? rows.length + talks.length : at + 1;
    };
    mixedRanks.push(rankIn(mixed));
    const onlyRank = ids.pictureOnly ? rankIn(await search(ids.pictureOnly, { text })) : ids.pictureOnlyRanks![mixedRanks.length - 1];
    onlyRanks.push(onlyRank);
    itemOutcomes.push({ query: text, results: mixed });
    record(text, 'picture', 'plain', r.source, mixed, right);
    record(text, 'picture', 'said', r.source, await search(ids.mixed, { said: text }), () => false);
    log(`  ${String(rankIn(mixed)).padStart(3)} (${String(onlyRank).padStart(3)})  ${mixed[0]?.confidence_label.padEnd(6) ?? ''} ${mixed[0]?.kinds.join('+').padEnd(12) ?? ''} ${text.slice(0, 70)}`);
  }
  const shortOutcomes: Array<{ query: string; results: SearchResult[] }> = [];
  for (const q of SHORT_QUERIES) {
    const relevant = new Set(rows.filter((r) => isRelevant(q, r)).map(libraryFileName));
    if (!relevant.size) continue;
    const res = await search(ids.mixed, { text: q.text });
    shortOutcomes.push({ query: q.text, results: res });
    record(q.text, 'short', 'plain', '', res, (x) => relevant.has(x.filename));
    record(q.text, 'short', 'said', '', await search(ids.mixed, { said: q.text }), () => false);
  }

  // Phrases: plain and said.
  let plainHits = 0;
  let saidHits = 0;
  let phrases = 0;
  const says = new Map(talks.map((t) => [talkFileName(t), t]));
  for (const it of talks) {
    for (const phrase of phrasesOf(it)) {
      phrases++;
      const right = (x: SearchResult) => saysPhrase(says.get(x.filename)?.transcript ?? '', phrase);
      const plain = await search(ids.mixed, { text: phrase });
      const said = await search(ids.mixed, { said: phrase });
      if (plain[0] && right(plain[0])) plainHits++;
      if (said[0] && right(said[0])) saidHits++;
      record(phrase, 'phrase', 'plain', it.source, plain, right);
      record(phrase, 'phrase', 'said', it.source, said, right);
    }
  }

  const mixedFig = figuresOf(mixedRanks);
  const onlyFig = figuresOf(onlyRanks);
  const byKinds: Record<string, LabelBin[]> = {};
  const combos = new Set(firsts.map((f) => f.result.kinds.join('+')));
  for (const c of combos) {
    byKinds[c] = labelReliability(
      firsts.filter((f) => f.result.kinds.join('+') === c).map((f) => ({ label: f.result.confidence_label, confidence: f.result.confidence, correct: f.right })),
      LABELS,
    );
  }
  const perKind: Record<string, LabelBin[]> = {};
  for (const k of ['seen', 'said', 'written'] as const) {
    const withK = firsts.filter((f) => f.result.evidence[k]);
    if (withK.length) perKind[k] = labelReliability(withK.map((f) => ({ label: labelOf(f.result.evidence[k]!.probability), confidence: f.result.evidence[k]!.probability, correct: f.right })), LABELS);
  }
  return {
    half,
    picture: { mixed: mixedFig, pictureOnly: onlyFig, r1Ratio: r3(onlyFig.recallAt1 ? mixedFig.recallAt1 / onlyFig.recallAt1 : 1) },
    leaks: { items: leakFigures(itemOutcomes), short: leakFigures(shortOutcomes) },
    reliability: labelReliability(firsts.map((f) => ({ label: f.result.confidence_label, confidence: f.result.confidence, correct: f.right })), LABELS),
    highShare: r3(firsts.filter((f) => f.result.confidence_label === 'high').length / Math.max(1, firsts.length)),
    byKinds,
    perKind,
    phrase: { n: phrases, plainR1: r3(plainHits / Math.max(1, phrases)), saidR1: r3(saidHits / Math.max(1, phrases)) },
    windows,
    samples,
  };
}

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
const bins = (b: LabelBin[]): string => b.map((x) => `${x.label} ${x.right}/${x.n}`).join(', ');

/** The human summary of one library's mixed figures. */
export function formatMixed(label: string, f: Omit<MixedFigures, 'samples'>): string {
  const leak = (l: LeakFigures) => `first ${l.first.high + l.first.medium + l.first.low}/${l.queries} (high ${l.first.high}, medium ${l.first.medium}, low ${l.first.low}), in the first five ${l.top5}`;
  return [
    `MIXED ${label}, ${f.half} half`,
    `  pictures: R@1 ${pct(f.picture.mixed.recallAt1)} mixed vs ${pct(f.picture.pictureOnly.recallAt1)} picture-only (ratio ${f.picture.r1Ratio}), R@5 ${pct(f.picture.mixed.recallAt5)} vs ${pct(f.picture.pictureOnly.recallAt5)}`,
    `  spoken leaks, item queries: ${leak(f.leaks.items)}`,
    `  spoken leaks, short queries: ${leak(f.leaks.short)}`,
    ...[...f.leaks.items.examples, ...f.leaks.short.examples].map((e) => `    "${e.query}" → ${e.first} (${e.label}${e.said ? `: ${e.said}` : ''})`),
    `  first results (all plain queries): ${bins(f.reliability)}; high for ${pct(f.highShare)} of queries`,
    ...Object.entries(f.byKinds).map(([k, b]) => `    kinds ${k}: ${bins(b)}`),
    ...Object.entries(f.perKind).map(([k, b]) => `    ${k}'s own probability as a label: ${bins(b)}`),
    `  phrases (${f.phrase.n}): R@1 plain ${pct(f.phrase.plainR1)}, said ${pct(f.phrase.saidR1)}; windows holding every matched word ${f.windows.holdWords}/${f.windows.n}`,
  ].join('\n');
}

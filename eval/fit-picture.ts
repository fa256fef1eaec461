/**
 * `node dist/eval/fit-picture.js FILE…`: fits the seen curve of picture queries
 * (EVIDENCE_WEIGHTS.picture: similarity and the geometric check's inliers, src/search/evidence.ts
 * pictureProbability) on TUNING-half results written by `eval/picture-queries.ts --half tuning
 * --out FILE`. It refuses a check-half file. Judged with whole sources held out (leave one Debian
 * package out): held-out log-loss against the curve in the engine and the majority baseline, and
 * held-out R@1 (each query's results re-ordered by the curve fitted without its source); then the
 * coefficients fitted on all of it, to paste into evidence-weights.ts.
 */
import { readFileSync } from 'node:fs';
import { EVIDENCE_WEIGHTS } from '../src/search/evidence-weights.js';
import { dot, fitLogistic, logLoss, sigmoid } from './metrics.js';
import type { PictureOutcome } from './picture-eval.js';


interface Row {
  x: number[];
  y: number;
  group: string;
  query: number;
}

/** The curve's features of one result: similarity, log(1 + inliers). */
export const pictureFeatures = (parts: Record<string, number>): number[] => [parts.similarity ?? 0, Math.log1p(parts.inliers ?? 0)];

function main(): void {
  const files = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  if (!files.length) throw new Error('usage: node dist/eval/fit-picture.js TUNING-RESULTS.json…');
  const outcomes: PictureOutcome[] = [];
  for (const f of files) {
    const doc = JSON.parse(readFileSync(f, 'utf8')) as { half: string; outcomes: PictureOutcome[] };
    if (doc.half !== 'tuning') throw new Error(`${f} holds ${doc.half}-half results: the curve is fitted on the tuning half only`);
    outcomes.push(...doc.outcomes);
  }
  const rows: Row[] = [];
  outcomes.forEach((o, q) => o.results.forEach((r) => rows.push({ x: pictureFeatures(r.parts), y: r.right ? 1 : 0, group: o.source, query: q })));
  const ridge = 0.5;
  const held = new Array<number>(rows.length);
  for (const g of new Set(rows.map((r) => r.group))) {
    const w = fitLogistic(rows.filter((r) => r.group !== g), 30, ridge);
    rows.forEach((r, i) => r.group === g && (held[i] = sigmoid(dot(w, r.x))));
  }
  const e = EVIDENCE_WEIGHTS.picture;
  const now = (r: Row) => sigmoid(e.similarity * r.x[0] + e.inliers * r.x[1] + e.intercept);
  const base = rows.filter((r) => r.y).length / rows.length;
  const mean = (f: (r: Row, i: number) => number) => rows.reduce((s, r, i) => s + f(r, i), 0) / rows.length;
  const w = fitLogistic(rows, 30, ridge);
  // Held-out R@1: a query is right when its right result (if among those written) has the highest held-out probability.
  const r1 = (score: (i: number) => number, pick: (o: PictureOutcome) => boolean) => {
    let right = 0;
    let n = 0;
    outcomes.forEach((o, q) => {
      if (!pick(o)) return;
      n++;
      const idx = rows.map((r, i) => (r.query === q ? i : -1)).filter((i) => i >= 0);
      if (!idx.length) return;
      const best = idx.reduce((a, b) => (score(b) > score(a) ? b : a));
      if (rows[best].y) right++;
    });
    return `${right}/${n}`;
  };
  const simOnly = (i: number) => rows[i].x[0];
  process.stderr.write(
    `${rows.length} results (${rows.filter((r) => r.y).length} right) of ${outcomes.length} queries in ${new Set(rows.map((r) => r.group)).size} sources\n` +
      `log-loss held out by source ${mean((r, i) => logLoss(held[i], r.y)).toFixed(4)}; engine now ${mean((r) => logLoss(now(r), r.y)).toFixed(4)}; majority ${mean((r) => logLoss(base, r.y)).toFixed(4)}\n`,
  );
  for (const change of ['crop-shift', 'mild'] as const) {
    for (const kind of ['photo', 'video'] as const) {
      const pick = (o: PictureOutcome) => o.change === change && o.kind === kind;
      if (!outcomes.some(pick)) continue;
      process.stderr.write(`  ${change} ${kind}s R@1: similarity alone ${r1(simOnly, pick)}, held-out curve ${r1((i) => held[i], pick)}\n`);
    }
  }
  // How the label of first results would read, held out (high ≥ 0.7, medium ≥ 0.4: SEARCH_WEIGHTS).
  const firsts = outcomes.map((_, q) => {
    const idx = rows.map((r, i) => (r.query === q ? i : -1)).filter((i) => i >= 0);
    const best = idx.reduce((a, b) => (held[b] > held[a] ? b : a), idx[0]);
    return { p: held[best], y: rows[best]?.y ?? 0 };
  });
  for (const [name, lo, hi] of [['high (≥ 0.7)', 0.7, 2], ['medium (0.4–0.7)', 0.4, 0.7], ['low (< 0.4)', -1, 0.4]] as const) {
    const bin = firsts.filter((f) => f.p >= lo && f.p < hi);
    process.stderr.write(`  first results held out ${name}: ${bin.filter((f) => f.y).length}/${bin.length} right\n`);
  }
  process.stderr.write(`fitted on all (similarity, log1p(inliers), intercept): ${w.map((c) => c.toFixed(3)).join(' ')}\n`);
}

main();

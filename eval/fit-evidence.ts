/**
 * `node dist/eval/fit-evidence.js HOME`: fits the evidence model (src/search/evidence-weights.ts)
 * on the TUNING half of the mixed eval — the results `npm run eval -- mixed --half tuning --home
 * HOME` kept in HOME/mixed-<variant>-tuning.json (both libraries). It never reads a check file.
 *
 * Every fit is judged with whole sources held out: leave-one-source-out cross-validation, where a
 * source is the Debian package an item (picture or recording) comes from (short queries, written
 * for no item, are each their own group). It prints, for each model, the held-out log-loss per
 * sample against the curve in the engine now and the majority baseline, and, for the combined
 * confidence, the held-out reliability of the labels on first results — then the coefficients fitted
 * on the whole tuning half, to paste into evidence-weights.ts. Few features, a little ridge: the
 * model must carry over to footage from sources it never saw.
 *
 * Also chooses the sound-alike rule: for each candidate rule, how many spoken matches of picture
 * queries (items' and short) would count in a plain search — each a possible leak — against how
 * many right phrase matches would (docs/speech.md).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EVIDENCE_WEIGHTS } from '../src/search/evidence-weights.js';
import { combineKinds, EVIDENCE_KINDS, stretchScore, type EvidenceKind, type KindProbabilities } from '../src/search/evidence.js';
import { confidenceLabel } from '../src/search/confidence.js';
import { seenModelChoice, seenX, standingChoice } from './fit-seen.js';
import { dot, fitLogistic, logLoss, sigmoid } from './metrics.js';
import type { Sample } from './mixed.js';

const logit = (p: number): number => Math.log(Math.min(1 - 1e-6, Math.max(1e-6, p)) / (1 - Math.min(1 - 1e-6, Math.max(1e-6, p))));

interface Row {
  x: number[];
  y: number;
  group: string;
}

const groupOf = (s: Sample): string => s.source || `short:${s.query}`;

/** Leave-one-group-out: held-out predictions of a logistic model on `rows`. */
function crossValidate(rows: Row[], ridge: number): number[] {
  const out = new Array<number>(rows.length);
  for (const g of new Set(rows.map((r) => r.group))) {
    const train = rows.filter((r) => r.group !== g);
    if (!train.length || train.every((r) => r.y === train[0].y)) {
      rows.forEach((r, i) => r.group === g && (out[i] = train.length ? train.filter((t) => t.y).length / train.length : 0.5));
      continue;
    }
    const w = fitLogistic(train, 30, ridge);
    rows.forEach((r, i) => r.group === g && (out[i] = sigmoid(dot(w, r.x))));
  }
  return out;
}

function report(name: string, rows: Row[], now: (r: Row) => number, ridge = 0.5): number[] {
  const held = crossValidate(rows, ridge);
  const base = rows.filter((r) => r.y).length / Math.max(1, rows.length);
  const mean = (f: (r: Row, i: number) => number) => rows.reduce((s, r, i) => s + f(r, i), 0) / Math.max(1, rows.length);
  const w = fitLogistic(rows, 30, ridge);
  process.stderr.write(
    `${name}: ${rows.length} samples (${rows.filter((r) => r.y).length} right) in ${new Set(rows.map((r) => r.group)).size} sources; log-loss held out by source ${mean((r, i) => logLoss(held[i], r.y)).toFixed(4)}, engine now ${mean((r) => logLoss(now(r), r.y)).toFixed(4)}, majority ${mean((r) => logLoss(base, r.y)).toFixed(4)}\n  fitted on all: ${w.map((c) => c.toFixed(3)).join(' ')}\n`,
  );
  return w;
}

function main(): void {
  const home = process.argv[2];
  if (!home) throw new Error('usage: node dist/eval/fit-evidence.js HOME');
  const samples: Sample[] = [];
  for (const variant of ['base', 'imagenet']) {
    const file = join(home, `mixed-${variant}-tuning.json`);
    if (!existsSync(file)) {
      process.stderr.write(`${file} is missing (npm run eval -- mixed --half tuning --variant ${variant} --home ${home}): fitting without that library\n`);
      continue;
    }
    samples.push(...(JSON.parse(readFileSync(file, 'utf8')) as Sample[]).map((s) => ({ ...s, source: s.source ? `${variant}:${s.source}` : '' })));
  }
  // One source is one package whichever library it is in: held out together.
  for (const s of samples) s.source = s.source.replace(/^(base|imagenet):/, '');
  const W = EVIDENCE_WEIGHTS;

  // Seen: the first five results of plain searches that carry seen evidence.
  const seenRows: Row[] = samples
    .filter((s) => s.mode === 'plain' && s.rank <= 5 && s.evidence.seen?.parts)
    .map((s) => {
      const p = s.evidence.seen!.parts!;
      return { x: [p.similarity, p.sure_words, p.classified], y: s.right ? 1 : 0, group: groupOf(s) };
    });
  const nowSeen = (r: Row) => sigmoid(W.seen.similarity * r.x[0] + W.seen.sureWords * r.x[1] + W.seen.classified * r.x[2] + W.seen.intercept);
  // (The engine's margin and agreement terms are left out of "engine now" here: the base model's own comparison; eval/fit-seen.ts judges them.)
  let seenW: number[];
  if (seenRows.every((r) => r.x[2] === seenRows[0].x[2])) {
    // One library only (every moment classified, or none): `classified` cannot be fitted; its
    // weight stands, and the intercept is moved so that this library's moments get the fitted curve.
    const c = seenRows[0]?.x[2] ?? 1;
    const w = report('seen (similarity, sure words; classified constant)', seenRows.map((r) => ({ ...r, x: r.x.slice(0, 2) })), (r) => nowSeen({ ...r, x: [...r.x, c] }));
    seenW = [w[0], w[1], W.seen.classified, 0, 0, 0, w[2] - c * W.seen.classified];
  } else {
    const w = report('seen (similarity, sure words, classified)', seenRows, nowSeen);
    seenW = [w[0], w[1], w[2], 0, 0, 0, w[3]];
  }

  // Sharper seen curves: the same samples, with the margin to the best other video of the result
  // list and the agreement of ImageNet and perception words with the query (src/search/evidence.ts).
  // Each judged held out by source: log-loss on the first five, and the labels of first results.
  const seenModel = seenModelChoice(samples, W);
  if (seenModel) seenW = seenModel.weights;
  // The standing: the margin lifts a picture match out of "low", never into "high" (seenWithStanding);
  // fitted on the adopted own curve's features and the margin.
  const standingW = standingChoice(samples, W, seenModel?.cols);

  // The ranking's seen side: the pre-rank (similarity + keyword bonus) alone, same samples.
  const rankRows: Row[] = samples
    .filter((s) => s.mode === 'plain' && s.rank <= 5 && s.evidence.seen?.parts?.pre_rank !== undefined)
    .map((s) => ({ x: [s.evidence.seen!.parts!.pre_rank], y: s.right ? 1 : 0, group: groupOf(s) }));
  const rankW = report('ranking seen side (pre-rank)', rankRows, (r) => sigmoid(W.rank.preRank * r.x[0] + W.rank.intercept));

  // Said: every spoken match of a `said` search (right when the clip says the phrase).
  const saidRows: Row[] = samples
    .filter((s) => s.mode === 'said' && s.evidence.said?.parts)
    .map((s) => {
      const p = s.evidence.said!.parts!;
      return { x: [stretchScore(p.score), p.exact, Math.min(4, p.content_words), p.rarity], y: s.right ? 1 : 0, group: groupOf(s) };
    });
  const saidW = report('said (stretched score, exact share, content words, rarity)', saidRows, (r) =>
    sigmoid(W.said.score * r.x[0] + W.said.exact * r.x[1] + W.said.content * r.x[2] + W.said.rarity * r.x[3] + W.said.intercept),
  );

  // Written: plain results with words read on screen.
  const writtenRows: Row[] = samples.filter((s) => s.mode === 'plain' && s.rank <= 5 && s.evidence.written?.parts).map((s) => ({ x: [s.evidence.written!.parts!.sure_words], y: s.right ? 1 : 0, group: groupOf(s) }));
  process.stderr.write(`written: ${writtenRows.length} samples (${writtenRows.filter((r) => r.y).length} right)${writtenRows.length < 20 ? ': too few to fit; the seen curve\'s word weight stands' : ''}\n`);
  const writtenW = writtenRows.length >= 20 ? report('written (sure words)', writtenRows, (r) => sigmoid(W.written.sureWords * r.x[0] + W.written.intercept)) : undefined;

  // Combined: first results of plain searches, over the kinds' log-odds (from the curves just fitted).
  const probs = (s: Sample): KindProbabilities => {
    const p: KindProbabilities = {};
    const e = s.evidence;
    if (e.seen?.parts) {
      const q = e.seen.parts;
      p.seen = q.sure_words === undefined ? e.seen.probability : sigmoid(dot(seenW, seenX(q, s.query)));
    }
    if (e.said?.parts) {
      const q = e.said.parts;
      p.said = sigmoid(dot(saidW, [stretchScore(q.score), q.exact, Math.min(4, q.content_words), q.rarity]));
    }
    if (e.written?.parts) p.written = writtenW ? sigmoid(dot(writtenW, [e.written.parts.sure_words])) : sigmoid(W.written.sureWords * e.written.parts.sure_words + W.written.intercept);
    return p;
  };
  const firsts = samples.filter((s) => s.mode === 'plain' && s.rank === 1);
  const comboRows: Row[] = firsts.map((s) => {
    const p = probs(s);
    return { x: EVIDENCE_KINDS.map((k: EvidenceKind) => (p[k] === undefined ? 0 : logit(p[k]!))), y: s.right ? 1 : 0, group: groupOf(s) };
  });
  const comboW = report('combined (log-odds of seen, said, written)', comboRows, (r) => {
    const p: KindProbabilities = {};
    EVIDENCE_KINDS.forEach((k, i) => r.x[i] !== 0 && (p[k] = sigmoid(r.x[i])));
    return combineKinds(p);
  });
  const held = crossValidate(comboRows, 0.5);
  const label = confidenceLabel;
  for (const [name, ps] of [['held out by source', held] as const, ['fitted on all', comboRows.map((r) => sigmoid(dot(comboW, r.x)))] as const]) {
    const bins = ['high', 'medium', 'low'].map((l) => {
      const xs = comboRows.filter((_, i) => label(ps[i]) === l);
      return `${l} ${xs.filter((r) => r.y).length}/${xs.length}`;
    });
    process.stderr.write(`  first results, ${name}: ${bins.join(', ')} (of ${comboRows.length} queries)\n`);
  }

  // The sound-alike rule: spoken matches of plain-search queries that would count.
  const matches = samples.filter((s) => s.mode === 'said' && s.evidence.said?.parts);
  const grid: Array<{ rule: string; leaks: number; phrases: number; f: (p: Record<string, number>) => boolean }> = [];
  for (const longQuery of [2, 3, 4]) {
    for (const longMinScore of [0.7, 0.8, 0.85, 0.9, 0.95]) {
      for (const shortMinRarity of [4, 4.5, 5, 99]) {
        const f = (p: Record<string, number>) => (p.content_words >= longQuery ? p.score >= longMinScore : p.exact >= 1 && p.rarity >= shortMinRarity && p.score >= 0.9);
        grid.push({ rule: `long ≥ ${longQuery} words at ${longMinScore}; short: exact, rarity ≥ ${shortMinRarity}`, leaks: 0, phrases: 0, f });
      }
    }
  }
  const phraseQueries = new Set(matches.filter((s) => s.type === 'phrase').map((s) => s.query)).size;
  for (const g of grid) {
    const leakQueries = new Set(matches.filter((s) => s.type !== 'phrase' && g.f(s.evidence.said!.parts!)).map((s) => s.query));
    const found = new Set(matches.filter((s) => s.type === 'phrase' && s.right && g.f(s.evidence.said!.parts!)).map((s) => s.query));
    g.leaks = leakQueries.size;
    g.phrases = found.size;
  }
  grid.sort((a, b) => a.leaks - b.leaks || b.phrases - a.phrases);
  process.stderr.write(`sound-alike rule (tuning half; picture queries with a counted spoken match / phrases with a right one counted, of ${phraseQueries}):\n`);
  for (const g of grid.slice(0, 12)) process.stderr.write(`  ${g.leaks} / ${g.phrases}  ${g.rule}\n`);
  const r = W.saidRule;
  const now = grid.find((g) => g.rule === `long ≥ ${r.longQuery} words at ${r.longMinScore}; short: exact, rarity ≥ ${r.shortMinRarity}`);
  if (now) process.stderr.write(`  engine now: ${now.leaks} / ${now.phrases}\n`);

  const c = (x: number) => Number(x.toFixed(3));
  const out = {
    seen: { similarity: c(seenW[0]), sureWords: c(seenW[1]), classified: c(seenW[2]), margin: c(seenW[3]), agree: c(seenW[4]), words: c(seenW[5]), intercept: c(seenW[6]) },
    ...(standingW ? { standing: { similarity: c(standingW[0]), sureWords: c(standingW[1]), classified: c(standingW[2]), margin: c(standingW[3]), agree: c(standingW[4]), words: c(standingW[5]), intercept: c(standingW[6]) } } : {}),
    rank: { preRank: c(rankW[0]), intercept: c(rankW[1]) },
    said: { score: c(saidW[0]), exact: c(saidW[1]), content: c(saidW[2]), rarity: c(saidW[3]), intercept: c(saidW[4]) },
    ...(writtenW ? { written: { sureWords: c(writtenW[0]), intercept: c(writtenW[1]) } } : {}),
    // A kind no first result had cannot be weighed: its own probability stands (weight 1).
    combine: Object.fromEntries([
      ...EVIDENCE_KINDS.map((k, i) => [k, comboRows.some((r) => r.x[i] !== 0) ? c(comboW[i]) : 1]),
      ['intercept', c(comboW[3])],
    ]),
  };
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}

main();

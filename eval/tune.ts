/**
 * `node dist/eval/tune.js HOME`: chooses the perception tier's part weights, the keyword weight and
 * the confidence curve on the TUNING half only, from an eval library built by
 * `npm run eval -- search --home HOME` (its segments' stored analysis is re-embedded with candidate
 * weights; no model but the text encoder runs). Prints the weights to paste into
 * src/models/perception/weights.ts with the figures they reach. The check half is never read.
 */
import { join } from 'node:path';
import { analysisParts } from '../src/analysis/describe.js';
import type { AnalyzerOutput, SegmentAnalysis } from '../src/analysis/types.js';
import { queryTerms } from '../src/engine/search.js';
import { getUseTextEncoder, l2normalize } from '../src/models/use/text-encoder.js';
import { PERCEPTION_WEIGHTS, SEARCH_WEIGHTS, type PerceptionWeights } from '../src/models/perception/weights.js';
import { Store } from '../src/store/index.js';
import { loadCatalog } from './catalog.js';
import { inHalf } from './split.js';

interface Seg {
  id: number;
  video: string;
  analysis: SegmentAnalysis;
}

const dot = (a: Float32Array, b: Float32Array): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

const use = getUseTextEncoder();
const cache = new Map<string, Float32Array>();
async function embedAll(texts: string[]): Promise<void> {
  const todo = [...new Set(texts.filter((t) => !cache.has(t)))];
  for (let i = 0; i < todo.length; i += 64) {
    const vecs = await use.embed(todo.slice(i, i + 64));
    todo.slice(i, i + 64).forEach((t, j) => cache.set(t, vecs[j]));
  }
}

interface Metrics {
  r1: number;
  r5: number;
  mrr: number;
  perQuery: { rank: number; ranked: [string, number][] }[];
}

/** One eval library's tuning half, ready to be re-scored with candidate weights. */
async function loadLibrary(home: string, variant: string) {
  const rows = inHalf(loadCatalog(), 'tuning');
  const store = Store.open(join(home, variant, 'vidembed.db'));
  const col = store.collections.byName('eval-tuning', null)[0];
  if (!col) throw new Error(`no eval-tuning collection in ${home}/${variant}: run npm run eval -- search --home ${home} first`);
  const segRows = store.db
    .prepare(`SELECT s.id, v.filename, s.details_json, s.facts_json FROM segments s JOIN videos v ON v.id = s.video_id WHERE s.collection_id = ?`)
    .all(col.id) as { id: number; filename: string; details_json: string | null; facts_json: string | null }[];
  const segs: Seg[] = segRows.map((r) => {
    const facts = r.facts_json ? (JSON.parse(r.facts_json) as Record<string, { facts: SegmentAnalysis[string]['facts'] }>) : {};
    const analysis: SegmentAnalysis = {};
    for (const [name, f] of Object.entries(facts)) analysis[name] = { facts: f.facts };
    if (analysis.perception && r.details_json) {
      analysis.perception.details = JSON.parse(r.details_json);
      // Stored details keep the description the analyzer published.
      analysis.perception.description = (analysis.perception.details as { description?: AnalyzerOutput['description'] }).description;
    }
    return { id: r.id, video: r.filename, analysis };
  });
  // Every part any candidate weighting can use (all weights 1: nothing filtered out).
  const ones = Object.fromEntries(Object.keys(PERCEPTION_WEIGHTS).map((k) => [k, 1])) as PerceptionWeights;
  await embedAll(segs.flatMap((s) => analysisParts(s.analysis, ones).map((p) => p.text)));
  const fileOf = (r: (typeof rows)[number]) => (r.kind === 'photo' ? `${r.name}.mp4` : r.name);
  await embedAll(rows.map((r) => r.caption));
  // Keyword shares per query (they do not depend on the weights): the engine's own term matching.
  const total = segs.length;
  const kw = rows.map((r) => {
    const terms = store.segments.selectiveTerms(queryTerms(r.caption));
    const matches = store.segments.termMatches(col.id, terms, 2000);
    const idf = new Map(terms.map((t) => [t, Math.log(1 + total / (1 + (matches.get(t)?.length ?? 0)))]));
    const sum = [...idf.values()].reduce((a, b) => a + b, 0) || 1;
    const share = new Map<number, number>();
    for (const [t, ids] of matches) for (const id of ids) share.set(id, (share.get(id) ?? 0) + (idf.get(t) ?? 0) / sum);
    return share;
  });

  const score = (w: PerceptionWeights, keyword: number): Metrics => {
    const vecs = segs.map((s) => {
      const parts = analysisParts(s.analysis, w);
      const v = new Float32Array(512);
      for (const p of parts) {
        const e = cache.get(p.text)!;
        for (let d = 0; d < 512; d++) v[d] += p.weight * e[d];
      }
      return l2normalize(v);
    });
    const perQuery = rows.map((r, qi) => {
      const q = cache.get(r.caption)!;
      const best = new Map<string, number>();
      segs.forEach((s, i) => {
        const rel = dot(q, vecs[i]) + keyword * (kw[qi].get(s.id) ?? 0);
        if (rel > (best.get(s.video) ?? -Infinity)) best.set(s.video, rel);
      });
      const ranked = [...best.entries()].sort((a, b) => b[1] - a[1]);
      const rank = ranked.findIndex(([v]) => v === fileOf(r)) + 1 || ranked.length;
      return { rank, ranked };
    });
    const n = perQuery.length;
    return {
      r1: perQuery.filter((p) => p.rank === 1).length / n,
      r5: perQuery.filter((p) => p.rank <= 5).length / n,
      mrr: perQuery.reduce((s, p) => s + 1 / p.rank, 0) / n,
      perQuery,
    };
  };
  store.close();
  return { variant, rows, score, fileOf };
}

async function main(): Promise<void> {
  const home = process.argv[2];
  if (!home) throw new Error('usage: node dist/eval/tune.js HOME  (a home built by npm run eval -- search --home HOME)');
  await use.load();
  // Both libraries (with and without the ImageNet analyzer) share one set of weights: tune for both.
  const libs = [await loadLibrary(home, 'base'), await loadLibrary(home, 'imagenet')];
  const score = (w: PerceptionWeights, keyword: number): Metrics[] => libs.map((l) => l.score(w, keyword));
  const objective = (ms: Metrics[]) => ms.reduce((s, m) => s + m.mrr + 0.25 * m.r1 + 0.1 * m.r5, 0) / ms.length;
  const show = (ms: Metrics[]) => ms.map((m, i) => `${libs[i].variant}: R@1 ${m.r1.toFixed(3)} R@5 ${m.r5.toFixed(3)} MRR ${m.mrr.toFixed(3)}`).join('; ');

  const w: PerceptionWeights = { ...PERCEPTION_WEIGHTS };
  let keyword = SEARCH_WEIGHTS.keyword;
  let best = score(w, keyword);
  process.stderr.write(`start: ${show(best)}\n`);
  const grid: Record<string, number[]> = {
    subject: [0.25, 0.5, 1, 1.5, 2],
    maybe: [0, 0.3, 0.6, 1, 1.5, 2, 3],
    people: [0, 0.3, 0.6, 1],
    who: [0, 0.5, 1, 1.5, 2, 3],
    setting: [0, 0.2, 0.4, 0.8, 1.2],
    colour: [0, 0.1, 0.2, 0.4],
    camera: [0, 0.1, 0.3],
    thing: [0, 0.5, 1, 1.5, 2, 3],
    confidencePower: [0.5, 0.75, 1, 1.5],
    keyword: [0, 0.05, 0.1, 0.15, 0.25, 0.4, 0.6, 0.8],
  };
  for (let round = 0; round < 3; round++) {
    let improved = false;
    for (const [key, values] of Object.entries(grid)) {
      for (const v of values) {
        const cand = { ...w };
        let kwv = keyword;
        if (key === 'keyword') kwv = v;
        else (cand as Record<string, number>)[key] = v;
        const m = score(cand, kwv);
        if (objective(m) > objective(best) + 1e-9) {
          best = m;
          Object.assign(w, cand);
          keyword = kwv;
          improved = true;
        }
      }
    }
    process.stderr.write(`round ${round + 1}: ${show(best)}\n`);
    if (!improved) break;
  }

  // Confidence: logistic regression of "right item" on (relevance, relevance - median of the query's
  // videos, relevance - best other video), the features src/engine/search.ts computes.
  const samples: { x: [number, number, number]; y: number }[] = [];
  libs.forEach((lib, li) => lib.rows.forEach((r, qi) => {
    const fileOf = lib.fileOf;
    const { ranked } = best[li].perQuery[qi];
    const rels = ranked.map(([, s]) => s).sort((a, b) => a - b);
    const med = rels.length % 2 ? rels[rels.length >> 1] : (rels[(rels.length >> 1) - 1] + rels[rels.length >> 1]) / 2;
    ranked.slice(0, 5).forEach(([video, rel], i) => {
      const other = i === 0 ? (ranked[1]?.[1] ?? med) : ranked[0][1];
      samples.push({ x: [rel, rel - med, rel - other], y: video === fileOf(r) ? 1 : 0 });
    });
  }));
  let [a, b, d, c] = [1, 1, 1, 0];
  for (let it = 0; it < 40000; it++) {
    let ga = 0;
    let gb = 0;
    let gd = 0;
    let gc = 0;
    for (const s of samples) {
      const p = 1 / (1 + Math.exp(-(a * s.x[0] + b * s.x[1] + d * s.x[2] + c)));
      ga += (p - s.y) * s.x[0];
      gb += (p - s.y) * s.x[1];
      gd += (p - s.y) * s.x[2];
      gc += p - s.y;
    }
    const lr = 5 / samples.length;
    a -= lr * ga + 1e-4 * a;
    b -= lr * gb + 1e-4 * b;
    d -= lr * gd + 1e-4 * d;
    c -= lr * gc;
  }
  // Reliability on the tuning half: mean confidence vs share right, by bins.
  const bins = [0, 0.2, 0.4, 0.7, 1.01].slice(1).map((hi, i, arr) => ({ lo: i === 0 ? 0 : arr[i - 1], hi, n: 0, conf: 0, right: 0 }));
  for (const s of samples) {
    const p = 1 / (1 + Math.exp(-(a * s.x[0] + b * s.x[1] + d * s.x[2] + c)));
    const bin = bins.find((x) => p >= x.lo && p < x.hi)!;
    bin.n++;
    bin.conf += p;
    bin.right += s.y;
  }
  for (const x of bins) if (x.n) process.stderr.write(`confidence ${x.lo.toFixed(1)}-${Math.min(1, x.hi).toFixed(1)}: n=${x.n}, mean ${(x.conf / x.n).toFixed(2)}, right ${(x.right / x.n).toFixed(2)}\n`);
  const round2 = (x: number) => Math.round(x * 100) / 100;
  process.stdout.write(
    JSON.stringify(
      {
        tuningHalf: Object.fromEntries(libs.map((l, i) => [l.variant, { n: l.rows.length, recallAt1: best[i].r1, recallAt5: best[i].r5, mrr: Math.round(best[i].mrr * 1000) / 1000 }])),
        PERCEPTION_WEIGHTS: Object.fromEntries(Object.entries(w).map(([k, v]) => [k, round2(v)])),
        SEARCH_WEIGHTS: { keyword, confidence: { a: round2(a), b: round2(b), d: round2(d), c: round2(c) } },
      },
      null,
      2,
    ) + '\n',
  );
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`tune failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);

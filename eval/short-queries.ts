/**
 * Short queries, as people type them ("a dog", "fruit", "a boat"): each item whose person-written
 * text (caption, written query) names the thing is a right answer, so a query has several. The
 * search eval's other queries describe one item in 4–30 words; these ask for a kind of thing in one
 * or two, the way a new user tries a library (issue 23: "a dog" returned a cat). The list and the
 * words that make an item relevant were written once, from the words alone, before any figure was
 * measured with them, and are not changed to move a figure.
 *
 * Figures per half: the share of queries whose first result is right (P@1) and the share of right
 * answers among the first five (P@5, out of at most as many as the query has), with 95 % bootstrap
 * intervals over the queries; queries without a right answer in a half are left out of that half.
 *
 * `node dist/eval/short-queries.js HOME [--half tuning|check]` measures libraries built by
 * `npm run eval -- search --home HOME` (both variants) without rebuilding them.
 */
import { join } from 'node:path';
import type { LocalEngine } from '../src/runtime/engine.js';
import type { CatalogRow } from './catalog.js';
import { bootstrapInterval } from './metrics.js';
import { libraryFileName } from './search-quality.js';

export interface ShortQuery {
  text: string;
  /** Words of the person-written text that make an item a right answer (whole words, any case). */
  words?: RegExp;
  /** Or: every item of this query kind (the catalog's label). */
  group?: CatalogRow['group'];
}

const w = (alternatives: string): RegExp => new RegExp(`\\b(?:${alternatives})\\b`, 'i');

export const SHORT_QUERIES: ShortQuery[] = [
  { text: 'a dog', words: w('dogs?|pupp(?:y|ies)|spaniels?|terriers?|retrievers?|poodles?|labradors?|husk(?:y|ies)|bulldogs?|collies?|sheepdogs?|samoyeds?|chihuahuas?|beagles?|pugs?') },
  { text: 'a cat', words: w('cats?|kittens?|kitty|tabby') },
  { text: 'a bird', words: w('birds?|parrots?|macaws?|robins?|swans?|cygnets?|ducks?|geese|goose|hens?|chickens?|eagles?|owls?|pigeons?|gulls?|seagulls?|penguins?|finch(?:es)?|sparrows?|herons?|flamingos?|crows?|peacocks?') },
  { text: 'an animal', group: 'animal' },
  { text: 'a fish', words: w('fish(?:es)?|goldfish|sharks?|trout|salmon') },
  { text: 'an insect', words: w('insects?|bees?|ladybirds?|ladybugs?|butterfl(?:y|ies)|dragonfl(?:y|ies)|beetles?|ants?|moths?') },
  { text: 'a horse', words: w('horses?|pon(?:y|ies)|foals?') },
  { text: 'a flower', words: w('flowers?|dais(?:y|ies)|roses?|tulips?|sunflowers?|blossoms?|petals?') },
  { text: 'fruit', words: w('fruits?|apples?|oranges?|lemons?|limes?|bananas?|strawberr(?:y|ies)|grapes?|kiwis?|pears?|cherr(?:y|ies)') },
  { text: 'food', words: w('food|fruits?|vegetables?|meals?|dish|cakes?|bread|pizzas?|salads?|cabbages?|tomato(?:es)?|apples?|oranges?|lemons?|bananas?') },
  { text: 'coffee', words: w('coffee|espresso|cappuccino|latte') },
  { text: 'a car', words: w('cars?|automobiles?|taxis?') },
  { text: 'a boat', words: w('boats?|ships?|canoes?|kayaks?|yachts?|sailboats?|ferr(?:y|ies)') },
  { text: 'a train', words: w('trains?|railway|tram') },
  { text: 'a plane', words: w('planes?|airplanes?|airliners?|aircraft|jets?') },
  { text: 'a vehicle', words: w('vehicles?|cars?|trucks?|bus(?:es)?|trains?|trams?|bicycles?|bikes?|motorcycles?|planes?|airliners?|aircraft|boats?|ships?|rockets?|tractors?') },
  { text: 'a building', words: w('buildings?|houses?|hotels?|churche?s?|castles?|towers?|skyscrapers?|cathedrals?|temples?|barns?|pub') },
  { text: 'a bridge', words: w('bridges?') },
  { text: 'a tree', words: w('trees?|palms?') },
  { text: 'mountains', words: w('mountains?|alps|peaks?') },
  { text: 'the sea', words: w('sea|ocean|seashore|coast|waves?') },
  { text: 'snow', words: w('snow|snowy') },
  { text: 'people', group: 'people' },
  { text: 'a person', group: 'people' },
];

/** Whether an item is a right answer to a short query. */
export function isRelevant(q: ShortQuery, r: Pick<CatalogRow, 'caption' | 'query' | 'group'>): boolean {
  if (q.group) return r.group === q.group;
  return q.words!.test(`${r.caption} ${r.query ?? ''}`);
}

export interface ShortQueryOutcome {
  query: string;
  relevant: number;
  firstRight: boolean;
  /** Right answers among the first five, out of min(5, relevant). */
  atFive: number;
  first: string;
  firstConfidence?: string;
}

export interface ShortQueryFigures {
  n: number;
  precisionAt1: number;
  precisionAt5: number;
  interval: { precisionAt1: [number, number]; precisionAt5: [number, number] };
  queries: ShortQueryOutcome[];
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

export async function evaluateShortQueries(engine: LocalEngine, collectionId: string, rows: CatalogRow[]): Promise<ShortQueryFigures> {
  const queries: ShortQueryOutcome[] = [];
  for (const q of SHORT_QUERIES) {
    const right = new Set(rows.filter((r) => isRelevant(q, r)).map(libraryFileName));
    if (right.size === 0) continue;
    const res = await engine.search(collectionId, { text: q.text, top_k: 5 });
    const top = res.results.slice(0, 5);
    queries.push({
      query: q.text,
      relevant: right.size,
      firstRight: top.length > 0 && right.has(top[0].filename),
      atFive: top.filter((x) => right.has(x.filename)).length / Math.min(5, right.size),
      first: top[0]?.filename ?? '',
      firstConfidence: top[0]?.confidence_label,
    });
  }
  const p1 = (xs: ShortQueryOutcome[]) => xs.filter((x) => x.firstRight).length / Math.max(1, xs.length);
  const p5 = (xs: ShortQueryOutcome[]) => xs.reduce((s, x) => s + x.atFive, 0) / Math.max(1, xs.length);
  return {
    n: queries.length,
    precisionAt1: r3(p1(queries)),
    precisionAt5: r3(p5(queries)),
    interval: { precisionAt1: bootstrapInterval(queries, p1), precisionAt5: bootstrapInterval(queries, p5) },
    queries,
  };
}

export function formatShortQueries(label: string, f: ShortQueryFigures): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const iv = (i: [number, number]) => `[${Math.round(i[0] * 100)}–${Math.round(i[1] * 100)}]`;
  const lines = [`  ${label} short queries n=${f.n}: first right ${pct(f.precisionAt1)} ${iv(f.interval.precisionAt1)}, right among first five ${pct(f.precisionAt5)} ${iv(f.interval.precisionAt5)}`];
  for (const q of f.queries) {
    lines.push(`      ${q.firstRight ? '✓' : '✗'} ${q.query.padEnd(12)} ${String(q.relevant).padStart(2)} right, ${(q.atFive * 100).toFixed(0).padStart(3)}% of first five; first: ${q.first.slice(0, 40)} (${q.firstConfidence ?? ''})`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const home = process.argv[2];
  if (!home) throw new Error('usage: node dist/eval/short-queries.js HOME [--half tuning|check]');
  const halfArg = process.argv.indexOf('--half');
  const { HALVES, inHalf } = await import('./split.js');
  const halves = halfArg > 0 ? [process.argv[halfArg + 1] as (typeof HALVES)[number]] : [...HALVES];
  const { loadSearchCatalog } = await import('./catalog.js');
  const { LocalEngine } = await import('../src/runtime/engine.js');
  const items = loadSearchCatalog();
  for (const variant of ['base', 'imagenet']) {
    process.env.VIDEMBED_MODELS_DIR = join(home, variant, 'models');
    if (variant === 'base') process.env.VIDEMBED_NO_IMAGENET = '1';
    else delete process.env.VIDEMBED_NO_IMAGENET;
    const engine = new LocalEngine({ home: join(home, variant) });
    for (const half of halves) {
      const col = (await engine.listCollections({ limit: 1000 })).find((c) => c.name === `eval-${half}`);
      if (!col) throw new Error(`no eval-${half} collection in ${join(home, variant)}`);
      process.stderr.write(formatShortQueries(`${variant.padEnd(8)} ${half}`, await evaluateShortQueries(engine, col.id, inHalf(items, half))) + '\n');
    }
    await engine.close();
  }
}

if (process.argv[1]?.endsWith('short-queries.js')) main().catch((e) => {
  process.stderr.write(`${(e as Error).stack}\n`);
  process.exit(1);
});

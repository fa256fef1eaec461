/**
 * What analysis leaves behind with a segment — its keywords and its stored facts — and the recipe
 * of a collection's vectors. Light on purpose: the engine imports it without loading any model.
 */
import type { Embedder } from '../models/embedder.js';
import type { Analyzer, Fact, SegmentAnalysis } from './types.js';

/** The analyzers whose facts an embedder reads (none for embedders that read pixels only). */
export function consumedAnalyzers(embedder: Embedder): Set<string> {
  return new Set(embedder.consumes ?? []);
}

/**
 * The versions of the analyzers whose facts make `embedder`'s vectors: together with the embedder
 * id, what a collection's vectors were made with. A collection whose recipe differs from the
 * engine's can be brought up to date with `vidembed collection reindex`.
 */
export function recipeOf(embedder: Embedder, analyzers: Analyzer[]): Record<string, string> {
  const wants = consumedAnalyzers(embedder);
  return Object.fromEntries(analyzers.filter((a) => wants.has(a.name)).map((a) => [a.name, a.version]));
}

/** Words the keyword index holds for a segment: what analysis found, never template wording. */
export function keywordsOf(analysis: SegmentAnalysis): string {
  const words: string[] = [];
  for (const out of Object.values(analysis)) {
    for (const f of out.facts) {
      if (f.kind === 'scene') continue; // layout cue sentences, not things
      // What is said is indexed as spoken terms (`zw…`, src/speech/analyzer.ts), never as plain
      // words: a query's words must not find a talk clip as if its words were seen or written.
      if (f.kind === 'speech') continue;
      words.push(f.label);
      for (const a of f.alternatives ?? []) words.push(a.label);
    }
    words.push(...(out.terms ?? []));
  }
  return [...new Set(words)].join(' \n ');
}

/** Facts by analyzer, as stored with a segment. */
export function storedFacts(analysis: SegmentAnalysis, analyzers: Pick<Analyzer, 'name' | 'version'>[]): Record<string, { version: string; facts: Fact[] }> {
  const version = new Map(analyzers.map((a) => [a.name, a.version]));
  return Object.fromEntries(Object.entries(analysis).map(([name, out]) => [name, { version: version.get(name) ?? '', facts: out.facts }]));
}

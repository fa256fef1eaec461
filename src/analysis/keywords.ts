/**
 * What analysis leaves behind with a segment — its keywords and its stored facts. Light on
 * purpose: the engine imports it without loading any model.
 */
import type { Analyzer, AnalyzerOutput, Fact, SegmentAnalysis } from './types.js';

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

/**
 * What a segment keeps of each capability's output (`facts_json`, by capability name): the version
 * that made it, its facts, and what capabilities that derive from it read again — the description
 * a text embedder pools, the index terms — so that one capability can run again without the others
 * (src/capabilities). Tags live in the segment's tags; details in its details.
 */
export interface StoredOutput {
  version: string;
  facts: Fact[];
  description?: NonNullable<AnalyzerOutput['description']>;
  terms?: string[];
}

/** Each capability's output, as stored with a segment (`versions`: by name; unknown ones get ''). */
export function storedFacts(analysis: SegmentAnalysis, versions: Pick<Analyzer, 'name' | 'version'>[] | ReadonlyMap<string, string>): Record<string, StoredOutput> {
  const version = versions instanceof Map ? versions : new Map((versions as Pick<Analyzer, 'name' | 'version'>[]).map((a) => [a.name, a.version]));
  return Object.fromEntries(
    Object.entries(analysis).map(([name, out]) => [
      name,
      { version: version.get(name) ?? '', facts: out.facts, ...(out.description ? { description: out.description } : {}), ...(out.terms?.length ? { terms: out.terms } : {}) },
    ]),
  );
}

/** The stored outputs of a segment (`facts_json`) as its analysis again: facts, descriptions and terms (no tags, no details). */
export function analysisOf(factsJson: string | null | undefined): SegmentAnalysis {
  if (!factsJson) return {};
  const stored = JSON.parse(factsJson) as Record<string, Partial<StoredOutput>>;
  return Object.fromEntries(
    Object.entries(stored).map(([name, s]) => [name, { facts: s.facts ?? [], ...(s.description ? { description: s.description } : {}), ...(s.terms ? { terms: s.terms } : {}) }]),
  );
}

/** The versions a segment's stored outputs were made with, by capability. */
export function storedVersions(factsJson: string | null | undefined): Map<string, string> {
  if (!factsJson) return new Map();
  return new Map(Object.entries(JSON.parse(factsJson) as Record<string, { version?: string }>).map(([n, s]) => [n, s.version ?? '']));
}

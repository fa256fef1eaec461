/**
 * What analysis leaves behind with a segment — its keywords and its stored facts. Light on
 * purpose: the engine imports it without loading any model.
 */
import type { Analyzer, Fact, SegmentAnalysis } from './types.js';

/** Words the keyword index holds for a segment: what analysis found, never template wording. */
export function keywordsOf(analysis: SegmentAnalysis): string {
  const words: string[] = [];
  for (const out of Object.values(analysis)) {
    for (const f of out.facts) {
      if (f.kind === 'scene') continue; // layout cue sentences, not things
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

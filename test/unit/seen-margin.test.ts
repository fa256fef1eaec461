/**
 * The seen curve's margin and agreement (src/search/hit-evidence.ts, src/search/evidence.ts): the
 * best moment of a different video in the same result list, how far a hit stands above it, and the
 * share of the query's words both ImageNet and perception name.
 */
import { describe, expect, it } from 'vitest';
import type { Fact } from '../../src/analysis/types.js';
import { hitEvidence, rivalsOf, seenMargins } from '../../src/search/hit-evidence.js';
import { marginTerm, ownSeenProbability, queryWordsTerm, seenProbability, seenWithStanding, STANDING_CEILING } from '../../src/search/evidence.js';
import { SEARCH_WEIGHTS } from '../../src/models/perception/weights.js';
import { EVIDENCE_WEIGHTS } from '../../src/search/evidence-weights.js';

const mode = { example: false, seenOnly: false };

describe('the best other video of a result list', () => {
  it('is the second for the first video and the first for every other one', () => {
    const best = new Map([
      ['a', { similarity: 0.3, preRank: 0.5 }],
      ['b', { similarity: 0.35, preRank: 0.45 }],
      ['c', { similarity: 0.2, preRank: 0.2 }],
    ]);
    const r = rivalsOf(best);
    expect(r.get('a')).toEqual({ similarity: 0.35, preRank: 0.45 });
    expect(r.get('b')).toEqual({ similarity: 0.3, preRank: 0.5 });
    expect(r.get('c')).toEqual({ similarity: 0.3, preRank: 0.5 });
  });

  it('is none when the list holds one video: the margin is then 0', () => {
    expect(rivalsOf(new Map([['a', { similarity: 0.3, preRank: 0.5 }]])).get('a')).toBeUndefined();
    expect(seenMargins(0.3, 0.5, undefined)).toEqual({ margin: 0, simMargin: 0 });
  });

  it('measures the lead above it, negative below', () => {
    const m = seenMargins(0.3, 0.5, { similarity: 0.35, preRank: 0.45 });
    expect(m.margin).toBeCloseTo(0.05, 9);
    expect(m.simMargin).toBeCloseTo(-0.05, 9);
    expect(seenMargins(0.2, 0.2, { similarity: 0.3, preRank: 0.5 }).margin).toBeCloseTo(-0.3, 9);
  });

  it('reads the margin in tenths, clipped to ±1', () => {
    expect(marginTerm(0.05)).toBeCloseTo(0.5, 9);
    expect(marginTerm(0.4)).toBe(1);
    expect(marginTerm(-0.4)).toBe(-1);
    expect(marginTerm(0)).toBe(0);
  });
});

describe('a hit\'s seen parts', () => {
  const facts: Fact[] = [
    { kind: 'thing', label: 'golden retriever', confidence: 0.8, alternatives: [{ label: 'dog', confidence: 0.8 }] },
    { kind: 'object', label: 'dog', confidence: 0.9 },
    { kind: 'thing', label: 'frisbee', confidence: 0.7 },
  ] as Fact[];
  const idf = new Map([
    ['dog', 1],
    ['frisbee', 1],
  ]);

  it('carry the margin and which analyses name the query\'s words', () => {
    const ev = hitEvidence({ similarity: 0.3, preRank: 0.5, facts, matched: ['dog', 'frisbee'], idf, rival: { similarity: 0.28, preRank: 0.46 } }, mode);
    const p = ev.parts.seen!;
    expect(p.margin).toBeCloseTo(0.04, 9);
    expect(p.sim_margin).toBeCloseTo(0.02, 9);
    // ImageNet names both words (dog 0.8, frisbee 0.7); perception names "dog" alone (0.9).
    expect(p.sure_imagenet).toBeCloseTo((0.8 + 0.7) / 2, 9);
    expect(p.sure_perception).toBeCloseTo(0.9 / 2, 9);
  });

  it('let the standing lift a match out of "low" but never into "high", nor lower it', () => {
    const input = { similarity: 0.3, preRank: 0.5, facts, matched: ['dog'], idf };
    const alone = hitEvidence(input, mode).p.seen!;
    const ahead = hitEvidence({ ...input, rival: { similarity: 0.2, preRank: 0.4 } }, mode).p.seen!;
    const behind = hitEvidence({ ...input, rival: { similarity: 0.4, preRank: 0.6 } }, mode).p.seen!;
    const own = ownSeenProbability({ similarity: 0.3, sureWords: 0.45, classified: true, agree: 0.4 });
    // The own curve reads no margin: a moment's own evidence, whatever else the list holds.
    expect(EVIDENCE_WEIGHTS.seen.margin).toBe(0);
    expect(EVIDENCE_WEIGHTS.standing.margin).toBeGreaterThan(0);
    expect(alone).toBeCloseTo(seenProbability({ similarity: 0.3, sureWords: 0.45, classified: true, margin: 0, agree: 0.4 }), 9);
    // Standing clear of the best other video lifts it; standing behind it never lowers it under its own curve.
    expect(ahead).toBeGreaterThan(alone);
    expect(behind).toBeCloseTo(Math.max(own, behind), 9);
    expect(behind).toBeGreaterThanOrEqual(own);
    // Never into high by the standing alone; high stays high.
    expect(seenWithStanding(0.3, 0.95)).toBe(STANDING_CEILING);
    expect(STANDING_CEILING).toBeLessThan(SEARCH_WEIGHTS.highConfidence);
    expect(seenWithStanding(0.8, 0.95)).toBe(0.8);
    expect(seenWithStanding(0.35, 0.2)).toBe(0.35);
    // Agreement is measured and shown, and weighs nothing since the query-length fit (2026-11-28):
    // the same words named by ImageNet alone are as sure as named by both.
    const imagenetOnly = hitEvidence({ ...input, facts: facts.filter((f) => f.kind === 'thing') }, mode);
    expect(EVIDENCE_WEIGHTS.seen.agree).toBe(0);
    expect(imagenetOnly.parts.seen!.sure_perception).toBe(0);
    expect(imagenetOnly.p.seen!).toBeCloseTo(seenProbability({ similarity: 0.3, sureWords: imagenetOnly.parts.seen!.sure_words, classified: true, margin: 0, agree: 0.4 }), 9);
  });
});

describe('the query\'s length in the seen curve', () => {
  const facts: Fact[] = [{ kind: 'object', label: 'dog', confidence: 0.9 }] as Fact[];
  const idf = new Map([['dog', 1]]);

  it('reads log(1 + content words) over log(17), from 0 to 1 at sixteen words', () => {
    expect(queryWordsTerm(0)).toBe(0);
    expect(queryWordsTerm(1)).toBeCloseTo(Math.log(2) / Math.log(17), 12);
    expect(queryWordsTerm(16)).toBeCloseTo(1, 12);
    expect(queryWordsTerm(40)).toBeCloseTo(1, 12);
    expect(queryWordsTerm(-3)).toBe(0);
  });

  it('makes the same match surer for a person\'s sentence than for one word, and is kept in the hit\'s parts', () => {
    const input = { similarity: 0.35, preRank: 0.4, facts, matched: ['dog'], idf };
    const one = hitEvidence({ ...input, queryWords: 1 }, mode);
    const sentence = hitEvidence({ ...input, queryWords: 12 }, mode);
    expect(EVIDENCE_WEIGHTS.seen.words).toBeGreaterThan(0);
    expect(sentence.p.seen!).toBeGreaterThan(one.p.seen!);
    expect(one.parts.seen!.query_words).toBe(1);
    expect(sentence.parts.seen!.query_words).toBe(12);
    expect(sentence.p.seen!).toBeCloseTo(seenProbability({ similarity: 0.35, sureWords: 0.9, classified: false, margin: 0, agree: 0, words: 12 }), 9);
  });
});

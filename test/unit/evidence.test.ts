/**
 * Seen, said, written (src/search/evidence.ts): each kind's curve, the sound-alike rule, the
 * combination of kinds, and windows that hold every matched word without crossing a cut.
 */
import { describe, expect, it } from 'vitest';
import { combineKinds, kindOfFact, saidProbability, seenProbability, spokenCounts, spokenWindow } from '../../src/search/evidence.js';
import { EVIDENCE_WEIGHTS } from '../../src/search/evidence-weights.js';
import { saidFeatures } from '../../src/speech/search.js';
import { spokenQuery } from '../../src/speech/match.js';
import { wordLog10p, RARE_LOG10P } from '../../src/speech/commonness.js';

const hit = (score: number, matched: string[]) => ({ score, said: { text: '', matched, start: 0, end: 1, score } });

describe('evidence kinds', () => {
  it('sorts facts into seen, said and written', () => {
    expect(['object', 'thing', 'people', 'face', 'person', 'expression', 'setting', 'colour', 'scene'].map(kindOfFact)).toEqual(Array(9).fill('seen'));
    expect(kindOfFact('speech')).toBe('said');
    expect(kindOfFact('text')).toBe('written');
  });

  it('knows common English words from rare ones', () => {
    for (const w of ['have', 'been', 'can', 'hold', 'the']) expect(wordLog10p(w)).toBeGreaterThan(-4);
    for (const w of ['baboon', 'zanzibar']) expect(wordLog10p(w)).toBeLessThan(-5);
    expect(wordLog10p('qwxzzy')).toBe(RARE_LOG10P);
  });
});

describe('the sound-alike rule of plain searches', () => {
  it('never counts one or two common words, nor words heard only as sound-alikes', () => {
    // "baboon face" heard as "have been …": sound-alikes only.
    expect(spokenCounts(saidFeatures(hit(0.8, ['have', 'been']), spokenQuery('baboon face')!))).toBe(false);
    // "a can" said verbatim ("please hold while i can"): one common word.
    expect(spokenCounts(saidFeatures(hit(1, ['can']), spokenQuery('a can')!))).toBe(false);
    // "hold the line": two common words, verbatim.
    expect(spokenCounts(saidFeatures(hit(1, ['hold', 'line']), spokenQuery('hold line')!))).toBe(false);
  });

  it('counts rare words and names said as themselves, and longer phrases that match well', () => {
    expect(spokenCounts(saidFeatures(hit(1, ['quarterly', 'revenue']), spokenQuery('quarterly revenue')!))).toBe(true);
    expect(spokenCounts(saidFeatures(hit(0.95, ['only', 'participant', 'in', 'the', 'conference']), spokenQuery('only participant in the conference')!))).toBe(true);
    expect(spokenCounts(saidFeatures(hit(0.65, ['only', 'partisan']), spokenQuery('only participant in the conference')!))).toBe(false);
  });

  it('lets one heard word that nothing else names say no more than "low", in a plain search', async () => {
    const { hitEvidence } = await import('../../src/search/hit-evidence.js');
    const { confidenceLabel } = await import('../../src/search/confidence.js');
    // "mountains", heard as itself in a prompt that does not say it: counted (a rare word), but alone.
    const one = saidFeatures(hit(1, ['mountains']), spokenQuery('mountains')!);
    expect(one.words).toBe(1);
    expect(spokenCounts(one)).toBe(true);
    expect(saidProbability(one)).toBeGreaterThanOrEqual(0.7); // the said curve alone would say "high"
    const idf = new Map([['mountains', 1]]);
    const said = { hit: { ...hit(1, ['mountains']), videoId: 'v', segmentId: 1 }, features: one } as never;
    const alone = hitEvidence({ similarity: 0.1, facts: [], matched: [], idf, said }, { example: false, seenOnly: false });
    expect(alone.kinds).toEqual(['said']);
    expect(alone.p.said).toBe(EVIDENCE_WEIGHTS.saidRule.oneWordCeiling);
    expect(confidenceLabel(alone.confidence)).toBe('low');
    expect(alone.rank).toBeLessThan(0.4); // a picture match of the word outranks it
    expect(alone.reason).toMatch(/at most low/);
    // The same word also seen in the picture: the spoken match keeps its own probability.
    const seen = hitEvidence({ similarity: 0.3, facts: [{ kind: 'scene', label: 'mountains', confidence: 0.9 } as never], matched: ['mountains'], idf, said }, { example: false, seenOnly: false });
    expect(seen.p.said).toBeCloseTo(saidProbability(one), 9);
    // Two words heard in order ("the pound"): several recognizer decisions agree, no ceiling.
    const two = saidFeatures(hit(1, ['the', 'pound']), spokenQuery('the pound')!);
    const twoHit = hitEvidence({ similarity: 0.1, facts: [], matched: [], idf, said: { hit: { ...hit(1, ['the', 'pound']), videoId: 'v', segmentId: 1 }, features: two } as never }, { example: false, seenOnly: false });
    expect(twoHit.p.said).toBeCloseTo(saidProbability(two), 9);
    expect(twoHit.p.said!).toBeGreaterThan(EVIDENCE_WEIGHTS.saidRule.oneWordCeiling);
  });

  it('makes a verbatim match of rare words surer than a sound-alike one', () => {
    const q = spokenQuery('quarterly revenue')!;
    expect(saidProbability(saidFeatures(hit(1, ['quarterly', 'revenue']), q))).toBeGreaterThan(saidProbability(saidFeatures(hit(0.75, ['quarter', 'review']), q)));
  });
});

describe('combining kinds', () => {
  it('is one kind\'s own probability re-weighed, and 0 without evidence', () => {
    expect(combineKinds({})).toBe(0);
    const p = seenProbability({ similarity: 0.4, sureWords: 0.9, classified: true });
    const w = EVIDENCE_WEIGHTS.combine;
    const z = w.intercept + w.seen * Math.log(p / (1 - p));
    expect(combineKinds({ seen: p })).toBeCloseTo(1 / (1 + Math.exp(-z)), 9);
  });

  it('grows with each kind that agrees, and every probability stays in 0–1', () => {
    const seen = 0.6;
    expect(combineKinds({ seen, written: 0.8 })).toBeGreaterThan(combineKinds({ seen }));
    for (const p of [0, 1e-9, 0.5, 1 - 1e-9, 1]) {
      const c = combineKinds({ seen: p, said: p, written: p });
      expect(c).toBeGreaterThanOrEqual(0);
      expect(c).toBeLessThanOrEqual(1);
    }
  });
});

describe('windows of spoken hits', () => {
  it('hold every matched word, add air that never crosses a cut, and stay inside the video', () => {
    // The words run past the segment's end (31.21–33.1 in a 28–32 segment): the window holds them.
    const w = spokenWindow({ start: 31.21, end: 33.1 }, [], 60);
    expect(w.start).toBeLessThanOrEqual(31.21);
    expect(w.end).toBeGreaterThanOrEqual(33.1);
    // A cut just before the first word: no air before it.
    expect(spokenWindow({ start: 31.21, end: 33.1 }, [31.1], 60).start).toBeCloseTo(31.1, 6);
    // A cut inside the words does not cut them.
    const across = spokenWindow({ start: 31.21, end: 33.1 }, [32], 60);
    expect([across.start <= 31.21, across.end >= 33.1]).toEqual([true, true]);
    // Never before 0 or past the end (but always the words).
    expect(spokenWindow({ start: 0.1, end: 0.5 }, [], 0.6)).toEqual({ start: 0, end: 0.6 });
  });
});

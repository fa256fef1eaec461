/**
 * A hit's reason in words (src/search/hit-evidence.ts) is built only when read: the same words
 * whenever and however it is read (directly, after a spread, in JSON), and one part per kind of
 * evidence present, in the order seen, written, said.
 */
import { describe, expect, it } from 'vitest';
import { hitEvidence } from '../../src/search/hit-evidence.js';
import { saidFeatures } from '../../src/speech/search.js';
import { spokenQuery } from '../../src/speech/match.js';

const fact = (kind: string, label: string, confidence: number) => ({ kind, label, confidence });

describe('hitEvidence reason', () => {
  const idf = new Map([
    ['dog', 1.5],
    ['exit', 2],
    ['quarterly', 3],
    ['revenue', 3],
  ]);
  const features = saidFeatures({ score: 1, said: { text: 'quarterly revenue', matched: ['quarterly', 'revenue'], start: 0, end: 1, score: 1 } }, spokenQuery('dog exit quarterly revenue')!);
  const said = { hit: { score: 1, said: { text: 'quarterly revenue', matched: ['quarterly', 'revenue'], start: 0, end: 1, score: 1 }, videoId: 'v', segmentId: 1 }, features } as never;
  const ev = () =>
    hitEvidence(
      { similarity: 0.31, preRank: 0.4, facts: [fact('object', 'dog', 0.9), fact('text', 'EXIT', 0.8)], matched: ['dog', 'exit'], idf, said, description: 'a dog by a door.' },
      { example: false, seenOnly: false },
    );

  it('says each kind present, in order, with its probability', () => {
    const e = ev();
    expect(e.kinds).toEqual(['seen', 'said', 'written']);
    const parts = e.reason.split('; ');
    expect(parts[0]).toBe(`seen ${Math.round(e.p.seen! * 100)}%: the picture matches at 0.31`);
    expect(parts[1]).toBe('analysis saw "dog" (dog, 90%)');
    expect(parts[2]).toBe(`written ${Math.round(e.p.written! * 100)}%: on screen "EXIT" (80%)`);
    expect(parts[3]).toMatch(new RegExp(`^said ${Math.round(e.p.said! * 100)}%: "quarterly revenue" \\(sounds match 100%, `));
    expect(parts).toHaveLength(4);
  });

  it('reads the same every time, after a spread and in JSON', () => {
    const e = ev();
    const first = e.reason;
    expect(e.reason).toBe(first);
    expect({ ...e }.reason).toBe(first);
    expect(JSON.parse(JSON.stringify(e)).reason).toBe(first);
    expect(ev().reason).toBe(first);
  });

  it('says no query word was seen when the picture alone matched', () => {
    const e = hitEvidence({ similarity: 0.25, facts: [], matched: [], idf: new Map() }, { example: false, seenOnly: false });
    expect(e.reason).toBe(`seen ${Math.round(e.p.seen! * 100)}%: the picture matches at 0.25; no query word was seen`);
  });
});

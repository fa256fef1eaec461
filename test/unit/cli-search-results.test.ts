import { describe, expect, it } from 'vitest';
import type { SearchResult } from '../../src/api/types.js';
import { formatSearchResults, NOTHING_LIKELY_LINE, WEAKER_LINE } from '../../src/cli/search-results.js';

const result = (name: string, confidence: number, label: SearchResult['confidence_label']): SearchResult => ({
  video_id: `vid_${name}`,
  similarity: 0.5,
  relevance: 0.6,
  confidence,
  confidence_label: label,
  start: 0,
  end: 4,
  filename: `${name}.mp4`,
  kinds: ['seen'],
  evidence: { seen: { probability: confidence, matched: [name], snippet: `${name} 90%` } },
});

/** The terminal answer of `vidembed search`: likely matches first, the rest under a "weaker matches" line. */
describe('search results on a terminal', () => {
  it('puts likely matches first and the weaker ones under their own line, each keeping its rank', () => {
    const text = formatSearchResults([result('a', 0.9, 'high'), result('b', 0.2, 'low'), result('c', 0.5, 'medium'), result('d', 0.1, 'low')], { first: 11 });
    const lines = text.split('\n');
    const at = (s: string) => lines.findIndex((l) => l.includes(s));
    expect(at(WEAKER_LINE)).toBeGreaterThan(at('c.mp4'));
    expect(at('a.mp4')).toBeLessThan(at('c.mp4'));
    expect(at('b.mp4')).toBeGreaterThan(at(WEAKER_LINE));
    expect(at('d.mp4')).toBeGreaterThan(at('b.mp4'));
    // Ranks are the answer's (what `vidembed open N` plays), not the display order.
    expect(lines[at('c.mp4')]).toMatch(/^\D*13\b/);
    expect(lines[at('b.mp4')]).toMatch(/^\D*12\b/);
    expect(text).not.toContain(NOTHING_LIKELY_LINE);
  });

  it('says in one line when nothing is likely, and has no weaker line when everything is', () => {
    const weak = formatSearchResults([result('b', 0.2, 'low'), result('d', 0.1, 'low')], { first: 1 });
    expect(weak.split('\n')[0]).toBe(NOTHING_LIKELY_LINE);
    expect(weak).not.toContain(WEAKER_LINE);
    const strong = formatSearchResults([result('a', 0.9, 'high'), result('c', 0.5, 'medium')], { first: 1 });
    expect(strong).not.toContain(WEAKER_LINE);
    expect(strong).not.toContain(NOTHING_LIKELY_LINE);
  });

  it('shows what drove the confidence with --explain: each kind\'s probability and the raw parts', () => {
    const r: SearchResult = {
      ...result('a', 0.9, 'high'),
      description: 'A dog.',
      matched_words: ['dog'],
      confidence_reason: 'seen 90%: analysis saw "dog" (dog, 91%)',
      evidence: { seen: { probability: 0.9, snippet: 'dog 91%', parts: { similarity: 0.41, sure_words: 0.91 } } },
    };
    const text = formatSearchResults([r], { first: 1, explain: true });
    expect(text).toContain('[confidence: seen 90%: analysis saw "dog" (dog, 91%)]');
    expect(text).toContain('seen 0.90 (similarity 0.41, sure_words 0.91)');
    expect(text).toContain('relevance 0.600');
  });

  it('gives each hit a badge of the kinds that matched and the snippet that matched; relevance only with --explain', () => {
    const talk: SearchResult = {
      ...result('talk', 0.75, 'high'),
      kinds: ['seen', 'said'],
      evidence: { seen: { probability: 0.2, snippet: 'A test card.' }, said: { probability: 0.7, matched: ['launch'], snippet: '…when a convert to the *launch* only…' } },
    };
    const sign: SearchResult = { ...result('sign', 0.5, 'medium'), kinds: ['written'], evidence: { written: { probability: 0.5, matched: ['exit'], snippet: 'EXIT' } } };
    const text = formatSearchResults([talk, sign, result('dog', 0.8, 'high')], { first: 1 });
    const line = (s: string) => text.split('\n').find((l) => l.includes(s)) ?? '';
    expect(line('talk.mp4')).toContain('seen+said: "…when a convert to the *launch* only…"'); // the surest kind's snippet
    expect(line('sign.mp4')).toContain('written: on screen "EXIT"');
    expect(line('dog.mp4')).toContain('seen: dog 90%');
    expect(text).not.toMatch(/relevance|0\.600/);
    expect(text.split('\n').find((l) => l.includes('confidence'))).toMatch(/confidence\s*│\s*evidence\s*│\s*moment/);
  });
});

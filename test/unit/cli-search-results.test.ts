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

  it('shows what drove the confidence with --explain', () => {
    const r = { ...result('a', 0.9, 'high'), description: 'A dog.', matched_words: ['dog'], confidence_reason: 'analysis saw "dog" (dog, 91%)' };
    expect(formatSearchResults([r], { first: 1, explain: true })).toContain('[confidence: analysis saw "dog" (dog, 91%)]');
  });
});

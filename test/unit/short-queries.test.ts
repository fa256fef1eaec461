import { describe, expect, it } from 'vitest';
import { isRelevant, SHORT_QUERIES } from '../../eval/short-queries.js';

/** The short queries' right answers come from person-written text (eval/short-queries.ts). */
describe('short queries: which items are right answers', () => {
  const q = (text: string) => SHORT_QUERIES.find((x) => x.text === text)!;
  const item = (caption: string, group: 'scene' | 'animal' | 'object' | 'people' | 'action' = 'object', query?: string) => ({ caption, group, query });

  it('a word of the caption or of the written query, whole words only', () => {
    expect(isRelevant(q('a dog'), item('Two brown spaniel dogs looking out of a window'))).toBe(true);
    expect(isRelevant(q('a dog'), item('A hot-dog stand'))).toBe(true); // words, not meanings: "dog" is in it
    expect(isRelevant(q('a dog'), item('A dogged climber on a cliff'))).toBe(false);
    expect(isRelevant(q('a cat'), item('A picture', 'animal', 'tabby kitten asleep'))).toBe(true);
    expect(isRelevant(q('fruit'), item('Halved orange, lemon and lime'))).toBe(true);
    expect(isRelevant(q('a boat'), item('Tower Bridge over the Thames'))).toBe(false);
  });

  it('or every item of a kind', () => {
    expect(isRelevant(q('an animal'), item('two giraffes', 'animal'))).toBe(true);
    expect(isRelevant(q('an animal'), item('a cup of coffee', 'object'))).toBe(false);
    expect(isRelevant(q('people'), item('opera singers', 'people'))).toBe(true);
  });

  it('each query has exactly one way to be right', () => {
    for (const s of SHORT_QUERIES) expect(Boolean(s.words) !== Boolean(s.group), s.text).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { stem, tokens } from '../../src/store/memory/words.js';

/* The in-memory catalog's keyword rules: SQLite FTS5's `porter unicode61` (words folded, then Porter-stemmed). */
describe('in-memory keyword index: words as FTS5 porter unicode61 makes them', () => {
  it("stems as Porter's algorithm does", () => {
    const cases: Record<string, string> = {
      caresses: 'caress',
      ponies: 'poni',
      dogs: 'dog',
      running: 'run',
      runs: 'run',
      hopping: 'hop',
      filing: 'file',
      agreed: 'agre',
      happy: 'happi',
      relational: 'relat',
      conditional: 'condit',
      generalizations: 'gener',
      hopeful: 'hope',
      goodness: 'good',
      adjustment: 'adjust',
      controll: 'control',
    };
    for (const [word, want] of Object.entries(cases)) expect(stem(word), word).toBe(want);
    // Too short, too long, or not ASCII letters: kept as they are.
    for (const word of ['is', 'a1b2', 'x'.repeat(65)]) expect(stem(word)).toBe(word);
  });

  it('splits on anything but letters and digits, folds case and diacritics', () => {
    expect(tokens('Two DOGS, running — at the Café! EXIT 42')).toEqual(['two', 'dog', 'run', 'at', 'the', 'cafe', 'exit', '42']);
    expect(tokens(' \n ')).toEqual([]);
  });
});

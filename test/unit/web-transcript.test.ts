/**
 * The web page's transcript panel, its two rules without a browser: which word is being said at a
 * time (the one highlighted as the video plays) and which words a search's `said` match marks.
 */
import { describe, expect, it } from 'vitest';
// A plain browser module (web/): its pure functions run in Node too.
import { matchedWords, wordAt } from '../../web/transcript.js';

const words = [
  { w: 'at', start: 2.11, end: 2.24, conf: 0.5 },
  { w: 'least', start: 2.25, end: 2.55, conf: 0.9 },
  { w: 'you', start: 2.56, end: 2.72, conf: 0.9 },
  { w: 'to', start: 2.73, end: 2.9, conf: 0.5 },
  { w: 'consider', start: 2.91, end: 3.44, conf: 0.9 },
  { w: 'how', start: 3.45, end: 3.92, conf: 0.9 },
  { w: 'much', start: 5.0, end: 5.3, conf: 0.9 },
];

describe('wordAt: the word being said', () => {
  it('is the last word started, while it lasts and a moment after', () => {
    expect(wordAt(words, 0)).toBe(-1); // before the first word
    expect(wordAt(words, 2.11)).toBe(0);
    expect(wordAt(words, 2.8)).toBe(3);
    expect(wordAt(words, 2.905)).toBe(3); // between two words: the one just said
    expect(wordAt(words, 3.44)).toBe(4);
    expect(wordAt(words, 4.1)).toBe(5); // a short pause after "how"
    expect(wordAt(words, 4.6)).toBe(-1); // a long silence: none
    expect(wordAt(words, 5.1)).toBe(6);
    expect(wordAt(words, 99)).toBe(-1);
    expect(wordAt([], 1)).toBe(-1);
  });
});

describe('matchedWords: the words a search matched', () => {
  it('are those said within the match whose text is among the matched words', () => {
    expect(matchedWords(words, { matched: ['to', 'consider'], start: 2.73, end: 3.44 })).toEqual([3, 4]);
    // The same word elsewhere is not marked; case and punctuation do not matter.
    expect(matchedWords(words, { matched: ['Consider,'], start: 2.91, end: 3.44 })).toEqual([4]);
  });

  it('are every word within the match when none is spelled like the matched words (a match by sound)', () => {
    expect(matchedWords(words, { matched: ['konsider'], start: 2.9, end: 3.45 })).toEqual([4]);
  });

  it('are none without a match', () => {
    expect(matchedWords(words, undefined)).toEqual([]);
    expect(matchedWords(words, { matched: ['to'], start: 9, end: 10 })).toEqual([]);
  });
});

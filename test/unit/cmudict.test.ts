/**
 * CMUdict read once into a compact form (src/speech/cmudict.ts): the same pronunciations as a
 * full parse for every word, whether the file is in order, in order but for a few lines (as
 * Debian's is), or shuffled; comments and case as CMUdict copies have them.
 */
import { describe, expect, it } from 'vitest';
import { CompactDict } from '../../src/speech/cmudict.js';
import { parseDict } from '../../src/speech/phonetic.js';

const LINES = [
  "'bout B AW1 T",
  "'em AH0 M",
  'a AH0',
  "a's EY1 Z",
  'a(2) EY1',
  'a. EY1',
  'aaron EH1 R AH0 N',
  "aaron's EH1 R AH0 N Z",
  'one W AH1 N',
  'one(2) HH W AH1 N',
  "one's W AH1 N Z", // after one(2): out of order, as in Debian's copy
  'one-sided W AH1 N S AY1 D IH0 D',
  'read R EH1 D',
  'read(2) R IY1 D',
  'reader R IY1 D ER0',
  'the DH AH0',
  'the(2) DH AH1',
  'the(3) DH IY0',
  'zebra Z IY1 B R AH0',
];

function expectSame(d: CompactDict, text: string) {
  const full = parseDict(text);
  for (const [word, prons] of full) expect(d.get(word), word).toEqual(prons);
  for (const absent of ['', 'b', 'on', 'ones', 'reade', 'zebras', "'", 'a(']) expect(d.get(absent), absent).toBeUndefined();
  expect(d.get('ONE')).toEqual(full.get('one')); // any case
}

describe('CMUdict in a compact form', () => {
  it('finds every word with all its variants, in a file in order but for a few lines', () => {
    const text = [';;; # CMUdict -- a comment', ';;; another', ...LINES].join('\n');
    expectSame(new CompactDict(Buffer.from(text)), text);
  });

  it('reads a copy out of order (another file named by VIDEMBED_CMUDICT) as well, upper case and CRLF too', () => {
    const shuffled = [...LINES].sort((a, b) => (a.length % 7) - (b.length % 7) || b.localeCompare(a));
    const text = shuffled.map((l) => l.replace(/^[^ ]+/, (w) => w.toUpperCase())).join('\r\n');
    const d = new CompactDict(Buffer.from(text));
    // The same as the file in order (variant n is word(n), wherever its line is).
    const full = parseDict(LINES.join('\n'));
    for (const [word, prons] of full) expect(d.get(word), word).toEqual(prons);
  });
});

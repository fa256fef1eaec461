/*
 * The keyword rules of the in-memory catalog, matching SQLite's FTS5 `porter unicode61` index
 * (src/store/migrations.ts): words are runs of letters and digits, lower-cased, without
 * diacritics, each stemmed by the Porter algorithm (words of 3 to 64 ASCII letters; others are
 * kept as they are). No stop words. A term of several words matches them as a phrase.
 */

/** Texts already tokenized (segment descriptions recur in every search that finds them); emptied at TOKENS_MEMO_MAX. */
const tokensMemo = new Map<string, readonly string[]>();
const TOKENS_MEMO_MAX = 20_000;

/** The index tokens of a text: words, folded and stemmed (a new array each call). */
export function tokens(text: string): string[] {
  let got = tokensMemo.get(text);
  if (got === undefined) {
    const words = text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().match(/[\p{L}\p{N}\p{Co}]+/gu) ?? [];
    got = words.map(stem);
    if (text.length <= 4096) {
      if (tokensMemo.size >= TOKENS_MEMO_MAX) tokensMemo.clear();
      tokensMemo.set(text, got);
    }
  }
  return got.slice();
}

/**
 * Stems already worked out: a search stems the words of every candidate's description (its
 * evidence), mostly the same few thousand words, so each is stemmed once per process. Emptied
 * when it reaches STEM_MEMO_MAX words.
 */
const stemMemo = new Map<string, string>();
const STEM_MEMO_MAX = 50_000;

/** Porter's stemmer (the revised rules of his reference C code, as FTS5 uses). */
export function stem(word: string): string {
  if (word.length < 3 || word.length > 64 || !/^[a-z]+$/.test(word)) return word;
  let got = stemMemo.get(word);
  if (got === undefined) {
    if (stemMemo.size >= STEM_MEMO_MAX) stemMemo.clear();
    stemMemo.set(word, (got = porter(word)));
  }
  return got;
}

function porter(word: string): string {
  let w = step1a(word);
  w = step1b(w);
  w = step1c(w);
  w = replaceFirst(w, STEP2, 0);
  w = replaceFirst(w, STEP3, 0);
  w = step4(w);
  return step5(w);
}

function isConsonant(w: string, i: number): boolean {
  const c = w[i];
  if ('aeiou'.includes(c)) return false;
  if (c === 'y') return i === 0 || !isConsonant(w, i - 1);
  return true;
}

/** Porter's m: the number of vowel-consonant sequences in `w`. */
function measure(w: string): number {
  let m = 0;
  let i = 0;
  const n = w.length;
  while (i < n && isConsonant(w, i)) i++;
  for (;;) {
    while (i < n && !isConsonant(w, i)) i++;
    if (i >= n) return m;
    while (i < n && isConsonant(w, i)) i++;
    m++;
  }
}

const hasVowel = (w: string) => [...w].some((_, i) => !isConsonant(w, i));
const doubleConsonant = (w: string) => w.length >= 2 && w[w.length - 1] === w[w.length - 2] && isConsonant(w, w.length - 1);
/** *o: ends consonant-vowel-consonant, the last not w, x or y. */
function cvc(w: string): boolean {
  const n = w.length;
  if (n < 3 || !isConsonant(w, n - 1) || isConsonant(w, n - 2) || !isConsonant(w, n - 3)) return false;
  return !'wxy'.includes(w[n - 1]);
}

function step1a(w: string): string {
  if (w.endsWith('sses') || w.endsWith('ies')) return w.slice(0, -2);
  if (w.endsWith('ss')) return w;
  if (w.endsWith('s')) return w.slice(0, -1);
  return w;
}

function step1b(w: string): string {
  if (w.endsWith('eed')) return measure(w.slice(0, -3)) > 0 ? w.slice(0, -1) : w;
  let base: string | undefined;
  if (w.endsWith('ed') && hasVowel(w.slice(0, -2))) base = w.slice(0, -2);
  else if (w.endsWith('ing') && hasVowel(w.slice(0, -3))) base = w.slice(0, -3);
  if (base === undefined) return w;
  if (base.endsWith('at') || base.endsWith('bl') || base.endsWith('iz')) return `${base}e`;
  if (doubleConsonant(base) && !'lsz'.includes(base[base.length - 1])) return base.slice(0, -1);
  if (measure(base) === 1 && cvc(base)) return `${base}e`;
  return base;
}

function step1c(w: string): string {
  return w.endsWith('y') && hasVowel(w.slice(0, -1)) ? `${w.slice(0, -1)}i` : w;
}

const STEP2: Array<[string, string]> = [
  ['ational', 'ate'],
  ['tional', 'tion'],
  ['enci', 'ence'],
  ['anci', 'ance'],
  ['izer', 'ize'],
  ['bli', 'ble'],
  ['alli', 'al'],
  ['entli', 'ent'],
  ['eli', 'e'],
  ['ousli', 'ous'],
  ['ization', 'ize'],
  ['ation', 'ate'],
  ['ator', 'ate'],
  ['alism', 'al'],
  ['iveness', 'ive'],
  ['fulness', 'ful'],
  ['ousness', 'ous'],
  ['aliti', 'al'],
  ['iviti', 'ive'],
  ['biliti', 'ble'],
  ['logi', 'log'],
];

const STEP3: Array<[string, string]> = [
  ['icate', 'ic'],
  ['ative', ''],
  ['alize', 'al'],
  ['iciti', 'ic'],
  ['ical', 'ic'],
  ['ful', ''],
  ['ness', ''],
];

/** The longest suffix of `rules` that `w` ends with, replaced when the rest measures more than `minM`. */
function replaceFirst(w: string, rules: Array<[string, string]>, minM: number): string {
  let best: [string, string] | undefined;
  for (const r of rules) if (w.endsWith(r[0]) && (!best || r[0].length > best[0].length)) best = r;
  if (!best) return w;
  const base = w.slice(0, -best[0].length);
  return measure(base) > minM ? base + best[1] : w;
}

const STEP4 = ['al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'ion', 'ou', 'ism', 'ate', 'iti', 'ous', 'ive', 'ize'];

function step4(w: string): string {
  let best = '';
  for (const s of STEP4) if (w.endsWith(s) && s.length > best.length) best = s;
  if (!best) return w;
  const base = w.slice(0, -best.length);
  if (measure(base) <= 1) return w;
  if (best === 'ion' && !(base.endsWith('s') || base.endsWith('t'))) return w;
  return base;
}

function step5(w: string): string {
  if (w.endsWith('e')) {
    const base = w.slice(0, -1);
    const m = measure(base);
    if (m > 1 || (m === 1 && !cvc(base))) w = base;
  }
  if (w.endsWith('ll') && measure(w) > 1) w = w.slice(0, -1);
  return w;
}

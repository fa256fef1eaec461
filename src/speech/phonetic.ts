/**
 * Words by sound. A recognizer mishears ("Dashwood" → "guess what") and a user misspells, so
 * spoken words are matched on their phones (ARPAbet, CMUdict) as well as their letters. Phones come
 * from CMUdict where it is installed (it ships with pocketsphinx-en-us; `VIDEMBED_CMUDICT` names
 * another copy) and from letter-to-sound rules for every other word, so unknown names still match.
 */
import { existsSync, readFileSync } from 'node:fs';
import { cmudictPath } from '../env.js';
import { CompactDict, type PronunciationDict } from './cmudict.js';

const DICT_PATHS = ['/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict', '/usr/local/share/pocketsphinx/model/en-us/cmudict-en-us.dict'];

let dict: PronunciationDict | null | undefined;

/**
 * CMUdict as word → pronunciations (phones without stress marks), read once per process into a
 * compact form (src/speech/cmudict.ts: a few ms, not a parse of every line); null when none is installed.
 */
export function cmudict(): PronunciationDict | null {
  if (dict !== undefined) return dict;
  const file = [cmudictPath(), ...DICT_PATHS].find((p) => p && existsSync(p));
  dict = file ? new CompactDict(readFileSync(file)) : null;
  return dict;
}

/** Parses CMUdict text (`word PH PH …`, `word(2) …` for variants; `;;;` comments). */
export function parseDict(text: string): Map<string, string[][]> {
  const out = new Map<string, string[][]>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith(';;;')) continue;
    const parts = line.trim().split(/\s+/);
    if (parts.length < 2) continue;
    const word = parts[0].toLowerCase().replace(/\(\d+\)$/, '');
    const phones = parts.slice(1).map((p) => p.replace(/\d$/, ''));
    const list = out.get(word);
    if (list) list.push(phones);
    else out.set(word, [phones]);
  }
  return out;
}

/** Only for tests: use this dictionary (null: none) instead of the installed one. */
export function setDictForTests(d: PronunciationDict | null | undefined): void {
  dict = d;
  known.clear();
}

const ONES = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen'];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];

/** An integer below a million in words ("12" → "twelve", "305" → "three hundred five"). */
export function numberWords(n: number): string[] {
  if (!Number.isInteger(n) || n < 0 || n >= 1e6) return String(n).split('').map((d) => ONES[Number(d)] ?? d);
  if (n < 20) return [ONES[n]];
  if (n < 100) return n % 10 ? [TENS[Math.floor(n / 10)], ONES[n % 10]] : [TENS[n / 10]];
  if (n < 1000) return [ONES[Math.floor(n / 100)], 'hundred', ...(n % 100 ? numberWords(n % 100) : [])];
  return [...numberWords(Math.floor(n / 1000)), 'thousand', ...(n % 1000 ? numberWords(n % 1000) : [])];
}

/**
 * The words of a text as a recognizer writes them: lower case, apostrophes kept inside words,
 * numbers spelled out, everything else a separator.
 */
export function spokenWords(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? []) {
    const w = raw.replace(/^'+|'+$/g, '');
    if (!w) continue;
    if (/^\d+$/.test(w)) out.push(...numberWords(Number(w)));
    else out.push(w);
  }
  return out;
}

/**
 * Letter-to-sound rules for words CMUdict does not have: longest spelling first, a rough but
 * consistent guess (the same misspelling always gives the same phones, close to the dictionary's).
 */
const RULES: Array<[string, string[]]> = [
  ['tion', ['SH', 'AH', 'N']], ['sion', ['ZH', 'AH', 'N']], ['ough', ['AO']], ['augh', ['AO']], ['eigh', ['EY']],
  ['igh', ['AY']], ['tch', ['CH']], ['dge', ['JH']], ['sch', ['S', 'K']], ['que', ['K']],
  ['ch', ['CH']], ['sh', ['SH']], ['th', ['TH']], ['ph', ['F']], ['wh', ['W']], ['ck', ['K']], ['ng', ['NG']], ['qu', ['K', 'W']],
  ['gh', ['G']], ['kn', ['N']], ['wr', ['R']], ['mb', ['M']],
  ['ee', ['IY']], ['ea', ['IY']], ['ie', ['IY']], ['ei', ['EY']], ['oo', ['UW']], ['ou', ['AW']], ['ow', ['OW']], ['oa', ['OW']],
  ['ai', ['EY']], ['ay', ['EY']], ['oi', ['OY']], ['oy', ['OY']], ['au', ['AO']], ['aw', ['AO']], ['ew', ['UW']], ['ue', ['UW']],
  ['er', ['ER']], ['ir', ['ER']], ['ur', ['ER']], ['ar', ['AA', 'R']], ['or', ['AO', 'R']],
  ['a', ['AE']], ['b', ['B']], ['c', ['K']], ['d', ['D']], ['e', ['EH']], ['f', ['F']], ['g', ['G']], ['h', ['HH']], ['i', ['IH']],
  ['j', ['JH']], ['k', ['K']], ['l', ['L']], ['m', ['M']], ['n', ['N']], ['o', ['AA']], ['p', ['P']], ['q', ['K']], ['r', ['R']],
  ['s', ['S']], ['t', ['T']], ['u', ['AH']], ['v', ['V']], ['w', ['W']], ['x', ['K', 'S']], ['y', ['IY']], ['z', ['Z']],
];

const MAGIC_E: Record<string, string> = { a: 'EY', e: 'IY', i: 'AY', o: 'OW', u: 'UW' };

export function guessPhones(word: string): string[] {
  const w = word.toLowerCase().replace(/[^a-z]/g, '');
  const out: string[] = [];
  let i = 0;
  while (i < w.length) {
    // A final silent e after a consonant ("name", "time").
    if (w[i] === 'e' && i === w.length - 1 && i >= 2) break;
    // A vowel before one consonant and a final silent e is long ("phone", "name", "time").
    const magic = MAGIC_E[w[i]];
    if (magic && i === w.length - 3 && w[i + 2] === 'e' && !'aeiouy'.includes(w[i + 1])) {
      out.push(magic);
      i++;
      continue;
    }
    const soft = w[i] === 'c' && 'eiy'.includes(w[i + 1] ?? '') ? ['S'] : undefined;
    if (soft) {
      out.push(...soft);
      i++;
      continue;
    }
    const rule = RULES.find(([s]) => w.startsWith(s, i));
    if (!rule) {
      i++;
      continue;
    }
    // y at the start of a word is a consonant.
    if (rule[0] === 'y' && i === 0) out.push('Y');
    else out.push(...rule[1]);
    i += rule[0].length;
  }
  // Doubled consonants are one sound.
  return out.filter((p, k) => k === 0 || p !== out[k - 1] || VOWELS.has(p));
}

/**
 * A word's phones: the recognizer's own variant where it names one (`was(2)`), else CMUdict's
 * first pronunciation, else the letter-to-sound guess.
 */
export function phonesOf(word: string): readonly string[] {
  let phones = known.get(word);
  if (phones) return phones;
  const m = /^(.*)\((\d+)\)$/.exec(word);
  const base = (m ? m[1] : word).toLowerCase();
  const prons = cmudict()?.get(base);
  phones = Object.freeze(prons?.length ? prons[Math.min(prons.length - 1, m ? Number(m[2]) - 1 : 0)] : guessPhones(base));
  if (known.size >= KNOWN_WORDS) known.clear();
  known.set(word, phones);
  return phones;
}

/**
 * Words whose phones were looked up lately (a query asks for each word three times: its phones,
 * its sound key, its runs of sounds; searches repeat words): at most KNOWN_WORDS, then forgotten
 * all at once. The arrays are frozen: every caller shares them.
 */
const KNOWN_WORDS = 4096;
const known = new Map<string, readonly string[]>();

const VOWELS = new Set(['AA', 'AE', 'AH', 'AO', 'AW', 'AY', 'EH', 'ER', 'EY', 'IH', 'IY', 'OW', 'OY', 'UH', 'UW']);

/** Sound classes: phones a recognizer confuses with each other share one. */
const CLASS: Record<string, string> = {
  P: 'p', B: 'p', T: 't', D: 't', K: 'k', G: 'k', F: 'f', V: 'f', TH: 'f', DH: 't', S: 's', Z: 's', SH: 'x', ZH: 'x', CH: 'x', JH: 'x',
  M: 'n', N: 'n', NG: 'n', L: 'l', R: 'r', ER: 'r', W: 'w', Y: 'y', HH: 'h',
};

export function isVowel(p: string): boolean {
  return VOWELS.has(p);
}

/**
 * A spoken word as a keyword-index term: `zw` + its letters ("don't" → `zwdont`). What is said is
 * indexed apart from what is seen and written, so a query's plain words never match a spoken word
 * as if it were seen; spoken search asks for these terms (src/speech/match.ts).
 */
export function spokenTerm(word: string): string | undefined {
  const letters = word.toLowerCase().replace(/\(\d+\)$/, '').replace(/[^\p{L}\p{N}]/gu, '');
  return letters.length > 1 ? `zw${letters}` : undefined;
}

/**
 * A word's key in the keyword index: its consonant classes in order ("revenue" → "rfny" less
 * vowels → `zqrfn`), prefixed so it never collides with a real word. Words of fewer than two
 * consonant classes have none (too many words share them to select anything).
 */
export function soundKey(word: string): string | undefined {
  const cls: string[] = [];
  for (const p of phonesOf(word)) {
    const c = CLASS[p];
    if (!c || c === 'h' || c === 'w' || c === 'y') continue;
    if (cls[cls.length - 1] !== c) cls.push(c);
  }
  return cls.length >= 2 ? `zq${cls.join('')}` : undefined;
}

/**
 * Index terms for words heard or asked for in a row: every run of three consonant classes across
 * them (`zk` + the classes: "increase the" → `zknkr`, `zkkrs`, `zkrst`), so a phrase whose words
 * were all misheard ("moncrief the") still shares sounds with the query and its segment is offered
 * to the alignment. Weaker than a word's key (many words share a run), they only rank candidates.
 */
export function soundGrams(words: string[]): string[] {
  const cls: string[] = [];
  for (const w of words) {
    for (const p of phonesOf(w)) {
      const c = CLASS[p];
      if (!c || c === 'h' || c === 'w' || c === 'y') continue;
      if (cls[cls.length - 1] !== c) cls.push(c);
    }
  }
  const out = new Set<string>();
  for (let i = 0; i + 3 <= cls.length; i++) out.add(`zk${cls[i]}${cls[i + 1]}${cls[i + 2]}`);
  return [...out];
}

/**
 * Costs of the alignment (chosen on the tuning half of the eval's recordings, docs/speech.md):
 * substituting one vowel for another, a consonant for one of its class (t/d, s/z…), for another
 * consonant, a vowel for a consonant; a phone missing or extra (vowel, consonant).
 */
export const PHONE_COSTS = { vowel: 0.4, sameClass: 0.3, consonant: 0.6, mixed: 1, gapVowel: 0.5, gapConsonant: 0.7 };

/** Substitution cost of two phones in [0, 1]: 0 the same, small for sounds a recognizer confuses. */
export function phoneCost(a: string, b: string): number {
  if (a === b) return 0;
  const va = VOWELS.has(a);
  const vb = VOWELS.has(b);
  if (va && vb) return PHONE_COSTS.vowel;
  if (va !== vb) return a === 'ER' || b === 'ER' ? Math.min(PHONE_COSTS.mixed, PHONE_COSTS.vowel + 0.1) : PHONE_COSTS.mixed;
  return CLASS[a] === CLASS[b] ? PHONE_COSTS.sameClass : PHONE_COSTS.consonant;
}

/** Cost of a phone the transcript has and the query does not, or the reverse. */
function gapCost(p: string): number {
  return VOWELS.has(p) ? PHONE_COSTS.gapVowel : PHONE_COSTS.gapConsonant;
}

export interface Alignment {
  /** In [0, 1]: 1 when the query's phones stand in the transcript exactly. */
  score: number;
  /** Index in `words` of the first and last word the match covers. */
  first: number;
  last: number;
}

/**
 * Where a spoken query stands in a run of words, by sound: the query's phones aligned against the
 * words' phones, free to start and end anywhere in the words (semi-global edit distance with
 * sound-aware costs). The score is 1 − cost / (query phones), at least 0.
 */
export function alignPhones(query: readonly string[], words: ReadonlyArray<readonly string[]>): Alignment | undefined {
  const m = query.length;
  const flat: string[] = [];
  const wordOf: number[] = [];
  words.forEach((ph, i) => {
    for (const p of ph) {
      flat.push(p);
      wordOf.push(i);
    }
  });
  const n = flat.length;
  if (m === 0 || n === 0) return undefined;
  // prev[j]: cost of aligning query[0..i) ending at flat position j; start[j]: where that alignment began.
  let prev = new Float64Array(n + 1);
  let prevStart = new Int32Array(n + 1);
  for (let j = 0; j <= n; j++) prevStart[j] = j;
  let cur = new Float64Array(n + 1);
  let curStart = new Int32Array(n + 1);
  for (let i = 1; i <= m; i++) {
    const q = query[i - 1];
    cur[0] = prev[0] + gapCost(q);
    curStart[0] = 0;
    for (let j = 1; j <= n; j++) {
      const sub = prev[j - 1] + phoneCost(q, flat[j - 1]);
      const del = prev[j] + gapCost(q); // a query phone the transcript lacks
      const ins = cur[j - 1] + gapCost(flat[j - 1]); // a transcript phone the query lacks
      if (sub <= del && sub <= ins) {
        cur[j] = sub;
        curStart[j] = prevStart[j - 1];
      } else if (del <= ins) {
        cur[j] = del;
        curStart[j] = prevStart[j];
      } else {
        cur[j] = ins;
        curStart[j] = curStart[j - 1];
      }
    }
    [prev, cur] = [cur, prev];
    [prevStart, curStart] = [curStart, prevStart];
  }
  let best = 1;
  for (let j = 2; j <= n; j++) if (prev[j] < prev[best]) best = j;
  const cost = prev[best];
  const startFlat = Math.min(prevStart[best], n - 1);
  return { score: Math.max(0, 1 - cost / m), first: wordOf[startFlat], last: wordOf[best - 1] };
}

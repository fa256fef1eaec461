/**
 * CMUdict, read once per process into a compact form: the file's bytes as they are and one
 * Int32Array of where its lines start — no string per word, no Map of 134,000 entries. A lookup is
 * a binary search over the lines comparing bytes in place, then the word's lines (its variants
 * `word(2)` …) parsed when asked. Reading the 3.3 MB system dictionary this way costs a few
 * milliseconds where parsing it into a Map cost ~750 ms (docs/benchmarks.md, CMUdict).
 *
 * The dictionary is sorted by its first column (`a`, `a's`, `a(2)`, `a.`): every entry of a word
 * then lies in the run of lines that begin with it, found by binary search. That order is checked
 * when the file is read (one pass, byte by byte); a copy that is not in order (one named by
 * VIDEMBED_CMUDICT) gets its index sorted instead — slower to read, as correct.
 */

const NL = 0x0a;
const SP = 0x20;
const TAB = 0x09;
const CR = 0x0d;

export interface PronunciationDict {
  /** The word's pronunciations (phones, stress marks stripped), or undefined when it has none. */
  get(word: string): string[][] | undefined;
}

const lower = (c: number) => (c >= 0x41 && c <= 0x5a ? c + 32 : c);
const isSep = (c: number) => c === SP || c === TAB;

/**
 * The dictionary as its bytes, searched in place by a binary search over byte offsets (the line
 * around the middle, compared where it lies). One pass when it is read finds the few lines that
 * are not in order (`one's` after `one(2)` in Debian's copy) and keeps them aside, by word; the
 * search steps over them. A copy far from order (more than 1 % of its lines) gets an index of its
 * lines, sorted once, instead.
 */
export class CompactDict implements PronunciationDict {
  /** Line starts in order, when the file itself is far from it. */
  private readonly sorted: Int32Array | undefined;
  /** Lines out of order, by the word they are an entry of; and their starts (the search steps over them). */
  private readonly misplaced = new Map<string, number[]>();
  private readonly misplacedStarts = new Set<number>();

  constructor(private readonly bytes: Buffer) {
    this.sorted = this.findMisplaced() ? undefined : this.sortedIndex();
  }

  /** Case-folded byte order of the first columns of the lines at `a` and `b`. */
  private compareTokens(a: number, b: number): number {
    const x = this.bytes;
    for (let i = 0; ; i++) {
      const ca = a + i < x.length && !isSep(x[a + i]) && x[a + i] !== NL ? lower(x[a + i]) : -1;
      const cb = b + i < x.length && !isSep(x[b + i]) && x[b + i] !== NL ? lower(x[b + i]) : -1;
      if (ca !== cb) return ca - cb;
      if (ca < 0) return 0;
    }
  }

  /** Whether line `s` is an entry (not a `;;;` comment, not empty). */
  private isEntry(s: number): boolean {
    const x = this.bytes;
    return s < x.length && x[s] !== NL && x[s] !== CR && !isSep(x[s]) && !(x[s] === 0x3b && x[s + 1] === 0x3b && x[s + 2] === 0x3b);
  }

  /** The word a line is an entry of: its first column without `(n)`, lower case. */
  private wordAt(s: number): string {
    const x = this.bytes;
    let e = s;
    while (e < x.length && !isSep(x[e]) && x[e] !== NL) e++;
    return x.toString('latin1', s, e).replace(/\(\d+\)$/, '').toLowerCase();
  }

  /**
   * One pass: the lines that sort before a line above them are set aside (by word). Answers false
   * when there are too many of them for a search in place to be worth it.
   */
  private findMisplaced(): boolean {
    const x = this.bytes;
    let top = -1;
    let entries = 0;
    for (let at = 0; at < x.length; ) {
      let end = x.indexOf(NL, at);
      if (end < 0) end = x.length;
      if (this.isEntry(at)) {
        entries++;
        if (top >= 0 && this.compareTokens(top, at) > 0) {
          const w = this.wordAt(at);
          this.misplaced.set(w, [...(this.misplaced.get(w) ?? []), at]);
          this.misplacedStarts.add(at);
        } else top = at;
      }
      at = end + 1;
    }
    return this.misplacedStarts.size <= entries / 100;
  }

  private sortedIndex(): Int32Array {
    const x = this.bytes;
    const starts: number[] = [];
    for (let at = 0; at < x.length; ) {
      let end = x.indexOf(NL, at);
      if (end < 0) end = x.length;
      if (this.isEntry(at)) starts.push(at);
      at = end + 1;
    }
    this.misplaced.clear();
    this.misplacedStarts.clear();
    return Int32Array.from(starts).sort((a, b) => this.compareTokens(a, b));
  }

  /** Compares the first column at `s` with `key` (lower case) on the key's length: 0 when it begins with the key. */
  private prefixCompare(s: number, key: Buffer): number {
    const x = this.bytes;
    for (let k = 0; k < key.length; k++) {
      const c = s + k < x.length && !isSep(x[s + k]) && x[s + k] !== NL ? lower(x[s + k]) : -1;
      if (c !== key[k]) return c - key[k];
    }
    return 0;
  }

  private lineStart(pos: number): number {
    return this.bytes.lastIndexOf(NL, pos - 1) + 1;
  }

  private nextLine(s: number): number {
    const end = this.bytes.indexOf(NL, s);
    return end < 0 ? this.bytes.length : end + 1;
  }

  /** A line the search steps over: a comment, an empty line, one out of order. */
  private skipped(s: number): boolean {
    return !this.isEntry(s) || this.misplacedStarts.has(s);
  }

  /** The first line (a start offset, skipped lines aside) whose first column is not before `key`. */
  private lowerBound(key: Buffer): number {
    let lo = 0;
    let hi = this.bytes.length;
    while (lo < hi) {
      const at = Math.max(lo, this.lineStart((lo + hi) >>> 1));
      let s = at;
      while (s < hi && this.skipped(s)) s = this.nextLine(s);
      if (s >= hi) hi = at;
      else if (this.prefixCompare(s, key) < 0) lo = this.nextLine(s);
      else hi = s;
    }
    return lo;
  }

  get(word: string): string[][] | undefined {
    const lowerWord = word.toLowerCase();
    const key = Buffer.from(lowerWord, 'utf8');
    if (!key.length) return undefined;
    const found: Array<{ n: number; phones: string[] }> = [];
    const take = (s: number) => {
      const v = this.variantOf(s, key.length);
      if (v) found.push(v);
    };
    if (this.sorted) {
      // (In an index sorted by first column, a word's lines are among those that begin with it.)
      const idx = this.sorted;
      let lo = 0;
      let hi = idx.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (this.prefixCompare(idx[mid], key) < 0) lo = mid + 1;
        else hi = mid;
      }
      for (let i = lo; i < idx.length && this.prefixCompare(idx[i], key) === 0; i++) take(idx[i]);
    } else {
      // The word's lines follow it: `word`, `word's` (an apostrophe sorts before the parenthesis), `word(2)`.
      for (let s = this.lowerBound(key); s < this.bytes.length; s = this.nextLine(s)) {
        if (this.skipped(s)) continue;
        if (this.prefixCompare(s, key) !== 0) break;
        const next = this.bytes[s + key.length];
        if (!isSep(next) && next > 0x28) break;
        take(s);
      }
      for (const s of this.misplaced.get(lowerWord) ?? []) take(s);
    }
    // Variant n is `word(n)` (the word itself is 1): pocketsphinx names the one it heard by it.
    return found.length ? found.sort((a, b) => a.n - b.n).map((f) => f.phones) : undefined;
  }
  /** The phones of the line at `s` when its first column is the word of `len` bytes itself or one of its variants (`word(2)`). */
  private variantOf(s: number, len: number): { n: number; phones: string[] } | undefined {
    const x = this.bytes;
    let k = s + len;
    let n = 1;
    if (k < x.length && x[k] === 0x28) {
      k++;
      const digits = k;
      while (k < x.length && x[k] >= 0x30 && x[k] <= 0x39) k++;
      if (x[k] !== 0x29 || k === digits) return undefined;
      n = Number(x.toString('latin1', digits, k));
      k++;
    }
    if (k >= x.length || !isSep(x[k])) return undefined;
    let end = x.indexOf(NL, k);
    if (end < 0) end = x.length;
    if (x[end - 1] === CR) end--;
    const phones = x
      .toString('latin1', k, end)
      .trim()
      .split(/\s+/)
      .map((p) => p.replace(/\d$/, ''));
    return { n, phones };
  }
}

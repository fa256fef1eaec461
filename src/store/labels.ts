/*
 * Tag labels, stored generically per segment (SQLite migration 14, PostgreSQL migration 4): a
 * segment's filterable labels are one object, tag kind → label, and a search filter is one too
 * (every entry must match). One place for what a kind may be and how labels come from tags.
 */

/** A segment's filterable tag labels: tag kind → label. */
export type Labels = Readonly<Record<string, string>>;
/** A search filter: tag kind → label; every entry must match (a kind the segment lacks never does). */
export type LabelFilter = Readonly<Record<string, string | undefined>>;

const KIND = /^[a-z][a-z0-9_]{0,63}$/;

/** A tag kind as the stores accept it (lower-case word); anything else is a RangeError. */
export function checkKind(kind: string): string {
  if (!KIND.test(kind)) throw new RangeError(`bad tag kind ${JSON.stringify(kind)}: lower-case letters, digits and _`);
  return kind;
}

/**
 * The filterable labels of a segment's tags: a string value is its label, an object's `label`
 * (a TagValue) likewise; other values and kinds that are not lower-case words are not filterable.
 * Keys sorted, so equal label sets serialise alike.
 */
export function labelsOf(tags: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!tags) return out;
  for (const kind of Object.keys(tags).sort()) {
    if (!KIND.test(kind)) continue;
    const v = tags[kind];
    const label = typeof v === 'string' ? v : v && typeof v === 'object' && typeof (v as { label?: unknown }).label === 'string' ? (v as { label: string }).label : undefined;
    if (label) out[kind] = label;
  }
  return out;
}

/** The entries of a filter that filter (a value given), kinds checked; empty: no filter. */
export function filterEntries(filter: LabelFilter | undefined): Array<[string, string]> {
  if (!filter) return [];
  return Object.keys(filter)
    .sort()
    .filter((k) => filter[k] !== undefined && filter[k] !== '')
    .map((k) => [checkKind(k), filter[k]!]);
}

/** A filter as a cache key (same filter, same key). */
export function filterKey(filter: LabelFilter | undefined): string {
  return JSON.stringify(filterEntries(filter));
}

export function matches(labels: Labels, want: Array<[string, string]>): boolean {
  for (const [k, v] of want) if (labels[k] !== v) return false;
  return true;
}

/** Label sets parsed once per distinct JSON text (there are few). */
export class LabelCache {
  private readonly parsed = new Map<string, Labels>();
  of(json: string | null): Labels {
    if (!json) return EMPTY;
    let l = this.parsed.get(json);
    if (!l) {
      if (this.parsed.size > 65536) this.parsed.clear();
      l = JSON.parse(json) as Labels;
      this.parsed.set(json, l);
    }
    return l;
  }
}
const EMPTY: Labels = Object.freeze({});


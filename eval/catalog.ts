/**
 * The shared evaluation catalog (`../shared/eval/catalog.tsv` from the repository root): rows of
 * photos and videos with a person's caption, shot size and camera angle. Maps the free-text
 * judgements onto the tag vocabularies; "ambiguous" judgements are excluded from accuracy.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SHOOTING_ANGLE_LABELS, SHOT_SIZE_LABELS, type ShootingAngleLabel, type ShotSizeLabel } from '../src/tagging/framing.js';

export interface CatalogRow {
  /** Path relative to the eval directory, e.g. `photos/x.jpg`. */
  path: string;
  file: string;
  name: string;
  kind: 'photo' | 'video';
  width: number;
  height: number;
  subject: string;
  caption: string;
  shotText: string;
  angleText: string;
  notes: string;
  /** Mapped labels; null when the judgement is ambiguous or has no mapping. */
  shot: ShotSizeLabel | null;
  angle: ShootingAngleLabel | null;
  /** What a person would type to find it (4–12 words; `more/` items only): the search eval's query where present. */
  query?: string;
  /** The query's kind, for per-kind figures: scene, animal, object, people, action. */
  group: QueryGroup;
  /** The Debian package the item comes from: the unit whole sources are held out by (eval/fit-evidence.ts). */
  source: string;
}

export const QUERY_GROUPS = ['scene', 'animal', 'object', 'people', 'action'] as const;
export type QueryGroup = (typeof QUERY_GROUPS)[number];

/**
 * The original catalog's `subject` ("people/portrait", "landscape/sea", "food/drink") as a query
 * kind, by its first word: landscapes, buildings, cities, interiors, nature and water are scenes;
 * animals are animals; people and sports are people; food, vehicles, objects, physics and plants
 * (close-ups of flowers) are objects.
 */
export function groupOfSubject(subject: string): QueryGroup {
  const head = subject.trim().toLowerCase().split('/')[0];
  if (head === 'animal') return 'animal';
  if (head === 'people' || head === 'sports') return 'people';
  if (['landscape', 'buildings', 'city', 'interior', 'nature', 'underwater'].includes(head)) return 'scene';
  return 'object';
}

/** The repository root: the nearest ancestor of this file (eval/ or dist/eval/) holding package.json. */
export function repoRoot(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return process.cwd();
  }
}

/** `../shared/eval` relative to the repository root, from whatever directory the caller runs in. */
export function evalDir(root = repoRoot()): string {
  return resolve(root, '../shared/eval');
}

/** `../shared/models` relative to the repository root (weights no npm package ships). */
export function sharedModelsDir(root = repoRoot()): string {
  return resolve(root, '../shared/models');
}

export class MissingEvalDataError extends Error {}

export function requireEvalDir(root = repoRoot()): string {
  const dir = evalDir(root);
  if (!existsSync(join(dir, 'catalog.tsv'))) {
    throw new MissingEvalDataError(
      `evaluation data not found: expected ${join(dir, 'catalog.tsv')} (the shared eval set lives in ../shared/eval beside the repository)`,
    );
  }
  return dir;
}

/**
 * Shot size judgement → label. The catalog uses the usual English names: "full" (whole figure /
 * whole animal) is a full shot, which the 7-step scale calls `wide`; "medium-full" is the
 * cowboy shot (`medium_wide`). Parenthesised notes ("chest-up", "two-shot", "flat lay") do not
 * change the class; any mention of "ambiguous" excludes the row.
 */
export function mapShotSize(text: string): ShotSizeLabel | null {
  const t = text.trim().toLowerCase();
  if (!t || t.includes('ambiguous')) return null;
  const head = t.replace(/\(.*\)/, '').trim();
  const table: Array<[RegExp, ShotSizeLabel]> = [
    [/^extreme close-?up/, 'extreme_close_up'],
    [/^medium close-?up/, 'medium_close_up'],
    [/^close-?up/, 'close_up'],
    [/^medium[- ]full|^medium[- ]wide|^cowboy/, 'medium_wide'],
    [/^medium/, 'medium'],
    [/^extreme wide|^extreme long/, 'extreme_wide'],
    [/^full|^wide|^long/, 'wide'],
  ];
  for (const [re, label] of table) if (re.test(head)) return label;
  return null;
}

/** Angle judgement → label: the word before any parenthesis decides ("eye level (low)" is eye level). */
export function mapAngle(text: string): ShootingAngleLabel | null {
  const t = text.trim().toLowerCase();
  if (!t || t.startsWith('ambiguous')) return null;
  const head = t.replace(/\(.*\)/, '').trim();
  if (/^eye/.test(head)) return 'eye_level';
  if (/^high/.test(head)) return 'high_angle';
  if (/^low/.test(head)) return 'low_angle';
  if (/^overhead|^top|^bird/.test(head)) return 'overhead';
  if (/^dutch|^canted|^tilted/.test(head)) return 'dutch';
  return null;
}

export function loadCatalog(dir = requireEvalDir()): CatalogRow[] {
  const lines = readFileSync(join(dir, 'catalog.tsv'), 'utf8').split(/\r?\n/).filter((l) => l.trim());
  const header = lines[0].split('\t');
  const col = (name: string): number => {
    const i = header.indexOf(name);
    if (i < 0) throw new Error(`catalog.tsv: no column ${name}`);
    return i;
  };
  const c = {
    path: col('path'),
    kind: col('kind'),
    size: col('width_x_height'),
    subject: col('subject'),
    caption: col('caption'),
    shot: col('shot_size'),
    angle: col('camera_angle'),
    notes: col('notes'),
    source: col('source_package'),
  };
  return lines.slice(1).map((line) => {
    const f = line.split('\t');
    const [w, h] = (f[c.size] ?? '').split('x').map(Number);
    const path = f[c.path];
    return {
      path,
      file: join(dir, path),
      name: path.replace(/^.*\//, ''),
      kind: f[c.kind] === 'video' ? 'video' : 'photo',
      width: w || 0,
      height: h || 0,
      subject: f[c.subject] ?? '',
      caption: f[c.caption] ?? '',
      shotText: f[c.shot] ?? '',
      angleText: f[c.angle] ?? '',
      notes: f[c.notes] ?? '',
      shot: mapShotSize(f[c.shot] ?? ''),
      angle: mapAngle(f[c.angle] ?? ''),
      group: groupOfSubject(f[c.subject] ?? ''),
      source: f[c.source] ?? '',
    } satisfies CatalogRow;
  });
}

/**
 * `more/catalog.tsv` (62 items added 2026-11-24; `more/README.md`): a person's `query` and `kind`
 * per item and a fuller `caption`; no shot size or angle judgements.
 */
export function loadMoreCatalog(dir = requireEvalDir()): CatalogRow[] {
  const more = join(dir, 'more');
  const lines = readFileSync(join(more, 'catalog.tsv'), 'utf8').split(/\r?\n/).filter((l) => l.trim());
  const header = lines[0].split('\t');
  const col = (name: string): number => {
    const i = header.indexOf(name);
    if (i < 0) throw new Error(`more/catalog.tsv: no column ${name}`);
    return i;
  };
  const c = { path: col('path'), query: col('query'), kind: col('kind'), size: col('width_x_height'), caption: col('caption'), source: col('source_package') };
  return lines.slice(1).map((line) => {
    const f = line.split('\t');
    const [w, h] = (f[c.size] ?? '').split('x').map(Number);
    const path = f[c.path];
    const group = (QUERY_GROUPS as readonly string[]).includes(f[c.kind]) ? (f[c.kind] as QueryGroup) : 'object';
    return {
      path: `more/${path}`,
      file: join(more, path),
      name: path.replace(/^.*\//, ''),
      kind: path.startsWith('videos/') ? 'video' : 'photo',
      width: w || 0,
      height: h || 0,
      subject: f[c.kind] ?? '',
      caption: f[c.caption] ?? '',
      shotText: '',
      angleText: '',
      notes: '',
      shot: null,
      angle: null,
      query: f[c.query]?.trim() || undefined,
      group,
      source: f[c.source] ?? '',
    } satisfies CatalogRow;
  });
}

/**
 * The search eval's items: the judged catalog and `more/` (123 items). File names stay unique
 * (the hash split of eval/split.ts goes by name).
 */
export function loadSearchCatalog(dir = requireEvalDir()): CatalogRow[] {
  const rows = [...loadCatalog(dir), ...loadMoreCatalog(dir)];
  const names = new Set(rows.map((r) => r.name));
  if (names.size !== rows.length) throw new Error('eval catalogs: two items share a file name');
  return rows;
}

/** Which text of an item is the query: what a person would type (`query`, where the catalog has it), or the caption. */
export type QueryColumn = 'query' | 'caption';

/** The item's query in `column`: `query` falls back to the caption where no query was written. */
export function queryText(row: CatalogRow, column: QueryColumn): string {
  return column === 'query' ? (row.query ?? row.caption) : row.caption;
}

export { SHOOTING_ANGLE_LABELS, SHOT_SIZE_LABELS };

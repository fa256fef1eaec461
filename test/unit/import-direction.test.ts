/**
 * The folders of src/ stand on floors (docs/architecture.md): a file imports only from its own
 * folder or from a folder on a lower floor. This test reads every import of src/ (static and
 * dynamic, relative) and fails on one that runs up, naming it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Highest floor first. Folders on one floor may not import each other. */
export const FLOORS: string[][] = [
  ['cli'],
  ['server'],
  ['runtime'],
  ['services'],
  ['search'],
  ['pipeline'],
  ['capabilities'],
  ['duplicates'],
  ['speech'],
  ['embedders'],
  ['analysis'],
  ['models'],
  ['tagging'],
  ['media'],
  ['config'],
  ['store', 'net', 'threads', 'client'],
  ['api'],
  ['tags'],
  ['util', 'env'],
];

/**
 * Imports that run up today, each to be removed (never added to). Each entry must still exist, so
 * the list only shrinks. Empty: the embedders moved to src/embedders, above the analyzers whose
 * facts they read, and which analyzers run is the capability registry's (src/capabilities).
 */
const KNOWN_DEBT = new Set<string>([]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );
}

/** The folder (or top-level file, without extension) of a path relative to the repository. */
export function roomOf(file: string): string {
  const parts = file.split('/');
  return parts.length > 2 ? parts[1] : parts[1].replace(/\.(ts|js)$/, '');
}

export function floorOf(room: string): number {
  return FLOORS.findIndex((f) => f.includes(room));
}

/** Every relative import of src/, as `from -> to` (paths relative to the repository, `.ts`). */
export function importsOf(root: string): Array<{ from: string; to: string }> {
  const out: Array<{ from: string; to: string }> = [];
  for (const abs of sourceFiles(path.join(root, 'src'))) {
    const from = path.relative(root, abs).split(path.sep).join('/');
    const text = readFileSync(abs, 'utf8');
    for (const m of text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const to = path.posix.normalize(path.posix.join(path.posix.dirname(from), m[1])).replace(/\.js$/, '.ts');
      out.push({ from, to });
    }
  }
  return out;
}

describe('import direction (docs/architecture.md)', () => {
  const edges = importsOf(repoRoot);

  it('reads the imports of src/', () => {
    expect(edges.length).toBeGreaterThan(500);
  });

  it('knows every folder of src/', () => {
    const unknown = [...new Set(edges.flatMap((e) => [roomOf(e.from), roomOf(e.to)]))].filter((r) => floorOf(r) < 0);
    expect(unknown, 'a new folder of src/ needs its floor in FLOORS and docs/architecture.md').toEqual([]);
  });

  it('imports run only down', () => {
    const up = edges
      .filter((e) => roomOf(e.from) !== roomOf(e.to) && floorOf(roomOf(e.to)) <= floorOf(roomOf(e.from)))
      .map((e) => `${e.from} -> ${e.to}`)
      .filter((e) => !KNOWN_DEBT.has(e));
    expect(up, 'an import from a lower folder to a higher one (or within one floor)').toEqual([]);
  });

  it('the known debt still stands (remove an entry once its import is gone)', () => {
    const all = new Set(edges.map((e) => `${e.from} -> ${e.to}`));
    expect([...KNOWN_DEBT].filter((d) => !all.has(d))).toEqual([]);
  });

  it('catches an import that runs up', () => {
    expect(floorOf(roomOf('src/store/x.ts'))).toBeGreaterThan(floorOf(roomOf('src/services/y.ts')));
    expect(floorOf(roomOf('src/config.ts'))).toBeGreaterThan(floorOf('media'));
  });
});

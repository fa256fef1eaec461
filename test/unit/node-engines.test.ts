import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/clips.js';
// @ts-expect-error plain JavaScript (bin/vidembed asks it before loading anything else)
import { nodeLine, SUPPORTED } from '../../bin/node-line.mjs';

/*
 * The Node versions package.json promises (`engines`) and the ones its installed dependencies
 * accept agree (issues 22, 33): the first release of each supported line (22.13, 24.0) satisfies
 * every runtime dependency in package-lock.json. Node 20 (20.19 and later) is outside support but
 * inside `engines`, so npm does not print EBADENGINE on every `npx` call: measured on a fresh clone
 * (docs/install.md), everything runs on it; the one dependency that declares otherwise is listed
 * here with why it does not matter. bin/node-line.mjs says the same to the user in one line.
 */

/** Runtime dependencies whose `engines` refuse Node 20.19 though what vidembed uses of them runs there. */
const DECLARED_ONLY_ON_20 = [
  // light-my-request (fastify's inject, which vidembed's server never calls) needs only stringifySetCookie.
  'cookie >=22',
];

type V = [number, number, number];
const parse = (s: string): (number | undefined)[] => s.split('.').map((p) => (/^\d+$/.test(p) ? Number(p) : undefined));
const cmp = (a: V, b: V) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** npm's range grammar, as far as the lock file's `engines.node` use it (||, space-joined comparators, ^ ~ >= > <= < =, x and * parts). */
function satisfies(version: string, range: string): boolean {
  const v = parse(version) as V;
  return range.split('||').some((alt) => {
    const comps = alt.trim().replace(/(>=|<=|>|<|=)\s+/g, '$1').split(/\s+/).filter(Boolean);
    return comps.every((c) => {
      const [, op, rest] = /^(\^|~|>=|<=|>|<|=)?(.*)$/.exec(c)!;
      if (rest === '*' || rest === 'x' || rest === '') return true;
      const p = parse(rest);
      const lo: V = [p[0] ?? 0, p[1] ?? 0, p[2] ?? 0];
      if (!op || op === '=') return p.every((n, i) => n === undefined || n === v[i]);
      if (op === '>=') return cmp(v, lo) >= 0;
      if (op === '>') return cmp(v, lo) > 0;
      if (op === '<') return cmp(v, lo) < 0;
      if (op === '<=') return cmp(v, lo) <= 0;
      const hi: V = op === '~' || lo[0] === 0 ? [lo[0], lo[1] + 1, 0] : [lo[0] + 1, 0, 0];
      return cmp(v, lo) >= 0 && cmp(v, hi) < 0;
    });
  });
}

const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(path.join(repoRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean; engines?: { node?: string } | string[] }> };
const runtime = Object.entries(lock.packages)
  .filter(([name, p]) => name && !p.dev && p.engines && !Array.isArray(p.engines) && p.engines.node)
  .map(([name, p]) => ({ name: name.replace(/^.*node_modules\//, ''), range: (p.engines as { node: string }).node }));

describe('supported Node versions', () => {
  it('the range reader follows npm on the forms the lock file uses', () => {
    expect(satisfies('22.13.0', '>=23.5.0 || ^22.13.0 || ^20.17.0')).toBe(true);
    expect(satisfies('22.12.9', '>=23.5.0 || ^22.13.0 || ^20.17.0')).toBe(false);
    expect(satisfies('23.1.0', '>=23.5.0 || ^22.13.0 || ^20.17.0')).toBe(false);
    expect(satisfies('24.0.0', '20.x || 22.x || 23.x || 24.x || 25.x || 26.x')).toBe(true);
    expect(satisfies('21.0.0', '20.x || 22.x')).toBe(false);
    expect(satisfies('12.0.0', '10.* || >= 12.*')).toBe(true);
    expect(satisfies('16.0.0', '^12.17.0 || ^14.13 || >=16.0.0')).toBe(true);
    expect(satisfies('14.12.0', '^12.17.0 || ^14.13 || >=16.0.0')).toBe(false);
    expect(satisfies('22.0.0', '*')).toBe(true);
  });

  it('package.json and its lock file promise the same, and the first release of each supported line meets every runtime dependency', () => {
    expect(pkg.engines.node).toBe('^20.19.0 || ^22.13.0 || >=24');
    expect((lock.packages[''].engines as { node: string }).node).toBe(pkg.engines.node);
    expect(runtime.length).toBeGreaterThan(20);
    for (const first of ['22.13.0', '24.0.0']) {
      expect(satisfies(first, pkg.engines.node), first).toBe(true);
      expect(runtime.filter((d) => !satisfies(first, d.range)).map((d) => `${d.name} ${d.range}`), `Node ${first}`).toEqual([]);
    }
  });

  it('Node 20.19: inside the promise, and only the dependencies known to declare more than they need refuse it', () => {
    expect(satisfies('20.19.0', pkg.engines.node)).toBe(true);
    expect(runtime.filter((d) => !satisfies('20.19.0', d.range)).map((d) => `${d.name} ${d.range}`)).toEqual(DECLARED_ONLY_ON_20);
  });

  it('no wider than the dependencies: Node 20.18, 22.12 and 23 are outside the promise, and a dependency refuses each', () => {
    for (const older of ['20.18.0', '22.12.0', '23.4.0']) {
      expect(satisfies(older, pkg.engines.node), older).toBe(false);
      expect(runtime.filter((d) => !satisfies(older, d.range) && !DECLARED_ONLY_ON_20.includes(`${d.name} ${d.range}`)).length, older).toBeGreaterThan(0);
    }
  });

  it('the CLI says it in one line: nothing on 22.13+ and 24, a warning on 20.19+, a refusal below', () => {
    expect(SUPPORTED).toEqual([22, 24]);
    for (const v of ['22.13.0', '22.23.3', '24.0.0', '25.1.0']) expect(nodeLine(v), v).toEqual({});
    const warn = nodeLine('20.19.0');
    expect(Object.keys(warn)).toEqual(['warn']);
    expect(warn.warn.split('\n')).toHaveLength(1);
    expect(warn.warn).toMatch(/^vidembed: warning: Node 20\.19\.0 is out of support; vidembed is tested on Node 22 and 24/);
    for (const v of ['20.18.1', '22.12.0', '18.20.0']) {
      const r = nodeLine(v);
      expect(Object.keys(r), v).toEqual(['refuse']);
      expect(r.refuse, v).toMatch(new RegExp(`^vidembed: Node ${v.replace(/\./g, '\\.')} is too old`));
    }
  });
});

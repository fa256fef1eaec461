import os from 'node:os';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../src/api/principal.js';
import type { SearchRequest, SearchResponse } from '../../src/api/types.js';
import { searchConcurrency } from '../../src/config.js';
import { SearchGate } from '../../src/runtime/search-gate.js';
import type { SearchPort } from '../../src/services/search.js';

/** A search port whose searches end when the test says: which are running, and their order. */
function heldPort() {
  const running = new Map<string, { done: (r: SearchResponse) => void; fail: (e: Error) => void }>();
  const started: string[] = [];
  let most = 0;
  const port: SearchPort = {
    search: (_p: Principal, collection: string) =>
      new Promise<SearchResponse>((resolve, reject) => {
        started.push(collection);
        running.set(collection, {
          done: (r) => {
            running.delete(collection);
            resolve(r);
          },
          fail: (e) => {
            running.delete(collection);
            reject(e);
          },
        });
        most = Math.max(most, running.size);
      }),
    encodeText: async () => ({ embedding: [1], model: 'm', dim: 1, truncated: false }),
  };
  return { port, running, started, most: () => most };
}

const p = { owner: 'default', admin: false } as unknown as Principal;
const req = { text: 'x' } as SearchRequest;
const answer = (model: string): SearchResponse => ({ results: [], model });
const tick = () => new Promise((r) => setImmediate(r));

describe('SearchGate: at most N searches at once, the rest oldest first', () => {
  it('runs two at once, starts the waiting ones in order as places free, and a failure frees its place', async () => {
    const held = heldPort();
    const gate = new SearchGate(held.port, 2);
    const calls = ['a', 'b', 'c', 'd', 'e'].map((c) => gate.search(p, c, req).then((r) => r.model, (e: Error) => `failed: ${e.message}`));
    await tick();
    expect(held.started).toEqual(['a', 'b']);
    expect(gate.stats()).toEqual({ running: 2, waiting: 3 });
    held.running.get('b')!.done(answer('B'));
    await tick();
    expect(held.started).toEqual(['a', 'b', 'c']);
    held.running.get('a')!.fail(new Error('database gone'));
    await tick();
    expect(held.started).toEqual(['a', 'b', 'c', 'd']);
    for (const c of ['c', 'd']) held.running.get(c)!.done(answer(c.toUpperCase()));
    await tick();
    held.running.get('e')!.done(answer('E'));
    expect(await Promise.all(calls)).toEqual(['failed: database gone', 'B', 'C', 'D', 'E']);
    expect(held.most()).toBe(2);
    expect(gate.stats()).toEqual({ running: 0, waiting: 0 });
  });

  it('a search given up while it waits leaves the queue with its reason and never runs; one given up before is refused', async () => {
    const held = heldPort();
    const gate = new SearchGate(held.port, 1);
    const first = gate.search(p, 'first', req);
    const leaving = new AbortController();
    const left = gate.search(p, 'left', req, { signal: leaving.signal });
    const last = gate.search(p, 'last', req);
    await tick();
    leaving.abort(new Error('the client left'));
    await expect(left).rejects.toThrow('the client left');
    expect(gate.stats()).toEqual({ running: 1, waiting: 1 });
    held.running.get('first')!.done(answer('1'));
    await tick();
    held.running.get('last')!.done(answer('3'));
    expect((await first).model).toBe('1');
    expect((await last).model).toBe('3');
    expect(held.started).toEqual(['first', 'last']);
    const gone = new AbortController();
    gone.abort(new Error('too late'));
    await expect(gate.search(p, 'never', req, { signal: gone.signal })).rejects.toThrow('too late');
    expect(held.started).not.toContain('never');
  });

  it('encodeText passes through; a limit below 1 is refused', async () => {
    const gate = new SearchGate(heldPort().port, 1);
    expect((await gate.encodeText({ text: 'x' })).model).toBe('m');
    expect(() => new SearchGate(heldPort().port, 0)).toThrow(/limit/);
  });

  it('searchConcurrency: the flag, else VIDEMBED_SEARCH_CONCURRENCY, else one more than the cores; 0 is no limit', () => {
    expect(searchConcurrency(3, { VIDEMBED_SEARCH_CONCURRENCY: '1' })).toBe(3);
    expect(searchConcurrency(undefined, { VIDEMBED_SEARCH_CONCURRENCY: '0' })).toBe(0);
    expect(searchConcurrency(undefined, {})).toBe(os.availableParallelism() + 1);
    expect(() => searchConcurrency(undefined, { VIDEMBED_SEARCH_CONCURRENCY: 'lots' })).toThrow(/VIDEMBED_SEARCH_CONCURRENCY must be an integer from 0 to 64 \(0: no limit\)/);
    expect(() => searchConcurrency(-1)).toThrow(/--search-concurrency/);
  });
});

/**
 * SearchThreads (src/runtime/search-threads.ts): searches on threads of their own answer exactly what
 * the SearchService answers in the process, errors come back as the same classes, a thread that dies
 * fails only what it held and is replaced, and a search given up while it waits leaves the queue.
 * The threads run the compiled code (dist/) with a fake text embedder registered in each.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError, UnavailableError, ValidationError } from '../../src/api/errors.js';
import type { Principal } from '../../src/api/principal.js';
import type { SearchRequest } from '../../src/api/types.js';
import { pathsFor, searchThreads } from '../../src/config.js';
import { LocalEngine } from '../../src/runtime/engine.js';
import { SearchThreads } from '../../src/runtime/search-threads.js';
import { Store } from '../../src/store/index.js';
import { isCI } from '../helpers/clips.js';
// @ts-expect-error plain JavaScript helper (it runs in the threads too)
import { FAKE_DIM, FAKE_SEARCH_ID, fakeSearchEmbedder, fakeVector } from '../helpers/search-thread-fakes.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const FAKES = pathToFileURL(path.join(here, '../helpers/search-thread-fakes.mjs')).href;
const BUILT = path.join(here, '../../dist/src/runtime/search-thread.js');
const WORDS = ['harbour', 'crane', 'sunset', 'market', 'tram', 'bridge', 'forest', 'snow'];

describe('searchThreads (config)', () => {
  it('flag, then VIDEMBED_SEARCH_THREADS, then one per core; bad values are errors', () => {
    expect(searchThreads(3, { VIDEMBED_SEARCH_THREADS: '1' })).toBe(3);
    expect(searchThreads(undefined, { VIDEMBED_SEARCH_THREADS: '0' })).toBe(0);
    expect(searchThreads(undefined, {})).toBe(os.availableParallelism());
    expect(() => searchThreads(Number('x'), {})).toThrow(/--search-threads must be an integer/);
    expect(() => searchThreads(undefined, { VIDEMBED_SEARCH_THREADS: '65' })).toThrow(/VIDEMBED_SEARCH_THREADS/);
  });
});

describe.runIf(existsSync(BUILT) || isCI)('SearchThreads (worker threads, a fake text embedder)', () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'vidembed-search-threads-'));
  let engine: LocalEngine;
  let threads: SearchThreads;
  let collection = '';
  const other: Principal = { owner: 'someone-else', admin: false };

  beforeAll(() => {
    const store = Store.open(pathsFor(home).dbFile);
    const c = store.collections.insert({ name: 'harbour', description: '', model: FAKE_SEARCH_ID, dim: FAKE_DIM });
    collection = c.id;
    for (let v = 0; v < 12; v++) {
      store.videos.insert({ id: `vid_${v}`, collection_id: c.id, filename: `v${v}.mp4`, path: '/dev/null', size_bytes: 1 });
      store.segments.replaceForVideo(
        `vid_${v}`,
        c.id,
        FAKE_DIM,
        Array.from({ length: 5 }, (_, i) => {
          const description = `${WORDS[(v + i) % WORDS.length]} ${WORDS[(v * 3 + i) % WORDS.length]}`;
          return { idx: i, start: i * 4, end: i * 4 + 4, description, keywords: description, vector: fakeVector(`${description} ${v} ${i}`) };
        }),
      );
      store.videos.markProcessed(`vid_${v}`, null);
    }
    store.close();
    engine = new LocalEngine({ home, memoryIndex: true, embedderFor: () => fakeSearchEmbedder() });
    threads = new SearchThreads({ threads: 2, perThread: 2, data: { home, fetchPolicy: { allowPrivate: false }, libraryRoots: [], preload: [FAKES] }, local: engine.services.search });
  });
  afterAll(async () => {
    await threads?.close();
    await engine?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('answers what the in-process search answers, for many concurrent searches of every shape', async () => {
    const requests: SearchRequest[] = [];
    for (const [i, w] of WORDS.entries()) {
      requests.push({ text: `a ${w}`, top_k: 3 });
      requests.push({ text: `${w} at dusk ${i}`, top_k: 5, offset: 2 });
      requests.push({ text: w, top_k: 10, min_confidence: 0.2 });
      requests.push({ like: { video_id: `vid_${i}`, t: 5 }, top_k: 4 });
    }
    const local = await Promise.all(requests.map((r, i) => engine.services.search.search(engine.principal, collection, r, { explain: i % 2 === 0 })));
    const threaded = await Promise.all(requests.map((r, i) => threads.search(engine.principal, collection, r, { explain: i % 2 === 0 })));
    expect(threaded).toEqual(local);
    expect(local.some((r) => r.results.length > 0)).toBe(true);
    const s = threads.stats();
    expect(s.searches).toBe(requests.length);
    expect(s.inFlight).toBe(0);
    // Both threads come up (on a loaded machine the first may have answered everything before the second was ready).
    while (threads.readyThreads < 2) await new Promise((r) => setTimeout(r, 10));
    expect(threads.readyThreads).toBe(2);
  });

  it('gives errors back as the same classes: a collection another owner cannot see, a page past the cap', async () => {
    await expect(threads.search(other, collection, { text: 'harbour' })).rejects.toBeInstanceOf(NotFoundError);
    await expect(threads.search(engine.principal, 'no-such-collection', { text: 'harbour' })).rejects.toBeInstanceOf(NotFoundError);
    const bad = threads.search(engine.principal, collection, { text: 'harbour', top_k: 10, offset: 100_000 });
    await expect(bad).rejects.toBeInstanceOf(ValidationError);
    await expect(bad).rejects.toThrow(/offset \+ top_k/);
  });

  it('a thread that dies fails only the search it held, with 503 (retry), and is replaced', async () => {
    const before = threads.stats();
    const dying = threads.search(engine.principal, collection, { text: 'exit-thread now' });
    await expect(dying).rejects.toBeInstanceOf(UnavailableError);
    await expect(dying).rejects.toThrow(/search thread stopped/);
    // The next searches are answered (by the other thread, then by the replacement too).
    const after = await Promise.all(WORDS.map((w) => threads.search(engine.principal, collection, { text: w, top_k: 2 })));
    expect(after.every((r) => r.results.length > 0)).toBe(true);
    const s = threads.stats();
    expect(s.crashed).toBe(before.crashed + 1);
    expect(s.started).toBe(before.started + 1);
  });

  it('a search given up while it waits for room leaves the queue with the reason; the others are answered', async () => {
    const one = new SearchThreads({ threads: 1, perThread: 1, data: { home, fetchPolicy: { allowPrivate: false }, libraryRoots: [], preload: [FAKES] }, local: engine.services.search });
    try {
      const first = one.search(engine.principal, collection, { text: 'slow harbour' }); // holds the only room for 300 ms
      const ac = new AbortController();
      const waiting = one.search(engine.principal, collection, { text: 'crane' }, { signal: ac.signal });
      const third = one.search(engine.principal, collection, { text: 'tram' });
      while (!(one.stats().inFlight === 1 && one.stats().queued === 2)) await new Promise((r) => setTimeout(r, 5)); // both wait behind the slow one
      ac.abort(new Error('the client went away'));
      expect(one.stats().queued).toBe(1);
      await expect(waiting).rejects.toThrow('the client went away');
      const [a, c] = await Promise.all([first, third]);
      expect(a.results.length).toBeGreaterThan(0);
      expect(c.results.length).toBeGreaterThan(0);
      expect(one.stats().searches).toBe(3);
    } finally {
      await one.close();
    }
  });

  it('keeps searches on the event loop when told at start that threads would not help (pgvector)', async () => {
    const own = new SearchThreads({ threads: 2, data: { home, fetchPolicy: { allowPrivate: false }, libraryRoots: [], preload: [FAKES] }, local: engine.services.search, useThreads: async () => false });
    try {
      expect(await own.start()).toBe(false);
      const got = await own.search(engine.principal, collection, { text: 'bridge', top_k: 3 });
      expect(got).toEqual(await engine.services.search.search(engine.principal, collection, { text: 'bridge', top_k: 3 }));
      expect(own.stats()).toMatchObject({ started: 0, searches: 0 });
      expect(own.readyThreads).toBe(0);
    } finally {
      await own.close();
    }
  });

  it('fails what waits once closed, and refuses new searches', async () => {
    const own = new SearchThreads({ threads: 1, perThread: 1, data: { home, fetchPolicy: { allowPrivate: false }, libraryRoots: [], preload: [FAKES] }, local: engine.services.search });
    const held = own.search(engine.principal, collection, { text: 'slow sunset' });
    const queued = own.search(engine.principal, collection, { text: 'snow' });
    const outcomes = Promise.allSettled([held, queued]);
    await new Promise((r) => setTimeout(r, 50));
    await own.close();
    const [h, q] = await outcomes;
    expect(h.status === 'rejected' && h.reason).toBeInstanceOf(UnavailableError);
    expect(q.status === 'rejected' && q.reason).toBeInstanceOf(UnavailableError);
    await expect(own.search(engine.principal, collection, { text: 'snow' })).rejects.toThrow(/stopping/);
  });
});

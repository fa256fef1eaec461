/**
 * One thread of SearchThreads (search-threads.ts): it opens the library as the server's engine does
 * (the home, an in-memory index, the server's fetch policy and library folders) with a text encoder
 * of its own (the query text model runs here, beside the search that needs it), says `ready`, then
 * runs each `search` it is sent with the SearchService, for the principal the message carries.
 */
import { parentPort, workerData } from 'node:worker_threads';
import * as errors from '../api/errors.js';
import { errorToWire } from '../api/errors.js';
import { LocalEngine } from './engine.js';
import type { FromSearchThread, SearchThreadData, ToSearchThread } from './search-threads.js';

const port = parentPort;
if (!port) throw new Error('search-thread runs as a worker thread (see SearchThreads)');
const data = workerData as SearchThreadData;
const post = (m: FromSearchThread) => port.postMessage(m);

for (const m of data.preload ?? []) await import(m);
const engine = new LocalEngine({ home: data.home, memoryIndex: true, fetchPolicy: data.fetchPolicy, libraryRoots: data.libraryRoots });
const aborts = new Map<number, AbortController>();

port.on('message', (msg: ToSearchThread) => {
  if (msg.type === 'abort') return aborts.get(msg.id)?.abort(new errors.UnavailableError('the search was given up', 1));
  if (msg.type !== 'search') return;
  const ac = new AbortController();
  aborts.set(msg.id, ac);
  engine.services.search
    .search(msg.principal, msg.collection, msg.req, { ...msg.opts, signal: ac.signal })
    .then(
      (value) => post({ type: 'result', id: msg.id, ok: true, value }),
      (err: unknown) => post({ type: 'result', id: msg.id, ok: false, error: errorToWire(err) }),
    )
    .finally(() => aborts.delete(msg.id));
});

post({ type: 'ready' });

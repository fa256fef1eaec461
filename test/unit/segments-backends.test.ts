import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe } from 'vitest';
import { openSqliteCatalog } from '../../src/store/catalog/sqlite.js';
import { MemoryCatalog } from '../../src/store/memory/catalog.js';
import { MemoryStore } from '../../src/store/memory/state.js';
import { conformance } from '../conformance/segments.js';
import { conformance as analysisConformance } from '../conformance/analysis.js';

/* The segment, signature and transaction rules (test/conformance/segments.ts), and capabilities' states with reviseForVideo (test/conformance/analysis.ts), on SQLite and memory. PostgreSQL: test/e2e/segments-postgres.test.ts. */

describe('segments conformance: SQLite', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vidembed-segments-'));
    file = path.join(dir, 'vidembed.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // sqlite-vec cuts the KNN at k before ties are broken by id; deleting a video (or its collection)
  // cascades to `segments` but leaves its rows in vec_segments_<dim>, which candidates still returns.
  conformance(() => ({ open: async () => openSqliteCatalog(file) }));
  analysisConformance(() => ({ open: async () => openSqliteCatalog(file), concurrentTransactions: false }));

  // The server's way: the one in-memory vector index (src/store/vector-index.ts) answers.
  describe('with the in-memory index', () => {
    conformance(() => ({ open: async () => openSqliteCatalog(file, { memoryIndex: true }) }));
  });
});

describe('segments conformance: memory', () => {
  let store: MemoryStore;
  beforeEach(() => {
    store = new MemoryStore();
  });

  conformance(() => ({ open: async () => new MemoryCatalog(store) }));
  analysisConformance(() => ({ open: async () => new MemoryCatalog(store), concurrentTransactions: true }));
});

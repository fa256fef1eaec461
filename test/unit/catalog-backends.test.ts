import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe } from 'vitest';
import { SqliteCatalog } from '../../src/store/catalog/sqlite.js';
import { Store } from '../../src/store/index.js';
import { MemoryCatalog } from '../../src/store/memory/catalog.js';
import { MemoryStore } from '../../src/store/memory/state.js';
import { conformance } from '../conformance/catalog.js';

/* The catalog rules (test/conformance/catalog.ts) on the backends of this process: SQLite and memory. PostgreSQL: test/e2e/catalog-postgres.test.ts. */

describe('catalog conformance: SQLite', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vidembed-catalog-'));
    file = path.join(dir, 'vidembed.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  conformance(() => ({
    open: async () => {
      const store = Store.open(file);
      const catalog = new SqliteCatalog(store, true);
      return { catalog, queue: store.queue, close: () => catalog.close() };
    },
  }));
});

describe('catalog conformance: memory', () => {
  let store: MemoryStore;
  beforeEach(() => {
    store = new MemoryStore();
  });

  conformance(() => ({
    open: async () => {
      const catalog = new MemoryCatalog(store);
      return { catalog, queue: catalog.queue, close: () => catalog.close() };
    },
  }));
});

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe } from 'vitest';
import { openSqliteCatalog } from '../../src/store/catalog/sqlite.js';
import { MemoryCatalog } from '../../src/store/memory/catalog.js';
import { MemoryStore } from '../../src/store/memory/state.js';
import { conformance } from '../conformance/webhooks.js';

/* The webhook outbox rules (test/conformance/webhooks.ts) on the backends of this process: SQLite and memory. PostgreSQL: test/e2e/webhooks-postgres.test.ts. */

describe('webhook outbox conformance: SQLite', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vidembed-webhooks-'));
    file = path.join(dir, 'vidembed.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  conformance(() => ({ open: async () => openSqliteCatalog(file) }));
});

describe('webhook outbox conformance: memory', () => {
  let store: MemoryStore;
  beforeEach(() => {
    store = new MemoryStore();
  });

  conformance(() => ({ open: async () => new MemoryCatalog(store) }));
});

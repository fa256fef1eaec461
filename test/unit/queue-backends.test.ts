import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe } from 'vitest';
import { openMemoryQueue } from '../../src/store/memory/catalog.js';
import { MemoryStore } from '../../src/store/memory/state.js';
import { openSqliteQueue } from '../../src/store/queue/sqlite.js';
import { conformance } from '../conformance/queue.js';

/* The job queue rules (test/conformance/queue.ts) on the backends of this process: SQLite and memory. PostgreSQL: test/e2e/queue-postgres.test.ts. */

describe('job queue conformance: SQLite', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vidembed-queue-'));
    file = path.join(dir, 'vidembed.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  conformance(() => ({ open: async () => openSqliteQueue(file) }));
});

describe('job queue conformance: memory', () => {
  let store: MemoryStore;
  beforeEach(() => {
    store = new MemoryStore();
  });

  conformance(() => ({ open: async () => openMemoryQueue(store) }));
});

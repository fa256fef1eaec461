import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SchemaTooNewError } from '../../src/api/errors.js';
import { exitCodeFor } from '../../src/cli/errors.js';
import { Store } from '../../src/store/index.js';
import { refuseNewer, schemaVersion } from '../../src/store/migrations.js';

describe('a library a newer vidembed migrated is refused, unchanged', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vidembed-schema-'));
    file = path.join(dir, 'db.sqlite');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('SQLite: opening fails with the versions and what to do; nothing is written', () => {
    const store = Store.open(file);
    const known = schemaVersion(store.db);
    store.collections.insert({ name: 'kept', description: '', model: 'm', dim: 4 });
    store.close();
    const raw = new Database(file);
    raw.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(known + 10, 'from the future', new Date().toISOString());
    const before = raw.prepare('SELECT COUNT(*) FROM schema_migrations').pluck().get();
    raw.close();

    let err: unknown;
    try {
      Store.open(file).close();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SchemaTooNewError);
    expect((err as Error).message).toContain(`schema ${known + 10}; this vidembed knows up to ${known}`);
    expect((err as Error).message).toMatch(/upgrade vidembed/);
    expect(exitCodeFor(err)).toBe(78);

    const after = new Database(file, { readonly: true });
    expect(after.prepare('SELECT COUNT(*) FROM schema_migrations').pluck().get()).toBe(before);
    expect(after.prepare("SELECT name FROM collections WHERE name = 'kept'").pluck().get()).toBe('kept');
    after.close();
  });

  it('the rule: only a version past every step this build has refuses', () => {
    const steps = [{ version: 1 }, { version: 5 }, { version: 9 }];
    expect(() => refuseNewer('PostgreSQL', [1, 5], steps)).not.toThrow(); // older: migrated forward
    expect(() => refuseNewer('PostgreSQL', [], steps)).not.toThrow(); // new
    expect(() => refuseNewer('PostgreSQL', [1, 5, 9], steps)).not.toThrow(); // current
    expect(() => refuseNewer('PostgreSQL', [1, 5, 9, 10], steps)).toThrow(/PostgreSQL database was upgraded by a newer vidembed \(schema 10; this vidembed knows up to 9\)/);
  });
});

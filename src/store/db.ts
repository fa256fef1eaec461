import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { migrate } from './migrations.js';

export type Db = Database.Database;

/**
 * Opens (creating if needed) the one database file of a vidembed home: WAL so the CLI, workers and
 * the server can share it; a busy timeout so short write collisions wait instead of failing.
 */
export function openDatabase(file: string): Db {
  if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 10000');
  sqliteVec.load(db);
  migrate(db);
  cacheStatements(db);
  return db;
}

/** Distinct SQL texts kept prepared per connection; past this the cache starts over. */
const STATEMENT_CACHE_SIZE = 512;

/**
 * Makes `db.prepare` return the statement already prepared for the same SQL text on this
 * connection (preparing costs tens of microseconds, and a search runs a dozen statements). A reused
 * statement is handed back in its default mode (objects, not plucked, raw or expanded), so callers
 * keep writing `db.prepare(sql).pluck()` as before. A statement that is iterating is busy and
 * cannot run twice at once: then a fresh one is prepared.
 */
function cacheStatements(db: Db): void {
  const prepare = db.prepare.bind(db);
  const cache = new Map<string, Database.Statement>();
  db.prepare = ((sql: string) => {
    const hit = cache.get(sql);
    if (hit && !hit.busy) {
      if (hit.reader) hit.raw(false).pluck(false).expand(false);
      return hit;
    }
    const stmt = prepare(sql);
    if (!hit) {
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear();
      cache.set(sql, stmt);
    }
    return stmt;
  }) as Db['prepare'];
}

export function nowIso(): string {
  return new Date().toISOString();
}

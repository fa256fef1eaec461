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
  return db;
}

export function nowIso(): string {
  return new Date().toISOString();
}

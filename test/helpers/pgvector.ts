import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { PG_VECTOR_DEFAULTS, type PgVectorSettings } from '../../src/env.js';
import { prepareVectorStore } from '../../src/store/pg/vector-store.js';
import { findPgBin } from '../../src/store/pg/throwaway.js';
import { pgTestAvailable } from './postgres.js';

/** The `vector.control` of the PostgreSQL that throwaway clusters run (scripts/install-pgvector.sh installs it). */
export function pgvectorInstalled(): boolean {
  const bin = findPgBin();
  if (!bin) return false;
  const major = path.basename(path.dirname(bin));
  const share = path.join('/usr/share/postgresql', major, 'extension');
  return existsSync(share) && readdirSync(share).includes('vector.control');
}

/**
 * pgvector suites: under CI=true they must run (a missing extension fails them at CREATE
 * EXTENSION); elsewhere, without it, one loud line and the caller skips. With
 * VIDEMBED_TEST_DATABASE_URL the server there is trusted to have it.
 */
export function pgvectorTestAvailable(): boolean {
  if (!pgTestAvailable()) return false;
  if (process.env.VIDEMBED_TEST_DATABASE_URL || process.env.CI === 'true' || process.env.CI === '1') return true;
  if (pgvectorInstalled()) return true;
  console.warn('!!! pgvector suites SKIPPED: the vector extension is not installed for this PostgreSQL (run scripts/install-pgvector.sh as root) !!!');
  return false;
}

/** Moves a migrated, empty test database to pgvector (the extension, the column, the phase). */
export async function usePgvector(pool: pg.Pool, settings: PgVectorSettings = PG_VECTOR_DEFAULTS): Promise<void> {
  const status = await prepareVectorStore(pool, 'pgvector', settings);
  if (status.mode !== 'pgvector') throw new Error(`expected pgvector mode, got ${status.mode}: ${status.reason}`);
}

/** The tables a pgvector test file empties between tests (segment_counts too: TRUNCATE fires no trigger). */
export const PG_TABLES = ['segment_deletions', 'segment_counts', 'video_signatures', 'segments', 'collections', 'videos', 'tasks', 'api_keys', 'jobs', 'workers'];

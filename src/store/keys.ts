import { createHash, randomBytes } from 'node:crypto';
import { keyLimits, NO_LIMITS, type KeyLimitSettings } from '../api/limits.js';
import type { Principal } from '../api/principal.js';
import type { Db } from './db.js';
import { nowIso } from './db.js';
import { newId } from './ids.js';

export type KeyRole = 'user' | 'admin';

export interface ApiKeyRow {
  id: string;
  name: string;
  key_hash: string;
  prefix: string;
  qps: number;
  quota: number | null;
  used: number;
  created_at: string;
  revoked_at: string | null;
  /** The owner whose library the key acts on (keys may share one). */
  owner: string;
  role: KeyRole;
  /** The key's own limits (JSON of KeyLimitSettings, src/api/limits.ts); null: the server's defaults. */
  limits_json: string | null;
}

/** How a key's limits are stored: JSON of what was set, or null. */
export function limitsJson(limits: KeyLimitSettings | undefined): string | null {
  return limits && Object.keys(limits).length ? JSON.stringify(limits) : null;
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** An admin key has only the limits it was given; a user key the server's defaults for the rest. */
export function principalOf(row: ApiKeyRow): Principal {
  const admin = row.role === 'admin';
  return { owner: row.owner, admin, limits: keyLimits(row.limits_json, admin ? NO_LIMITS : undefined) };
}

/** API keys, stored as SHA-256 hashes: the raw key exists only in the create call's answer. */
export class KeysRepo {
  constructor(private readonly db: Db) {}

  create(input: { name: string; qps: number; quota?: number | null; owner?: string; role?: KeyRole; limits?: KeyLimitSettings }): { row: ApiKeyRow; key: string } {
    const key = `vk_${randomBytes(24).toString('base64url')}`;
    const id = newId('key');
    this.db
      .prepare(`INSERT INTO api_keys (id, name, key_hash, prefix, qps, quota, created_at, owner, role, limits_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(id, input.name, hashKey(key), key.slice(0, 7), input.qps, input.quota ?? null, nowIso(), input.owner ?? input.name, input.role ?? 'user', limitsJson(input.limits));
    return { row: this.byId(id)!, key };
  }

  byId(id: string): ApiKeyRow | undefined {
    return this.db.prepare('SELECT * FROM api_keys WHERE id = ?').get(id) as ApiKeyRow | undefined;
  }

  byName(name: string): ApiKeyRow[] {
    return this.db.prepare('SELECT * FROM api_keys WHERE name = ? ORDER BY created_at, rowid').all(name) as ApiKeyRow[];
  }

  byKey(key: string): ApiKeyRow | undefined {
    return this.db.prepare('SELECT * FROM api_keys WHERE key_hash = ?').get(hashKey(key)) as ApiKeyRow | undefined;
  }

  list(): ApiKeyRow[] {
    return this.db.prepare('SELECT * FROM api_keys ORDER BY created_at DESC, rowid DESC').all() as ApiKeyRow[];
  }

  /** Revokes by id or name; returns how many keys it revoked. */
  revoke(idOrName: string): number {
    return this.db
      .prepare(`UPDATE api_keys SET revoked_at = ? WHERE (id = ? OR name = ?) AND revoked_at IS NULL`)
      .run(nowIso(), idOrName, idOrName).changes;
  }

  /** Counts units against the quota atomically; false (and nothing counted) when it would go over. */
  charge(id: string, units: number): boolean {
    if (!Number.isSafeInteger(units) || units < 1) throw new RangeError(`charge: units must be a positive integer, got ${units}`);
    const info = this.db
      .prepare(`UPDATE api_keys SET used = used + ? WHERE id = ? AND (quota IS NULL OR used + ? <= quota)`)
      .run(units, id, units);
    return info.changes === 1;
  }
}

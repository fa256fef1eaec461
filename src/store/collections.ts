import type { Db } from './db.js';
import { nowIso } from './db.js';
import { newId } from './ids.js';
import { CollectionNameTakenError } from './catalog/types.js';

export interface CollectionRow {
  id: string;
  owner: string;
  name: string;
  description: string;
  model: string;
  dim: number;
  created_at: string;
  video_count: number;
  /** Analyzer versions behind its vectors, as of its last processed video (null before any). */
  recipe_json: string | null;
}

const SELECT = `SELECT c.id, c.owner, c.name, c.description, c.model, c.dim, c.created_at, c.recipe_json,
  (SELECT COUNT(*) FROM videos v WHERE v.collection_id = c.id) AS video_count FROM collections c`;

function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/** Collections; names are unique per owner. `owner = null` in a query means every owner's. */
export class CollectionsRepo {
  constructor(private readonly db: Db) {}

  insert(input: { name: string; description: string; model: string; dim: number; owner?: string }): CollectionRow {
    const id = newId('col');
    const created_at = nowIso();
    const owner = input.owner ?? 'default';
    try {
      this.db
        .prepare(
          `INSERT INTO collections (id, owner, name, description, model, dim, created_at, seq)
           VALUES (?, ?, ?, ?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM collections))`,
        )
        .run(id, owner, input.name, input.description, input.model, input.dim, created_at);
    } catch (err) {
      if (isUniqueViolation(err)) throw new CollectionNameTakenError(input.name, owner, { cause: err });
      throw err;
    }
    return { id, owner, name: input.name, description: input.description, model: input.model, dim: input.dim, created_at, video_count: 0, recipe_json: null };
  }

  /** Changes the fields given, together or not at all; a name another collection of the owner has is CollectionNameTakenError. */
  update(id: string, patch: { name?: string; description?: string }): void {
    try {
      this.db.transaction(() => {
        if (patch.name !== undefined) this.db.prepare('UPDATE collections SET name = ? WHERE id = ?').run(patch.name, id);
        if (patch.description !== undefined) this.db.prepare('UPDATE collections SET description = ? WHERE id = ?').run(patch.description, id);
      })();
    } catch (err) {
      if (isUniqueViolation(err) && patch.name !== undefined) throw new CollectionNameTakenError(patch.name, this.byId(id)?.owner, { cause: err });
      throw err;
    }
  }

  delete(id: string): void {
    this.db.prepare('DELETE FROM collections WHERE id = ?').run(id);
  }

  setRecipe(id: string, recipe: Record<string, string>): void {
    this.db.prepare('UPDATE collections SET recipe_json = ? WHERE id = ?').run(JSON.stringify(recipe), id);
  }

  byId(id: string): CollectionRow | undefined {
    return this.db.prepare(`${SELECT} WHERE c.id = ?`).get(id) as CollectionRow | undefined;
  }

  /** Collections with this name: the owner's one, or with `owner = null` every owner's. */
  byName(name: string, owner: string | null = 'default'): CollectionRow[] {
    if (owner === null) return this.db.prepare(`${SELECT} WHERE c.name = ? ORDER BY c.seq`).all(name) as CollectionRow[];
    return this.db.prepare(`${SELECT} WHERE c.name = ? AND c.owner = ?`).all(name, owner) as CollectionRow[];
  }

  /** Newest first; `seq` breaks ties between collections created in the same millisecond. */
  list(limit: number, offset: number, owner: string | null = null): CollectionRow[] {
    if (owner === null) return this.db.prepare(`${SELECT} ORDER BY c.seq DESC LIMIT ? OFFSET ?`).all(limit, offset) as CollectionRow[];
    return this.db.prepare(`${SELECT} WHERE c.owner = ? ORDER BY c.seq DESC LIMIT ? OFFSET ?`).all(owner, limit, offset) as CollectionRow[];
  }
}

import type { Db } from './db.js';
import { nowIso } from './db.js';
import { newId } from './ids.js';

export interface CollectionRow {
  id: string;
  name: string;
  description: string;
  model: string;
  dim: number;
  created_at: string;
  video_count: number;
}

const SELECT = `SELECT c.id, c.name, c.description, c.model, c.dim, c.created_at,
  (SELECT COUNT(*) FROM videos v WHERE v.collection_id = c.id) AS video_count FROM collections c`;

export class CollectionsRepo {
  constructor(private readonly db: Db) {}

  insert(input: { name: string; description: string; model: string; dim: number }): CollectionRow {
    const id = newId('col');
    const created_at = nowIso();
    this.db
      .prepare(
        `INSERT INTO collections (id, name, description, model, dim, created_at, seq)
         VALUES (?, ?, ?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM collections))`,
      )
      .run(id, input.name, input.description, input.model, input.dim, created_at);
    return { id, ...input, created_at, video_count: 0 };
  }

  byId(id: string): CollectionRow | undefined {
    return this.db.prepare(`${SELECT} WHERE c.id = ?`).get(id) as CollectionRow | undefined;
  }

  byName(name: string): CollectionRow | undefined {
    return this.db.prepare(`${SELECT} WHERE c.name = ?`).get(name) as CollectionRow | undefined;
  }

  /** Newest first; `seq` breaks ties between collections created in the same millisecond. */
  list(limit: number, offset: number): CollectionRow[] {
    return this.db.prepare(`${SELECT} ORDER BY c.seq DESC LIMIT ? OFFSET ?`).all(limit, offset) as CollectionRow[];
  }
}

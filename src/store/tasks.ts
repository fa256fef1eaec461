import type { TaskKind, TaskStatus } from '../api/types.js';
import { strandedSubjects } from './queue/sqlite.js';
import type { Db } from './db.js';
import { nowIso } from './db.js';

export interface TaskRow {
  id: string;
  kind: TaskKind;
  owner: string;
  status: TaskStatus;
  request_json: string;
  result_json: string | null;
  error_message: string | null;
  created_at: string;
  updated_at: string;
}

export class TasksRepo {
  constructor(private readonly db: Db) {}

  insert(id: string, kind: TaskKind, request: unknown, owner = 'default'): TaskRow {
    const now = nowIso();
    this.db
      .prepare(
        `INSERT INTO tasks (id, kind, owner, status, request_json, created_at, updated_at) VALUES (?, ?, ?, 'pending', ?, ?, ?)`,
      )
      .run(id, kind, owner, JSON.stringify(request), now, now);
    return this.byId(id)!;
  }

  byId(id: string): TaskRow | undefined {
    return this.db.prepare('SELECT * FROM tasks WHERE id = ?').get(id) as TaskRow | undefined;
  }

  markProcessing(id: string): void {
    this.db.prepare(`UPDATE tasks SET status = 'processing', updated_at = ? WHERE id = ?`).run(nowIso(), id);
  }

  complete(id: string, result: unknown): void {
    this.db
      .prepare(`UPDATE tasks SET status = 'completed', result_json = ?, error_message = NULL, updated_at = ? WHERE id = ?`)
      .run(JSON.stringify(result), nowIso(), id);
  }

  /** Tasks pending or processing that no job will finish (see VideosRepo.stranded). */
  stranded(): Array<{ id: string; last_error: string | null }> {
    return strandedSubjects(this.db, 'tasks', ['pending', 'processing']);
  }

  delete(id: string): void {
    this.db.prepare('DELETE FROM tasks WHERE id = ?').run(id);
  }

  /** Settled tasks last updated before `before` (ISO 8601 strings compare as times), least recent first. */
  settledBefore(before: string, limit: number): TaskRow[] {
    return this.db
      .prepare(`SELECT * FROM tasks WHERE status IN ('completed', 'failed') AND updated_at < ? ORDER BY updated_at, id LIMIT ?`)
      .all(before, limit) as TaskRow[];
  }

  fail(id: string, message: string): void {
    this.db
      .prepare(`UPDATE tasks SET status = 'failed', error_message = ?, updated_at = ? WHERE id = ?`)
      .run(message, nowIso(), id);
  }
}

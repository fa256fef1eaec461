import type { Store } from '../store/index.js';

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Frees the jobs of workers whose process is gone (SIGKILL, crash), so they are redone at once
 * instead of after their lease runs out. Safe because the queue is a local SQLite file: every
 * worker that can hold a lease runs on this machine, where its pid can be checked.
 */
export function reapDeadWorkers(store: Store, selfId?: string): number {
  const rows = store.db.prepare('SELECT id, pid FROM workers').all() as { id: string; pid: number }[];
  let freed = 0;
  for (const r of rows) {
    if (r.id === selfId || pidAlive(r.pid)) continue;
    store.db.transaction(() => {
      freed += store.db
        .prepare(`UPDATE jobs SET lease_expires_at = 0 WHERE lease_owner = ? AND status = 'running'`)
        .run(r.id).changes;
      store.db.prepare('DELETE FROM workers WHERE id = ?').run(r.id);
    })();
  }
  return freed;
}

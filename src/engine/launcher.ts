import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Store } from '../store/index.js';
import { DEFAULTS, type Paths } from './config.js';
import { pidAlive } from './processes.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/vidembed');

export function liveWorkerCount(store: Store): number {
  const fresh = Date.now() - 3 * DEFAULTS.heartbeatMs;
  store.db.prepare('DELETE FROM workers WHERE heartbeat_at < ?').run(fresh);
  const rows = store.db.prepare('SELECT id, pid FROM workers WHERE heartbeat_at >= ?').all(fresh) as { id: string; pid: number }[];
  return rows.filter((r) => pidAlive(r.pid)).length;
}

/**
 * Makes sure a worker will run queued work: when no live worker is registered, starts
 * `vidembed worker --idle-exit` as a detached process that outlives this CLI call and exits by
 * itself once the queue has been empty for a while. Its output goes to logs/worker.log.
 */
export function ensureBackgroundWorker(store: Store, paths: Paths): number | undefined {
  if (process.env.VIDEMBED_NO_AUTO_WORKER === '1') return undefined;
  if (liveWorkerCount(store) > 0) return undefined;
  const log = openSync(path.join(paths.logsDir, 'worker.log'), 'a');
  try {
    const idleSeconds = Math.round((Number(process.env.VIDEMBED_WORKER_IDLE_MS) || DEFAULTS.workerIdleExitMs) / 1000);
    const child = spawn(process.execPath, [BIN, 'worker', '--idle-exit', String(idleSeconds)], {
      detached: true,
      stdio: ['ignore', log, log],
      env: { ...process.env, VIDEMBED_HOME: paths.home },
    });
    child.unref();
    if (child.pid) {
      // Register at once so a second CLI call in the next instant does not start another.
      store.db.prepare('INSERT OR REPLACE INTO workers (id, pid, heartbeat_at) VALUES (?, ?, ?)').run(`spawned_${child.pid}`, child.pid, Date.now());
    }
    return child.pid;
  } finally {
    closeSync(log);
  }
}

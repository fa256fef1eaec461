import { autoWorker, workerIdleMs } from '../env.js';
import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkerRegistry } from '../store/queue/types.js';
import { DEFAULTS, type Paths } from '../config.js';
import os from 'node:os';
import { STALE_HEARTBEAT_MS, workerStopped } from './processes.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/vidembed');

/** Workers registered with a fresh heartbeat that have not stopped (processes.ts: workerStopped). */
export async function liveWorkerCount(registry: WorkerRegistry): Promise<number> {
  const now = Date.now();
  return (await registry.alive(STALE_HEARTBEAT_MS)).filter((w) => !workerStopped(w, now)).length;
}

/**
 * Makes sure a worker will run queued work: when no live worker is registered, starts
 * `vidembed worker --idle-exit` as a detached process that outlives this CLI call and exits by
 * itself once the queue has been empty for a while. Its output goes to logs/worker.log.
 */
export async function ensureBackgroundWorker(registry: WorkerRegistry, paths: Paths): Promise<number | undefined> {
  if (!autoWorker()) return undefined;
  if ((await liveWorkerCount(registry)) > 0) return undefined;
  const log = openSync(path.join(paths.logsDir, 'worker.log'), 'a');
  try {
    const idleSeconds = Math.round(workerIdleMs(DEFAULTS.workerIdleExitMs) / 1000);
    const child = spawn(process.execPath, [BIN, 'worker', '--idle-exit', String(idleSeconds)], {
      detached: true,
      stdio: ['ignore', log, log],
      env: { ...process.env, VIDEMBED_HOME: paths.home },
    });
    child.unref();
    if (child.pid) {
      // Register at once so a second CLI call in the next instant does not start another.
      await registry.heartbeat(`spawned_${child.pid}`, { pid: child.pid, host: os.hostname() });
    }
    return child.pid;
  } finally {
    closeSync(log);
  }
}

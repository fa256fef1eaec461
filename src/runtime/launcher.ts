import { autoWorker, workerIdleMs } from '../env.js';
import { spawn, type ChildProcess } from 'node:child_process';
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

/** `serve`'s own worker process (startAttachedWorker). */
export interface AttachedWorker {
  /** The worker's process id now (a worker started again has a new one); undefined between two. */
  readonly pid: number | undefined;
  /** Stops it (SIGTERM: its running job goes back to the queue) and waits until it has exited. */
  stop(): Promise<void>;
}

/** Waits before starting a worker that exited by itself: from the first to the longest, doubling. */
const RESTART_MS: readonly [number, number] = [1_000, 60_000];
/** A worker that ran this long before it exited is started again after the shortest wait. */
const RAN_WELL_MS = 60_000;
/** How long a stopping worker has to hand its job back before it is killed. */
const STOP_GRACE_MS = 30_000;

/**
 * Runs `serve`'s own worker as a child process (`vidembed worker --attached`): the jobs' model
 * inference and ffmpeg piping happen there, never on the server's event loop, which only does
 * I/O. The child is tied to the server by an IPC channel: when the server exits, even killed, the
 * channel closes and the worker stops (its job goes back to the queue). Its log lines go to the
 * server's stderr. A worker that exits by itself (a crash, out of memory) is started again after a
 * wait that grows while it keeps failing.
 */
export function startAttachedWorker(home: string, opts: { log: (line: string) => void; args?: readonly string[]; env?: NodeJS.ProcessEnv }): AttachedWorker {
  let child: ChildProcess | undefined;
  let stopping = false;
  let failures = 0;
  let restartTimer: NodeJS.Timeout | undefined;
  const start = () => {
    const startedAt = Date.now();
    const c = spawn(process.execPath, [BIN, 'worker', '--attached', ...(opts.args ?? [])], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...(opts.env ?? process.env), VIDEMBED_HOME: home },
    });
    child = c;
    c.on('error', (err) => opts.log(`the worker process could not start: ${err.message}`));
    c.once('exit', (code, signal) => {
      if (child === c) child = undefined;
      if (stopping) return;
      failures = Date.now() - startedAt >= RAN_WELL_MS ? 1 : failures + 1;
      const wait = Math.min(RESTART_MS[1], RESTART_MS[0] * 2 ** (failures - 1));
      opts.log(`the worker process exited (${signal ?? `code ${code}`}); starting another in ${wait / 1000} s`);
      restartTimer = setTimeout(start, wait);
      restartTimer.unref();
    });
  };
  start();
  return {
    get pid() {
      return child?.pid;
    },
    async stop() {
      stopping = true;
      clearTimeout(restartTimer);
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
      c.kill('SIGTERM');
      const timer = setTimeout(() => c.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}

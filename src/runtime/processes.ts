import os from 'node:os';
import type { Catalog } from '../store/catalog/types.js';
import type { LiveWorker } from '../store/queue/types.js';
import { DEFAULTS } from '../config.js';

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A heartbeat older than this says its worker stopped (three missed beats). */
export const STALE_HEARTBEAT_MS = 3 * DEFAULTS.heartbeatMs;

/**
 * The one rule for "this worker has stopped": its last heartbeat is older than `staleMs`, wherever
 * it runs. On this host its process can also be looked at, so a worker whose process is gone
 * (SIGKILL, crash) counts as stopped at once instead of a heartbeat window later. Were that ever
 * wrong (two machines with one host name), the fencing token still keeps the live worker's claim
 * from settling a job someone else took over; the work would only be done twice.
 */
export function workerStopped(w: Pick<LiveWorker, 'pid' | 'host' | 'heartbeatAt'>, now = Date.now(), staleMs = STALE_HEARTBEAT_MS): boolean {
  if (now - w.heartbeatAt > staleMs) return true;
  return w.host === os.hostname() && !pidAlive(w.pid);
}

/**
 * Frees the jobs of stopped workers (their leases end now, so they are redone at once instead of
 * after the lease runs out) and drops them from the registry. How many jobs it freed.
 */
export async function reapStoppedWorkers(store: Pick<Catalog, 'queue' | 'registry'> & Partial<Pick<Catalog, 'webhooks'>>, selfId?: string, staleMs = STALE_HEARTBEAT_MS): Promise<number> {
  const now = Date.now();
  let freed = 0;
  for (const w of await store.registry.alive(Number.MAX_SAFE_INTEGER)) {
    if (w.id === selfId || !workerStopped(w, now, staleMs)) continue;
    freed += await store.queue.expireLeasesOf(w.id);
    await store.webhooks?.expireLeasesOf(w.id); // its webhook deliveries in flight are sent again at once
    await store.registry.remove(w.id);
  }
  return freed;
}

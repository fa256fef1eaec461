/**
 * A worker thread's lifecycle, wired in one place for every pool of threads (the text encoder's,
 * the analyses', the searches'): its messages to the pool, why it stopped (the message of the
 * 'error' it emitted before exiting, else its exit code), and a promise the pool's close() awaits.
 */
import type { Worker } from 'node:worker_threads';

export function watchWorker<M>(worker: Worker, exits: Set<Promise<void>>, on: { message: (m: M) => void; exit: (why: string) => void }): void {
  let failure: string | undefined;
  worker.on('message', on.message);
  worker.on('error', (err) => {
    failure = err instanceof Error ? err.message : String(err);
  });
  const exited = new Promise<void>((resolve) => {
    worker.once('exit', (code) => {
      exits.delete(exited);
      on.exit(failure ?? `exit code ${code}`);
      resolve();
    });
  });
  exits.add(exited);
}

/** How long to wait before starting again a thread that never came up, after `failures` such in a row: 0.25 s doubling to 30 s. */
export function restartDelayMs(failures: number): number {
  return Math.min(30_000, 250 * 2 ** (Math.max(1, failures) - 1));
}

/**
 * Starts a thread again after `delay` ms (0: now), unless the pool has closed by then; the timer
 * never keeps the process alive and sits in `timers` meanwhile (close() clears them).
 */
export function restartAfter(delay: number, timers: Set<NodeJS.Timeout>, closed: () => boolean, spawn: () => void): void {
  if (delay === 0) return spawn();
  const t = setTimeout(() => {
    timers.delete(t);
    if (!closed()) spawn();
  }, delay);
  t.unref();
  timers.add(t);
}

import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * One store shared by every caller in the process (one SQLite connection, one in-memory catalog),
 * so a transaction that spans awaits would take in whatever other callers do meanwhile. The gate
 * prevents that: every call through the catalog runs alone (in call order), and a transaction
 * holds the gate from its start to its end; calls made from inside a gated call or a transaction
 * (the same async context) run at once, inside it.
 */
export class Gate {
  private readonly inside = new AsyncLocalStorage<true>();
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(fn: () => T | Promise<T>): Promise<T> {
    if (this.inside.getStore()) return (async () => fn())();
    const result = this.tail.then(() => this.inside.run(true, fn));
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

/** `target` with every method call run through the gate (methods return promises already). */
export function gated<T extends object>(target: T, gate: Gate): T {
  return new Proxy(target, {
    get(t, prop, receiver) {
      const v = Reflect.get(t, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => gate.run(() => (v as (...a: unknown[]) => unknown).apply(t, args));
    },
  });
}

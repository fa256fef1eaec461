/**
 * Small helpers every model loader uses, with no runtime attached (importing this never loads
 * tfjs or onnxruntime).
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';

const require = createRequire(import.meta.url);

/**
 * Runs async tasks one at a time (FIFO). Serialising keeps concurrent callers from interleaving
 * calls on one model (tfjs on wasm is single-threaded anyway; a USE batch is chosen when it starts).
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task, task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

/** Directory of an installed package (resolved from this module, no network). */
export function packageDir(pkg: string): string {
  return dirname(require.resolve(`${pkg}/package.json`));
}

/**
 * Where a worker thread's script is: the compiled `.js` beside the module that starts it (the
 * package, `dist/`), or — when that module runs from the TypeScript sources (vitest) — the one
 * `npm run build` compiled under `dist/`. One rule for every pool of threads.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `from`: the starting module's `import.meta.url` (a file two levels under the package root, e.g.
 * `src/engine/x.ts`); `script`: the worker's path from the package root as compiled
 * (`src/threads/body-worker.js`); `missing`: the error to throw when neither exists.
 */
export function workerScript(from: string, script: string, missing: (message: string) => Error): URL {
  const sibling = new URL(`./${path.posix.basename(script)}`, from);
  if (existsSync(fileURLToPath(sibling))) return sibling;
  const built = new URL(`../../dist/${script}`, from);
  if (existsSync(fileURLToPath(built))) return built;
  throw missing(`${fileURLToPath(sibling)} is missing: run \`npm run build\``);
}

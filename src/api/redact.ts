import os from 'node:os';
import path from 'node:path';
import { VidembedError } from './errors.js';

/**
 * Messages that reach users (HTTP bodies, a video's error_message, CLI errors) name the user's
 * file, never the server's layout. `names` maps server paths to what the user knows them as;
 * any other absolute path under `roots` (the data directory, temp directories) is cut to its
 * base name.
 */
export function redactPaths(message: string, names: [string, string][] = [], roots: string[] = []): string {
  let out = message;
  for (const [from, to] of names) if (from) out = out.split(from).join(to);
  for (const root of [...roots, os.tmpdir()]) {
    if (!root || root === path.sep) continue;
    const escaped = root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    out = out.replace(new RegExp(`${escaped}(?:${path.sep === '/' ? '/' : '\\\\'}[^\\s'":,()]*)?`, 'g'), (m) => path.basename(m) || 'file');
  }
  return out;
}

/** The same error with its message redacted (same class, so status and exit code are kept). */
export function redactError(err: unknown, names: [string, string][], roots: string[] = []): unknown {
  if (!(err instanceof Error)) return err;
  const message = redactPaths(err.message, names, roots);
  if (message === err.message) return err;
  if (err instanceof VidembedError) {
    Object.defineProperty(err, 'message', { value: message, configurable: true, writable: true });
    return err;
  }
  return new Error(message, { cause: err });
}

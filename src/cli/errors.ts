import { VidembedError, ValidationError } from '../api/errors.js';

/** The one place errors become an exit code and a one-line message. */
export function exitCodeFor(err: unknown): number {
  return err instanceof VidembedError ? err.exitCode : 1;
}

export function describeError(err: unknown): string {
  if (err instanceof ValidationError) {
    return err.issues.map((i) => `${i.loc.filter((l) => l !== 'body' && l !== 'query').join('.') || 'input'} ${i.msg}`).join('; ');
  }
  if (err instanceof Error) return err.message;
  return String(err);
}

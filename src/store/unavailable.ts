/**
 * The one place that tells "a dependency is out of reach" (the database or the blob store is down,
 * restarting or unreachable) and "the disk is full" from every other failure, whatever driver
 * raised it. Outages are weather: the server answers 503 with Retry-After for the first and 507 for
 * the second (src/server/errors.ts), and workers hand the job back and wait instead of failing it
 * (src/runtime/worker.ts, src/services/jobs.ts). docs/operations.md has the rules.
 */
import { InsufficientStorageError, UnavailableError, VidembedError } from '../api/errors.js';
import { S3RequestError } from './s3-blobs.js';

/** Socket-level failures: the other side is not there (or went away mid-conversation). */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED']);

/**
 * PostgreSQL SQLSTATEs of a server that cannot serve right now: class 08 (connection exception),
 * admin/crash shutdown, "the database system is starting up / shutting down", too many connections.
 */
const PG_UNAVAILABLE = /^(08...|57P01|57P02|57P03|53300)$/;

/** node-postgres's own messages for a connection that ended or never came. */
const PG_MESSAGES = /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection terminated unexpectedly/i;

/** S3 answers that mean "not now" (after the store's own retries). */
const S3_TRANSIENT = new Set([500, 502, 503, 504]);

/** SQLite's "database or disk is full" (SQLITE_FULL) and the file system's ENOSPC / EDQUOT. */
const NO_SPACE_CODES = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);

/** `err` and the errors it wraps (`cause`, AggregateError's `errors`), outermost first. */
function* chain(err: unknown, depth = 0): Generator<unknown> {
  if (err === undefined || err === null || depth > 8) return;
  yield err;
  if (err instanceof AggregateError) for (const e of err.errors) yield* chain(e, depth + 1);
  if (err instanceof Error && err.cause !== undefined) yield* chain(err.cause, depth + 1);
}

function isOutage(e: unknown): boolean {
  if (e instanceof UnavailableError) return true;
  if (e instanceof S3RequestError) return e.status === undefined || S3_TRANSIENT.has(e.status);
  if (!(e instanceof Error)) return false;
  const code = (e as NodeJS.ErrnoException).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || PG_UNAVAILABLE.test(code))) return true;
  return PG_MESSAGES.test(e.message);
}

function isNoSpace(e: unknown): boolean {
  if (e instanceof InsufficientStorageError) return true;
  if (!(e instanceof Error)) return false;
  const code = (e as NodeJS.ErrnoException).code;
  if (typeof code === 'string' && NO_SPACE_CODES.has(code)) return true;
  // PostgreSQL's disk_full (53100) and SQLite's message when the code was lost on the way.
  return code === '53100' || /database or disk is full|no space left on device/i.test(e.message);
}

/** Which storage failed, for the message: the blob store's errors name S3 or a file; the rest is the database. */
function dependencyOf(e: unknown): string {
  if (e instanceof S3RequestError) return 'the blob store';
  const syscall = (e as NodeJS.ErrnoException).syscall;
  return syscall === 'open' || syscall === 'write' ? 'the blob store' : 'the database';
}

/**
 * The error as an UnavailableError when it (or what it wraps) says a dependency is out of reach;
 * undefined for everything else. A typed error of ours other than that one is never an outage (its
 * cause was judged where it was raised).
 */
export function asUnavailable(err: unknown): UnavailableError | undefined {
  for (const e of chain(err)) {
    if (e instanceof UnavailableError) return e;
    if (e instanceof VidembedError) return undefined;
    if (isOutage(e)) {
      const what = dependencyOf(e);
      // The driver's words (addresses, ports) stay in the cause, for logs, not in the answer.
      return new UnavailableError(`${what} cannot be reached right now; retry in a few seconds`, 5, { cause: err, dependency: what });
    }
  }
  return undefined;
}

/** The error as an InsufficientStorageError when it (or what it wraps) says the disk is full. */
export function asNoSpace(err: unknown): InsufficientStorageError | undefined {
  for (const e of chain(err)) {
    if (e instanceof InsufficientStorageError) return e;
    if (isNoSpace(e)) {
      return new InsufficientStorageError("the server's storage is full: nothing was stored; retry once space has been freed", { cause: err });
    }
  }
  return undefined;
}

/** Either kind of passing trouble: the work may succeed later as it is, so it is retried, never failed for good. */
export function isTransient(err: unknown): boolean {
  return asUnavailable(err) !== undefined || asNoSpace(err) !== undefined;
}

/**
 * The one error hierarchy. Every layer throws these; the HTTP server maps them to statuses and the
 * CLI to exit codes in exactly one place each (src/server/errors.ts, src/cli/errors.ts).
 */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export class VidembedError extends Error {
  readonly status: number = 500;
  readonly code: string = 'internal_error';
  readonly exitCode: number = 1;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class BadRequestError extends VidembedError {
  override readonly status = 400;
  override readonly code: string = 'bad_request';
  override readonly exitCode = 2;
}

export class UnauthorizedError extends VidembedError {
  override readonly status = 401;
  override readonly code = 'unauthorized';
  override readonly exitCode = 77;
}

export class QuotaExceededError extends VidembedError {
  override readonly status = 402;
  override readonly code = 'quota_exceeded';
  override readonly exitCode = 75;
}

/** A path the caller may not have read: outside the folders a server indexes in place. */
export class ForbiddenError extends VidembedError {
  override readonly status = 403;
  override readonly code = 'forbidden';
  override readonly exitCode = 77;
}

export class NotFoundError extends VidembedError {
  override readonly status = 404;
  override readonly code: string = 'not_found';
  override readonly exitCode = 3;
}

export class ConflictError extends VidembedError {
  override readonly status = 409;
  override readonly code: string = 'conflict';
  override readonly exitCode = 4;
}

export class PayloadTooLargeError extends VidembedError {
  override readonly status = 413;
  override readonly code = 'payload_too_large';
  override readonly exitCode = 5;
}

/** Storing this would take the owner past their storage quota (the caller's limit: 413; a full disk is 507). */
export class StorageQuotaError extends VidembedError {
  override readonly status = 413;
  override readonly code = 'storage_quota_exceeded';
  override readonly exitCode = 5;
}

export class RangeNotSatisfiableError extends VidembedError {
  override readonly status = 416;
  override readonly code = 'range_not_satisfiable';
  override readonly exitCode = 2;
}

export class ValidationError extends VidembedError {
  override readonly status = 422;
  override readonly code = 'validation_error';
  override readonly exitCode = 2;
  readonly issues: ValidationIssue[];
  constructor(issues: ValidationIssue[] | string, loc: (string | number)[] = ['body']) {
    const list = typeof issues === 'string' ? [{ loc, msg: issues, type: 'value_error' }] : issues;
    super(list.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '));
    this.issues = list;
  }
}

export class RateLimitedError extends VidembedError {
  override readonly status = 429;
  override readonly code = 'rate_limited';
  override readonly exitCode = 75;
  constructor(message: string, readonly retryAfterSeconds: number) {
    super(message);
  }
}

/** The server is at a cap of its own (not the caller's): 503 with Retry-After (src/server/work-limits.ts). */
export class ServerBusyError extends VidembedError {
  override readonly status = 503;
  override readonly code = 'server_busy';
  override readonly exitCode = 75;
  constructor(message: string, readonly retryAfterSeconds: number) {
    super(message);
  }
}

/** The input itself is not usable media (corrupt, no video stream, unreadable). */
export class MediaError extends VidembedError {
  override readonly status = 422;
  override readonly code = 'invalid_media';
  override readonly exitCode = 6;
}

export class UpstreamError extends VidembedError {
  override readonly status = 502;
  override readonly code = 'upstream_error';
  override readonly exitCode = 7;
}

export class TimeoutError extends VidembedError {
  override readonly status = 504;
  override readonly code = 'timeout';
  override readonly exitCode = 8;
}

/**
 * A dependency (the database, the blob store) cannot be reached right now: nothing is wrong with
 * the request, and the same request may succeed after `retryAfterSeconds` (src/store/unavailable.ts
 * recognizes the drivers' errors; docs/operations.md).
 */
export class UnavailableError extends VidembedError {
  override readonly status = 503;
  override readonly code = 'unavailable';
  override readonly exitCode = 69;
  /** What cannot be reached, in words ("the database", "the blob store"). */
  readonly dependency: string;
  constructor(
    message: string,
    readonly retryAfterSeconds = 5,
    options?: { cause?: unknown; dependency?: string },
  ) {
    super(message, options);
    this.dependency = options?.dependency ?? 'a dependency';
  }
}

/** The server's disk (or the database's) is full: nothing was stored; retry once space is freed. */
export class InsufficientStorageError extends VidembedError {
  override readonly status = 507;
  override readonly code = 'insufficient_storage';
  override readonly exitCode = 74;
}

/**
 * The library's database was migrated by a newer vidembed than this one: opening it could write
 * rows the newer schema does not expect, so nothing is opened or changed (sysexits EX_CONFIG).
 */
export class SchemaTooNewError extends VidembedError {
  override readonly status = 500;
  override readonly code = 'schema_too_new';
  override readonly exitCode = 78;
  constructor(
    readonly database: 'SQLite' | 'PostgreSQL',
    readonly found: number,
    readonly known: number,
  ) {
    super(
      `this library's ${database} database was upgraded by a newer vidembed (schema ${found}; this vidembed knows up to ${known}): ` +
        'upgrade vidembed (npm install -g vidembed@latest) to open it; nothing was changed',
    );
  }
}

export class ModelError extends VidembedError {
  override readonly status = 500;
  override readonly code = 'model_error';
  override readonly exitCode = 9;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * An error as plain data, to cross a thread or process boundary (worker threads, the warm CLI's
 * socket) and be rebuilt there as the same class with the same fields, so messages, HTTP statuses
 * and exit codes do not depend on where the work ran.
 */
export interface WireError {
  name: string;
  message: string;
  issues?: ValidationIssue[];
  retryAfterSeconds?: number;
  /** UnavailableError: what cannot be reached. */
  dependency?: string;
}

/**
 * As plain data. A subclass the other side has no constructor for (FootageUnavailableError...)
 * travels as its nearest class that it has, with its message: the same status and exit code.
 */
export function errorToWire(err: unknown): WireError {
  if (err instanceof ValidationError) return { name: 'ValidationError', message: err.message, issues: err.issues };
  if (err instanceof RateLimitedError) return { name: 'RateLimitedError', message: err.message, retryAfterSeconds: err.retryAfterSeconds };
  if (err instanceof ServerBusyError) return { name: 'ServerBusyError', message: err.message, retryAfterSeconds: err.retryAfterSeconds };
  if (err instanceof UnavailableError) return { name: 'UnavailableError', message: err.message, retryAfterSeconds: err.retryAfterSeconds, dependency: err.dependency };
  if (err instanceof VidembedError) {
    for (let proto: unknown = Object.getPrototypeOf(err); proto && proto !== Error.prototype; proto = Object.getPrototypeOf(proto)) {
      const name = (proto as { constructor?: { name?: string } }).constructor?.name;
      if (name && Object.hasOwn(WIRE_CLASSES, name)) return { name, message: err.message };
    }
    return { name: 'VidembedError', message: err.message };
  }
  if (err instanceof Error) return { name: 'Error', message: err.message };
  return { name: 'Error', message: String(err) };
}

const WIRE_CLASSES: Record<string, new (message: string) => Error> = {
  VidembedError,
  BadRequestError,
  UnauthorizedError,
  QuotaExceededError,
  ForbiddenError,
  NotFoundError,
  ConflictError,
  PayloadTooLargeError,
  StorageQuotaError,
  RangeNotSatisfiableError,
  MediaError,
  UpstreamError,
  TimeoutError,
  InsufficientStorageError,
  ModelError,
};

/** The same error class and fields as on the other side; a plain Error for anything else. */
export function errorFromWire(e: WireError): Error {
  if (e.name === 'ValidationError') return new ValidationError(e.issues ?? e.message);
  if (e.name === 'RateLimitedError') return new RateLimitedError(e.message, e.retryAfterSeconds ?? 1);
  if (e.name === 'ServerBusyError') return new ServerBusyError(e.message, e.retryAfterSeconds ?? 1);
  if (e.name === 'UnavailableError') return new UnavailableError(e.message, e.retryAfterSeconds, { dependency: e.dependency });
  const Cls = WIRE_CLASSES[e.name];
  return Cls ? new Cls(e.message) : new Error(e.message);
}

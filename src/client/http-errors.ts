import {
  BadRequestError,
  ConflictError,
  InsufficientStorageError,
  MediaError,
  ForbiddenError,
  NotFoundError,
  PayloadTooLargeError,
  QuotaExceededError,
  RateLimitedError,
  StorageQuotaError,
  TimeoutError,
  UnauthorizedError,
  UnavailableError,
  UpstreamError,
  ValidationError,
  VidembedError,
  type ValidationIssue,
} from '../api/errors.js';

/** An error response of the API, back into the same typed error the local engine throws. */
export function errorFromResponse(status: number, body: unknown, retryAfter?: string): VidembedError {
  const b = (body ?? {}) as { detail?: unknown; code?: string };
  const detail = typeof b.detail === 'string' ? b.detail : Array.isArray(b.detail) ? undefined : `HTTP ${status}`;
  switch (status) {
    case 400:
      return new BadRequestError(detail ?? 'bad request');
    case 401:
      return new UnauthorizedError(`${detail ?? 'unauthorized'} (check VIDEMBED_API_KEY or --api-key)`);
    case 402:
      return new QuotaExceededError(detail ?? 'quota exceeded');
    case 403:
      return new ForbiddenError(detail ?? 'forbidden');
    case 404:
      return new NotFoundError(detail ?? 'not found');
    case 409:
      return new ConflictError(detail ?? 'conflict');
    case 413:
      return b.code === 'storage_quota_exceeded' ? new StorageQuotaError(detail ?? 'storage quota exceeded') : new PayloadTooLargeError(detail ?? 'payload too large');
    case 422:
      if (b.code === 'invalid_media') {
        const msg = Array.isArray(b.detail) ? (b.detail as ValidationIssue[]).map((i) => i.msg).join('; ') : (detail ?? 'not usable media');
        return new MediaError(msg);
      }
      return Array.isArray(b.detail) ? new ValidationError(b.detail as ValidationIssue[]) : new ValidationError(detail ?? 'validation error');
    case 429:
      return new RateLimitedError(detail ?? 'rate limited', Number(retryAfter) || 1);
    case 502:
      return new UpstreamError(detail ?? 'upstream error');
    case 503:
      return new UnavailableError(detail ?? 'the server cannot serve right now', Number(retryAfter) || 5);
    case 504:
      return new TimeoutError(detail ?? 'timed out');
    case 507:
      return new InsufficientStorageError(detail ?? "the server's storage is full");
    default:
      return new VidembedError(`server error ${status}: ${detail ?? 'internal error'}`);
  }
}

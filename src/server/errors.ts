import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { redactPaths } from '../api/redact.js';
import { RateLimitedError, ServerBusyError, ValidationError, VidembedError } from '../api/errors.js';
import { ajvToIssues, type AjvError } from '../api/validate.js';
import { asNoSpace, asUnavailable } from '../store/unavailable.js';

/** Framework errors by their code: which status and machine code each becomes. */
const FRAMEWORK: Record<string, [number, string]> = {
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'malformed_json'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'malformed_json'],
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'payload_too_large'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [400, 'unsupported_media_type'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'bad_request'],
  FST_REQ_FILE_TOO_LARGE: [413, 'payload_too_large'],
  FST_PARTS_LIMIT: [400, 'bad_multipart'],
  FST_FILES_LIMIT: [400, 'bad_multipart'],
  FST_FIELDS_LIMIT: [400, 'bad_multipart'],
  FST_INVALID_MULTIPART_CONTENT_TYPE: [400, 'bad_multipart'],
  FST_PROTO_VIOLATION: [400, 'bad_request'],
  FST_ERR_CTP_INVALID_TYPE: [400, 'bad_request'],
  FST_ERR_BAD_URL: [400, 'bad_url'],
  FST_ERR_MAX_PARAM_LENGTH: [414, 'uri_too_long'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH_HEADER: [400, 'bad_request'],
  ERR_STRING_TOO_LONG: [413, 'payload_too_large'],
};

/** The one place errors become HTTP statuses and `{detail, code}` bodies. */
export function sendError(err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (err instanceof ValidationError) return reply.code(422).send({ detail: err.issues, code: err.code });
  if (err instanceof RateLimitedError || err instanceof ServerBusyError) {
    return reply.code(err.status).header('Retry-After', String(err.retryAfterSeconds)).send({ detail: err.message, code: err.code });
  }
  // A dependency out of reach is weather, not a fault: 503 and when to come back; a full disk 507.
  const down = asUnavailable(err);
  if (down) return reply.code(503).header('Retry-After', String(down.retryAfterSeconds)).send({ detail: down.message, code: down.code });
  const full = asNoSpace(err);
  if (full) return reply.code(507).send({ detail: full.message, code: full.code });
  // Every 422 is FastAPI's list, whatever raised it (unusable media names the request body).
  if (err instanceof VidembedError && err.status === 422) {
    return reply.code(422).send({ detail: [{ loc: ['body'], msg: err.message, type: `value_error.${err.code}` }], code: err.code });
  }
  // Typed errors carry their own status; a plain 500 falls through to be logged below.
  if (err instanceof VidembedError && err.status !== 500) return reply.code(err.status).send({ detail: err.message, code: err.code });
  const fe = err as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (fe && Array.isArray(fe.validation)) {
    return reply.code(422).send({ detail: ajvToIssues(fe.validation, fe.validationContext ?? 'body'), code: 'validation_error' });
  }
  if (fe?.code && FRAMEWORK[fe.code]) {
    const [status, code] = FRAMEWORK[fe.code];
    const detail = status === 413 && fe.code === 'ERR_STRING_TOO_LONG' ? 'request body too large' : fe.message;
    return reply.code(status).send({ detail, code });
  }
  if (err instanceof SyntaxError) return reply.code(400).send({ detail: `malformed JSON: ${err.message}`, code: 'malformed_json' });
  if (fe?.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    const status = fe.statusCode === 415 ? 400 : fe.statusCode;
    return reply.code(status).send({ detail: fe.message, code: status === 413 ? 'payload_too_large' : 'bad_request' });
  }
  request.log.error({ err }, 'internal error');
  // A typed 500 (a model that failed to load, say) says what failed, never where on this machine.
  const detail = err instanceof VidembedError ? redactPaths(err.message, [], [process.cwd()]) : 'internal server error';
  return reply.code(500).send({ detail, code: err instanceof VidembedError ? err.code : 'internal_error' });
}

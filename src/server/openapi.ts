import { errorBody, validationErrorBody } from '../api/schemas.js';
import { boundedStatuses } from './work-limits.js';

/**
 * Error statuses a route lists itself. Every route can also answer 500, every authenticated
 * route 401, 429 and 402 (the auth hook's, in that order), and every route but the open ones 503
 * (a dependency out of reach) and 507 (a full disk): those are added here, not listed.
 */
export type ErrorStatus = 400 | 403 | 404 | 409 | 413 | 414 | 416 | 422 | 502 | 503 | 504 | 507;

/** Named request examples, as OpenAPI's Media Type `examples`. */
export type Examples = Readonly<Record<string, { readonly summary?: string; readonly value: unknown }>>;

export interface RouteDoc {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  url: string;
  /** Stable camelCase name of the operation (client generators name methods after it). */
  operationId: string;
  tags: readonly string[];
  summary: string;
  status?: number;
  multipart?: boolean;
  /** Served without an API key (no 401/429/402, `security: []`). */
  open?: boolean;
  /** The error statuses this operation can answer, besides 500 and the auth hook's 401/429/402. */
  errors: readonly ErrorStatus[];
  /** Analyses a video synchronously: a 422 may also be `invalid_media`, whose detail is a sentence, not a list. */
  mediaErrors?: boolean;
  schema?: { body?: object; querystring?: object; params?: object; response?: object; examples?: Examples };
  /** Other media types the success body may have besides JSON (a transcript as text, asked by `?format=`). */
  alsoAs?: readonly string[];
  /** A success that is not JSON (a file): its media types; `ranges` adds 206 Partial Content. */
  file?: { mediaType: string | readonly string[]; ranges?: boolean };
}

const ERRORS: Record<number, string> = {
  400: 'malformed request: bad JSON, JSON nested too deep, bad base64, bad multipart, bad percent-encoding or an unsupported content type',
  401: 'missing, invalid or revoked API key',
  403: 'not allowed: the path lies outside the folders this server indexes in place (`serve --library DIR`), or the server indexes none',
  402: 'quota used up',
  404: "unknown id (another owner's ids answer 404 too)",
  409: 'conflict: a duplicate collection name, a tensor request_id uploaded twice, or (admins) a collection name several owners share',
  413: "payload too large, or (storage_quota_exceeded) storing it would pass the owner's storage quota",
  414: 'a path parameter over 256 characters',
  416: 'the Range asked for lies outside the file (Content-Range: bytes */size)',
  422: 'validation error; detail lists {loc, msg, type}',
  429: "a limit of the key: its rate, its jobs queued or running, its synchronous analyses or large bodies in progress (docs/limits.md); retry after Retry-After seconds",
  500: 'internal error (detail says what failed, never where on the server)',
  502: 'fetching video_url failed',
  503: 'a dependency (the database, the blob store) cannot be reached right now, or the server is at its cap of synchronous analyses or large bodies (docs/limits.md); retry after Retry-After seconds',
  504: 'synchronous call over its time budget; the work was cancelled',
  507: "the server's storage is full; nothing was stored",
};

const SUCCESS: Record<number, string> = { 200: 'OK', 201: 'created', 202: 'accepted' };

const TAGS: Record<string, string> = {
  meta: 'liveness and this document (no key needed)',
  collections: 'collections of videos and search over them',
  videos: 'video uploads and their processing status',
  embedding: 'text and video embeddings',
  tagging: 'shot size, camera angle and movement tags',
  tasks: 'asynchronous tasks',
  tensors: 'pre-processed tensor uploads for async tasks',
  jobs: 'the job queue: what waits or runs, and cancelling (docs/limits.md)',
  webhooks: 'URLs told of events (videos processed or failed, tasks done or failed), Standard Webhooks signed (docs/webhooks.md)',
};

const json = (schema: object) => ({ 'application/json': { schema } });

/** The longest path parameter the router accepts (longer: 414). */
const MAX_PARAM_LENGTH = 256;

/**
 * OpenAPI 3.1 from the same route table and schemas the server validates with. `auth: false`
 * (`serve --no-auth`) documents every route as open.
 */
export function buildOpenApi(routes: RouteDoc[], opts: { auth?: boolean } = {}) {
  const auth = opts.auth !== false;
  const security = [{ apiKey: [] }, { bearer: [] }];
  const paths: Record<string, Record<string, unknown>> = {};
  const usedTags = new Set<string>();
  for (const r of routes) {
    const p = r.url.replace(/:([A-Za-z_]+)/g, '{$1}');
    const authenticated = auth && !r.open;
    const op: Record<string, unknown> = { operationId: r.operationId, summary: r.summary, tags: [...r.tags] };
    r.tags.forEach((t) => usedTags.add(t));
    const params = (r.schema?.params as { properties?: Record<string, object> } | undefined)?.properties ?? {};
    const query = (r.schema?.querystring as { properties?: Record<string, object> } | undefined)?.properties ?? {};
    const parameters = [
      ...Object.entries(params).map(([name, schema]) => ({ name, in: 'path', required: true, schema: { ...schema, maxLength: MAX_PARAM_LENGTH } })),
      ...Object.entries(query).map(([name, schema]) => ({ name, in: 'query', required: false, schema })),
    ];
    if (parameters.length) op.parameters = parameters;
    const examples = r.schema?.examples ? { examples: r.schema.examples } : {};
    if (r.multipart) {
      // Exactly one file part, named `file` (another file part is a 400).
      const file = { type: 'object', required: ['file'], additionalProperties: false, properties: { file: { type: 'string', format: 'binary' } } };
      op.requestBody = { required: true, content: { 'multipart/form-data': { schema: file, ...examples } } };
    } else if (r.schema?.body) {
      op.requestBody = { required: true, content: { 'application/json': { schema: r.schema.body, ...examples } } };
    }

    const status = r.status ?? 200;
    // Every API operation reads the catalog (and its key) and may write: 503 while the database
    // cannot be reached, 507 when its disk (or the blob store's) is full.
    const codes = new Set<number>([...r.errors, 500, ...(authenticated ? [401, 402, 429] : []), ...(r.open ? [] : [503, 507]), ...boundedStatuses(r.operationId)]);
    const responses: Record<string, unknown> = {
      [String(status)]: {
        description: SUCCESS[status] ?? 'success',
        content: { ...json(r.schema?.response ?? { type: 'object' }), ...Object.fromEntries((r.alsoAs ?? []).map((t) => [t, { schema: { type: 'string' } }])) },
      },
    };
    if (r.file) {
      const types = typeof r.file.mediaType === 'string' ? [r.file.mediaType] : r.file.mediaType;
      const binary = Object.fromEntries(types.map((t) => [t, { schema: { type: 'string', format: 'binary' } }]));
      const ranged = r.file.ranges ? { 'Accept-Ranges': { description: 'bytes: the file can be read in parts', schema: { type: 'string' } } } : {};
      responses[String(status)] = { description: r.file.ranges ? 'the whole file' : 'the image', content: binary, headers: ranged };
      if (r.file.ranges) {
        responses['206'] = {
          description: 'the part of the file the Range header asked for',
          content: binary,
          headers: { ...ranged, 'Content-Range': { description: 'bytes start-end/size', required: true, schema: { type: 'string' } } },
        };
      }
    }
    for (const code of [...codes].sort((a, b) => a - b)) {
      const schema = code === 422 ? validationErrorBody : errorBody;
      const description = code === 422 && r.mediaErrors ? `${ERRORS[422]}; code invalid_media when the input is not usable video` : ERRORS[code];
      const response: Record<string, unknown> = { description, content: json(schema) };
      if (code === 429 || code === 503) {
        response.headers = { 'Retry-After': { description: 'seconds until a request may succeed', required: true, schema: { type: 'integer', minimum: 1 } } };
      }
      responses[String(code)] = response;
    }
    op.responses = responses;
    op.security = authenticated ? security : [];
    (paths[p] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'vidembed API',
      version: '1',
      description: 'Video embedding, tagging, collections and search (see docs/api.md).',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/', description: 'this server' }],
    security: auth ? security : [],
    tags: [...usedTags].map((name) => ({ name, ...(TAGS[name] ? { description: TAGS[name] } : {}) })),
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' }, bearer: { type: 'http', scheme: 'bearer' } },
    },
    paths,
  };
}

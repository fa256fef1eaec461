import { errorBody } from '../api/schemas.js';

export interface RouteDoc {
  method: 'GET' | 'POST';
  url: string;
  summary: string;
  status?: number;
  multipart?: boolean;
  schema?: { body?: object; querystring?: object; params?: object; response?: object };
}

const ERRORS: Record<string, string> = {
  '400': 'malformed JSON, bad base64 or bad multipart',
  '401': 'missing, invalid or revoked API key',
  '402': 'quota used up',
  '404': 'unknown resource',
  '409': 'conflict (duplicate collection name)',
  '413': 'payload too large',
  '422': 'validation error; detail lists {loc, msg, type}',
  '429': 'rate limit exceeded; see Retry-After',
  '502': 'fetching video_url failed',
  '504': 'synchronous call over its time budget',
};

/** OpenAPI 3.1 from the same route table and schemas the server validates with. */
export function buildOpenApi(routes: RouteDoc[]): object {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const p = r.url.replace(/:([A-Za-z_]+)/g, '{$1}');
    const op: Record<string, unknown> = { summary: r.summary, responses: {} };
    const params = (r.schema?.params as { properties?: Record<string, object> } | undefined)?.properties ?? {};
    const query = (r.schema?.querystring as { properties?: Record<string, object> } | undefined)?.properties ?? {};
    const parameters = [
      ...Object.entries(params).map(([name, schema]) => ({ name, in: 'path', required: true, schema })),
      ...Object.entries(query).map(([name, schema]) => ({ name, in: 'query', required: false, schema })),
    ];
    if (parameters.length) op.parameters = parameters;
    if (r.schema?.body) op.requestBody = { required: true, content: { 'application/json': { schema: r.schema.body } } };
    if (r.multipart) {
      op.requestBody = {
        required: true,
        content: { 'multipart/form-data': { schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' } } } } },
      };
    }
    const responses: Record<string, unknown> = {
      [String(r.status ?? 200)]: { description: 'success', content: { 'application/json': { schema: r.schema?.response ?? { type: 'object' } } } },
    };
    if (r.url !== '/healthz' && r.url !== '/openapi.json') {
      for (const [code, description] of Object.entries(ERRORS)) responses[code] = { description, content: { 'application/json': { schema: errorBody } } };
      op.security = [{ apiKey: [] }, { bearer: [] }];
    }
    op.responses = responses;
    (paths[p] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'vidembed API', version: '1', description: 'Video embedding, tagging, collections and search (see docs/api.md).' },
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' }, bearer: { type: 'http', scheme: 'bearer' } },
    },
    paths,
  };
}

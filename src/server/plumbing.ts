/**
 * What every route plugin (src/server/routes/) shares: the route table that documents each
 * operation in /openapi.json, the handler types derived from each operation's JSON Schemas
 * (src/api/schemas.ts), and the helpers a handler calls (the services and the caller's principal,
 * the time budget of synchronous model calls).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { NotFoundError, TimeoutError } from '../api/errors.js';
import { LOCAL_PRINCIPAL, type Principal } from '../api/principal.js';
import type { Services } from '../services/index.js';
import type { AnalysisThreads } from '../runtime/analysis-thread.js';
import type { Examples, RouteDoc } from './openapi.js';
import type { Named, TypeOf } from '../api/types.js';

type ObjectSchema = Exclude<JSONSchema, boolean>;

/** An operation's schemas, as in src/api/schemas.ts: `response` serializes the success body; `examples` only document. */
export interface RouteSchema {
  body?: ObjectSchema;
  querystring?: ObjectSchema;
  params?: ObjectSchema;
  response?: ObjectSchema;
  examples?: Examples;
}

/** The type one part of a request has once its schema has validated it (defaults filled in). */
type Validated<S, K extends 'body' | 'querystring' | 'params'> = S extends { [P in K]: infer X extends JSONSchema } ? (TypeOf<X> extends infer Y extends JSONSchema ? FromSchema<Y> : unknown) : unknown;

/** The route generic of an operation: body, query and path parameters as their schemas make them. */
export interface RequestOf<S> {
  Body: Validated<S, 'body'>;
  Querystring: Validated<S, 'querystring'>;
  Params: Validated<S, 'params'>;
}

/** What a handler must answer, from the operation's `response` schema (anything, without one). */
export type ResponseOf<S> = S extends { response: infer X extends JSONSchema } ? Named<FromSchema<X>> : unknown;

export type RouteRequest<S> = FastifyRequest<RequestOf<S>>;

/** Answers the success body (sent with the operation's status), or the reply it already sent. */
export type Handler<S> = (request: RouteRequest<S>, reply: FastifyReply) => Promise<ResponseOf<S> | FastifyReply>;

/** An operation's doc with its schemas, from which its handler's types come. */
export type ApiRoute<S extends RouteSchema> = Omit<RouteDoc, 'schema' | 'status'> & { schema: S; status?: 200 | 201 | 202 };

/**
 * Every API operation, in the order the plugins register them: /openapi.json is made from it, and
 * the auth hook lets the `open` ones through without a key (the UI's page routes add theirs too).
 */
export class RouteTable {
  readonly docs: RouteDoc[] = [];
  readonly open = new Set<string>();
  /** The model ids this server's engine knows (undefined: any string may name one); request bodies' `model` is one of them. */
  models?: readonly string[];

  /** The methods the API answers on a path (GET brings HEAD), for a 405's Allow; none: no such path. */
  methodsFor(path: string): string[] {
    const methods = new Set<string>();
    for (const d of this.docs) {
      const re = new RegExp(`^${d.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]+/g, '[^/]+')}/?$`);
      if (!re.test(path)) continue;
      methods.add(d.method);
      if (d.method === 'GET') methods.add('HEAD');
    }
    return [...methods].sort();
  }

  /** Registers an operation on `app` (a route plugin's instance) and documents it. */
  add<S extends RouteSchema>(app: FastifyInstance, given: ApiRoute<S>, handler: NoInfer<Handler<S>>, options: { bodyLimit?: number } = {}): void {
    // An unknown model is refused by the schema, so /openapi.json names the models there are.
    const doc = this.models && given.schema.body ? { ...given, schema: { ...given.schema, body: withModels(given.schema.body, this.models) } } : given;
    this.docs.push(doc);
    if (doc.open) this.open.add(doc.url);
    const schema: FastifySchema = {};
    if (doc.schema.body) schema.body = doc.schema.body;
    if (doc.schema.querystring) schema.querystring = doc.schema.querystring;
    if (doc.schema.params) schema.params = doc.schema.params;
    const status = doc.status ?? 200;
    // The success body is serialized with its schema: what the document says is what is sent.
    if (doc.schema.response) schema.response = { [status]: doc.schema.response };
    app.route<RequestOf<S>>({
      method: doc.method,
      url: doc.url,
      schema,
      ...options,
      handler: async (request, reply) => {
        const out = await handler(request, reply);
        // A handler that answered itself (a file stream) returns the reply.
        return out === reply ? reply : reply.code(status).send(out);
      },
    });
  }
}

/** A body schema whose `model` property (if any) is one of `models`. */
function withModels<T extends ObjectSchema>(body: T, models: readonly string[]): T {
  const props = (body as { properties?: Record<string, ObjectSchema> }).properties;
  if (!props?.model) return body;
  return { ...body, properties: { ...props, model: { ...props.model, enum: [...models] } } };
}

/** What buildServer hands every route plugin. */
export interface ApiContext {
  routes: RouteTable;
  /** Keys are required (false: `serve --no-auth`). */
  auth: boolean;
  /** The library's services (src/services): every call takes the caller's principal. */
  services: Services;
  /** Who the request acts for (full rights without auth). */
  who(request: FastifyRequest): Principal;
  /** Runs a synchronous model call within its time budget (over it: 504, and the work is cancelled). */
  withTimeout<T>(request: FastifyRequest, work: (signal: AbortSignal) => Promise<T>): Promise<T>;
  /** Worker threads that run synchronous analyses off the event loop (none: they run on it). */
  analysisThreads?: AnalysisThreads;
  /** Where multipart uploads are written before the engine takes them. */
  uploadsDir: string;
  maxUploadBytes: number;
  /** The body limit of a tensor upload (base64 of maxTensorBytes and its envelope). */
  tensorBodyLimit: number;
  /** The folders clients may index in place (`serve --library DIR`). */
  libraryRoots: string[];
}

/** The options of every route plugin. */
export interface RoutesOptions {
  ctx: ApiContext;
}

export function principalOf(request: FastifyRequest): Principal {
  return request.principal ?? LOCAL_PRINCIPAL;
}

export function timeBudget(syncTimeoutMs: number): ApiContext['withTimeout'] {
  return async (request, work) => {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(new TimeoutError(`the request took longer than ${syncTimeoutMs / 1000} s; use the async endpoint or a shorter video`)), syncTimeoutMs);
    const onClose = () => {
      if (!request.raw.complete || request.raw.destroyed) ctl.abort(new Error('client went away'));
    };
    request.raw.socket?.once('close', onClose);
    try {
      return await work(ctl.signal);
    } catch (err) {
      if (ctl.signal.aborted && ctl.signal.reason instanceof TimeoutError) throw ctl.signal.reason;
      throw err;
    } finally {
      clearTimeout(timer);
      request.raw.socket?.off('close', onClose);
    }
  };
}

/** The collection named in the path (an empty one, `/collections//…`, names none: 404). */
export function collectionParam(params: { collection_id: string }): string {
  const id = params.collection_id;
  if (!id) throw new NotFoundError('collection not found');
  return id;
}

/** Remote callers name videos and pictures by URL or bytes, never by a path on the server's disk. */
export function withoutPath<T extends object>(body: T): T {
  if (body && typeof body === 'object' && ('video_path' in body || 'image_path' in body)) {
    const { video_path: _v, image_path: _i, ...rest } = body as T & { video_path?: string; image_path?: string };
    return rest as T;
  }
  return body;
}

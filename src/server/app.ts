import { constants as bufferConstants } from 'node:buffer';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import multipart from '@fastify/multipart';
import { Ajv2020 } from 'ajv/dist/2020.js';
import Fastify, { type FastifyInstance } from 'fastify';
import { DEFAULTS } from '../config.js';
import { syncLimits } from '../env.js';
import type { Services } from '../services/index.js';
import { makeAuthHook, TokenBuckets, type KeyStore } from './auth.js';
import { sendError } from './errors.js';
import { parseJson } from '../threads/body-thread.js';
import { AnalysisThreads } from '../runtime/analysis-thread.js';
import { principalOf, RouteTable, timeBudget, type ApiContext } from './plumbing.js';
import { collectionRoutes } from './routes/collections.js';
import { embeddingRoutes } from './routes/embedding.js';
import { metaRoutes } from './routes/meta.js';
import { taggingRoutes } from './routes/tagging.js';
import { taskRoutes } from './routes/tasks.js';
import { tensorRoutes } from './routes/tensors.js';
import { videoRoutes } from './routes/videos.js';
import { jobRoutes } from './routes/jobs.js';
import { webhookRoutes } from './routes/webhooks.js';
import { installWorkLimits } from './work-limits.js';
import { libraryRoutes } from './routes/library.js';
import { registerUi, UiSessions } from './ui.js';
import { cleanPartialUploads } from './uploads.js';

export interface ServerOptions {
  /** Require API keys (default true). Off only when asked for explicitly (`serve --no-auth`). */
  auth?: boolean;
  maxJsonBytes?: number;
  maxUploadBytes?: number;
  maxTensorBytes?: number;
  /** Time budget of synchronous model calls; over it: 504 and the work is cancelled. */
  syncTimeoutMs?: number;
  logger?: boolean;
  /**
   * The web page's in-memory state (login tokens, ephemeral keys, media cookies). `vidembed ui`
   * passes its own, to mint the one-time login token; otherwise the server makes one.
   */
  ui?: UiSessions;
  /** The API keys requests are checked against (required unless `auth` is false). */
  keys?: KeyStore;
  /** Caps on synchronous analyses and large bodies (default: src/env.ts `syncLimits`). */
  workLimits?: ReturnType<typeof syncLimits>;
  /** Folders whose footage clients may index in place (`serve --library DIR`); none: no path from a client is read. */
  libraryRoots?: string[];
  /**
   * Run synchronous analyses (`encodeVideo`, `tagVideo`) on worker threads, as many as the cap on
   * them (src/runtime/analysis-thread.ts), so the event loop keeps answering. The threads use the
   * library's defaults (the registry's embedders, analyzers and speech): only for a library opened
   * with them (`serve`). Default false: on this thread, with the library's own ports. A pool given
   * here is used as it is (tests) and closed with the server.
   */
  analysisThreads?: boolean | AnalysisThreads;
  /** The route table to fill (default a new one): what the typed client's generator reads (src/server/client-gen.ts). */
  routes?: RouteTable;
}

/**
 * A JSON body is read into one string before it is parsed, and V8 cannot build a string longer
 * than this: every JSON body limit stays below it (with room for the envelope), so an oversized
 * body is a 413 and never a crash of the process.
 */
export const MAX_JSON_BODY_BYTES = bufferConstants.MAX_STRING_LENGTH - 1024 * 1024;

/** Path parameters longer than this are refused (414) before any route runs. */
const MAX_PARAM_LENGTH = 256;

/**
 * Once close() has begun, a request still in flight is answered with `Connection: close` and its
 * connection is ended when the response is done. Node closes only the connections idle at the moment
 * of close(); one busy then stayed open for the keep-alive time (Fastify's 72 s) after its response,
 * and close() — `serve`'s orderly SIGTERM/SIGINT shutdown — waited for it (test/unit/server-close.test.ts).
 */
function closeConnectionsOnShutdown(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (closing) reply.header('connection', 'close');
    return payload;
  });
  // For a reply whose headers had gone out before close() (a stream, a hijacked reply).
  app.addHook('onResponse', async () => {
    if (closing) setImmediate(() => app.server.closeIdleConnections());
  });
}

/**
 * The HTTP face: a thin adapter that validates (the route schemas), authenticates (on `keys`) and
 * maps each operation to a service call with the request's principal.
 */
export async function buildServer(services: Services, opts: ServerOptions = {}): Promise<FastifyInstance> {
  const { library } = services;
  const maxUploadBytes = opts.maxUploadBytes ?? library.maxUploadBytes;
  const maxTensorBytes = opts.maxTensorBytes ?? library.maxTensorBytes;
  const syncTimeoutMs = opts.syncTimeoutMs ?? DEFAULTS.syncTimeoutMs;
  const tensorBodyLimit = Math.min(Math.ceil((maxTensorBytes * 4) / 3) + 65536, MAX_JSON_BODY_BYTES);
  const app = Fastify({
    logger: opts.logger ?? false,
    bodyLimit: Math.min(opts.maxJsonBytes ?? DEFAULTS.maxJsonBytes, MAX_JSON_BODY_BYTES),
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    schemaErrorFormatter: (errors, dataVar) => Object.assign(new Error('validation failed'), { validation: errors, validationContext: dataVar }),
    // The framework's own refusals (bad percent-encoding, an over-long path parameter) in our body.
    frameworkErrors: (err, request, reply) => sendError(err, request, reply),
    // Errors Node's HTTP parser raises before any request exists (431 header overflow, 400 garbage).
    clientErrorHandler: (err: NodeJS.ErrnoException, socket: Socket) => {
      if (err.code === 'ECONNRESET' || socket.destroyed) return;
      const [status, code, detail] =
        err.code === 'HPE_HEADER_OVERFLOW'
          ? [431, 'headers_too_large', 'request headers are too large']
          : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
            ? [408, 'request_timeout', 'the request was not received in time']
            : [400, 'bad_request', 'malformed HTTP request'];
      if (!socket.writable) return void socket.destroy();
      const body = JSON.stringify({ detail, code });
      socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    },
  });
  closeConnectionsOnShutdown(app);
  // JSON bodies: nesting is bounded before parsing (deep nesting overflowed the stack later, when
  // a task was stored), prototype keys are refused (src/threads/body-parse.ts), and a large body is
  // parsed on a worker thread so the event loop keeps answering (src/threads/body-thread.ts).
  // Bodies are JSON (or multipart for uploads): plain text is refused like any other type (400).
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    parseJson(body as Buffer).then(
      (value) => done(null, value),
      (err: Error) => done(err, undefined),
    );
  });
  // Query strings and path parameters arrive as text and are coerced; JSON bodies are not
  // (a number where a string belongs is a 422, as in FastAPI).
  // JSON Schema 2020-12, the dialect of OpenAPI 3.1: /openapi.json states exactly what is checked.
  const strict = new Ajv2020({ allErrors: true, coerceTypes: false, useDefaults: true, verbose: true });
  const lenient = new Ajv2020({ allErrors: true, coerceTypes: 'array', useDefaults: true, verbose: true });
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : lenient).compile(schema));
  const uploadsDir = path.join(library.paths.home, 'uploads');
  await mkdir(uploadsDir, { recursive: true });
  await cleanPartialUploads(uploadsDir); // left by a process killed mid-upload
  await app.register(multipart, { limits: { fileSize: maxUploadBytes, files: 2, fields: 20, parts: 24 } });

  app.setErrorHandler((err, request, reply) => sendError(err, request, reply));
  const routes = opts.routes ?? new RouteTable();
  routes.models = library.modelIds?.();
  // A path the API has, asked with a method it does not answer (TRACE, PUT…): 405 and Allow.
  app.setNotFoundHandler((request, reply) => {
    const p = request.url.split('?')[0];
    const allowed = routes.methodsFor(p);
    if (allowed.length) {
      return reply.code(405).header('Allow', allowed.join(', ')).send({ detail: `${request.method} is not allowed on ${p}; allowed: ${allowed.join(', ')}`, code: 'method_not_allowed' });
    }
    return reply.code(404).send({ detail: `no route ${request.method} ${p}`, code: 'not_found' });
  });
  const uiSessions = opts.ui ?? new UiSessions();
  if (opts.auth !== false) {
    if (!opts.keys) throw new Error('buildServer: auth needs a key store (opts.keys), or pass auth: false');
    const hook = makeAuthHook(opts.keys, new TokenBuckets(), uiSessions);
    app.addHook('onRequest', async (request, reply) => {
      // Routes served without a key: those whose doc says `open`, and the page's (filled as routes register).
      if (routes.open.has(request.routeOptions.url ?? '')) return;
      await hook(request, reply);
    });
  }

  // Caps on synchronous analyses and large bodies, per key and per server (after auth: 401 first).
  const workLimits = opts.workLimits ?? syncLimits();
  installWorkLimits(app, routes, workLimits);
  const analysisThreads = opts.analysisThreads === true ? new AnalysisThreads({ threads: workLimits.sync }) : opts.analysisThreads || undefined;
  if (analysisThreads) app.addHook('onClose', async () => analysisThreads.close());

  // The web page (web/): its files, config and sign-in; not API operations, so not in /openapi.json.
  registerUi(app, { auth: opts.auth !== false, sessions: uiSessions, open: routes.open });

  // One plugin per resource (src/server/routes/); /openapi.json lists their operations in this order.
  const ctx: ApiContext = {
    routes,
    auth: opts.auth !== false,
    services,
    who: principalOf,
    withTimeout: timeBudget(syncTimeoutMs),
    analysisThreads,
    uploadsDir,
    maxUploadBytes,
    tensorBodyLimit,
    libraryRoots: opts.libraryRoots ?? [],
  };
  for (const plugin of [metaRoutes, tensorRoutes, embeddingRoutes, taskRoutes, taggingRoutes, collectionRoutes, videoRoutes, libraryRoutes, jobRoutes, webhookRoutes]) {
    await app.register(plugin, { ctx });
  }

  return app;
}

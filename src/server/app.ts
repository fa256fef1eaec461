import { constants as bufferConstants } from 'node:buffer';
import { createWriteStream } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { mkdir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import multipart from '@fastify/multipart';
import { Ajv } from 'ajv';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { BadRequestError, NotFoundError, PayloadTooLargeError, RangeNotSatisfiableError, TimeoutError, VidembedError } from '../api/errors.js';
import { LOCAL_PRINCIPAL } from '../api/principal.js';
import type { DuplicatesRequest, ListVideosRequest, UpdateCollectionRequest } from '../api/types.js';
import type { AsyncSubmitRequest, CreateCollectionRequest, EncodeVideoRequest, SearchRequest, TensorUploadRequest } from '../api/types.js';
import { schemas } from '../api/schemas.js';
import { DEFAULTS } from '../engine/config.js';
import type { LocalEngine, VideoFile } from '../engine/engine.js';
import { newId } from '../store/ids.js';
import { makeAuthHook, TokenBuckets } from './auth.js';
import { sendError } from './errors.js';
import { checkJsonDepth, MAX_JSON_DEPTH } from './json.js';
import { buildOpenApi, type RouteDoc } from './openapi.js';
import { registerUi, UiSessions } from './ui.js';

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
}

/**
 * A JSON body is read into one string before it is parsed, and V8 cannot build a string longer
 * than this: every JSON body limit stays below it (with room for the envelope), so an oversized
 * body is a 413 and never a crash of the process.
 */
export const MAX_JSON_BODY_BYTES = bufferConstants.MAX_STRING_LENGTH - 1024 * 1024;

/** Path parameters longer than this are refused (414) before any route runs. */
const MAX_PARAM_LENGTH = 256;

/** The HTTP face: a thin adapter that validates, authenticates and maps to the engine. */
export async function buildServer(engine: LocalEngine, opts: ServerOptions = {}): Promise<FastifyInstance> {
  const maxUploadBytes = opts.maxUploadBytes ?? engine.maxUploadBytes;
  const maxTensorBytes = opts.maxTensorBytes ?? engine.maxTensorBytes;
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
  // JSON bodies: nesting is bounded before parsing (deep nesting overflowed the stack later, when
  // a task was stored), then the framework's own parser (prototype-poisoning checks) runs.
  // Bodies are JSON (or multipart for uploads): plain text is refused like any other type (400).
  app.removeContentTypeParser('text/plain');
  const defaultJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    try {
      checkJsonDepth(body as string, MAX_JSON_DEPTH);
    } catch (err) {
      return done(err as Error, undefined);
    }
    defaultJson(request, body as string, done);
  });
  // Query strings and path parameters arrive as text and are coerced; JSON bodies are not
  // (a number where a string belongs is a 422, as in FastAPI).
  const strict = new Ajv({ allErrors: true, coerceTypes: false, useDefaults: true, verbose: true });
  const lenient = new Ajv({ allErrors: true, coerceTypes: 'array', useDefaults: true, verbose: true });
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : lenient).compile(schema));
  const uploadsDir = path.join(engine.paths.home, 'uploads');
  await mkdir(uploadsDir, { recursive: true });
  await app.register(multipart, { limits: { fileSize: maxUploadBytes, files: 2, fields: 20, parts: 24 } });

  app.setErrorHandler((err, request, reply) => sendError(err, request, reply));
  app.setNotFoundHandler((request, reply) => reply.code(404).send({ detail: `no route ${request.method} ${request.url.split('?')[0]}`, code: 'not_found' }));

  const docs: RouteDoc[] = [];
  /** Routes served without a key: those whose doc says `open` (filled as routes register). */
  const open = new Set<string>();
  const uiSessions = opts.ui ?? new UiSessions();
  if (opts.auth !== false) {
    const hook = makeAuthHook(engine.catalog.keys, new TokenBuckets(), uiSessions);
    app.addHook('onRequest', async (request, reply) => {
      if (open.has(request.routeOptions.url ?? '')) return;
      await hook(request, reply);
    });
  }
  /** The engine as this request's principal sees it (full rights without auth: `serve --no-auth`). */
  const svc = (request: FastifyRequest): LocalEngine => engine.as(request.principal ?? LOCAL_PRINCIPAL);
  const withTimeout = async <T>(request: FastifyRequest, work: (signal: AbortSignal) => Promise<T>): Promise<T> => {
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

  const route = (doc: RouteDoc, handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>, status = 200, extra: Record<string, unknown> = {}) => {
    docs.push(doc);
    if (doc.open) open.add(doc.url);
    const schema: Record<string, unknown> = {};
    if (doc.schema?.body) schema.body = doc.schema.body;
    if (doc.schema?.querystring) schema.querystring = doc.schema.querystring;
    if (doc.schema?.params) schema.params = doc.schema.params;
    app.route({
      method: doc.method,
      url: doc.url,
      schema,
      ...extra,
      handler: async (request, reply) => {
        const out = await handler(request, reply);
        // A handler that answered itself (a file stream) returns the reply.
        return out === reply ? reply : reply.code(status).send(out);
      },
    });
  };

  // The web page (web/): its files, config and sign-in; not API operations, so not in /openapi.json.
  registerUi(app, { auth: opts.auth !== false, sessions: uiSessions, open });

  route({ method: 'GET', url: '/healthz', operationId: 'health', tags: ['meta'], open: true, errors: [], summary: 'liveness; no key needed', schema: schemas.health }, async () => ({ status: 'ok' }));
  route(
    { method: 'GET', url: '/openapi.json', operationId: 'openapi', tags: ['meta'], open: true, errors: [], summary: 'this document', schema: schemas.openapi },
    async () => buildOpenApi(docs, { auth: opts.auth !== false }),
  );

  route(
    { method: 'POST', url: '/files/upload/tensors', operationId: 'uploadTensors', tags: ['tensors'], errors: [400, 409, 413, 422], summary: 'upload pre-processed tensors; returns keys for async calls', schema: schemas.tensorUpload },
    async (request) => svc(request).uploadTensors(request.body as TensorUploadRequest),
    200,
    { bodyLimit: tensorBodyLimit },
  );
  route(
    { method: 'POST', url: '/video_embedding/encode_video', operationId: 'encodeVideo', tags: ['embedding'], errors: [400, 413, 422, 502, 504], mediaErrors: true, summary: 'embed a video synchronously', schema: schemas.encodeVideo },
    async (request) => withTimeout(request, (signal) => svc(request).encodeVideo(withoutPath(request.body as EncodeVideoRequest), { signal })),
  );
  route(
    { method: 'POST', url: '/video_embedding/encode_text', operationId: 'encodeText', tags: ['embedding'], errors: [400, 413, 422], summary: 'embed a text', schema: schemas.encodeText },
    async (request) => svc(request).encodeText(request.body as { text: string }),
  );
  route(
    { method: 'POST', url: '/video_embedding/encode_video/async', operationId: 'submitEmbeddingTask', tags: ['embedding', 'tasks'], errors: [400, 404, 413, 422], summary: 'submit an embedding task', schema: schemas.asyncSubmit, status: 202 },
    async (request) => svc(request).submitTask('embedding', withoutPath(request.body as AsyncSubmitRequest)),
    202,
  );
  route(
    { method: 'GET', url: '/async_status/:request_id', operationId: 'getTaskStatus', tags: ['tasks'], errors: [400, 404, 414], summary: "an async task's status and result", schema: schemas.asyncStatus },
    async (request) => svc(request).taskStatus((request.params as { request_id: string }).request_id),
  );
  route(
    { method: 'POST', url: '/video_tagging', operationId: 'tagVideo', tags: ['tagging'], errors: [400, 413, 422, 502, 504], mediaErrors: true, summary: 'tag a video synchronously', schema: schemas.tagVideo },
    async (request) => withTimeout(request, (signal) => svc(request).tagVideo(withoutPath(request.body as EncodeVideoRequest), { signal })),
  );
  route(
    { method: 'POST', url: '/video_tagging/async', operationId: 'submitTaggingTask', tags: ['tagging', 'tasks'], errors: [400, 404, 413, 422], summary: 'submit a tagging task', schema: schemas.asyncSubmit, status: 202 },
    async (request) => svc(request).submitTask('tagging', withoutPath(request.body as AsyncSubmitRequest)),
    202,
  );
  route(
    { method: 'POST', url: '/collections', operationId: 'createCollection', tags: ['collections'], errors: [400, 409, 413, 422], summary: 'create a collection', schema: schemas.createCollection, status: 201 },
    async (request) => svc(request).createCollection(request.body as CreateCollectionRequest),
    201,
  );
  route(
    { method: 'GET', url: '/collections', operationId: 'listCollections', tags: ['collections'], errors: [422], summary: 'list collections, newest first', schema: schemas.listCollections },
    async (request) => svc(request).listCollections(request.query as { limit?: number; offset?: number }),
  );
  route(
    { method: 'POST', url: '/collections/:collection_id/reindex', operationId: 'reindexCollection', tags: ['collections'], errors: [400, 404, 409, 414], summary: "process a collection's videos again (search answers from the old vectors until each is redone)", schema: schemas.reindexCollection, status: 202 },
    async (request) => svc(request).reindexCollection(collectionParam(request)),
    202,
  );
  route(
    { method: 'GET', url: '/collections/:collection_id/duplicates', operationId: 'findDuplicates', tags: ['collections'], errors: [400, 404, 409, 414, 422], summary: 'groups of near-identical videos (re-encoded, resized, trimmed copies), with a similarity', schema: schemas.duplicates },
    async (request) => svc(request).findDuplicates(collectionParam(request), request.query as DuplicatesRequest),
  );
  route(
    { method: 'POST', url: '/collections/:collection_id/search', operationId: 'searchCollection', tags: ['collections'], errors: [400, 404, 409, 413, 414, 422, 502, 504], mediaErrors: true, summary: 'search a collection by text, a picture or a moment (or a mix)', schema: schemas.search },
    async (request) => {
      const body = withoutPath(request.body as SearchRequest & { explain?: boolean });
      return withTimeout(request, (signal) => svc(request).search(collectionParam(request), body, { explain: body.explain === true, signal }));
    },
  );
  route(
    { method: 'POST', url: '/collections/:collection_id/videos/upload', operationId: 'uploadVideo', tags: ['videos', 'collections'], errors: [400, 404, 409, 413, 414], summary: 'upload a video file (multipart, part "file")', schema: schemas.uploadVideo, status: 202, multipart: true },
    async (request) => {
      const service = svc(request);
      const collectionId = (await service.getCollection(collectionParam(request))).id; // 404 before reading any bytes
      if (!request.isMultipart()) throw new BadRequestError('expected multipart/form-data with one part named "file"');
      let saved: { path: string; filename: string } | undefined;
      try {
        for await (const part of request.parts()) {
          if (part.type !== 'file') continue;
          if (part.fieldname !== 'file') {
            part.file.resume();
            throw new BadRequestError(`unexpected file part "${part.fieldname}": send one part named "file"`);
          }
          if (saved) {
            part.file.resume();
            throw new BadRequestError('more than one "file" part: send exactly one');
          }
          const tmp = path.join(uploadsDir, `${newId('vid')}.part`);
          saved = { path: tmp, filename: path.basename(part.filename || 'upload').replace(/[\u0000-\u001f]/g, '') || 'upload' };
          await pipeline(part.file, createWriteStream(tmp));
          if (part.file.truncated) throw new PayloadTooLargeError(`file is over the ${maxUploadBytes}-byte upload limit`);
        }
        if (!saved) throw new BadRequestError('missing multipart part "file"');
        const { force, skip_duplicates } = request.query as { force?: boolean; skip_duplicates?: boolean };
        return await service.uploadVideo(collectionId, { path: saved.path, filename: saved.filename, move: true, force: force === true, skipDuplicates: skip_duplicates === true });
      } catch (err) {
        // The multipart parser's own failures (no boundary, a body cut off mid-part) are the client's.
        if (err instanceof VidembedError || (err as { statusCode?: number }).statusCode) throw err;
        if (err instanceof Error && !(err as NodeJS.ErrnoException).syscall) throw new BadRequestError(`malformed multipart body: ${err.message}`);
        throw err;
      } finally {
        if (saved) await unlink(saved.path).catch(() => {});
      }
    },
    202,
  );
  route(
    { method: 'GET', url: '/videos/:video_id/status', operationId: 'getVideoStatus', tags: ['videos'], errors: [400, 404, 414], summary: "a video's processing status", schema: schemas.videoStatus },
    async (request) => svc(request).videoStatus(videoParam(request)),
  );

  // ---- see and manage -------------------------------------------------------------------------
  route(
    { method: 'GET', url: '/collections/:collection_id', operationId: 'getCollection', tags: ['collections'], errors: [400, 404, 409, 414], summary: 'a collection, with how many of its videos are in each status', schema: schemas.collectionDetails },
    async (request) => svc(request).collectionDetails(collectionParam(request)),
  );
  route(
    { method: 'PATCH', url: '/collections/:collection_id', operationId: 'updateCollection', tags: ['collections'], errors: [400, 404, 409, 413, 414, 422], summary: "rename a collection or change its description", schema: schemas.updateCollection },
    async (request) => svc(request).updateCollection(collectionParam(request), request.body as UpdateCollectionRequest),
  );
  route(
    { method: 'DELETE', url: '/collections/:collection_id', operationId: 'deleteCollection', tags: ['collections'], errors: [400, 404, 409, 414], summary: 'delete a collection with its videos, segments, vectors, files and pending jobs', schema: schemas.deleteCollection },
    async (request) => svc(request).deleteCollection(collectionParam(request)),
  );
  route(
    { method: 'GET', url: '/collections/:collection_id/videos', operationId: 'listVideos', tags: ['collections', 'videos'], errors: [400, 404, 409, 414, 422], summary: "a collection's videos, newest first", schema: schemas.listVideos },
    async (request) => svc(request).listVideos(collectionParam(request), request.query as ListVideosRequest),
  );
  route(
    { method: 'GET', url: '/videos/:video_id', operationId: 'getVideo', tags: ['videos'], errors: [400, 404, 414], summary: 'a video: metadata, tags and segments with what the engine saw in each', schema: schemas.videoDetails },
    async (request) => svc(request).videoDetails(videoParam(request)),
  );
  route(
    { method: 'DELETE', url: '/videos/:video_id', operationId: 'deleteVideo', tags: ['videos'], errors: [400, 404, 414], summary: 'delete a video with its segments, vectors and file', schema: schemas.deleteVideo },
    async (request) => svc(request).deleteVideo(videoParam(request)),
  );
  route(
    { method: 'POST', url: '/videos/:video_id/reprocess', operationId: 'reprocessVideo', tags: ['videos'], errors: [400, 404, 414], summary: 'process a video again', schema: schemas.reprocessVideo, status: 202 },
    async (request) => svc(request).reprocessVideo(videoParam(request)),
    202,
  );
  route(
    {
      method: 'GET',
      url: '/videos/:video_id/thumbnail',
      operationId: 'getVideoThumbnail',
      tags: ['videos'],
      errors: [400, 404, 414, 422],
      summary: "a JPEG keyframe: the segment's at ?t=seconds, else the video's poster",
      schema: schemas.videoThumbnail,
      file: { mediaType: 'image/jpeg' },
    },
    async (request, reply) => {
      const { t } = request.query as { t?: number };
      const jpeg = await svc(request).videoThumbnail(videoParam(request), t);
      return reply.code(200).header('Content-Type', 'image/jpeg').header('Cache-Control', 'private, max-age=3600').send(jpeg);
    },
  );
  route(
    {
      method: 'GET',
      url: '/videos/:video_id/file',
      operationId: 'getVideoFile',
      tags: ['videos'],
      errors: [400, 404, 414, 416],
      summary: 'the original file, with HTTP Range support (a browser can seek)',
      schema: schemas.videoFile,
      file: { mediaType: 'video/*', ranges: true },
    },
    async (request, reply) => sendFile(reply, await svc(request).videoFile(videoParam(request)), request.headers.range),
  );

  return app;
}

function videoParam(request: FastifyRequest): string {
  return (request.params as { video_id: string }).video_id;
}

const VIDEO_TYPES: Record<string, string> = {
  '.mp4': 'video/mp4',
  '.m4v': 'video/mp4',
  '.mov': 'video/quicktime',
  '.webm': 'video/webm',
  '.mkv': 'video/x-matroska',
  '.avi': 'video/x-msvideo',
  '.ogv': 'video/ogg',
  '.mpg': 'video/mpeg',
  '.mpeg': 'video/mpeg',
};

/**
 * Streams a file, whole (200) or the one byte range asked for (206, `Range: bytes=a-b`, `a-` or
 * `-n`); a range outside the file is 416. Several ranges in one request get the whole file.
 */
async function sendFile(reply: FastifyReply, file: VideoFile, range: string | undefined): Promise<FastifyReply> {
  let size = file.size;
  if (file.path !== undefined) {
    const st = await stat(file.path).catch(() => undefined);
    if (!st) throw new NotFoundError('the video file is gone from the server');
    size = st.size;
  }
  const type = VIDEO_TYPES[path.extname(file.filename).toLowerCase()] ?? 'application/octet-stream';
  reply.header('Accept-Ranges', 'bytes').header('Content-Type', type);
  reply.header('Content-Disposition', `inline; filename*=UTF-8''${encodeURIComponent(file.filename)}`);
  const m = range ? /^bytes=(\d*)-(\d*)$/.exec(range.trim()) : null;
  if (m && (m[1] || m[2])) {
    let start: number;
    let end: number;
    if (m[1]) {
      start = Number(m[1]);
      end = m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
    } else {
      start = Math.max(0, size - Number(m[2]));
      end = size - 1;
    }
    if (start >= size || start > end) {
      reply.header('Content-Range', `bytes */${size}`);
      throw new RangeNotSatisfiableError(`the range ${range} lies outside the file (${size} bytes)`);
    }
    reply.code(206).header('Content-Range', `bytes ${start}-${end}/${size}`).header('Content-Length', String(end - start + 1));
    return reply.send(file.open({ start, end }));
  }
  reply.code(200).header('Content-Length', String(size));
  return reply.send(file.open());
}

function collectionParam(request: FastifyRequest): string {
  const id = (request.params as { collection_id?: string }).collection_id;
  if (!id) throw new NotFoundError('collection not found');
  return id;
}

/** Remote callers name videos and pictures by URL or bytes, never by a path on the server's disk. */
function withoutPath<T extends object>(body: T): T {
  if (body && typeof body === 'object' && ('video_path' in body || 'image_path' in body)) {
    const { video_path: _v, image_path: _i, ...rest } = body as T & { video_path?: string; image_path?: string };
    return rest as T;
  }
  return body;
}


import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { readFile, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { FormData, request, type Dispatcher } from 'undici';
import { BadRequestError, NotFoundError, RateLimitedError, UnavailableError, UpstreamError } from '../api/errors.js';
import type {
  AsyncStatusResponse,
  AsyncSubmitRequest,
  AsyncSubmitResponse,
  CollectionSummary,
  CreateCollectionRequest,
  CreateCollectionResponse,
  EncodeTextRequest,
  EncodeTextResponse,
  EncodeVideoRequest,
  EncodeVideoResponse,
  IngestFile,
  ListCollectionsRequest,
  ReindexResponse,
  CollectionDetails,
  DeleteResponse,
  DuplicatesRequest,
  DuplicatesResponse,
  ListVideosRequest,
  FindVideosRequest,
  UpdateCollectionRequest,
  VideoDetails,
  VideoSummary,
  SearchRequest,
  SearchResponse,
  TagVideoResponse,
  TaskKind,
  TensorUploadRequest,
  TensorUploadResponse,
  UploadVideoResponse,
  VideoService,
  VideoStatusResponse,
  TranscriptResponse,
  LibraryScanRequest,
  ListJobsResponse,
  CancelJobResponse,
  RescanResponse,
  CreateWebhookRequest,
  CreateWebhookResponse,
  DeleteWebhookResponse,
  ListWebhooksResponse,
  TestWebhookResponse,
  WebhookDeliveriesRequest,
  WebhookDeliveriesResponse,
  WebhookSummary,
} from '../api/types.js';
import { errorFromResponse } from './http-errors.js';
import { OPERATIONS, type OperationId } from './operations.js';
import type { OperationTypes, RawResponse } from './request-types.js';

export interface RemoteOptions {
  baseUrl: string;
  apiKey?: string;
  /** Retries on 429 and 503 (honouring Retry-After), 502 and connection errors. */
  retries?: number;
  timeoutMs?: number;
}

/** A request's parts, untyped (the typed ones: OperationRequest). */
interface UntypedParts {
  params?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: unknown;
  form?: FormData;
}

const RETRYABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT']);

/** The remote face of VideoService: any server speaking the API, over undici. */
export class RemoteService implements VideoService {
  private readonly base: string;

  constructor(private readonly opts: RemoteOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, '');
  }

  /**
   * One operation of the API by its operationId (./operations.ts, generated from the server's route
   * table), typed by its schemas: its path parameters, query and body in, its success body out.
   * Errors are the typed errors of src/api/errors.ts, with the retries every call gets (connection
   * errors, 429 and 503 honouring Retry-After, 502).
   */
  async request<K extends OperationId>(op: K, parts: OperationTypes[K]['request'] = {} as OperationTypes[K]['request']): Promise<OperationTypes[K]['response']> {
    return this.ok(await this.send(op, parts)) as OperationTypes[K]['response'];
  }

  /**
   * One operation as it came back, whatever its status (after the same retries): status, headers and
   * body (JSON parsed, else text; a file's bytes for file operations). `retries: 0` sends it once.
   */
  async send<K extends OperationId>(op: K, parts: OperationTypes[K]['request'] = {} as OperationTypes[K]['request'], opts: { retries?: number } = {}): Promise<RawResponse> {
    return this.sendParts(op, parts as UntypedParts, opts);
  }

  private async sendParts(op: OperationId, parts: UntypedParts, opts: { retries?: number } = {}): Promise<RawResponse> {
    const spec = (OPERATIONS as Record<string, { method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; path: string; file?: boolean }>)[op];
    if (!spec) throw new BadRequestError(`no such operation: ${String(op)}`);
    const { params, query, body, form } = parts;
    const path = spec.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const v = params?.[name];
      if (v === undefined || v === null) throw new BadRequestError(`${String(op)} needs the path parameter ${name}`);
      return encodeURIComponent(String(v));
    });
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v === undefined || v === null) continue;
      for (const item of Array.isArray(v) ? v : [v]) q.append(k, String(item));
    }
    return this.exchange(spec.method, `${path}${q.size ? `?${q}` : ''}`, body, form && (async () => form), { file: spec.file === true, retries: opts.retries });
  }

  /** The body of a success, or the typed error of a failure. */
  private ok(res: RawResponse): unknown {
    if (res.status >= 200 && res.status < 300) return res.body;
    throw errorFromResponse(res.status, res.body, headerValue(res.headers['retry-after']));
  }

  /** An operation of the table with its path parameters (the high-level methods' way in). */
  private async op<T>(op: OperationId, params: Record<string, string> | undefined, parts: { query?: Record<string, unknown>; body?: unknown } = {}): Promise<T> {
    return this.ok(await this.sendParts(op, { params, ...parts })) as T;
  }

  private async call<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, form?: () => Promise<FormData>): Promise<T> {
    return this.ok(await this.exchange(method, path, body, form)) as T;
  }

  /** One HTTP exchange, retried on connection errors and on 429, 502 and 503 (honouring Retry-After); the last answer as it came. */
  private async exchange(
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    path: string,
    body?: unknown,
    form?: () => Promise<FormData>,
    opts: { file?: boolean; retries?: number; raw?: () => RawBody } = {},
  ): Promise<RawResponse> {
    const retries = opts.retries ?? this.opts.retries ?? 4;
    for (let attempt = 0; ; attempt++) {
      let res: Dispatcher.ResponseData;
      try {
        const headers: Record<string, string> = {};
        if (this.opts.apiKey) headers['x-api-key'] = this.opts.apiKey;
        let payload: string | FormData | Readable | undefined;
        if (opts.raw) {
          const made = opts.raw();
          Object.assign(headers, made.headers);
          payload = made.body;
        } else if (form) payload = await form();
        else if (body !== undefined) {
          headers['content-type'] = 'application/json';
          payload = JSON.stringify(body);
        }
        res = await request(`${this.base}${path}`, {
          method,
          headers,
          body: payload,
          headersTimeout: this.opts.timeoutMs ?? 300_000,
          bodyTimeout: this.opts.timeoutMs ?? 300_000,
        });
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? '';
        if (attempt < retries && RETRYABLE_CODES.has(code)) {
          await sleep(backoff(attempt));
          continue;
        }
        throw new UpstreamError(`cannot reach ${this.base}: ${(err as Error).message}`);
      }
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      let parsed: unknown;
      if (ok && opts.file) parsed = Buffer.from(await res.body.arrayBuffer());
      else {
        const text = await res.body.text();
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          parsed = ok ? text : undefined;
        }
      }
      if (!ok && attempt < retries && (res.statusCode === 429 || res.statusCode === 502 || res.statusCode === 503)) {
        const err = errorFromResponse(res.statusCode, parsed, headerValue(res.headers['retry-after']));
        const wait = err instanceof RateLimitedError || err instanceof UnavailableError ? err.retryAfterSeconds * 1000 : backoff(attempt);
        await sleep(wait);
        continue;
      }
      return { method, path, status: res.statusCode, headers: res.headers, body: parsed };
    }
  }

  createCollection(req: CreateCollectionRequest): Promise<CreateCollectionResponse> {
    return this.op('createCollection', undefined, { body: req });
  }

  listCollections(req: ListCollectionsRequest = {}): Promise<CollectionSummary[]> {
    return this.op('listCollections', undefined, { query: { limit: req.limit, offset: req.offset } });
  }

  /** The API has no lookup by name, so this pages through the list (works with any server). */
  async getCollection(idOrName: string): Promise<CollectionSummary> {
    for (let offset = 0; ; offset += 1000) {
      const page = await this.listCollections({ limit: 1000, offset });
      const hit = page.find((c) => c.id === idOrName) ?? page.find((c) => c.name === idOrName);
      if (hit) return hit;
      if (page.length < 1000) throw new NotFoundError(`collection not found: ${idOrName}`);
    }
  }

  async reindexCollection(idOrName: string, opts: { all?: boolean } = {}): Promise<ReindexResponse> {
    const id = (await this.getCollection(idOrName)).id;
    return this.op('reindexCollection', { collection_id: id }, opts.all ? { query: { all: true } } : {});
  }

  async collectionDetails(idOrName: string): Promise<CollectionDetails> {
    const id = (await this.getCollection(idOrName)).id;
    return this.op('getCollection', { collection_id: id });
  }

  async updateCollection(idOrName: string, patch: UpdateCollectionRequest): Promise<CollectionSummary> {
    const id = (await this.getCollection(idOrName)).id;
    return this.op('updateCollection', { collection_id: id }, { body: stripUndefined(patch) });
  }

  async deleteCollection(idOrName: string): Promise<DeleteResponse> {
    const id = (await this.getCollection(idOrName)).id;
    return this.op('deleteCollection', { collection_id: id });
  }

  async listVideos(collectionIdOrName: string, req: ListVideosRequest = {}): Promise<VideoSummary[]> {
    const id = (await this.getCollection(collectionIdOrName)).id;
    return this.op('listVideos', { collection_id: id }, { query: { status: req.status || undefined, limit: req.limit, offset: req.offset } });
  }

  findVideos(req: FindVideosRequest): Promise<VideoSummary[]> {
    return this.op('findVideos', undefined, { query: { name: req.name, collection: req.collection } });
  }

  videoDetails(videoId: string): Promise<VideoDetails> {
    return this.op('getVideo', { video_id: videoId });
  }

  videoTranscript(videoId: string): Promise<TranscriptResponse> {
    return this.op('getVideoTranscript', { video_id: videoId });
  }

  deleteVideo(videoId: string): Promise<DeleteResponse> {
    return this.op('deleteVideo', { video_id: videoId });
  }

  reprocessVideo(videoId: string): Promise<VideoStatusResponse> {
    return this.op('reprocessVideo', { video_id: videoId });
  }

  async findDuplicates(collectionIdOrName: string, req: DuplicatesRequest = {}): Promise<DuplicatesResponse> {
    const id = (await this.getCollection(collectionIdOrName)).id;
    return this.op('findDuplicates', { collection_id: id }, { query: { min_similarity: req.min_similarity, segments: req.segments ? true : undefined } });
  }

  async scanLibrary(collectionIdOrName: string, req: LibraryScanRequest = {}): Promise<RescanResponse> {
    const id = (await this.getCollection(collectionIdOrName)).id;
    return this.op('libraryScan', { collection_id: id }, { body: req });
  }

  async listJobs(owner?: string): Promise<ListJobsResponse> {
    return this.op('listJobs', undefined, { query: { owner: owner || undefined } });
  }

  async cancelJob(jobId: string): Promise<CancelJobResponse> {
    return this.op('cancelJob', { job_id: jobId });
  }

  async uploadVideo(collectionId: string, file: IngestFile): Promise<UploadVideoResponse> {
    if (file.inPlace) {
      throw new BadRequestError(`a server reads no file of this machine in place: upload ${file.filename} without --in-place, or index a folder of the server's library (\`vidembed upload DIR --in-place\` names a folder under \`serve --library\`)`);
    }
    const st = await stat(file.path).catch(() => undefined);
    if (!st) throw new NotFoundError(`file not found: ${file.path}`);
    if (!st.isFile()) throw new BadRequestError(`${file.path} is a directory, not a video file`);
    const q = new URLSearchParams();
    if (file.force) q.set('force', 'true');
    if (file.skipDuplicates) q.set('skip_duplicates', 'true');
    const res = await this.exchange('POST', `/collections/${encodeURIComponent(collectionId)}/videos/upload${q.size ? `?${q}` : ''}`, undefined, undefined, {
      raw: () => multipartFile(file.path, file.filename, st.size, file.onProgress),
    });
    return this.ok(res) as UploadVideoResponse;
  }

  videoStatus(videoId: string): Promise<VideoStatusResponse> {
    return this.op('getVideoStatus', { video_id: videoId });
  }

  async search(collectionId: string, req: SearchRequest, opts: { explain?: boolean } = {}): Promise<SearchResponse> {
    const body: Record<string, unknown> = { ...req };
    for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
    // A picture on this machine travels as bytes: the server never reads client paths.
    if (typeof req.image_path === 'string') {
      delete body.image_path;
      body.image_base64 = (await readFile(req.image_path).catch(() => {
        throw new NotFoundError(`file not found: ${req.image_path}`);
      })).toString('base64');
    }
    if (opts.explain) body.explain = true;
    return this.op('searchCollection', { collection_id: collectionId }, { body });
  }

  encodeText(req: EncodeTextRequest): Promise<EncodeTextResponse> {
    return this.op('encodeText', undefined, { body: req });
  }

  async encodeVideo(req: EncodeVideoRequest): Promise<EncodeVideoResponse> {
    return this.op('encodeVideo', undefined, { body: await this.portable(req) });
  }

  async tagVideo(req: EncodeVideoRequest): Promise<TagVideoResponse> {
    return this.op('tagVideo', undefined, { body: await this.portable(req) });
  }

  async submitEmbeddingTask(req: AsyncSubmitRequest): Promise<AsyncSubmitResponse> {
    return this.submitTask('embedding', req);
  }

  async submitTask(kind: TaskKind, req: AsyncSubmitRequest): Promise<AsyncSubmitResponse> {
    return this.op(kind === 'embedding' ? 'submitEmbeddingTask' : 'submitTaggingTask', undefined, { body: await this.portable(req) });
  }

  taskStatus(requestId: string): Promise<AsyncStatusResponse> {
    return this.op('getTaskStatus', { request_id: requestId });
  }

  uploadTensors(req: TensorUploadRequest): Promise<TensorUploadResponse> {
    return this.op('uploadTensors', undefined, { body: req });
  }

  /**
   * Streams a video's original file (GET /videos/{id}/file) into `file`, never holding it in memory;
   * the same errors and retries as every call (a partly written file is overwritten on a retry).
   */
  async downloadVideo(videoId: string, file: string): Promise<void> {
    const path = OPERATIONS.getVideoFile.path.replace('{video_id}', encodeURIComponent(videoId));
    const retries = this.opts.retries ?? 4;
    for (let attempt = 0; ; attempt++) {
      let res: Dispatcher.ResponseData;
      try {
        res = await request(`${this.base}${path}`, { method: 'GET', headers: this.opts.apiKey ? { 'x-api-key': this.opts.apiKey } : {}, headersTimeout: this.opts.timeoutMs ?? 300_000, bodyTimeout: this.opts.timeoutMs ?? 300_000 });
      } catch (err) {
        if (attempt < retries && RETRYABLE_CODES.has((err as NodeJS.ErrnoException).code ?? '')) {
          await sleep(backoff(attempt));
          continue;
        }
        throw new UpstreamError(`cannot reach ${this.base}: ${(err as Error).message}`);
      }
      if (res.statusCode >= 200 && res.statusCode < 300) {
        await pipeline(res.body, createWriteStream(file));
        return;
      }
      const text = await res.body.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      const err = errorFromResponse(res.statusCode, parsed, headerValue(res.headers['retry-after']));
      if (attempt < retries && (res.statusCode === 429 || res.statusCode === 502 || res.statusCode === 503)) {
        await sleep(err instanceof RateLimitedError || err instanceof UnavailableError ? err.retryAfterSeconds * 1000 : backoff(attempt));
        continue;
      }
      throw err;
    }
  }

  // ---- webhooks (issue 34) -----------------------------------------------------------------

  createWebhook(req: CreateWebhookRequest): Promise<CreateWebhookResponse> {
    return this.op('createWebhook', undefined, { body: stripUndefined(req) });
  }

  listWebhooks(): Promise<ListWebhooksResponse> {
    return this.op('listWebhooks', undefined);
  }

  getWebhook(webhookId: string): Promise<WebhookSummary> {
    return this.op('getWebhook', { webhook_id: webhookId });
  }

  deleteWebhook(webhookId: string): Promise<DeleteWebhookResponse> {
    return this.op('deleteWebhook', { webhook_id: webhookId });
  }

  testWebhook(webhookId: string): Promise<TestWebhookResponse> {
    return this.op('testWebhook', { webhook_id: webhookId });
  }

  webhookDeliveries(webhookId: string, req: WebhookDeliveriesRequest = {}): Promise<WebhookDeliveriesResponse> {
    return this.op('listWebhookDeliveries', { webhook_id: webhookId }, { query: { limit: req.limit, offset: req.offset } });
  }

  /** A local path means nothing to a server: send the bytes instead. */
  private async portable<T extends EncodeVideoRequest>(req: T): Promise<T> {
    if (!req.video_path) return stripUndefined(req);
    const { video_path, ...rest } = req;
    const st = await stat(video_path).catch(() => undefined);
    if (!st) throw new NotFoundError(`file not found: ${video_path}`);
    if (!st.isFile()) throw new BadRequestError(`${video_path} is not a file`);
    return stripUndefined({ ...rest, video_base64: (await readFile(video_path)).toString('base64') } as T);
  }

  async close(): Promise<void> {}
}

interface RawBody {
  headers: Record<string, string>;
  body: Readable;
}

/**
 * One part named "file" holding the file, streamed from disk (a 2 GB file is never held in memory),
 * with its length known up front. `onProgress` hears the file's bytes as the connection takes them
 * (undici pulls the stream as the socket drains), so progress is what was sent, not what was read
 * ahead. The file name is escaped as undici's FormData does.
 */
export function multipartFile(file: string, filename: string, size: number, onProgress?: (bytes: number) => void): RawBody {
  const boundary = `----vidembed-${randomBytes(16).toString('hex')}`;
  const name = filename.replace(/\n/g, '%0A').replace(/\r/g, '%0D').replace(/"/g, '%22');
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  async function* parts(): AsyncGenerator<Buffer> {
    yield head;
    let sent = 0;
    onProgress?.(0);
    for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024 })) {
      yield chunk as Buffer;
      // Resumed here once the connection has taken the chunk.
      sent += (chunk as Buffer).length;
      onProgress?.(sent);
    }
    yield tail;
  }
  return {
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + size + tail.length) },
    body: Readable.from(parts(), { objectMode: false, highWaterMark: 64 * 1024 }),
  };
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

function backoff(attempt: number): number {
  return Math.min(8000, 250 * 2 ** attempt) + Math.floor(Math.random() * 100);
}

function headerValue(h: string | string[] | undefined): string | undefined {
  return Array.isArray(h) ? h[0] : h;
}


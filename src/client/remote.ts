import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { readFile, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { request, type Dispatcher } from 'undici';
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
} from '../api/types.js';
import { errorFromResponse } from './http-errors.js';

export interface RemoteOptions {
  baseUrl: string;
  apiKey?: string;
  /** Retries on 429 and 503 (honouring Retry-After), 502 and connection errors. */
  retries?: number;
  timeoutMs?: number;
}

const RETRYABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT']);

/** The remote face of VideoService: any server speaking the API, over undici. */
export class RemoteService implements VideoService {
  private readonly base: string;

  constructor(private readonly opts: RemoteOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, '');
  }

  private async call<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, raw?: () => RawBody): Promise<T> {
    const retries = this.opts.retries ?? 4;
    for (let attempt = 0; ; attempt++) {
      let res: Dispatcher.ResponseData;
      try {
        const headers: Record<string, string> = {};
        if (this.opts.apiKey) headers['x-api-key'] = this.opts.apiKey;
        let payload: string | Readable | undefined;
        if (raw) {
          const made = raw();
          Object.assign(headers, made.headers);
          payload = made.body;
        } else if (body !== undefined) {
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
      const text = await res.body.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      if (res.statusCode >= 200 && res.statusCode < 300) return parsed as T;
      const retryAfter = headerValue(res.headers['retry-after']);
      const err = errorFromResponse(res.statusCode, parsed, retryAfter);
      if (attempt < retries && (res.statusCode === 429 || res.statusCode === 502 || res.statusCode === 503)) {
        const wait = err instanceof RateLimitedError || err instanceof UnavailableError ? err.retryAfterSeconds * 1000 : backoff(attempt);
        await sleep(wait);
        continue;
      }
      throw err;
    }
  }

  createCollection(req: CreateCollectionRequest): Promise<CreateCollectionResponse> {
    return this.call('POST', '/collections', req);
  }

  listCollections(req: ListCollectionsRequest = {}): Promise<CollectionSummary[]> {
    const q = new URLSearchParams();
    if (req.limit !== undefined) q.set('limit', String(req.limit));
    if (req.offset !== undefined) q.set('offset', String(req.offset));
    return this.call('GET', `/collections${q.size ? `?${q}` : ''}`);
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

  async reindexCollection(idOrName: string): Promise<ReindexResponse> {
    const id = (await this.getCollection(idOrName)).id;
    return this.call('POST', `/collections/${encodeURIComponent(id)}/reindex`);
  }

  async collectionDetails(idOrName: string): Promise<CollectionDetails> {
    const id = (await this.getCollection(idOrName)).id;
    return this.call('GET', `/collections/${encodeURIComponent(id)}`);
  }

  async updateCollection(idOrName: string, patch: UpdateCollectionRequest): Promise<CollectionSummary> {
    const id = (await this.getCollection(idOrName)).id;
    return this.call('PATCH', `/collections/${encodeURIComponent(id)}`, stripUndefined(patch));
  }

  async deleteCollection(idOrName: string): Promise<DeleteResponse> {
    const id = (await this.getCollection(idOrName)).id;
    return this.call('DELETE', `/collections/${encodeURIComponent(id)}`);
  }

  async listVideos(collectionIdOrName: string, req: ListVideosRequest = {}): Promise<VideoSummary[]> {
    const id = (await this.getCollection(collectionIdOrName)).id;
    const q = new URLSearchParams();
    if (req.status) q.set('status', req.status);
    if (req.limit !== undefined) q.set('limit', String(req.limit));
    if (req.offset !== undefined) q.set('offset', String(req.offset));
    return this.call('GET', `/collections/${encodeURIComponent(id)}/videos${q.size ? `?${q}` : ''}`);
  }

  findVideos(req: FindVideosRequest): Promise<VideoSummary[]> {
    const q = new URLSearchParams({ name: req.name });
    if (req.collection) q.set('collection', req.collection);
    return this.call('GET', `/videos?${q}`);
  }

  videoDetails(videoId: string): Promise<VideoDetails> {
    return this.call('GET', `/videos/${encodeURIComponent(videoId)}`);
  }

  videoTranscript(videoId: string): Promise<TranscriptResponse> {
    return this.call('GET', `/videos/${encodeURIComponent(videoId)}/transcript`);
  }

  deleteVideo(videoId: string): Promise<DeleteResponse> {
    return this.call('DELETE', `/videos/${encodeURIComponent(videoId)}`);
  }

  reprocessVideo(videoId: string): Promise<VideoStatusResponse> {
    return this.call('POST', `/videos/${encodeURIComponent(videoId)}/reprocess`);
  }

  async findDuplicates(collectionIdOrName: string, req: DuplicatesRequest = {}): Promise<DuplicatesResponse> {
    const id = (await this.getCollection(collectionIdOrName)).id;
    const q = new URLSearchParams();
    if (req.min_similarity !== undefined) q.set('min_similarity', String(req.min_similarity));
    if (req.segments) q.set('segments', 'true');
    return this.call('GET', `/collections/${encodeURIComponent(id)}/duplicates${q.size ? `?${q}` : ''}`);
  }

  async scanLibrary(collectionIdOrName: string, req: LibraryScanRequest = {}): Promise<RescanResponse> {
    const id = (await this.getCollection(collectionIdOrName)).id;
    return this.call('POST', `/collections/${encodeURIComponent(id)}/library-scan`, req);
  }

  async listJobs(owner?: string): Promise<ListJobsResponse> {
    return this.call('GET', `/jobs${owner ? `?${new URLSearchParams({ owner })}` : ''}`);
  }

  async cancelJob(jobId: string): Promise<CancelJobResponse> {
    return this.call('POST', `/jobs/${encodeURIComponent(jobId)}/cancel`);
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
    return this.call('POST', `/collections/${encodeURIComponent(collectionId)}/videos/upload${q.size ? `?${q}` : ''}`, undefined, () =>
      multipartFile(file.path, file.filename, st.size, file.onProgress),
    );
  }

  videoStatus(videoId: string): Promise<VideoStatusResponse> {
    return this.call('GET', `/videos/${encodeURIComponent(videoId)}/status`);
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
    return this.call('POST', `/collections/${encodeURIComponent(collectionId)}/search`, body);
  }

  encodeText(req: EncodeTextRequest): Promise<EncodeTextResponse> {
    return this.call('POST', '/video_embedding/encode_text', req);
  }

  async encodeVideo(req: EncodeVideoRequest): Promise<EncodeVideoResponse> {
    return this.call('POST', '/video_embedding/encode_video', await this.portable(req));
  }

  async tagVideo(req: EncodeVideoRequest): Promise<TagVideoResponse> {
    return this.call('POST', '/video_tagging', await this.portable(req));
  }

  async submitEmbeddingTask(req: AsyncSubmitRequest): Promise<AsyncSubmitResponse> {
    return this.submitTask('embedding', req);
  }

  async submitTask(kind: TaskKind, req: AsyncSubmitRequest): Promise<AsyncSubmitResponse> {
    const path = kind === 'embedding' ? '/video_embedding/encode_video/async' : '/video_tagging/async';
    return this.call('POST', path, await this.portable(req));
  }

  taskStatus(requestId: string): Promise<AsyncStatusResponse> {
    return this.call('GET', `/async_status/${encodeURIComponent(requestId)}`);
  }

  uploadTensors(req: TensorUploadRequest): Promise<TensorUploadResponse> {
    return this.call('POST', '/files/upload/tensors', req);
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


/**
 * A blob store in an S3-compatible bucket (AWS S3, MinIO, Cloudflare R2, Ceph, s3rver): a small
 * AWS Signature V4 client on node:http(s) and node:crypto, no SDK. Requests are signed with the
 * payload's SHA-256; bodies are Buffers of at most one part, so memory stays at
 * `partSize × partConcurrency` whatever the size of the video.
 *
 * - put/putFile: one PUT up to `partSize` (16 MiB), else a multipart upload of `partSize` parts
 *   (grown for a known size so that 10,000 parts hold it), aborted when a part fails.
 * - get/stream: GET (stream with an optional byte range); has: HEAD.
 * - localFile: GET into a fresh directory under os.tmpdir(); `release` removes it.
 * - deletePrefix: ListObjectsV2 pages under `prefix/` and a DeleteObjects per page.
 *
 * Errors name the operation, the key and the HTTP status with S3's code and message, never the
 * credentials. Transient failures (HTTP 500/502/503/504, a reset connection) are retried a few
 * times before a response is handed to the caller.
 */
import { createHash, createHmac } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm, stat, unlink } from 'node:fs/promises';
import type http from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, pipeline as pipelineCb, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobNotFoundError, checkBlobKey, type BlobStore } from './blobs.js';
import { makeTempDir } from '../util/temp.js';

/**
 * node:http and node:https, loaded on the first request: every CLI command imports this module
 * (src/config.ts opens the blob store), and loading https (with tls) cost each of them time.
 */
const nodeRequire = createRequire(import.meta.url);
const transportFor = (protocol: string): typeof http => nodeRequire(protocol === 'https:' ? 'node:https' : 'node:http') as typeof http;

const MiB = 1024 ** 2;
/** The smallest part this store uploads (S3's own floor is 5 MiB for every part but the last). */
export const MIN_PART_SIZE = 8 * MiB;
export const DEFAULT_PART_SIZE = 16 * MiB;
/** S3 numbers parts 1–10,000. */
export const MAX_PARTS = 10_000;
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** Temporary credentials (STS) come with a session token, sent as x-amz-security-token. */
  sessionToken?: string;
}

export interface S3BlobStoreOptions {
  /** `https://s3.us-east-1.amazonaws.com`, `http://127.0.0.1:9000`, `https://<account>.r2.cloudflarestorage.com`. */
  endpoint: string;
  bucket: string;
  /** Keys are stored under `prefix/` in the bucket (no leading or trailing slash); none: at the top. */
  prefix?: string;
  region: string;
  credentials: S3Credentials;
  /** `endpoint/bucket/key` (MinIO, s3rver, most self-hosted servers) instead of `bucket.endpoint/key`. */
  pathStyle: boolean;
  /** Bytes per part of a multipart upload, and the largest single PUT; at least 8 MiB. */
  partSize?: number;
  /** Parts uploaded at once (memory: partSize × this). */
  partConcurrency?: number;
  /** Keys per ListObjectsV2 page (1–1000). */
  listPageSize?: number;
  /** A request whose connection says nothing for this long fails. */
  timeoutMs?: number;
  /** Attempts of a request that fails transiently (5xx, reset connection); 1: no retry. */
  attempts?: number;
}

/** An S3 request that failed: the operation, the key, the HTTP status and S3's error code. */
export class S3RequestError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly s3Code: string | undefined,
  ) {
    super(message);
    this.name = 'S3RequestError';
  }
}

// ---- Signature V4 -----------------------------------------------------------------------------

/** RFC 3986 encoding as SigV4 wants it: everything but A–Z a–z 0–9 - . _ ~ as %XX (upper case). */
export function uriEncode(s: string, keepSlash = false): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-._~]/.test(c) || (keepSlash && c === '/')) out += c;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The canonical query string: names and values encoded, sorted by name then value; `name=` for a bare name. */
export function canonicalQuery(query: [string, string][]): string {
  return query
    .map(([k, v]) => [uriEncode(k), uriEncode(v)])
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

export interface SigningInput {
  method: string;
  /** The request's path, already URI-encoded (S3 signs it as sent, without encoding it again). */
  path: string;
  query: [string, string][];
  /**
   * Every header to sign, `host` and `x-amz-date` and `x-amz-content-sha256` among them. As pairs, a
   * name may repeat: its values are signed joined by commas in the order given.
   */
  headers: Record<string, string> | [string, string][];
  payloadHash: string;
  /** `YYYYMMDDTHHMMSSZ`, the value of x-amz-date. */
  amzDate: string;
  region: string;
  service?: string;
  /**
   * The generic services' rule: dot segments and repeated slashes removed from the path before it
   * is signed. S3 signs the path as sent (false, the default).
   */
  normalizePath?: boolean;
}

/** RFC 3986 remove_dot_segments plus empty segments dropped; the trailing slash is kept. */
function normalizedPath(p: string): string {
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  const tail = out.length > 0 && /\/\.{0,2}$/.test(p) ? '/' : '';
  return `/${out.join('/')}${tail}`;
}

/** A SigV4 signature's steps: the canonical request, the string to sign, the Authorization header. */
export function signV4Steps(input: SigningInput, creds: S3Credentials): { canonicalRequest: string; stringToSign: string; authorization: string } {
  const service = input.service ?? 's3';
  const byName = new Map<string, string[]>();
  for (const [k, v] of Array.isArray(input.headers) ? input.headers : Object.entries(input.headers)) {
    const name = k.toLowerCase();
    byName.set(name, [...(byName.get(name) ?? []), v.trim().replace(/\s+/g, ' ')]);
  }
  const headers = [...byName]
    .map(([k, vs]) => [k, vs.join(',')] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const signedHeaders = headers.map(([k]) => k).join(';');
  const canonicalRequest = [
    input.method,
    input.normalizePath ? normalizedPath(input.path) : input.path,
    canonicalQuery(input.query),
    headers.map(([k, v]) => `${k}:${v}\n`).join(''),
    signedHeaders,
    input.payloadHash,
  ].join('\n');
  const day = input.amzDate.slice(0, 8);
  const scope = `${day}/${input.region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', input.amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${creds.secretAccessKey}`, day), input.region), service), 'aws4_request');
  const signature = createHmac('sha256', key).update(stringToSign).digest('hex');
  const authorization = `AWS4-HMAC-SHA256 Credential=${creds.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return { canonicalRequest, stringToSign, authorization };
}

/** The Authorization header of an AWS Signature Version 4 request. */
export function signV4(input: SigningInput, creds: S3Credentials): string {
  return signV4Steps(input, creds).authorization;
}

const amzDateOf = (d: Date) => d.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');

// ---- XML, just enough -------------------------------------------------------------------------

function xmlDecode(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|amp|lt|gt|quot|apos);/g, (_, e: string) =>
    e === 'amp' ? '&' : e === 'lt' ? '<' : e === 'gt' ? '>' : e === 'quot' ? '"' : e === 'apos' ? "'" : String.fromCodePoint(e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10)),
  );
}
const xmlEncode = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
function xmlAll(xml: string, tag: string): string[] {
  const re = new RegExp(`<${tag}(?:\\s[^>]*)?>([\\s\\S]*?)</${tag}>`, 'g');
  return [...xml.matchAll(re)].map((m) => m[1]);
}
const xmlOne = (xml: string, tag: string): string | undefined => {
  const v = xmlAll(xml, tag)[0];
  return v === undefined ? undefined : xmlDecode(v);
};

// ---- the store --------------------------------------------------------------------------------

interface Request {
  method: 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE';
  /** A key of this store (prefixed here), or undefined for the bucket itself. */
  key?: string;
  query?: [string, string][];
  body?: Buffer;
  headers?: Record<string, string>;
  /** What the error says is being done: `GET videos/a.mp4`. */
  what: string;
  /** The body is handed to a reader that may pause: no idle timeout once the answer has begun. */
  streaming?: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TRANSIENT = new Set([500, 502, 503, 504]);

export class S3BlobStore implements BlobStore {
  private readonly endpoint: URL;
  private readonly prefix: string;
  readonly partSize: number;
  private readonly partConcurrency: number;
  private readonly listPageSize: number;
  private readonly timeoutMs: number;
  private readonly attempts: number;

  constructor(private readonly opts: S3BlobStoreOptions) {
    let url: URL;
    try {
      url = new URL(opts.endpoint);
    } catch {
      throw new Error(`S3 endpoint is not a URL: ${opts.endpoint}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`S3 endpoint must be http:// or https://, got ${opts.endpoint}`);
    if (url.search || url.username || url.password) throw new Error('S3 endpoint takes no query or user info (credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)');
    this.endpoint = url;
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(opts.bucket)) throw new Error(`bad S3 bucket name: ${opts.bucket}`);
    const prefix = (opts.prefix ?? '').replace(/^\/+|\/+$/g, '');
    if (prefix !== '') checkBlobKey(prefix);
    this.prefix = prefix === '' ? '' : `${prefix}/`;
    this.partSize = opts.partSize ?? DEFAULT_PART_SIZE;
    if (!Number.isInteger(this.partSize) || this.partSize < MIN_PART_SIZE) throw new Error(`S3 part size must be at least ${MIN_PART_SIZE} bytes (8 MiB)`);
    this.partConcurrency = Math.max(1, opts.partConcurrency ?? 4);
    this.listPageSize = Math.min(1000, Math.max(1, opts.listPageSize ?? 1000));
    this.timeoutMs = opts.timeoutMs ?? 120_000;
    this.attempts = Math.max(1, opts.attempts ?? 4);
  }

  /** Where this store's blobs are, for messages: `s3://bucket/prefix` (never credentials). */
  get location(): string {
    return `s3://${this.opts.bucket}/${this.prefix}`;
  }

  // ---- BlobStore ----

  async put(key: string, data: Buffer | Readable): Promise<void> {
    checkBlobKey(key);
    if (Buffer.isBuffer(data) && data.length <= this.partSize) return this.putObject(key, data);
    await this.upload(key, Buffer.isBuffer(data) ? [data] : data, Buffer.isBuffer(data) ? data.length : undefined);
  }

  async putFile(key: string, file: string, opts: { move?: boolean } = {}): Promise<void> {
    checkBlobKey(key);
    const { size } = await stat(file);
    await this.upload(key, createReadStream(file, { highWaterMark: MiB }), size);
    if (opts.move) await unlink(file).catch(() => {});
  }

  async localFile(key: string): Promise<{ path: string; release(): Promise<void> }> {
    checkBlobKey(key);
    const dir = await makeTempDir('blob');
    const release = () => rm(dir, { recursive: true, force: true });
    const file = path.join(dir, path.basename(key));
    try {
      await pipeline(this.stream(key), createWriteStream(file));
    } catch (e) {
      await release();
      throw e;
    }
    return { path: file, release };
  }

  async delete(key: string): Promise<void> {
    checkBlobKey(key);
    // S3 answers 204 for a key that is not there; some servers say 404 NoSuchKey (a missing bucket stays an error).
    const res = await this.request({ method: 'DELETE', key, what: `DELETE ${key}` }, [200, 204]).catch((e: unknown) => {
      if (e instanceof BlobNotFoundError) return undefined;
      throw e;
    });
    res?.resume();
  }

  async get(key: string): Promise<Buffer> {
    checkBlobKey(key);
    return readAll(await this.request({ method: 'GET', key, what: `GET ${key}` }));
  }

  async has(key: string): Promise<boolean> {
    checkBlobKey(key);
    const res = await this.request({ method: 'HEAD', key, what: `HEAD ${key}` }, [200, 404]);
    res.resume();
    return res.statusCode === 200;
  }

  stream(key: string, range?: { start: number; end?: number }): Readable {
    checkBlobKey(key);
    const out = new PassThrough();
    const headers: Record<string, string> = range ? { range: `bytes=${range.start}-${range.end ?? ''}` } : {};
    this.request({ method: 'GET', key, headers, what: `GET ${key}`, streaming: true }, range ? [200, 206] : [200]).then(
      (res) => pipelineCb(res, out, () => {}),
      (e: unknown) => out.destroy(e as Error),
    );
    return out;
  }

  async deletePrefix(prefix: string): Promise<void> {
    checkBlobKey(prefix);
    await this.delete(prefix);
    let token: string | undefined;
    do {
      const page = await this.listPage(`${prefix}/`, token);
      if (page.keys.length > 0) await this.deleteKeys(page.keys);
      token = page.next;
    } while (token !== undefined);
  }

  async *listUnder(prefix: string): AsyncGenerator<{ key: string; modifiedMs: number }> {
    for await (const e of this.entries(`${checkBlobKey(prefix)}/`)) yield { key: e.key, modifiedMs: e.modified };
  }

  async bytesUnder(prefix: string): Promise<number> {
    // The key itself, if there is one, comes first in S3's order among the keys starting so.
    const first = await this.listPage(checkBlobKey(prefix));
    let n = first.keys[0] === prefix ? first.sizes[0] : 0;
    for await (const e of this.entries(`${prefix}/`)) n += e.size;
    return n;
  }

  // ---- beyond the interface ----

  /** Every key under `prefix` (a key prefix as given, `thumbs/` or `thumbs/ab`), in S3's order. */
  async *list(prefix = ''): AsyncGenerator<string> {
    for await (const e of this.entries(prefix)) yield e.key;
  }

  /** Every object whose key starts with `prefix`, with its size and write time, across listing pages. */
  private async *entries(prefix: string): AsyncGenerator<{ key: string; size: number; modified: number }> {
    let token: string | undefined;
    do {
      const page = await this.listPage(prefix, token);
      for (const [i, key] of page.keys.entries()) yield { key, size: page.sizes[i], modified: page.modified[i] };
      token = page.next;
    } while (token !== undefined);
  }

  // ---- S3 calls ----

  private async putObject(key: string, body: Buffer): Promise<void> {
    (await this.request({ method: 'PUT', key, body, what: `PUT ${key}` })).resume();
  }

  /**
   * Uploads a source of unknown or known length: one PUT if it fits in a part, else a multipart
   * upload with up to `partConcurrency` parts in flight. A failure aborts the upload (best effort:
   * the bucket's lifecycle rule for incomplete uploads is the backstop).
   */
  private async upload(key: string, source: AsyncIterable<Buffer | string> | Iterable<Buffer>, size?: number): Promise<void> {
    const partSize = size === undefined ? this.partSize : Math.max(this.partSize, Math.ceil(size / MAX_PARTS / MiB) * MiB);
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const take = (n: number): Buffer => {
      const all = pending.length === 1 ? pending[0] : Buffer.concat(pending, pendingBytes);
      const part = all.subarray(0, n);
      pending = all.length > n ? [all.subarray(n)] : [];
      pendingBytes = all.length - n;
      return part;
    };
    let uploadId: string | undefined;
    const etags: string[] = [];
    const inflight: Promise<void>[] = [];
    let parts = 0;
    const send = async (body: Buffer) => {
      const n = ++parts;
      if (n > MAX_PARTS) throw new Error(`PUT ${key}: more than ${MAX_PARTS} parts of ${partSize / MiB} MiB; raise the part size`);
      uploadId ??= await this.createMultipart(key);
      const id = uploadId;
      const p = this.uploadPart(key, id, n, body).then((etag) => {
        etags[n - 1] = etag;
      });
      p.catch(() => {}); // awaited below; a rejection before then is not unhandled
      inflight.push(p);
      if (inflight.length >= this.partConcurrency) await inflight.shift();
    };
    try {
      for await (const chunk of source) {
        const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        pending.push(buf);
        pendingBytes += buf.length;
        // A part leaves only when more bytes follow it, so a blob of at most one part is one PUT.
        while (pendingBytes > partSize) await send(take(partSize));
      }
      const rest = take(pendingBytes);
      if (uploadId === undefined && parts === 0) return await this.putObject(key, rest);
      await send(rest);
      while (inflight.length > 0) await inflight.shift();
      await this.completeMultipart(key, uploadId!, etags);
    } catch (e) {
      await Promise.allSettled(inflight);
      if (uploadId !== undefined) await this.abortMultipart(key, uploadId).catch(() => {});
      throw e;
    }
  }

  private async createMultipart(key: string): Promise<string> {
    const xml = (await readAll(await this.request({ method: 'POST', key, query: [['uploads', '']], what: `PUT ${key} (start multipart upload)` }))).toString();
    const id = xmlOne(xml, 'UploadId');
    if (!id) throw new S3RequestError(`PUT ${key} (start multipart upload): no UploadId in the answer`, 200, undefined);
    return id;
  }

  private async uploadPart(key: string, uploadId: string, n: number, body: Buffer): Promise<string> {
    const res = await this.request({ method: 'PUT', key, body, query: [['partNumber', String(n)], ['uploadId', uploadId]], what: `PUT ${key} (part ${n})` });
    res.resume();
    const etag = res.headers.etag;
    if (!etag) throw new S3RequestError(`PUT ${key} (part ${n}): no ETag in the answer`, res.statusCode, undefined);
    return etag;
  }

  private async completeMultipart(key: string, uploadId: string, etags: string[]): Promise<void> {
    const body = Buffer.from(
      `<CompleteMultipartUpload>${etags.map((e, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${xmlEncode(e)}</ETag></Part>`).join('')}</CompleteMultipartUpload>`,
    );
    const what = `PUT ${key} (complete multipart upload)`;
    const xml = (await readAll(await this.request({ method: 'POST', key, body, query: [['uploadId', uploadId]], headers: { 'content-type': 'application/xml' }, what }))).toString();
    // S3 can answer 200 and still fail: the error is in the body.
    if (/<Error>/.test(xml)) throw new S3RequestError(`${what}: HTTP 200 ${xmlOne(xml, 'Code') ?? ''}: ${xmlOne(xml, 'Message') ?? ''}`, 200, xmlOne(xml, 'Code'));
  }

  private async abortMultipart(key: string, uploadId: string): Promise<void> {
    const res = await this.request({ method: 'DELETE', key, query: [['uploadId', uploadId]], what: `PUT ${key} (abort multipart upload)` }, [200, 204, 404], 1);
    res.resume();
  }

  private async listPage(prefix: string, token?: string): Promise<{ keys: string[]; sizes: number[]; modified: number[]; next?: string }> {
    const query: [string, string][] = [
      ['list-type', '2'],
      ['max-keys', String(this.listPageSize)],
      ['prefix', this.prefix + prefix],
    ];
    if (token !== undefined) query.push(['continuation-token', token]);
    const xml = (await readAll(await this.request({ method: 'GET', query, what: `LIST ${prefix}` }))).toString();
    const entries = xmlAll(xml, 'Contents')
      .map((c) => ({ key: xmlOne(c, 'Key'), size: Number(xmlOne(c, 'Size') ?? 0), modified: Date.parse(xmlOne(c, 'LastModified') ?? '') || 0 }))
      .filter((e): e is { key: string; size: number; modified: number } => e.key !== undefined && e.key.startsWith(this.prefix));
    const keys = entries.map((e) => e.key.slice(this.prefix.length));
    const sizes = entries.map((e) => e.size);
    const modified = entries.map((e) => e.modified);
    const next = xmlOne(xml, 'IsTruncated') === 'true' ? xmlOne(xml, 'NextContinuationToken') : undefined;
    if (xmlOne(xml, 'IsTruncated') === 'true' && !next) throw new S3RequestError(`LIST ${prefix}: truncated page without a continuation token`, 200, undefined);
    return { keys, sizes, modified, next };
  }

  private async deleteKeys(keys: string[]): Promise<void> {
    const body = Buffer.from(`<Delete><Quiet>true</Quiet>${keys.map((k) => `<Object><Key>${xmlEncode(this.prefix + k)}</Key></Object>`).join('')}</Delete>`);
    const what = `DELETE ${keys.length} keys (${keys[0]}…)`;
    const headers = { 'content-md5': createHash('md5').update(body).digest('base64'), 'content-type': 'application/xml' };
    const xml = (await readAll(await this.request({ method: 'POST', query: [['delete', '']], body, headers, what }))).toString();
    const failed = xmlAll(xml, 'Error');
    if (failed.length > 0) {
      const [first] = failed;
      const key = (xmlOne(first, 'Key') ?? '').slice(this.prefix.length);
      throw new S3RequestError(`DELETE ${key}: ${xmlOne(first, 'Code') ?? 'error'}: ${xmlOne(first, 'Message') ?? ''} (${failed.length} of ${keys.length} keys not deleted)`, 200, xmlOne(first, 'Code'));
    }
  }

  // ---- HTTP ----

  /**
   * Sends a signed request; answers with the response when its status is one of `ok`, else throws
   * an S3RequestError naming `what`, the status and S3's code. Retries transient failures.
   */
  private async request(req: Request, ok: number[] = [200], attempts = this.attempts): Promise<http.IncomingMessage> {
    for (let attempt = 1; ; attempt++) {
      let res: http.IncomingMessage;
      try {
        res = await this.send(req);
      } catch (e) {
        if (attempt < attempts) {
          await sleep(200 * 2 ** (attempt - 1));
          continue;
        }
        const err = e as NodeJS.ErrnoException;
        throw new S3RequestError(`${req.what}: cannot reach ${this.endpoint.origin}: ${err.code ?? err.message}`, undefined, undefined);
      }
      const status = res.statusCode ?? 0;
      if (ok.includes(status)) return res;
      if (TRANSIENT.has(status) && attempt < attempts) {
        res.resume();
        await sleep(200 * 2 ** (attempt - 1));
        continue;
      }
      const xml = req.method === 'HEAD' ? '' : (await readAll(res).catch(() => Buffer.alloc(0))).toString();
      const code = xmlOne(xml, 'Code') ?? (status === 404 ? 'NoSuchKey' : status === 403 ? 'AccessDenied' : undefined);
      if (status === 404 && code === 'NoSuchKey' && req.key !== undefined) throw new BlobNotFoundError(req.key);
      const message = xmlOne(xml, 'Message');
      const hint = status === 403 ? ` (check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY and the bucket's permissions)` : '';
      throw new S3RequestError(`${req.what}: HTTP ${status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''} at ${this.location}${hint}`, status, code);
    }
  }

  private send(req: Request): Promise<http.IncomingMessage> {
    const base = this.endpoint.pathname.replace(/\/+$/, '');
    const objectPath = req.key === undefined ? '' : `/${uriEncode(this.prefix + req.key, true)}`;
    const host = this.opts.pathStyle ? this.endpoint.host : `${this.opts.bucket}.${this.endpoint.host}`;
    const reqPath = this.opts.pathStyle ? `${base}/${this.opts.bucket}${objectPath}` : `${base}${objectPath || '/'}`;
    const query = req.query ?? [];
    const body = req.body;
    const amzDate = amzDateOf(new Date());
    const payloadHash = body ? sha256Hex(body) : EMPTY_SHA256;
    const headers: Record<string, string> = {
      ...req.headers,
      host,
      'x-amz-date': amzDate,
      'x-amz-content-sha256': payloadHash,
    };
    if (this.opts.credentials.sessionToken) headers['x-amz-security-token'] = this.opts.credentials.sessionToken;
    const authorization = signV4({ method: req.method, path: reqPath, query, headers, payloadHash, amzDate, region: this.opts.region }, this.opts.credentials);
    const qs = canonicalQuery(query);
    const transport = transportFor(this.endpoint.protocol);
    return new Promise((resolve, reject) => {
      const r = transport.request(
        {
          protocol: this.endpoint.protocol,
          // Virtual-hosted style: the bucket's own host name (DNS and TLS name alike).
          hostname: this.opts.pathStyle ? this.endpoint.hostname : `${this.opts.bucket}.${this.endpoint.hostname}`,
          port: this.endpoint.port || undefined,
          method: req.method,
          path: qs ? `${reqPath}?${qs}` : reqPath,
          headers: { ...headers, authorization, 'content-length': String(body?.length ?? 0) },
        },
        (res) => {
          // A stream's reader may pause for long (ffmpeg, a slow client): the timeout is for the answer.
          if (req.streaming) r.setTimeout(0);
          resolve(res);
        },
      );
      r.setTimeout(this.timeoutMs, () => r.destroy(Object.assign(new Error(`no answer in ${this.timeoutMs} ms`), { code: 'ETIMEDOUT' })));
      r.on('error', reject);
      r.end(body);
    });
  }
}

async function readAll(res: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

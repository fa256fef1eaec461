/**
 * The blob store's behaviour, the same checks on a directory (LocalBlobStore) and on a real
 * S3-compatible server (s3rver on 127.0.0.1, S3BlobStore): bytes in and out by buffer, stream,
 * range and file, local files, deletes by key and by prefix across listing pages, bad and missing
 * keys. Then what only the S3 store does: multipart uploads (seen through a counting proxy),
 * retries, aborts, wrong credentials, Signature V4 against AWS's published examples, and the
 * VIDEMBED_STORAGE_URL factory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBlobStore, pathsFor, s3StoreOptions } from '../../src/config.js';
import { BlobNotFoundError, LocalBlobStore, type BlobStore } from '../../src/store/blobs.js';
import { S3BlobStore, canonicalQuery, signV4, uriEncode, type S3BlobStoreOptions } from '../../src/store/s3-blobs.js';
import { asUnavailable } from '../../src/store/unavailable.js';
import { evalPhotos, makeStillClip, removeDir, repoRoot, tempDir } from '../helpers/clips.js';
import { FakeEmbedder } from '../helpers/fake-embedder.js';
import { LocalEngine } from '../../src/runtime/engine.js';
import { Worker } from '../../src/runtime/worker.js';

const MiB = 1024 ** 2;
const BUCKET = 'vidembed';
const CREDS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

const dir = tempDir('vidembed-s3-');
let server: ChildProcess | undefined;
let endpoint: string;

/**
 * s3rver in a child process: its ListObjectsV2 continuation tokens are DES-encrypted, which
 * OpenSSL 3 refuses without the legacy provider (a flag for that process, not for this one). The
 * child exits when its stdin closes, so it never outlives the test run.
 */
const SERVER = `
const S3rver = require('s3rver');
const s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: process.argv[1], configureBuckets: [{ name: '${BUCKET}' }] });
s3.run().then((a) => console.log(JSON.stringify({ port: a.port })));
process.stdin.on('data', () => {}).on('end', () => process.exit(0));
`;

beforeAll(async () => {
  const child = spawn(process.execPath, ['--openssl-legacy-provider', '-e', SERVER, path.join(dir, 's3rver')], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'inherit'] });
  server = child;
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /\{"port":(\d+)\}/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`s3rver exited (${code}) before listening: ${out}`)));
  });
  endpoint = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server!.once('exit', r));
    server.stdin!.end();
    await exited;
  }
  removeDir(dir);
});

const s3Options = (over: Partial<S3BlobStoreOptions> = {}): S3BlobStoreOptions => ({
  endpoint,
  bucket: BUCKET,
  prefix: 'lib/one',
  region: 'us-east-1',
  credentials: CREDS,
  pathStyle: true,
  partSize: 8 * MiB,
  listPageSize: 7,
  ...over,
});

async function readStream(s: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

const cases: { name: string; make: () => BlobStore; localFileIsCopy: boolean }[] = [
  { name: 'LocalBlobStore', make: () => new LocalBlobStore(path.join(dir, 'local')), localFileIsCopy: false },
  { name: 'S3BlobStore', make: () => new S3BlobStore(s3Options()), localFileIsCopy: true },
];

describe.each(cases)('$name', ({ name, make, localFileIsCopy }) => {
  let store: BlobStore;
  beforeAll(() => {
    store = make();
  });

  it('gives back what was put, from a buffer or a stream, whole, as a stream and by range', async () => {
    await store.put('tensors/a.bin', Buffer.from('hello, blob'));
    expect((await store.get('tensors/a.bin')).toString()).toBe('hello, blob');
    await store.put('tensors/b.json', Readable.from([Buffer.from('{"shape":'), Buffer.from('[1,2]}')]));
    expect((await store.get('tensors/b.json')).toString()).toBe('{"shape":[1,2]}');
    expect((await readStream(store.stream('tensors/a.bin'))).toString()).toBe('hello, blob');
    expect((await readStream(store.stream('tensors/a.bin', { start: 7, end: 10 }))).toString()).toBe('blob');
    expect((await readStream(store.stream('tensors/a.bin', { start: 3 }))).toString()).toBe('lo, blob');
    await store.put('tensors/a.bin', Buffer.from('replaced'));
    expect((await store.get('tensors/a.bin')).toString()).toBe('replaced');
    await store.put('tensors/empty.bin', Buffer.alloc(0));
    expect(await store.has('tensors/empty.bin')).toBe(true);
    expect((await store.get('tensors/empty.bin')).length).toBe(0);
  });

  it('stores a file by copy (the source stays) or by move (the source goes)', async () => {
    const src = path.join(dir, `${name}-src.mp4`);
    writeFileSync(src, 'not really a video');
    await store.putFile('videos/copy.mp4', src);
    expect(existsSync(src)).toBe(true);
    await store.putFile('videos/moved.mp4', src, { move: true });
    expect(existsSync(src)).toBe(false);
    expect((await store.get('videos/copy.mp4')).toString()).toBe('not really a video');
    expect((await store.get('videos/moved.mp4')).toString()).toBe('not really a video');
  });

  it('hands out a local file with the bytes; release removes a downloaded copy only', async () => {
    await store.put('videos/local.mp4', Buffer.from('frames'));
    const local = await store.localFile('videos/local.mp4');
    expect(readFileSync(local.path, 'utf8')).toBe('frames');
    expect(path.basename(local.path)).toBe('local.mp4'); // ffmpeg sees the extension
    await local.release();
    expect(existsSync(local.path)).toBe(!localFileIsCopy);
    expect(await store.has('videos/local.mp4')).toBe(true);
  });

  it('knows what it has; deletes a key; deleting nothing is no error', async () => {
    await store.put('videos/gone.mp4', Buffer.from('x'));
    expect(await store.has('videos/gone.mp4')).toBe(true);
    expect(await store.has('videos/never.mp4')).toBe(false);
    await store.delete('videos/gone.mp4');
    expect(await store.has('videos/gone.mp4')).toBe(false);
    await store.delete('videos/gone.mp4');
  });

  it('deletes everything under a prefix, across listing pages, and nothing beside it', async () => {
    const under = [...Array.from({ length: 23 }, (_, i) => `thumbs/v1/${i}.jpg`), 'thumbs/v1/deep/er/x.jpg'];
    const beside = ['thumbs/v10/0.jpg', 'thumbs/v1.json', 'thumbs/v0/1.jpg'];
    for (const k of [...under, ...beside]) await store.put(k, Buffer.from(k));
    await store.deletePrefix('thumbs/v1');
    for (const k of under) expect(await store.has(k), k).toBe(false);
    for (const k of beside) expect((await store.get(k)).toString(), k).toBe(k);
    await store.deletePrefix('thumbs/v1'); // nothing left: no error
    await store.deletePrefix('thumbs/never');
  });

  it('counts and lists (with write times) the blobs under a prefix, across listing pages, and nothing beside it', async () => {
    const under = [...Array.from({ length: 23 }, (_, i) => `quota/o1/${i}.bin`), 'quota/o1/deep/er/x.bin'];
    for (const [i, k] of under.entries()) await store.put(k, Buffer.alloc(i + 1, 1));
    for (const k of ['quota/o10/0.bin', 'quota/o1.json', 'quota/o0/1.bin']) await store.put(k, Buffer.alloc(1000, 1));
    expect(await store.bytesUnder('quota/o1')).toBe((under.length * (under.length + 1)) / 2);
    expect(await store.bytesUnder('quota/o1.json')).toBe(1000);
    expect(await store.bytesUnder('quota/never')).toBe(0);
    const before = Date.now() - 60_000;
    const listed: { key: string; modifiedMs: number }[] = [];
    for await (const e of store.listUnder('quota/o1')) listed.push(e);
    expect(listed.map((e) => e.key).sort()).toEqual([...under].sort());
    for (const e of listed) expect(e.modifiedMs, e.key).toBeGreaterThan(before);
    await store.deletePrefix('quota/o1');
    expect(await store.bytesUnder('quota/o1')).toBe(0);
    for await (const e of store.listUnder('quota/o1')) throw new Error(`still listed: ${e.key}`);
  });

  it('refuses keys outside the key alphabet or climbing out, before touching storage', async () => {
    for (const bad of ['../x', '/abs/x', 'a//b', 'a/../b', '', 'a b', 'videos/ü.mp4', 'a/']) {
      await expect(store.put(bad, Buffer.from('x')), bad).rejects.toThrow(/bad blob key/);
      await expect(store.get(bad), bad).rejects.toThrow(/bad blob key/);
      await expect(store.has(bad), bad).rejects.toThrow(/bad blob key/);
      await expect(store.delete(bad), bad).rejects.toThrow(/bad blob key/);
      await expect(store.deletePrefix(bad), bad).rejects.toThrow(/bad blob key/);
      await expect(store.localFile(bad), bad).rejects.toThrow(/bad blob key/);
      expect(() => store.stream(bad), bad).toThrow(/bad blob key/);
    }
  });

  it('answers a missing key with an error that names it', async () => {
    const err = await store.get('videos/missing.mp4').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlobNotFoundError);
    expect((err as Error).message).toBe('no blob at key videos/missing.mp4');
    expect((err as NodeJS.ErrnoException).code).toBe('ENOENT');
    await expect(readStream(store.stream('videos/missing.mp4'))).rejects.toThrow('no blob at key videos/missing.mp4');
    await expect(store.localFile('videos/missing.mp4')).rejects.toThrow('no blob at key videos/missing.mp4');
  });

  it('stores blobs larger than one part from a file and from a stream, byte for byte', async () => {
    const big = randomBytes(2 * 8 * MiB + 12_345);
    const file = path.join(dir, `${name}-big.bin`);
    writeFileSync(file, big);
    await store.putFile('videos/big.mp4', file);
    expect(sha(await readStream(store.stream('videos/big.mp4')))).toBe(sha(big));
    const chunks = Array.from({ length: 9 }, (_, i) => big.subarray(i * 2 * MiB, (i + 1) * 2 * MiB));
    await store.put('videos/streamed.mp4', Readable.from(chunks));
    const got = await store.get('videos/streamed.mp4');
    expect(got.length).toBe(big.length);
    expect(sha(got)).toBe(sha(big));
    await store.put('videos/buffered.mp4', big);
    expect(sha(await store.get('videos/buffered.mp4'))).toBe(sha(big));
  });
});

/** A proxy in front of s3rver that records each request and can answer some itself. */
async function proxy(answer: (req: http.IncomingMessage) => number | undefined): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const target = new URL(endpoint);
  const srv = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const status = answer(req);
    if (status !== undefined) {
      req.resume();
      res.writeHead(status, { 'content-type': 'application/xml' }).end(`<?xml version="1.0"?><Error><Code>InternalError</Code><Message>injected ${status}</Message></Error>`);
      return;
    }
    const up = http.request({ hostname: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise((r) => srv.close(() => r())),
  };
}

describe('S3BlobStore against s3rver', () => {
  it('uploads a large file in parts of at least 8 MiB, and a small one in one PUT', async () => {
    const p = await proxy(() => undefined);
    try {
      const store = new S3BlobStore(s3Options({ endpoint: p.url, prefix: 'mp' }));
      const file = path.join(dir, 'parts.bin');
      const bytes = randomBytes(2 * 8 * MiB + 1);
      writeFileSync(file, bytes);
      await store.putFile('videos/parts.mp4', file);
      const lines = p.seen.filter((l) => l.includes('videos/parts.mp4'));
      expect(lines[0]).toMatch(/^POST \/vidembed\/mp\/videos\/parts\.mp4\?uploads=$/);
      expect(lines.filter((l) => /^PUT .*partNumber=\d+&uploadId=/.test(l)).map((l) => /partNumber=(\d+)/.exec(l)![1]).sort()).toEqual(['1', '2', '3']);
      expect(lines.at(-1)).toMatch(/^POST .*\?uploadId=/);
      expect(sha(await store.get('videos/parts.mp4'))).toBe(sha(bytes));

      p.seen.length = 0;
      writeFileSync(file, bytes.subarray(0, 8 * MiB)); // exactly one part: one PUT
      await store.putFile('videos/one.mp4', file);
      expect(p.seen).toEqual(['PUT /vidembed/mp/videos/one.mp4']);
    } finally {
      await p.close();
    }
  });

  it('retries an answer of 503, and gives up on a part that keeps failing: aborts the upload and names key and status', async () => {
    let failures = 1;
    const p = await proxy((req) => {
      if (req.method === 'GET' && req.url?.endsWith('/flaky.bin') && failures-- > 0) return 503;
      if (req.method === 'PUT' && req.url?.includes('partNumber=2&')) return 500;
      return undefined;
    });
    try {
      const store = new S3BlobStore(s3Options({ endpoint: p.url, prefix: 'retry', attempts: 2 }));
      await store.put('tensors/flaky.bin', Buffer.from('eventually'));
      expect((await store.get('tensors/flaky.bin')).toString()).toBe('eventually');
      expect(p.seen.filter((l) => l.startsWith('GET') && l.endsWith('/flaky.bin'))).toHaveLength(2);

      await expect(store.put('videos/broken.mp4', randomBytes(3 * 8 * MiB))).rejects.toThrow(/^PUT videos\/broken\.mp4 \(part 2\): HTTP 500 InternalError: injected 500/);
      expect(p.seen.filter((l) => l.includes('partNumber=2&'))).toHaveLength(2); // tried twice
      expect(p.seen.some((l) => /^DELETE \/vidembed\/retry\/videos\/broken\.mp4\?uploadId=/.test(l))).toBe(true);
      expect(await store.has('videos/broken.mp4')).toBe(false);
    } finally {
      await p.close();
    }
  });

  it('says which key and which HTTP status when the credentials are wrong, without the secret', async () => {
    const secret = 'TOPSECRET-wJalrXUtnFEMI';
    const store = new S3BlobStore(s3Options({ credentials: { accessKeyId: 'NOSUCHKEY', secretAccessKey: secret } }));
    const attempts = [() => store.get('videos/a.mp4'), () => store.put('videos/a.mp4', Buffer.from('x')), () => store.has('videos/a.mp4'), () => store.deletePrefix('thumbs/a')];
    for (const attempt of attempts) {
      const err = (await attempt().catch((e: unknown) => e)) as Error;
      expect(err).toBeInstanceOf(Error);
      expect(err.message).toMatch(/HTTP 403/);
      expect(err.message).toMatch(/check AWS_ACCESS_KEY_ID/);
      expect(err.message).not.toContain(secret);
      expect(String(err.stack)).not.toContain(secret);
    }
    await expect(store.get('videos/a.mp4')).rejects.toThrow(/^GET videos\/a\.mp4: HTTP 403 InvalidAccessKeyId/);
  });

  it('says the bucket is missing, for reads and deletes alike (not "no such key", not success)', async () => {
    const store = new S3BlobStore(s3Options({ bucket: 'no-such-bucket' }));
    await expect(store.get('videos/a.mp4')).rejects.toThrow(/^GET videos\/a\.mp4: HTTP 404 NoSuchBucket/);
    await expect(store.delete('videos/a.mp4')).rejects.toThrow(/^DELETE videos\/a\.mp4: HTTP 404 NoSuchBucket/);
    await expect(store.put('videos/a.mp4', Buffer.from('x'))).rejects.toThrow(/^PUT videos\/a\.mp4: HTTP 404 NoSuchBucket/);
  });

  it('names the server it cannot reach', async () => {
    const p = await proxy(() => undefined);
    const url = p.url;
    await p.close();
    const store = new S3BlobStore(s3Options({ endpoint: url, attempts: 1 }));
    await expect(store.get('videos/a.mp4')).rejects.toThrow(`GET videos/a.mp4: cannot reach ${url}: ECONNREFUSED`);
    // An outage, not a fault: the server answers 503 for it, a worker hands its job back (docs/operations.md).
    const down = asUnavailable(await store.get('videos/a.mp4').catch((e: unknown) => e));
    expect(down?.status).toBe(503);
    expect(down?.dependency).toBe('the blob store');
    // With retries (the default 4, backoff from 200 ms), then the same clear error.
    const retrying = new S3BlobStore(s3Options({ endpoint: url }));
    await expect(retrying.has('videos/a.mp4')).rejects.toThrow(`HEAD videos/a.mp4: cannot reach ${url}: ECONNREFUSED`);
  });

  it('keeps stores with different prefixes apart in one bucket', async () => {
    const a = new S3BlobStore(s3Options({ prefix: 'tenant-a' }));
    const b = new S3BlobStore(s3Options({ prefix: 'tenant-b' }));
    await a.put('videos/x.mp4', Buffer.from('a'));
    expect(await b.has('videos/x.mp4')).toBe(false);
    await b.put('videos/x.mp4', Buffer.from('b'));
    await a.deletePrefix('videos');
    expect(await a.has('videos/x.mp4')).toBe(false);
    expect((await b.get('videos/x.mp4')).toString()).toBe('b');
    const keys: string[] = [];
    for await (const k of b.list('videos/')) keys.push(k);
    expect(keys).toEqual(['videos/x.mp4']);
  });
});

describe('Signature V4', () => {
  // AWS's examples (S3 API reference, "Signature Calculations for the Authorization Header").
  const creds = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
  const empty = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
  const base = { amzDate: '20130524T000000Z', region: 'us-east-1', payloadHash: empty };
  const headers = { host: 'examplebucket.s3.amazonaws.com', 'x-amz-content-sha256': empty, 'x-amz-date': '20130524T000000Z' };

  it('signs the GET object example (a range header)', () => {
    const auth = signV4({ ...base, method: 'GET', path: '/test.txt', query: [], headers: { ...headers, Range: 'bytes=0-9' } }, creds);
    expect(auth).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    );
  });

  it('signs the list objects example (a sorted query) and the lifecycle one (a bare name)', () => {
    expect(signV4({ ...base, method: 'GET', path: '/', query: [['prefix', 'J'], ['max-keys', '2']], headers }, creds)).toMatch(/Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7$/);
    expect(signV4({ ...base, method: 'GET', path: '/', query: [['lifecycle', '']], headers }, creds)).toMatch(/Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543$/);
  });

  it('encodes as AWS does', () => {
    expect(uriEncode("a b!'()*~é")).toBe('a%20b%21%27%28%29%2A~%C3%A9');
    expect(uriEncode('lib/one/videos/a.mp4', true)).toBe('lib/one/videos/a.mp4');
    expect(uriEncode('a/b')).toBe('a%2Fb');
    expect(canonicalQuery([['uploadId', 'a/b+c=='], ['partNumber', '2'], ['uploads', '']])).toBe('partNumber=2&uploadId=a%2Fb%2Bc%3D%3D&uploads=');
  });
});

describe('VIDEMBED_STORAGE_URL and the store it opens', () => {
  const p = pathsFor(path.join(dir, 'home'));
  const s3env = { VIDEMBED_STORAGE_URL: 's3://media-lib/prod/v1', AWS_ACCESS_KEY_ID: 'AK', AWS_SECRET_ACCESS_KEY: 'very-secret' };

  it('opens a directory for file:// and by default, an S3 bucket for s3://', () => {
    const byDefault = openBlobStore(p, {});
    expect(byDefault).toBeInstanceOf(LocalBlobStore);
    expect((byDefault as LocalBlobStore).pathOf('videos/a.mp4')).toBe(path.join(p.blobsDir, 'videos', 'a.mp4'));
    const shared = openBlobStore(p, { VIDEMBED_STORAGE_URL: 'file:///mnt/shared%20media' });
    expect((shared as LocalBlobStore).pathOf('videos/a.mp4')).toBe('/mnt/shared media/videos/a.mp4');
    const s3 = openBlobStore(p, s3env);
    expect(s3).toBeInstanceOf(S3BlobStore);
    expect((s3 as S3BlobStore).location).toBe('s3://media-lib/prod/v1/');
  });

  it('reads endpoint, region, addressing, part size and credentials from the environment', () => {
    expect(s3StoreOptions(s3env.VIDEMBED_STORAGE_URL, s3env)).toEqual({
      endpoint: 'https://s3.us-east-1.amazonaws.com/',
      bucket: 'media-lib',
      prefix: 'prod/v1',
      region: 'us-east-1',
      credentials: { accessKeyId: 'AK', secretAccessKey: 'very-secret', sessionToken: undefined },
      pathStyle: false,
      partSize: undefined,
    });
    const minio = s3StoreOptions('s3://b12', { ...s3env, VIDEMBED_S3_ENDPOINT: 'http://minio:9000', VIDEMBED_S3_REGION: 'eu-west-3', VIDEMBED_S3_PART_MB: '64', AWS_SESSION_TOKEN: 'tok' });
    expect(minio).toMatchObject({ endpoint: 'http://minio:9000/', bucket: 'b12', prefix: '', region: 'eu-west-3', pathStyle: true, partSize: 64 * MiB });
    expect(minio.credentials.sessionToken).toBe('tok');
    expect(s3StoreOptions('s3://b12', { ...s3env, AWS_REGION: 'ap-south-1' })).toMatchObject({ region: 'ap-south-1', endpoint: 'https://s3.ap-south-1.amazonaws.com/' });
    expect(s3StoreOptions('s3://b12', { ...s3env, VIDEMBED_S3_ENDPOINT: 'https://x.r2.cloudflarestorage.com', VIDEMBED_S3_PATH_STYLE: '0' }).pathStyle).toBe(false);
    expect(s3StoreOptions('s3://b12', { ...s3env, VIDEMBED_S3_PATH_STYLE: '1' }).pathStyle).toBe(true);
  });

  it('refuses what it cannot use in one line naming the variable, and never repeats the secret', () => {
    const bad: [Record<string, string>, RegExp][] = [
      [{ ...s3env, AWS_SECRET_ACCESS_KEY: '' }, /set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/],
      [{ ...s3env, VIDEMBED_STORAGE_URL: 's3://Bad_Bucket/x' }, /bad S3 bucket name/],
      [{ ...s3env, VIDEMBED_STORAGE_URL: 's3://bucket:9000/x' }, /takes no port/],
      [{ ...s3env, VIDEMBED_STORAGE_URL: 's3://bucket/a/../b' }, /bad prefix/],
      [{ ...s3env, VIDEMBED_S3_ENDPOINT: 'minio:9000' }, /VIDEMBED_S3_ENDPOINT must be an http/],
      [{ ...s3env, VIDEMBED_S3_ENDPOINT: 'https://user:very-secret@minio' }, /VIDEMBED_S3_ENDPOINT takes no user/],
      [{ ...s3env, VIDEMBED_S3_PART_MB: '5' }, /VIDEMBED_S3_PART_MB must be an integer from 8/],
      [{ VIDEMBED_STORAGE_URL: 'gs://bucket/x' }, /gs storage is not supported; use file:\/\/\/a\/directory that every node mounts or s3:\/\/bucket\/prefix/],
      [{ VIDEMBED_STORAGE_URL: 'file://nas/lib' }, /name no host/],
    ];
    for (const [env, re] of bad) {
      let msg = '';
      try {
        openBlobStore(p, env);
      } catch (e) {
        msg = (e as Error).message;
      }
      expect(msg, JSON.stringify(env)).toMatch(re);
      expect(msg).not.toContain('very-secret');
    }
  });

  it('opens a working store on the S3 server the environment names', async () => {
    const env = { VIDEMBED_STORAGE_URL: `s3://${BUCKET}/from-env`, VIDEMBED_S3_ENDPOINT: endpoint, AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };
    const store = openBlobStore(p, env);
    await store.put('thumbs/v/poster.jpg', Buffer.from('jpeg'));
    const direct = new S3BlobStore(s3Options({ prefix: 'from-env' }));
    expect((await direct.get('thumbs/v/poster.jpg')).toString()).toBe('jpeg');
  });
});

describe('a library whose files live in an S3 bucket', () => {
  const env = () => ({ VIDEMBED_STORAGE_URL: `s3://${BUCKET}/library`, VIDEMBED_S3_ENDPOINT: endpoint, AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' });
  let engine: LocalEngine;
  let clip: string;
  let collectionId: string;
  beforeAll(async () => {
    clip = await makeStillClip(evalPhotos()[0], path.join(dir, 'still.mp4'), { seconds: 2 });
    const before = { ...process.env };
    Object.assign(process.env, env());
    try {
      const fake = new FakeEmbedder();
      engine = new LocalEngine({ home: path.join(dir, 'engine-home'), embedderFor: () => fake });
      collectionId = (await engine.createCollection({ name: 'c', model: fake.id })).collection_id;
    } finally {
      for (const k of Object.keys(env())) if (before[k] === undefined) delete process.env[k];
      else process.env[k] = before[k];
    }
  });
  afterAll(async () => {
    await engine?.close();
  });

  it('uploads into the bucket, processes from a downloaded copy, serves bytes by range, and deletes there', async () => {
    const bucket = new S3BlobStore(s3Options({ prefix: 'library' }));
    const { video_id: id } = await engine.uploadVideo(collectionId, { path: clip, filename: 'holiday.mp4' });
    expect(await bucket.has(`videos/${id}.mp4`)).toBe(true);
    expect(existsSync(path.join(dir, 'engine-home', 'blobs', 'videos'))).toBe(false);
    await new Worker(engine, { idleExitMs: 200, pollMs: 50 }).run(new AbortController().signal);
    expect(await engine.videoStatus(id)).toMatchObject({ status: 'processed' });
    expect(await bucket.has(`thumbs/${id}/poster.jpg`)).toBe(true);
    expect((await engine.videoThumbnail(id)).subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));

    const file = await engine.videoFile(id);
    const bytes = readFileSync(clip);
    expect(file.path).toBeUndefined(); // nothing of it on this machine's disk
    expect(file.size).toBe(bytes.length);
    expect(await readStream(file.open())).toEqual(bytes);
    expect(await readStream(file.open({ start: 10, end: 99 }))).toEqual(bytes.subarray(10, 100));

    await engine.deleteVideo(id);
    expect(await bucket.has(`videos/${id}.mp4`)).toBe(false);
    expect(await bucket.has(`thumbs/${id}/poster.jpg`)).toBe(false);
  });

  it('a video whose object is gone fails with a message naming the file, not the storage', async () => {
    const bucket = new S3BlobStore(s3Options({ prefix: 'library' }));
    const { video_id: id } = await engine.uploadVideo(collectionId, { path: clip, filename: 'lost.mp4', force: true });
    await bucket.delete(`videos/${id}.mp4`);
    await new Worker(engine, { idleExitMs: 200, pollMs: 50 }).run(new AbortController().signal);
    const st = await engine.videoStatus(id);
    expect(st.status).toBe('failed');
    expect(st.error_message).not.toContain(endpoint);
    expect(st.error_message).not.toContain('S3RVER');
    expect(st.error_message).toBe("lost.mp4 is missing from the library's storage (deleted outside vidembed?)");
  });
});

/**
 * Tensor upload bodies read chunk by chunk (src/threads/body-thread.ts `TensorBodyReader`, the body
 * thread for large ones; src/server/tensor-body.ts on the route): the same stored bytes and the same
 * answers (400, 413, 422) as a body parsed whole with its base64 decoded afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadRequestError, ValidationError, VidembedError } from '../../src/api/errors.js';
import type { TensorUploadRequest } from '../../src/api/types.js';
import { parseTensorBody } from '../../src/threads/body-parse.js';
import { decodedTensorData, OFF_THREAD_BYTES, TensorBodyReader } from '../../src/threads/body-thread.js';
import { storeTensorUpload } from '../../src/pipeline/tensors.js';
import { MemoryBlobStore } from '../../src/store/memory/blobs.js';
import { http, startTestServer, type TestServer } from '../helpers/server.js';

/** `n` bytes that differ from one position to the next (a wrong offset or order shows). */
const bytesOf = (n: number, seed = 1) => {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed * 7 + (i >> 8)) & 0xff;
  return b;
};
const video = (bytes: Buffer, frames: number, side: number, data = bytes.toString('base64')) => ({ data, shape: [1, frames, 3, side, side], dtype: 'uint8' });

/** Pushes `text` in uneven chunks (1 byte up to 200 KB) and ends; `expected`: the length declared to the reader. */
async function readInChunks(text: string | Buffer, expected = 0): Promise<unknown> {
  const buf = Buffer.from(text);
  const reader = new TensorBodyReader(expected);
  const sizes = [1, 7, 65536, 3, 200_000, 1024];
  for (let at = 0, i = 0; at < buf.length; i++) {
    const n = sizes[i % sizes.length];
    reader.push(buf.subarray(at, at + n));
    at += n;
  }
  return reader.end();
}

describe('TensorBodyReader', () => {
  it('gives the parsed body with data "" and the bytes beside it, small (in place) and large (the thread) alike', async () => {
    // Small; large with its length unknown, declared, or declared too short (the thread's buffer grows).
    for (const [n, expected] of [[48, 0], [3 * 1024 * 1024, 0], [3 * 1024 * 1024, -1], [9 * 1024 * 1024, 1024]]) {
      const bytes = bytesOf(n);
      const audio = bytesOf(64, 2);
      const body = { service: 'embedding', request_id: `r-${n}`, video_input: video(bytes, n / 48, 4), audio_input: { data: audio.toString('base64'), shape: [1, 1, 16], dtype: 'float32' }, video_kwargs: { fps: 2 } };
      const json = JSON.stringify(body);
      if (n > 48) expect(json.length).toBeGreaterThan(OFF_THREAD_BYTES);
      const value = (await readInChunks(json, expected < 0 ? json.length : expected)) as typeof body;
      expect(value).toEqual({ ...body, video_input: { ...body.video_input, data: '' }, audio_input: { ...body.audio_input, data: '' } });
      const v = decodedTensorData(value.video_input)!;
      expect(v.chars).toBe(body.video_input.data.length);
      expect(Buffer.from(v.bytes!).equals(bytes)).toBe(true);
      expect(Buffer.from(decodedTensorData(value.audio_input)!.bytes!).equals(audio)).toBe(true);
      // What is not a tensor keeps its own values.
      expect(decodedTensorData(value.video_kwargs)).toBeUndefined();
    }
  });

  it('leaves a data that is not base64 to be refused later, with the message it would have had', async () => {
    const big = JSON.stringify({ service: 'embedding', request_id: 'x', video_input: video(Buffer.alloc(0), 1, 1, `${'A'.repeat(2 * 1024 * 1024)}!!`) });
    const value = (await readInChunks(big)) as { video_input: unknown };
    const d = decodedTensorData(value.video_input)!;
    expect(d.bytes).toBeUndefined();
    expect(d.error).toBe('video_input.data is not valid base64');
    expect(d.chars).toBe(2 * 1024 * 1024 + 2);
  });

  it('rejects a large malformed, too deep or prototype-carrying body as the JSON parser does', async () => {
    const pad = 'A'.repeat(2 * 1024 * 1024);
    await expect(readInChunks(`{"video_input":{"data":"${pad}"`)).rejects.toBeInstanceOf(SyntaxError);
    await expect(readInChunks(`{"video_input":{"data":"${pad}"},"x":${'['.repeat(40)}${']'.repeat(40)}}`)).rejects.toThrow(/nested deeper than 32/);
    await expect(readInChunks(`{"video_input":{"data":"${pad}"},"__proto__":{"a":1}}`)).rejects.toThrow(/forbidden prototype property/);
    // A body that does not parse is the same error in place.
    expect(() => parseTensorBody(Buffer.from('{"a":'))).toThrow(SyntaxError);
  });

  it('forgets an aborted body; a body that is not an object decodes nothing', async () => {
    const reader = new TensorBodyReader();
    reader.push(Buffer.alloc(3 * 1024 * 1024, 0x41));
    reader.abort();
    reader.abort();
    await expect(reader.end()).rejects.toThrow(/already ended/);
    // The thread still serves the next body.
    expect(await readInChunks(`[${'1,'.repeat(600_000)}1]`)).toHaveLength(600_001);
    expect(parseTensorBody(Buffer.from('"video_input"')).decoded).toEqual({});
  });
});

describe('POST /files/upload/tensors, body streamed to the thread', () => {
  let s: TestServer;
  const maxTensorBytes = 2 * 1024 * 1024;
  beforeAll(async () => {
    s = await startTestServer({ engine: { maxTensorBytes } });
  });
  afterAll(async () => s?.close());
  const post = (json: unknown) => http(s.url, 'POST', '/files/upload/tensors', { key: s.key, json });

  /** What storeTensorUpload answers for the body as a client sent it (base64 in place): status and detail. */
  async function whole(body: unknown): Promise<{ status: number; detail: unknown }> {
    try {
      await storeTensorUpload(body as TensorUploadRequest, new MemoryBlobStore(), maxTensorBytes, 'test');
      return { status: 200, detail: undefined };
    } catch (err) {
      if (err instanceof ValidationError) return { status: 422, detail: err.issues };
      return { status: (err as VidembedError).status, detail: (err as Error).message };
    }
  }

  it('stores the same bytes as were sent, small and large, base64 with line breaks too', async () => {
    const cases = [
      { id: 'small', bytes: bytesOf(48, 3), frames: 1, side: 4, wrap: false },
      { id: 'large', bytes: bytesOf(1536 * 1024, 4), frames: 32, side: 128, wrap: false },
      { id: 'wrapped', bytes: bytesOf(768 * 1024, 5), frames: 16, side: 128, wrap: true },
    ];
    for (const c of cases) {
      const b64 = c.bytes.toString('base64');
      const data = c.wrap ? b64.replace(/.{76}/g, '$&\n') : b64;
      const r = await post({ service: 'embedding', request_id: c.id, video_input: video(c.bytes, c.frames, c.side, data), video_kwargs: { fps: 1 } });
      expect(r.status, c.id).toBe(200);
      expect(r.body.r2_keys.video_input).toBe(`tensors/test/${c.id}/video_input`);
      expect((await s.engine.blobs.get(`tensors/test/${c.id}/video_input.bin`)).equals(c.bytes), c.id).toBe(true);
      expect(JSON.parse((await s.engine.blobs.get(`tensors/test/${c.id}/video_input.json`)).toString())).toEqual({ shape: [1, c.frames, 3, c.side, c.side], dtype: 'uint8' });
    }
  });

  it('answers a large body that breaks a rule as a body decoded afterwards does: 400 base64, 422 size, 413 over the tensor limit', async () => {
    const bytes = bytesOf(1536 * 1024, 6);
    const bodies = {
      notBase64: { service: 'embedding', request_id: 'b1', video_input: video(bytes, 32, 128, `${bytes.toString('base64')}$$$$`) },
      wrongSize: { service: 'embedding', request_id: 'b2', video_input: video(bytes, 31, 128) },
      overLimit: { service: 'embedding', request_id: 'b3', video_input: video(bytesOf(maxTensorBytes + 3000), 1, 1) },
    };
    const expected = { notBase64: 400, wrongSize: 422, overLimit: 413 };
    for (const [name, body] of Object.entries(bodies)) {
      const before = await whole(body);
      expect(before.status, name).toBe(expected[name as keyof typeof expected]);
      const r = await post(body);
      expect({ status: r.status, detail: r.body.detail }, name).toEqual(before);
    }
    expect((await whole(bodies.notBase64)).detail).toBe('video_input.data is not valid base64');
    expect(await s.engine.blobs.has('tensors/test/b2/video_input.bin')).toBe(false);
  });

  it('answers schema errors (422), malformed JSON (400) and a body over the limit (413) as the framework did', async () => {
    const bytes = bytesOf(1536 * 1024, 7);
    const badDtype = await post({ service: 'embedding', request_id: 'c1', video_input: { ...video(bytes, 32, 128), dtype: 'float32' } });
    expect(badDtype.status).toBe(422);
    expect(badDtype.body.detail[0].loc).toEqual(['body', 'video_input', 'dtype']);
    const truncated = `{"service":"embedding","request_id":"c2","video_input":{"data":"${bytes.toString('base64')}"`;
    const malformed = await http(s.url, 'POST', '/files/upload/tensors', { key: s.key, raw: truncated });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe('malformed_json');
    expect(malformed.body.detail).toMatch(/^malformed JSON: /);
    const tooBig = await http(s.url, 'POST', '/files/upload/tensors', { key: s.key, raw: `{"data":"${'A'.repeat(3 * 1024 * 1024)}"}` });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body).toEqual({ detail: 'Request body is too large', code: 'payload_too_large' });
    // Other routes keep the framework's parser (and its limit).
    expect((await http(s.url, 'POST', '/collections', { key: s.key, raw: '{"name":' })).status).toBe(400);
    expect((await http(s.url, 'POST', '/collections', { key: s.key, json: { name: 'still-parsed' } })).status).toBe(201);
  });
});

import { TENSOR_MAX_SIDE } from '../api/defaults.js';
import { CLIENT_ID_RE, DEFAULT_OWNER } from '../api/principal.js';
import { BadRequestError, ConflictError, NotFoundError, PayloadTooLargeError, ValidationError, type ValidationIssue } from '../api/errors.js';
import type { TensorObject, TensorUploadRequest, TensorUploadResponse } from '../api/types.js';
import type { Frame } from '../media/types.js';
import type { BlobStore } from '../store/blobs.js';
import { decodeBase64, decodedTensorData } from '../threads/body-thread.js';

/** Bytes per element of the dtypes a tensor may carry. */
export const ITEM_SIZE: Record<string, number> = { uint8: 1, int8: 1, uint16: 2, int16: 2, float16: 2, int32: 4, uint32: 4, float32: 4, int64: 8, float64: 8 };
/** The largest H and W of a video tensor (the schema says so too: src/api/schemas.ts). */
export { TENSOR_MAX_SIDE };

export interface DecodedTensor {
  shape: number[];
  dtype: string;
  bytes: Buffer;
}

export interface VideoKwargs {
  fps?: number;
  start?: number;
  end?: number;
  timestamps?: number[];
}

/**
 * A tensor's bytes: decoded already when the server read its body (src/server/tensor-body.ts),
 * else decoded here (hundreds of megabytes on a worker thread, src/threads/body-thread.ts).
 */
async function tensorBytes(t: object, data: string, field: string): Promise<Buffer> {
  const pre = decodedTensorData(t);
  if (!pre) return decodeBase64(data, field);
  if (!pre.bytes) throw new BadRequestError(pre.error ?? `${field} is not valid base64`);
  return Buffer.from(pre.bytes.buffer, pre.bytes.byteOffset, pre.bytes.byteLength);
}

/** Characters of a tensor's base64 `data` as sent (0 when it is not a string). */
function dataChars(t: unknown): number {
  const pre = decodedTensorData(t);
  if (pre) return pre.chars;
  const d = (t as { data?: unknown } | null | undefined)?.data;
  return typeof d === 'string' ? d.length : 0;
}

async function decodeTensor(t: unknown, field: string, rank: number, dtypes: string[], issues: ValidationIssue[]): Promise<DecodedTensor | undefined> {
  const loc = ['body', field];
  if (t === null || typeof t !== 'object' || Array.isArray(t)) {
    issues.push({ loc, msg: 'must be a tensor object {data, shape, dtype}', type: 'type_error.dict' });
    return undefined;
  }
  const { data, shape, dtype } = t as Partial<TensorObject>;
  const before = issues.length;
  if (typeof data !== 'string') issues.push({ loc: [...loc, 'data'], msg: 'must be a base64 string', type: 'type_error.str' });
  if (typeof dtype !== 'string' || !(dtype in ITEM_SIZE)) {
    issues.push({ loc: [...loc, 'dtype'], msg: `must be one of ${Object.keys(ITEM_SIZE).join(', ')}`, type: 'value_error.dtype' });
  } else if (!dtypes.includes(dtype)) {
    issues.push({ loc: [...loc, 'dtype'], msg: `must be ${dtypes.join(' or ')}`, type: 'value_error.dtype' });
  }
  if (!Array.isArray(shape) || shape.length !== rank || !(shape as unknown[]).every((d) => typeof d === 'number' && Number.isSafeInteger(d) && d > 0)) {
    issues.push({ loc: [...loc, 'shape'], msg: `must be ${rank} positive integers`, type: 'value_error.shape' });
  }
  if (issues.length > before) return undefined;
  const bytes = await tensorBytes(t, data as string, `${field}.data`);
  const expected = (shape as number[]).reduce((a, b) => a * b, 1) * ITEM_SIZE[dtype as string];
  if (expected !== bytes.length) {
    issues.push({ loc: [...loc, 'data'], msg: `holds ${bytes.length} bytes but shape ${JSON.stringify(shape)} of ${dtype} needs ${expected}`, type: 'value_error.size' });
    return undefined;
  }
  return { shape: shape as number[], dtype: dtype as string, bytes };
}

/** Validates a tensor upload (SPEC §4) and stores its parts; answers with their keys. */
export async function storeTensorUpload(
  body: TensorUploadRequest,
  blobs: BlobStore,
  maxBytes: number,
  owner: string = DEFAULT_OWNER,
  /** Throws when storing this many bytes is not allowed (the owner's storage quota). */
  admit: (bytes: number) => Promise<void> = async () => {},
): Promise<TensorUploadResponse> {
  if (body === null || typeof body !== 'object') throw new ValidationError([{ loc: ['body'], msg: 'must be an object', type: 'type_error.dict' }]);
  const issues: ValidationIssue[] = [];
  if (body.service !== 'embedding' && body.service !== 'tagging') issues.push({ loc: ['body', 'service'], msg: 'must be "embedding" or "tagging"', type: 'value_error.enum' });
  if (typeof body.request_id !== 'string' || !CLIENT_ID_RE.test(body.request_id)) {
    issues.push({ loc: ['body', 'request_id'], msg: 'must be 1-128 characters of letters, digits, _ . - (not "." or "..")', type: 'value_error.str.regex' });
  }
  let approx = 0;
  for (const f of ['video_input', 'audio_input'] as const) approx += Math.floor((dataChars((body as unknown as Record<string, unknown>)[f]) * 3) / 4);
  if (approx > maxBytes) throw new PayloadTooLargeError(`tensor payload is about ${approx} bytes, over the ${maxBytes}-byte limit`);
  const video = await decodeTensor(body.video_input, 'video_input', 5, ['uint8'], issues);
  if (video) {
    const [b, t, c, h, w] = video.shape;
    if (b !== 1) issues.push({ loc: ['body', 'video_input', 'shape', 0], msg: 'batch must be 1', type: 'value_error.shape' });
    if (c !== 3) issues.push({ loc: ['body', 'video_input', 'shape', 2], msg: 'channels must be 3 (RGB), layout [B, T, C, H, W]', type: 'value_error.shape' });
    if (h > TENSOR_MAX_SIDE || w > TENSOR_MAX_SIDE) issues.push({ loc: ['body', 'video_input', 'shape'], msg: `H and W must be at most ${TENSOR_MAX_SIDE}`, type: 'value_error.shape' });
    if (t < 1) issues.push({ loc: ['body', 'video_input', 'shape', 1], msg: 'needs at least one frame', type: 'value_error.shape' });
  }
  const audio = body.audio_input === undefined ? undefined : await decodeTensor(body.audio_input, 'audio_input', 3, ['float32'], issues);
  if (audio && (audio.shape[0] !== 1 || audio.shape[1] !== 1)) {
    issues.push({ loc: ['body', 'audio_input', 'shape'], msg: 'must be [1, 1, samples] (mono 16 kHz)', type: 'value_error.shape' });
  }
  let kwargs: VideoKwargs | undefined;
  if (body.video_kwargs !== undefined) {
    kwargs = validateKwargs(body.video_kwargs, video?.shape[1], issues);
  }
  if (issues.length) throw new ValidationError(issues);

  // Namespaced per owner: another owner's upload with the same request_id is a different payload.
  const base = `tensors/${owner}/${body.request_id}`;
  if (await blobs.has(`${base}/video_input.bin`)) {
    throw new ConflictError(`tensors for request_id ${body.request_id} were already uploaded: choose a new request_id`);
  }
  await admit(video!.bytes.length + (audio?.bytes.length ?? 0));
  const keys: TensorUploadResponse['r2_keys'] = { video_input: `${base}/video_input` };
  await blobs.put(`${keys.video_input}.bin`, video!.bytes);
  await blobs.put(`${keys.video_input}.json`, Buffer.from(JSON.stringify({ shape: video!.shape, dtype: video!.dtype })));
  if (audio) {
    keys.audio_input = `${base}/audio_input`;
    await blobs.put(`${keys.audio_input}.bin`, audio.bytes);
    await blobs.put(`${keys.audio_input}.json`, Buffer.from(JSON.stringify({ shape: audio.shape, dtype: audio.dtype })));
  }
  if (kwargs) {
    keys.video_kwargs = `${base}/video_kwargs`;
    await blobs.put(`${keys.video_kwargs}.json`, Buffer.from(JSON.stringify(kwargs)));
  }
  return { request_id: body.request_id, r2_keys: keys };
}

/**
 * The owner a tensor key belongs to: `tensors/OWNER/REQUEST_ID/PART`; keys from before owners
 * existed (`tensors/REQUEST_ID/PART`) belong to the default owner. Undefined: not a tensor key.
 */
export function tensorKeyOwner(key: string): string | undefined {
  const parts = key.split('/');
  if (parts[0] !== 'tensors' || !/^(video_input|audio_input|video_kwargs)$/.test(parts[parts.length - 1])) return undefined;
  if (parts.length === 4) return parts[1];
  if (parts.length === 3) return DEFAULT_OWNER;
  return undefined;
}

function validateKwargs(raw: unknown, frames: number | undefined, issues: ValidationIssue[]): VideoKwargs | undefined {
  const loc = ['body', 'video_kwargs'];
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    issues.push({ loc, msg: 'must be an object {fps, start, end, timestamps?}', type: 'type_error.dict' });
    return undefined;
  }
  const k = raw as Record<string, unknown>;
  const out: VideoKwargs = {};
  for (const f of ['fps', 'start', 'end'] as const) {
    if (k[f] === undefined) continue;
    if (typeof k[f] !== 'number' || !Number.isFinite(k[f]) || (k[f] as number) < 0 || (f === 'fps' && (k[f] as number) <= 0)) {
      issues.push({ loc: [...loc, f], msg: 'must be a non-negative number', type: 'value_error.number' });
    } else out[f] = k[f] as number;
  }
  if (k.timestamps !== undefined) {
    const ts = k.timestamps;
    if (!Array.isArray(ts) || !ts.every((x) => typeof x === 'number' && Number.isFinite(x) && x >= 0)) {
      issues.push({ loc: [...loc, 'timestamps'], msg: 'must be a list of non-negative numbers', type: 'type_error.list' });
    } else if (frames !== undefined && ts.length !== frames) {
      issues.push({ loc: [...loc, 'timestamps'], msg: `has ${ts.length} entries for ${frames} frames`, type: 'value_error.size' });
    } else out.timestamps = ts as number[];
  }
  return out;
}

/** Reads a stored video tensor back as frames (timestamps from kwargs, else from fps, else 1 fps). */
export async function loadTensorFrames(blobs: BlobStore, videoKey: string, kwargsKey?: string): Promise<Frame[]> {
  if (!(await blobs.has(`${videoKey}.bin`))) throw new NotFoundError(`tensor not found: ${videoKey}`);
  const meta = JSON.parse((await blobs.get(`${videoKey}.json`)).toString()) as { shape: number[] };
  let kwargs: VideoKwargs = {};
  if (kwargsKey) {
    if (!(await blobs.has(`${kwargsKey}.json`))) throw new NotFoundError(`tensor not found: ${kwargsKey}`);
    kwargs = JSON.parse((await blobs.get(`${kwargsKey}.json`)).toString()) as VideoKwargs;
  }
  const bytes = await blobs.get(`${videoKey}.bin`);
  const [, T, C, H, W] = meta.shape;
  const fps = kwargs.fps ?? 1;
  const start = kwargs.start ?? 0;
  const frames: Frame[] = [];
  const plane = H * W;
  for (let t = 0; t < T; t++) {
    const data = new Uint8Array(plane * 3);
    const base = t * C * plane;
    for (let i = 0; i < plane; i++) {
      data[i * 3] = bytes[base + i];
      data[i * 3 + 1] = bytes[base + plane + i];
      data[i * 3 + 2] = bytes[base + 2 * plane + i];
    }
    frames.push({ t: kwargs.timestamps?.[t] ?? start + t / fps, width: W, height: H, data });
  }
  return frames;
}

/** Packs frames [T] of packed RGB into one [1, T, 3, H, W] uint8 tensor (the wire layout). */
export function framesToTensor(frames: Frame[]): TensorObject {
  if (frames.length === 0) throw new BadRequestError('no frames to pack');
  const { width: W, height: H } = frames[0];
  const plane = W * H;
  const out = Buffer.alloc(frames.length * 3 * plane);
  frames.forEach((f, t) => {
    if (f.width !== W || f.height !== H) throw new BadRequestError('frames differ in size');
    const base = t * 3 * plane;
    for (let i = 0; i < plane; i++) {
      out[base + i] = f.data[i * 3];
      out[base + plane + i] = f.data[i * 3 + 1];
      out[base + 2 * plane + i] = f.data[i * 3 + 2];
    }
  });
  return { data: out.toString('base64'), shape: [1, frames.length, 3, H, W], dtype: 'uint8' };
}

/** An uploaded `audio_input` tensor ([1, 1, samples] float32, mono 16 kHz) as its samples. */
export async function loadTensorAudio(blobs: BlobStore, audioKey: string): Promise<Float32Array> {
  if (!(await blobs.has(`${audioKey}.bin`))) throw new NotFoundError(`tensor not found: ${audioKey}`);
  const bytes = await blobs.get(`${audioKey}.bin`);
  const out = new Float32Array(Math.floor(bytes.length / 4));
  new Uint8Array(out.buffer).set(bytes.subarray(0, out.length * 4));
  return out;
}

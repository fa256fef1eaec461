/**
 * The building blocks of the API's schemas (src/api/schemas.ts, src/api/schemas-ops.ts): scalars,
 * tensors, video sources, tag values and filters, path parameters, error bodies.
 */
import { CAPABILITY_STATUSES } from './defaults.js';
import { LIMITS, TENSOR_MAX_SIDE } from './defaults.js';
import { FILTERABLE_KINDS, type FilterName } from '../tags/registry.js';

export const str = { type: 'string' } as const;
export const listLimit = { type: 'integer', minimum: LIMITS.list.min, maximum: LIMITS.list.max, default: LIMITS.list.default } as const;
export const collectionName = { type: 'string', minLength: 1, maxLength: LIMITS.collectionName.maxLength } as const;
export const collectionDescription = { type: 'string', maxLength: LIMITS.collectionDescription.maxLength } as const;
export const num = { type: 'number' } as const;
export const vector = { type: 'array', items: num } as const;

/** Every error but a validation 422: `detail` says what went wrong, `code` is machine-readable. */
export const errorBody = {
  type: 'object',
  required: ['detail', 'code'],
  properties: { detail: str, code: str },
  additionalProperties: true,
} as const;

/**
 * Every 422, FastAPI's shape: one `{loc, msg, type}` per problem. `code` says which kind:
 * `validation_error` (a field breaks the schema) or `invalid_media` (the video itself is not
 * usable: corrupt, no video stream; loc names the source field).
 */
export const validationErrorBody = {
  type: 'object',
  required: ['detail', 'code'],
  properties: {
    detail: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['loc', 'msg', 'type'],
        properties: { loc: { type: 'array', items: { type: ['string', 'integer'] } }, msg: str, type: str },
      },
    },
    code: { type: 'string', enum: ['validation_error', 'invalid_media'] },
  },
  additionalProperties: true,
} as const;

export const side = { type: 'integer', minimum: 1, maximum: TENSOR_MAX_SIDE } as const;
export const positive = { type: 'integer', minimum: 1 } as const;
/** A tensor: base64 bytes of exactly shape × the dtype's size (checked once decoded: 422 otherwise). */
export const tensorData = { type: 'string', description: 'the bytes, base64: exactly the product of shape times the size of dtype (a 422 otherwise)' } as const;
export const videoTensor = {
  type: 'object',
  required: ['data', 'shape', 'dtype'],
  description: 'frames as uint8 RGB, layout [B, T, C, H, W]',
  properties: {
    data: tensorData,
    shape: {
      type: 'array',
      description: `[B, T, C, H, W]: batch 1, T frames, 3 channels, H and W at most ${TENSOR_MAX_SIDE}`,
      minItems: 5,
      maxItems: 5,
      prefixItems: [{ type: 'integer', const: 1 }, positive, { type: 'integer', const: 3 }, side, side],
    },
    dtype: { type: 'string', enum: ['uint8'] },
  },
  examples: [{ data: 'AAECAwQFBgcICQoL', shape: [1, 1, 3, 2, 2], dtype: 'uint8' }],
} as const;
export const audioTensor = {
  type: 'object',
  required: ['data', 'shape', 'dtype'],
  description: 'mono 16 kHz samples as float32, layout [1, 1, samples]',
  properties: {
    data: tensorData,
    shape: { type: 'array', minItems: 3, maxItems: 3, prefixItems: [{ type: 'integer', const: 1 }, { type: 'integer', const: 1 }, positive] },
    dtype: { type: 'string', enum: ['float32'] },
  },
  examples: [{ data: 'AAAAAAAAgD8=', shape: [1, 1, 2], dtype: 'float32' }],
} as const;

export const videoSource = {
  video_url: { type: 'string', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#\\s]+', description: 'http(s) URL of the video, on a public address (a private, loopback or link-local one is a 422)' },
  video_base64: { type: 'string', description: 'the video file, base64-encoded' },
  segment_seconds: { type: 'number', minimum: LIMITS.segmentSeconds.min, maximum: LIMITS.segmentSeconds.max, default: LIMITS.segmentSeconds.default },
  fps: { type: 'number', exclusiveMinimum: LIMITS.fps.min, maximum: LIMITS.fps.max, default: LIMITS.fps.default },
  model: str,
} as const;

/** "Exactly one of these fields": one alternative per field, each requiring it (two given match two: refused). */
export function oneSource<const K extends string>(fields: readonly K[]): { required: [K] }[] {
  return fields.map((f) => ({ required: [f] as [K] }));
}

export const tensorRef = {
  type: 'object',
  properties: { video_input_key: str, audio_input_key: str, video_kwargs_key: str },
  required: ['video_input_key'],
} as const;

export const tagValue = {
  type: 'object',
  required: ['label', 'confidence', 'scores'],
  properties: { label: str, confidence: num, scores: { type: 'object', additionalProperties: num } },
  additionalProperties: true,
} as const;

export const segment = { type: 'object', required: ['start', 'end'], properties: { start: num, end: num } } as const;

/** One property per filterable tag kind (src/tags/registry.ts), each `of(kind)`. */
export function perFilterable<T>(of: (kind: (typeof FILTERABLE_KINDS)[number]) => T): Record<FilterName, T> {
  return Object.fromEntries(FILTERABLE_KINDS.map((k) => [k.name, of(k)])) as Record<FilterName, T>;
}

/** The search filters: a string enum of each filterable kind's labels. */
export const tagFilters = perFilterable((k) => ({ type: 'string' as const, enum: [...k.labels] as string[], description: `only segments with this ${k.name.replace(/_/g, ' ')}` }));

export const taskStatus = { type: 'string', enum: ['pending', 'processing', 'completed', 'failed'] } as const;
export const videoStatus = { type: 'string', enum: ['uploaded', 'processing', 'processed', 'failed'] } as const;

/**
 * A video's analysis, capability by capability (src/capabilities): the state of each on its lane —
 * pending, running, done, skipped (with the reason: a model not installed, speech off) or failed
 * (with the message; a capability that fails fails only itself).
 */
export const capabilityStates = {
  type: 'object',
  description: "each capability's state for this video, by name (perception, imagenet, ocr, embedding, keywords, signature, speech, levels, …)",
  additionalProperties: {
    type: 'object',
    required: ['status', 'lane'],
    additionalProperties: true,
    properties: {
      status: { type: 'string', enum: CAPABILITY_STATUSES },
      lane: { type: 'string', description: 'the lane that runs it: pictures (the video is searchable once it is done) or speech' },
      version: { type: 'string', description: 'what made its output (done), or will (pending, running)' },
      reason: { type: 'string', description: 'why it was skipped' },
      message: { type: 'string', description: 'how it failed' },
    },
  },
} as const;

/** The video answers searches: its picture lane is done (speech may land later: its hits gain `said` then). */
export const searchableFlag = { type: 'boolean', description: 'the picture lane is done: the video answers searches (speech may still be running)' } as const;

/** A collection as listed (`owner`: whose library holds it; admins see every owner's). */
export const collectionParams = { type: 'object', required: ['collection_id'], properties: { collection_id: str } } as const;
export const videoParams = { type: 'object', required: ['video_id'], properties: { video_id: str } } as const;
export const count = { type: 'integer', minimum: 0 } as const;

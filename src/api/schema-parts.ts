/**
 * The building blocks of the API's schemas (src/api/schemas.ts, src/api/schemas-ops.ts): scalars,
 * tensors, video sources, tag values and filters, path parameters, error bodies.
 */
import { CAPABILITY_STATUSES } from './defaults.js';
import { LIMITS, TENSOR_MAX_SIDE } from './defaults.js';
import { FILTERABLE_KINDS, type FilterName } from '../tags/registry.js';

export const str = { type: 'string' } as const;
export const listLimit = { type: 'integer', minimum: LIMITS.list.min, maximum: LIMITS.list.max, default: LIMITS.list.default } as const;
export const collectionName = { type: 'string', minLength: 1, maxLength: LIMITS.collectionName.maxLength, pattern: '\\S', description: 'not only white space (leading and trailing spaces are dropped)' } as const;
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
export const tensorData = { type: 'string', contentEncoding: 'base64', description: 'the bytes, base64 (bytes that are not base64 are a 400): exactly the product of shape times the size of dtype (a 422 otherwise)' } as const;
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

/** An embedding model by id (the server's schema lists the ids it knows). */
export const modelField = { type: 'string', description: 'an embedding model installed on this server (default: the offline model); one that is not installed is a 422 naming it' } as const;

/**
 * An http(s) URL the server can parse (the WHATWG URL standard, as `new URL` does), stated as a
 * pattern so the document says what the code refuses: a host name of letters, digits, `-` and `_`
 * whose last label starts with a letter (one ending in a number is read as an IPv4 address), a
 * dotted-quad IPv4 address (0-255, no leading zeros), or an IPv6 address in brackets; a port of at
 * most 65535; optional user info; then any path, query and fragment.
 */
export const HTTP_URL_PATTERN = (() => {
  const octet = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
  const ipv4 = `${octet}(?:\\.${octet}){3}`;
  const h16 = '[0-9A-Fa-f]{1,4}';
  const ls32 = `(?:${h16}:${h16}|${ipv4})`;
  // RFC 3986's IPv6address, one alternative per place of the `::`.
  const upTo = (n: number) => (n < 0 ? '' : `(?:(?:${h16}:){0,${n}}${h16})?`);
  const ipv6 = [
    `(?:${h16}:){6}${ls32}`,
    `::(?:${h16}:){5}${ls32}`,
    `${upTo(0)}::(?:${h16}:){4}${ls32}`,
    `${upTo(1)}::(?:${h16}:){3}${ls32}`,
    `${upTo(2)}::(?:${h16}:){2}${ls32}`,
    `${upTo(3)}::${h16}:${ls32}`,
    `${upTo(4)}::${ls32}`,
    `${upTo(5)}::${h16}`,
    `${upTo(6)}::`,
  ].join('|');
  const label = '[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?';
  const lastLabel = '[A-Za-z](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?';
  const name = `(?:${label}\\.)*${lastLabel}\\.?`;
  const port = '(?::0*(?:[0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])?)?';
  const userinfo = '(?:[^\\s/?#@\\\\\\[\\]]*@)?';
  return `^[Hh][Tt][Tt][Pp][Ss]?://${userinfo}(?:${name}|${ipv4}|\\[(?:${ipv6})\\])${port}(?:[/?#\\\\][\\s\\S]*)?$`;
})();

export const videoSource = {
  video_url: {
    type: 'string',
    pattern: HTTP_URL_PATTERN,
    description:
      'http(s) URL of the video: a host name (punycode labels, xn--…, must decode), an IPv4 address or an IPv6 address in brackets, a port of at most 65535. It must be on a public address: a private, loopback or link-local one is a 422; a fetch that fails is a 502',
  },
  video_base64: { type: 'string', pattern: '\\S', contentEncoding: 'base64', description: 'the video file, base64-encoded (not empty; bytes that are not base64 are a 400)' },
  segment_seconds: { type: 'number', minimum: LIMITS.segmentSeconds.min, maximum: LIMITS.segmentSeconds.max, default: LIMITS.segmentSeconds.default },
  fps: { type: 'number', exclusiveMinimum: LIMITS.fps.min, maximum: LIMITS.fps.max, default: LIMITS.fps.default },
  model: modelField,
} as const;

/**
 * "These fields are present", for the subschemas of `if`, `then` and `not`: the fields are named in
 * `properties` too (as `true`: the parent schema says what they are), so a reader of the subschema
 * alone, like a linter, knows them.
 */
export function present<const K extends string>(fields: readonly K[]): { type: 'object'; required: K[]; properties: Record<K, true> } {
  return { type: 'object', required: [...fields], properties: Object.fromEntries(fields.map((f) => [f, true])) as Record<K, true> };
}

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

/**
 * JSON Schemas of the API's requests and responses: the server validates with them and
 * /openapi.json is generated from them, so the document cannot drift from what is enforced.
 */
const str = { type: 'string' } as const;
const num = { type: 'number' } as const;
const vector = { type: 'array', items: num } as const;

export const errorBody = {
  type: 'object',
  required: ['detail', 'code'],
  properties: {
    detail: {
      oneOf: [
        str,
        {
          type: 'array',
          items: {
            type: 'object',
            properties: { loc: { type: 'array', items: { type: ['string', 'integer'] } }, msg: str, type: str },
          },
        },
      ],
    },
    code: str,
  },
} as const;

const tensorObject = {
  type: 'object',
  required: ['data', 'shape', 'dtype'],
  properties: { data: str, shape: { type: 'array', items: { type: 'integer' } }, dtype: str },
} as const;

const videoSource = {
  video_url: { type: 'string', description: 'http(s) URL of the video' },
  video_base64: { type: 'string', description: 'the video file, base64-encoded' },
  segment_seconds: { type: 'number', minimum: 1, maximum: 60, default: 4 },
  fps: { type: 'number', exclusiveMinimum: 0, maximum: 8, default: 1 },
  model: str,
} as const;

const tensorRef = {
  type: 'object',
  properties: { video_input_key: str, audio_input_key: str, video_kwargs_key: str },
  required: ['video_input_key'],
} as const;

const tagValue = {
  type: 'object',
  properties: { label: str, confidence: num, scores: { type: 'object', additionalProperties: num } },
  additionalProperties: true,
} as const;

export const tagsSchema = {
  type: 'object',
  additionalProperties: true,
  properties: {
    shot_size: tagValue,
    shooting_angle: tagValue,
    camera_movement: tagValue,
    segments: { type: 'array', items: { type: 'object', additionalProperties: true } },
    duration: num,
    model: str,
  },
} as const;

const segment = { type: 'object', properties: { start: num, end: num } } as const;

export const schemas = {
  encodeText: {
    body: { type: 'object', required: ['text'], properties: { text: { type: 'string', minLength: 1 }, model: str } },
    response: { type: 'object', properties: { embedding: vector, model: str, dim: { type: 'integer' }, truncated: { type: 'boolean' } } },
  },
  encodeVideo: {
    body: { type: 'object', properties: videoSource },
    response: {
      type: 'object',
      properties: {
        embeddings: { type: 'array', items: vector },
        segments: { type: 'array', items: segment },
        model: str,
        dim: { type: 'integer' },
        video_embedding: vector,
        descriptions: { type: 'array', items: str },
      },
    },
  },
  asyncSubmit: {
    body: { type: 'object', properties: { ...videoSource, tensor: tensorRef } },
    response: { type: 'object', properties: { request_id: str, status: str } },
  },
  asyncStatus: {
    params: { type: 'object', required: ['request_id'], properties: { request_id: str } },
    response: {
      type: 'object',
      properties: {
        request_id: str,
        status: { type: 'string', enum: ['pending', 'processing', 'completed', 'failed'] },
        embedding: vector,
        embeddings: { type: 'array', items: vector },
        segments: { type: 'array', items: segment },
        tags: tagsSchema,
        model: str,
        dim: { type: 'integer' },
        error_message: str,
      },
    },
  },
  tagVideo: {
    body: { type: 'object', properties: videoSource },
    response: { type: 'object', properties: { tags: tagsSchema } },
  },
  tensorUpload: {
    body: {
      type: 'object',
      required: ['service', 'request_id', 'video_input'],
      properties: {
        service: { type: 'string', enum: ['embedding', 'tagging'] },
        request_id: { type: 'string', minLength: 1, maxLength: 128 },
        video_input: tensorObject,
        audio_input: tensorObject,
        video_kwargs: { type: 'object', additionalProperties: true },
      },
    },
    response: {
      type: 'object',
      properties: { request_id: str, r2_keys: { type: 'object', properties: { video_input: str, audio_input: str, video_kwargs: str } } },
    },
  },
  createCollection: {
    body: {
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string', minLength: 1, maxLength: 128 }, description: { type: 'string', maxLength: 4096 }, model: str },
    },
    response: {
      type: 'object',
      properties: { collection_id: str, name: str, description: str, created_at: str, model: str, dim: { type: 'integer' } },
    },
  },
  listCollections: {
    querystring: {
      type: 'object',
      properties: { limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 }, offset: { type: 'integer', minimum: 0, default: 0 } },
    },
    response: {
      type: 'array',
      items: {
        type: 'object',
        properties: { id: str, name: str, description: str, video_count: { type: 'integer' }, created_at: str, model: str, dim: { type: 'integer' } },
      },
    },
  },
  search: {
    params: { type: 'object', required: ['collection_id'], properties: { collection_id: str } },
    body: {
      type: 'object',
      required: ['text'],
      properties: {
        text: { type: 'string', minLength: 1 },
        top_k: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
        shot_size: str,
        camera_movement: str,
        shooting_angle: str,
        explain: { type: 'boolean' },
      },
    },
    response: {
      type: 'object',
      properties: {
        model: str,
        results: {
          type: 'array',
          items: { type: 'object', properties: { video_id: str, similarity: num, start: num, end: num, filename: str, description: str } },
        },
      },
    },
  },
  uploadVideo: {
    params: { type: 'object', required: ['collection_id'], properties: { collection_id: str } },
    response: { type: 'object', properties: { video_id: str, status: str } },
  },
  videoStatus: {
    params: { type: 'object', required: ['video_id'], properties: { video_id: str } },
    response: {
      type: 'object',
      properties: {
        video_id: str,
        status: { type: 'string', enum: ['uploaded', 'processing', 'processed', 'failed'] },
        progress: num,
        error_message: str,
      },
    },
  },
} as const;

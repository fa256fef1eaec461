/**
 * JSON Schemas of the API's requests and responses: the server validates with them and
 * /openapi.json is generated from them, so the document cannot drift from what is enforced. Their
 * building blocks are in schema-parts.ts; the operations of issues 21–22 in schemas-ops.ts; the
 * webhooks of issue 34 in schemas-webhooks.ts and search in schemas-search.ts (parts of `schemas`).
 */
import { DUPLICATE_THRESHOLDS, SPEECH_SETTINGS } from './defaults.js';
import { CLIENT_ID_RE } from './principal.js';
import {
  audioTensor,
  collectionDescription,
  collectionName,
  collectionParams,
  count,
  listLimit,
  modelField,
  num,
  oneSource,
  perFilterable,
  present,
  segment,
  str,
  tagValue,
  taskStatus,
  tensorRef,
  vector,
  videoParams,
  videoSource,
  videoStatus,
  capabilityStates,
  searchableFlag,
  videoTensor,
} from './schema-parts.js';

export { errorBody, validationErrorBody } from './schema-parts.js';
export { inPlaceSchemas, jobSchemas, operationsSchemas } from './schemas-ops.js';
export { WEBHOOK_EVENTS, WEBHOOK_TEST_EVENT, webhookSchemas, type WebhookEvent } from './schemas-webhooks.js';
import { webhookSchemas } from './schemas-webhooks.js';
import { searchSchemas } from './schemas-search.js';

export const tagsSchema = {
  type: 'object',
  required: ['segments', 'duration', 'model'],
  additionalProperties: true,
  properties: {
    ...perFilterable(() => tagValue),
    segments: { type: 'array', items: { ...segment, additionalProperties: true } },
    duration: num,
    model: str,
  },
} as const;

const statusCounts = {
  type: 'object',
  required: ['uploaded', 'processing', 'processed', 'failed'],
  properties: { uploaded: count, processing: count, processed: count, failed: count },
} as const;
const deleted = {
  type: 'object',
  required: ['id', 'deleted'],
  additionalProperties: true,
  properties: { id: str, deleted: { type: 'boolean', const: true }, videos: { type: 'integer', minimum: 0 } },
} as const;
const videoSummary = {
  type: 'object',
  required: ['video_id', 'collection_id', 'filename', 'status', 'size_bytes', 'created_at'],
  additionalProperties: true,
  properties: {
    video_id: str,
    collection_id: str,
    filename: str,
    status: videoStatus,
    progress: { type: 'number', minimum: 0, maximum: 100 },
    error_message: str,
    duration: num,
    width: { type: 'integer' },
    height: { type: 'integer' },
    fps: num,
    codec: str,
    size_bytes: { type: 'integer', minimum: 0 },
    created_at: str,
    in_place: { type: 'boolean', const: true, description: "indexed in place: the video is the user's own file where it lies (never copied, never deleted)" },
    missing: { type: 'boolean', const: true, description: 'in place, and its file cannot be read: not where it was (moved, renamed or deleted: `vidembed rescan` follows moved files), replaced by a link, or changed' },
    missing_reason: { type: 'string', description: 'why its file in place cannot be read (with `missing`)' },
    relative_path: {
      type: 'string',
      description: "in place: the file's path relative to the folder it was indexed from (`card-01/C0001.MP4`, `/` between names); a name or path GET /videos?name= finds it by",
    },
  },
} as const;

const collectionSummary = {
  type: 'object',
  required: ['id', 'name', 'description', 'video_count', 'created_at', 'model', 'dim'],
  additionalProperties: true,
  properties: {
    id: str,
    owner: str,
    name: str,
    description: str,
    video_count: { type: 'integer', minimum: 0 },
    created_at: str,
    model: str,
    dim: { type: 'integer', minimum: 1 },
    recipe: { type: 'object', additionalProperties: str, description: 'analyzer versions behind its vectors (`speech`: the speech engine behind its transcripts)' },
    speech: { type: 'string', enum: [...SPEECH_SETTINGS], description: 'its speech setting (`collection create --speech`)' },
    language: { type: 'string', description: 'the language spoken in its videos (BCP 47, `collection create --language`)' },
    needs_reindex: { type: 'boolean', description: 'the engine would make its vectors differently now: POST /collections/{id}/reindex' },
  },
} as const;

/** A 1×1×3×2×2 uint8 frame (12 bytes), the smallest valid `video_input`. */
const tinyTensor = { data: 'AAECAwQFBgcICQoL', shape: [1, 1, 3, 2, 2], dtype: 'uint8' } as const;

/**
 * Per operation: `body`, `querystring` and `params` are what the server validates with; `response`
 * (the success body) and `examples` (request bodies) are documentation only and never reach the
 * framework, whose response serializer would drop fields the schema does not name.
 */
export const schemas = {
  health: {
    // Liveness: always 200 while the process runs; `degraded` names the dependencies that are down (docs/operations.md).
    response: {
      type: 'object',
      required: ['status'],
      properties: {
        status: { type: 'string', enum: ['ok', 'degraded'], description: 'ok: every dependency answered its last probe' },
        database: { type: 'string', enum: ['up', 'down'], description: 'only when degraded' },
        storage: { type: 'string', enum: ['up', 'down'], description: 'the blob store; only when degraded' },
        disk: { type: 'string', enum: ['ok', 'full'], description: "full: a disk the server writes to is full (calls that store anything answer 507); only when degraded" },
        detail: str,
      },
    },
  },
  openapi: {
    response: {
      type: 'object',
      required: ['openapi', 'info', 'paths'],
      additionalProperties: true,
      properties: { openapi: str, info: { type: 'object', additionalProperties: true }, paths: { type: 'object', additionalProperties: true } },
    },
  },
  encodeText: {
    body: { type: 'object', required: ['text'], properties: { text: { type: 'string', minLength: 1, pattern: '\\S', description: 'not only white space' }, model: modelField } },
    response: {
      type: 'object',
      required: ['embedding', 'model', 'dim', 'truncated'],
      additionalProperties: true,
      properties: { embedding: vector, model: str, dim: { type: 'integer', minimum: 1 }, truncated: { type: 'boolean' } },
    },
    examples: {
      query: { summary: 'embed a search phrase', value: { text: 'a dog running on the beach' } },
    },
  },
  encodeVideo: {
    body: { type: 'object', properties: videoSource, oneOf: oneSource(['video_url', 'video_base64']) },
    response: {
      type: 'object',
      required: ['embeddings', 'segments', 'model', 'dim', 'video_embedding'],
      additionalProperties: true,
      properties: {
        embeddings: { type: 'array', items: vector },
        segments: { type: 'array', items: segment },
        model: str,
        dim: { type: 'integer', minimum: 1 },
        video_embedding: vector,
        descriptions: { type: 'array', items: str },
      },
    },
    examples: {
      url: { summary: 'a video by URL', value: { video_url: 'https://example.com/clips/beach.mp4', segment_seconds: 4, fps: 1 } },
      base64: { summary: 'the video bytes inline', value: { video_base64: 'AAAAIGZ0eXBpc29tAAACAGlzb21pc28y', fps: 2 } },
    },
  },
  asyncSubmit: {
    body: { type: 'object', properties: { ...videoSource, tensor: tensorRef }, oneOf: oneSource(['video_url', 'video_base64', 'tensor']) },
    response: { type: 'object', required: ['request_id', 'status'], additionalProperties: true, properties: { request_id: str, status: taskStatus } },
    examples: {
      url: { summary: 'a video by URL', value: { video_url: 'https://example.com/clips/beach.mp4' } },
      tensor: { summary: 'tensors uploaded first to /files/upload/tensors', value: { tensor: { video_input_key: 'tensors/alice/clip-0001/video_input' } } },
    },
  },
  asyncStatus: {
    params: { type: 'object', required: ['request_id'], properties: { request_id: str } },
    response: {
      type: 'object',
      required: ['request_id', 'status'],
      additionalProperties: true,
      properties: {
        request_id: str,
        status: taskStatus,
        embedding: vector,
        embeddings: { type: 'array', items: vector },
        segments: { type: 'array', items: segment },
        tags: tagsSchema,
        model: str,
        dim: { type: 'integer', minimum: 1 },
        error_message: str,
      },
      allOf: [
        // A failed task says why; a completed one carries its result (an embedding task's vectors, or a tagging task's tags).
        { if: { type: 'object', required: ['status'], properties: { status: { const: 'failed' } } }, then: present(['error_message']) },
        {
          if: { type: 'object', required: ['status'], properties: { status: { const: 'completed' } } },
          then: { type: 'object', anyOf: [present(['embedding', 'embeddings', 'segments', 'model', 'dim']), present(['tags'])] },
        },
      ],
    },
  },
  tagVideo: {
    body: { type: 'object', properties: videoSource, oneOf: oneSource(['video_url', 'video_base64']) },
    response: { type: 'object', required: ['tags'], additionalProperties: true, properties: { tags: tagsSchema } },
    examples: {
      url: { summary: 'tag a video by URL', value: { video_url: 'https://example.com/clips/beach.mp4', fps: 2 } },
    },
  },
  tensorUpload: {
    body: {
      type: 'object',
      required: ['service', 'request_id', 'video_input'],
      properties: {
        service: { type: 'string', enum: ['embedding', 'tagging'] },
        request_id: { type: 'string', pattern: CLIENT_ID_RE.source, description: 'letters, digits, _ . - (1-128; not "." or "..")' },
        video_input: videoTensor,
        audio_input: audioTensor,
        video_kwargs: {
          type: 'object',
          additionalProperties: true,
          description: 'how the frames sit in time (default: 1 frame per second from 0)',
          properties: {
            fps: { type: 'number', exclusiveMinimum: 0 },
            start: { type: 'number', minimum: 0 },
            end: { type: 'number', minimum: 0 },
            timestamps: { type: 'array', items: { type: 'number', minimum: 0 }, description: 'seconds of each frame: one per frame of video_input (a 422 otherwise)' },
          },
        },
      },
    },
    response: {
      type: 'object',
      required: ['request_id', 'r2_keys'],
      additionalProperties: true,
      properties: {
        request_id: str,
        r2_keys: { type: 'object', required: ['video_input'], additionalProperties: true, properties: { video_input: str, audio_input: str, video_kwargs: str } },
      },
    },
    examples: {
      frame: {
        summary: 'one 2×2 RGB frame, layout [B, T, C, H, W]',
        value: { service: 'embedding', request_id: 'clip-0001', video_input: tinyTensor, video_kwargs: { fps: 1 } },
      },
    },
  },
  createCollection: {
    body: {
      type: 'object',
      required: ['name'],
      properties: {
        name: collectionName,
        description: collectionDescription,
        model: modelField,
        speech: { type: 'string', enum: [...SPEECH_SETTINGS], default: 'auto', description: 'who transcribes what is said: `auto` (the best engine installed), `off`, or an engine' },
        language: {
          type: 'string',
          pattern: '^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{1,8})*$',
          default: 'en',
          description: 'the language spoken in its videos (BCP 47). Speech is only transcribed by an engine that knows it; otherwise each video says why it has no transcript',
        },
      },
    },
    response: {
      type: 'object',
      required: ['collection_id', 'name', 'description', 'created_at', 'model', 'dim'],
      additionalProperties: true,
      properties: {
        collection_id: str,
        owner: str,
        name: str,
        description: str,
        created_at: str,
        model: str,
        dim: { type: 'integer', minimum: 1 },
        speech: { type: 'string', enum: [...SPEECH_SETTINGS] },
        language: str,
      },
    },
    examples: {
      basic: { summary: 'a collection on the default model', value: { name: 'holiday-footage', description: 'summer 2024, unedited' } },
    },
  },
  listCollections: {
    querystring: {
      type: 'object',
      properties: { limit: listLimit, offset: { type: 'integer', minimum: 0, default: 0 } },
    },
    response: { type: 'array', items: collectionSummary },
  },
  reindexCollection: {
    params: { type: 'object', required: ['collection_id'], properties: { collection_id: str } },
    querystring: {
      type: 'object',
      properties: { all: { type: 'boolean', default: false, description: 'run every capability of every video again (by default only what changed: a model pulled, a version, the speech setting)' } },
    },
    response: {
      type: 'object',
      required: ['collection_id', 'queued'],
      additionalProperties: true,
      properties: {
        collection_id: str,
        queued: { type: 'integer', minimum: 0, description: 'videos queued (those with something to run again)' },
        video_ids: { type: 'array', items: str, description: 'the videos queued' },
        capabilities: { type: 'object', additionalProperties: { type: 'integer', minimum: 0 }, description: 'how many videos run each capability again' },
        decodes: { type: 'integer', minimum: 0, description: 'of the videos queued, how many are decoded again (the rest run on their stored keyframes and outputs)' },
      },
    },
  },
  duplicates: {
    params: collectionParams,
    querystring: {
      type: 'object',
      properties: {
        min_similarity: { type: 'number', exclusiveMinimum: 0, maximum: 1, default: DUPLICATE_THRESHOLDS.minSimilarity, description: 'group videos at this similarity or above' },
        segments: { type: 'boolean', default: false, description: "say where each segment of a group's first video is in the others" },
      },
    },
    response: {
      type: 'object',
      required: ['collection_id', 'min_similarity', 'groups', 'compared', 'missing_signature'],
      additionalProperties: true,
      properties: {
        collection_id: str,
        min_similarity: num,
        compared: { type: 'integer', minimum: 0, description: 'videos compared: those with a visual signature' },
        missing_signature: { type: 'integer', minimum: 0, description: 'processed videos without a visual signature (an earlier release processed them): reindex the collection' },
        warnings: { type: 'array', items: str },
        groups: {
          type: 'array',
          items: {
            type: 'object',
            required: ['similarity', 'videos'],
            additionalProperties: true,
            properties: {
              similarity: { type: 'number', minimum: 0, maximum: 1, description: 'the weakest link that holds the group together' },
              videos: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['video_id', 'filename'],
                  additionalProperties: true,
                  properties: { video_id: str, filename: str, duration: num, similarity: { type: 'number', minimum: 0, maximum: 1, description: "to the group's first video" } },
                },
              },
              segments: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['start', 'end', 'matches'],
                  properties: {
                    start: num,
                    end: num,
                    matches: {
                      type: 'array',
                      items: { type: 'object', required: ['video_id', 'start', 'end', 'similarity'], properties: { video_id: str, start: num, end: num, similarity: num } },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
  uploadVideo: {
    params: { type: 'object', required: ['collection_id'], properties: { collection_id: str } },
    querystring: {
      type: 'object',
      properties: {
        force: { type: 'boolean', default: false, description: 'store it even if the collection already holds the same bytes' },
        skip_duplicates: { type: 'boolean', default: false, description: "skip it when its pictures are already in a video of the collection (re-encoded, resized or trimmed)" },
      },
    },
    response: {
      type: 'object',
      required: ['video_id', 'status'],
      additionalProperties: true,
      properties: {
        video_id: str,
        status: videoStatus,
        duplicate: { type: 'boolean', description: 'the collection already held these bytes (or, with skip_duplicates, these pictures): video_id is that video, nothing was stored' },
        near_duplicate: {
          type: 'object',
          description: "with skip_duplicates: the video that already holds the file's pictures",
          required: ['filename', 'similarity', 'coverage'],
          properties: { filename: str, similarity: { type: 'number', minimum: 0, maximum: 1 }, coverage: { type: 'number', minimum: 0, maximum: 1, description: "share of the file's pictures found in that video" } },
        },
      },
    },
    examples: {
      file: { summary: 'one part named "file" holding the video', value: { file: '(binary contents of beach.mp4)' } },
    },
  },
  videoStatus: {
    params: { type: 'object', required: ['video_id'], properties: { video_id: str } },
    response: {
      type: 'object',
      required: ['video_id', 'status'],
      additionalProperties: true,
      properties: {
        video_id: str,
        status: videoStatus,
        progress: { type: 'number', minimum: 0, maximum: 100 },
        error_message: str,
        searchable: searchableFlag,
        analysis: capabilityStates,
      },
    },
  },
  collectionDetails: {
    params: collectionParams,
    response: {
      ...collectionSummary,
      required: [...collectionSummary.required, 'counts'],
      properties: { ...collectionSummary.properties, counts: statusCounts },
    },
  },
  updateCollection: {
    params: collectionParams,
    body: {
      type: 'object',
      minProperties: 1,
      additionalProperties: false,
      properties: { name: collectionName, description: collectionDescription },
    },
    response: collectionSummary,
    examples: { rename: { summary: 'a new name', value: { name: 'holidays-2026' } }, describe: { summary: 'a new description', value: { description: 'phone clips from the trip' } } },
  },
  deleteCollection: { params: collectionParams, response: deleted },
  listVideos: {
    params: collectionParams,
    querystring: {
      type: 'object',
      properties: {
        status: videoStatus,
        limit: listLimit,
        offset: { type: 'integer', minimum: 0, default: 0 },
      },
    },
    response: { type: 'array', items: videoSummary },
  },
  findVideos: {
    querystring: {
      type: 'object',
      required: ['name'],
      properties: {
        name: {
          type: 'string',
          minLength: 1,
          maxLength: 4096,
          description:
            'a video id, a file name (`C0001.MP4`, exactly: case counts) or the end of its path in place (`card-01/C0001.MP4`: the path relative to the folder it was indexed from, or any longer end of it)',
        },
        collection: { type: 'string', minLength: 1, description: "only this collection's videos (id or name); default: every collection the caller may see" },
      },
    },
    response: { type: 'array', items: videoSummary, description: 'every video the name fits, oldest first (at most 100): none, one, or several to choose from by id' },
  },
  videoDetails: {
    params: videoParams,
    response: {
      ...videoSummary,
      required: [...videoSummary.required, 'segments'],
      properties: {
        ...videoSummary.properties,
        searchable: searchableFlag,
        analysis: capabilityStates,
        tags: { type: 'object', additionalProperties: true },
        playback: { type: 'string', enum: ['original', 'proxy', 'none'], description: 'how a browser plays it: its own file, a playback copy made at ingest (H.264 MP4), or not at all; absent before processing' },
        playback_url: { type: 'string', description: 'API path of what plays in a browser: /videos/{id}/file when the original does, else /videos/{id}/playback; absent when nothing does' },
        segments: {
          type: 'array',
          items: {
            type: 'object',
            required: ['start', 'end', 'description'],
            additionalProperties: true,
            properties: { start: num, end: num, thumbnail_url: str, description: str, tags: { type: 'object', additionalProperties: true }, facts: { type: 'object', additionalProperties: true } },
          },
        },
      },
    },
  },
  deleteVideo: { params: videoParams, response: deleted },
  reprocessVideo: { params: videoParams, response: { type: 'object', required: ['video_id', 'status'], additionalProperties: true, properties: { video_id: str, status: videoStatus } } },
  videoFile: { params: videoParams },
  videoTranscript: {
    params: videoParams,
    querystring: {
      type: 'object',
      properties: {
        format: {
          type: 'string',
          enum: ['json', 'txt', 'srt', 'vtt'],
          default: 'json',
          description: 'json (words with times), txt (lines), srt or vtt (subtitles a player loads)',
        },
      },
    },
    response: {
      type: 'object',
      required: ['video_id', 'engine', 'language', 'duration', 'words'],
      additionalProperties: true,
      properties: {
        video_id: str,
        engine: { type: 'string', description: 'the engine and model that heard it; empty when none did' },
        language: str,
        duration: num,
        words: {
          type: 'array',
          items: { type: 'object', required: ['w', 'start', 'end', 'conf'], properties: { w: str, start: num, end: num, conf: { type: 'number', minimum: 0, maximum: 1 } } },
        },
        reason: { type: 'string', description: 'why there are no words (no audio track, silent, speech off, no engine installed, recognizer failed)' },
      },
    },
  },
  videoThumbnail: {
    params: videoParams,
    querystring: { type: 'object', properties: { t: { type: 'number', minimum: 0, description: 'seconds: the keyframe of the segment at this moment (default: the poster)' } } },
  },
  ...searchSchemas,
  ...webhookSchemas,
} as const;


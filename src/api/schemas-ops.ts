/**
 * Schemas of the operations added for running a shared library (issue 21: jobs, readiness,
 * deleting tasks and tensor uploads) and footage in place (issue 22: library scans). Re-exported by
 * src/api/schemas.ts, the single source the server validates with and /openapi.json comes from.
 */
import { JOB_KINDS } from './defaults.js';
import { CLIENT_ID_RE } from './principal.js';
import { collectionParams, count, str } from './schema-parts.js';

// ---- jobs: the queue as the API shows it (issue 21; src/services/queue.ts) -------------------

const jobSummary = {
  type: 'object',
  required: ['job_id', 'kind', 'subject_id', 'owner', 'status', 'attempts', 'created_at'],
  additionalProperties: true,
  properties: {
    job_id: str,
    kind: { type: 'string', enum: JOB_KINDS, description: "video.process plans a video's analysis and queues its lanes (video.pictures, video.speech)" },
    subject_id: { type: 'string', description: 'the video (video.*) or task (task.*) the job works on' },
    owner: str,
    status: { type: 'string', enum: ['queued', 'running', 'done', 'failed'] },
    attempts: count,
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

export const jobSchemas = {
  listJobs: {
    querystring: { type: 'object', properties: { owner: { type: 'string', description: "admins: only this owner's jobs (other keys always see their own)" } } },
    response: { type: 'object', required: ['jobs'], properties: { jobs: { type: 'array', items: jobSummary } } },
  },
  cancelJob: {
    params: { type: 'object', required: ['job_id'], properties: { job_id: str } },
    response: { ...jobSummary, required: [...jobSummary.required, 'cancelled'], properties: { ...jobSummary.properties, cancelled: { type: 'boolean', const: true } } },
  },
} as const;

/**
 * Readiness (issue 21): `/readyz` answers 200 while the database and the blob store answer, else
 * 503 with Retry-After (the error body), so a load balancer stops sending traffic.
 */
const requestDeleted = { type: 'object', required: ['request_id', 'deleted'], properties: { request_id: str, deleted: { type: 'boolean', const: true } } } as const;

export const operationsSchemas = {
  ready: {
    response: { type: 'object', required: ['status'], properties: { status: { type: 'string', const: 'ready' } } },
  },
  // Storage that can be reclaimed: a task (row, result, payload) and a tensor upload, by their owner.
  deleteTask: { params: { type: 'object', required: ['request_id'], properties: { request_id: str } }, response: requestDeleted },
  deleteTensors: {
    params: { type: 'object', required: ['request_id'], properties: { request_id: { type: 'string', pattern: CLIENT_ID_RE.source } } },
    response: requestDeleted,
  },
} as const;

// ---- Footage in place (issue 22): a library scan of folders a server's admin configured. ----

const scanItem = { type: 'object', required: ['video_id', 'file'], properties: { video_id: str, file: str } } as const;

export const inPlaceSchemas = {
  libraryScan: {
    params: collectionParams,
    body: {
      type: 'object',
      additionalProperties: false,
      properties: {
        path: {
          type: 'string',
          minLength: 1,
          maxLength: 4096,
          description:
            "a folder inside one of the server's library folders (`vidembed serve --library DIR`): absolute, or relative to a library folder. Indexed in place and remembered for later scans. Without it, the collection's folders are scanned again",
        },
        include_deleted: {
          type: 'boolean',
          description: 'also take back files deleted from the collection before (false by default: a scan leaves them out)',
        },
      },
    },
    response: {
      type: 'object',
      required: ['collection_id', 'collection_name', 'folders', 'added', 'changed', 'moved', 'missing', 'unchanged', 'skipped'],
      additionalProperties: true,
      properties: {
        collection_id: str,
        collection_name: str,
        folders: { type: 'array', items: str, description: 'the folders the collection indexes in place' },
        added: { type: 'array', items: scanItem, description: 'new videos (queued for processing)' },
        changed: { type: 'array', items: scanItem, description: 'files whose bytes changed (processed again)' },
        moved: {
          type: 'array',
          items: { type: 'object', required: ['video_id', 'from', 'to'], properties: { video_id: str, from: str, to: str } },
          description: 'files moved or renamed (the same fingerprint): the same video at its new path',
        },
        missing: {
          type: 'array',
          items: { type: 'object', required: ['video_id', 'file'], properties: { video_id: str, file: str, reason: { type: 'string', description: 'why its file cannot be read (gone, replaced by a link, outside the library folders, changed)' } } },
          description: 'videos whose file is gone or is not the file indexed (kept, listed as missing, never read)',
        },
        unchanged: count,
        skipped: { type: 'array', items: { type: 'object', required: ['file', 'reason'], properties: { file: str, reason: str } }, description: 'files not taken, and why' },
      },
    },
    examples: { folder: { summary: 'index a folder of the library in place', value: { path: 'card-2026-05' } } },
  },
} as const;

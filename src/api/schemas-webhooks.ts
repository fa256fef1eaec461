/**
 * Webhooks (issue 34): an owner registers URLs that are told when a video is processed or fails
 * and when an async task is done or fails, in the Standard Webhooks format (docs/webhooks.md).
 * Spread into `schemas` (src/api/schemas.ts), the single source the server validates with, the
 * facade validates with and /openapi.json comes from.
 */
import { count, str } from './schema-parts.js';

/** The events an endpoint can subscribe to (all of them by default). */
export const WEBHOOK_EVENTS = ['video.processed', 'video.failed', 'task.done', 'task.failed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
/** What `POST /webhooks/{id}/test` sends: to that endpoint alone, whatever it subscribes to. */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

const time = { type: 'string', format: 'date-time' } as const;
const webhookParams = { type: 'object', required: ['webhook_id'], properties: { webhook_id: str } } as const;

const webhookSummary = {
  type: 'object',
  required: ['webhook_id', 'url', 'events', 'collection_id', 'description', 'created_at'],
  additionalProperties: true,
  properties: {
    webhook_id: str,
    url: str,
    events: { type: 'array', items: { type: 'string', enum: [...WEBHOOK_EVENTS] } },
    collection_id: { type: ['string', 'null'], description: "only this collection's video events; null: every event of the owner" },
    description: str,
    created_at: time,
  },
} as const;

const attempt = {
  type: 'object',
  required: ['attempt', 'at', 'duration_ms'],
  properties: {
    attempt: { type: 'integer', minimum: 1 },
    at: time,
    status_code: { type: 'integer', description: "the receiver's HTTP status (absent: no answer came)" },
    error: { type: 'string', description: 'why the attempt failed (absent on a 2xx)' },
    duration_ms: count,
  },
} as const;

const delivery = {
  type: 'object',
  required: ['delivery_id', 'event_id', 'event_type', 'status', 'attempts', 'created_at', 'attempt_log'],
  additionalProperties: true,
  properties: {
    delivery_id: str,
    event_id: { type: 'string', description: 'the webhook-id header: the same on every attempt (receivers dedupe by it)' },
    event_type: str,
    status: { type: 'string', enum: ['pending', 'delivered', 'failed'], description: 'pending: due at next_attempt_at (or being sent); failed: retried for 24 hours, then given up' },
    attempts: count,
    created_at: time,
    next_attempt_at: time,
    last_status_code: { type: 'integer' },
    last_error: str,
    attempt_log: { type: 'array', items: attempt },
  },
} as const;

export const webhookSchemas = {
  createWebhook: {
    body: {
      type: 'object',
      required: ['url'],
      additionalProperties: false,
      properties: {
        url: {
          type: 'string',
          maxLength: 2048,
          pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#\\s]+',
          description: 'where events are POSTed: http(s) on a public address (a private, loopback or link-local one is a 422 unless the server allows them: `serve --allow-private-webhooks`)',
        },
        events: {
          type: 'array',
          minItems: 1,
          uniqueItems: true,
          items: { type: 'string', enum: [...WEBHOOK_EVENTS] },
          description: 'the events it receives; default: all of them',
        },
        collection: { type: 'string', minLength: 1, maxLength: 256, description: "a collection (id or name): only that collection's video events (no task events)" },
        description: { type: 'string', maxLength: 500 },
      },
    },
    response: {
      ...webhookSummary,
      required: [...webhookSummary.required, 'secret'],
      properties: {
        ...webhookSummary.properties,
        secret: { type: 'string', description: 'whsec_…: the key that signs every delivery (webhook-signature); shown this once' },
      },
    },
    examples: {
      all: { summary: 'every event of the key’s owner', value: { url: 'https://hooks.example.com/vidembed' } },
      processed: { summary: 'videos of one collection, once processed', value: { url: 'https://hooks.example.com/vidembed', events: ['video.processed', 'video.failed'], collection: 'demo' } },
    },
  },
  listWebhooks: {
    response: { type: 'object', required: ['webhooks'], properties: { webhooks: { type: 'array', items: webhookSummary } } },
  },
  getWebhook: { params: webhookParams, response: webhookSummary },
  deleteWebhook: {
    params: webhookParams,
    response: { type: 'object', required: ['webhook_id', 'deleted'], properties: { webhook_id: str, deleted: { type: 'boolean', const: true } } },
  },
  testWebhook: {
    params: webhookParams,
    response: {
      type: 'object',
      required: ['webhook_id', 'delivery_id', 'event_id', 'event_type'],
      properties: { webhook_id: str, delivery_id: str, event_id: str, event_type: { type: 'string', const: WEBHOOK_TEST_EVENT } },
    },
  },
  webhookDeliveries: {
    params: webhookParams,
    querystring: {
      type: 'object',
      properties: {
        limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
        offset: { type: 'integer', minimum: 0, default: 0 },
      },
    },
    response: { type: 'object', required: ['webhook_id', 'deliveries'], properties: { webhook_id: str, deliveries: { type: 'array', items: delivery } } },
  },
} as const;

/**
 * Webhooks (issue 34): an owner's endpoints, and the delivery of the outbox (src/store/webhooks)
 * that workers run beside their jobs (src/runtime/deliveries.ts). Each delivery attempt is signed
 * the Standard Webhooks way (./webhook-signature.ts), sent under the SSRF guard of `video_url`
 * (src/net/post-webhook.ts), logged with its status code, and on failure retried with exponential
 * backoff for 24 hours. An owner sees, tests and receives only their own; ids of another owner's
 * endpoints answer 404.
 */
import { NotFoundError } from '../api/errors.js';
import { canSee, type Principal } from '../api/principal.js';
import { WEBHOOK_EVENTS, WEBHOOK_TEST_EVENT } from '../api/schemas.js';
import type {
  CreateWebhookRequest,
  CreateWebhookResponse,
  DeleteWebhookResponse,
  ListWebhooksResponse,
  TestWebhookResponse,
  WebhookDeliveriesRequest,
  WebhookDeliveriesResponse,
  WebhookDeliverySummary,
  WebhookSummary,
} from '../api/types.js';
import { checkWebhookUrl, postWebhook } from '../net/post-webhook.js';
import type { AttemptOutcome, ClaimedDelivery, DeliveryAttempt, WebhookDelivery, WebhookEndpointRow } from '../store/webhooks/types.js';
import type { Library, WebhookSettings } from './library.js';
import { webhookEvent } from './webhook-events.js';
import { newWebhookSecret, signatureHeaders } from './webhook-signature.js';

const iso = (ms: number) => new Date(ms).toISOString();

function summary(e: WebhookEndpointRow): WebhookSummary {
  return { webhook_id: e.id, url: e.url, events: e.events as WebhookSummary['events'], collection_id: e.collection_id, description: e.description, created_at: iso(e.created_at) };
}

function deliverySummary(d: WebhookDelivery, log: DeliveryAttempt[]): WebhookDeliverySummary {
  return {
    delivery_id: d.id,
    event_id: d.event_id,
    event_type: d.event_type,
    status: d.status,
    attempts: d.attempts,
    created_at: iso(d.created_at),
    ...(d.next_attempt_at !== null ? { next_attempt_at: iso(d.next_attempt_at) } : {}),
    ...(d.last_status_code !== null ? { last_status_code: d.last_status_code } : {}),
    ...(d.last_error !== null ? { last_error: d.last_error } : {}),
    attempt_log: log.map((a) => ({
      attempt: a.attempt,
      at: iso(a.at),
      ...(a.status_code !== null ? { status_code: a.status_code } : {}),
      ...(a.error !== null ? { error: a.error } : {}),
      duration_ms: a.duration_ms,
    })),
  };
}

/**
 * The wait before the next attempt after `attempts` failed ones: the first retry after
 * `firstRetryMs`, each later one twice as long, at most `maxRetryMs`, with ±20 % jitter so
 * deliveries that failed together do not come back together. A delivery is given up once it has
 * been retried for `retryForMs` (its age at the failed attempt).
 */
export function nextAttempt(attempts: number, ageMs: number, s: Pick<WebhookSettings, 'firstRetryMs' | 'maxRetryMs' | 'retryForMs'>, random = Math.random): AttemptOutcome {
  if (ageMs >= s.retryForMs) return { failed: true };
  const base = Math.min(s.maxRetryMs, s.firstRetryMs * 2 ** Math.min(Math.max(attempts - 1, 0), 40));
  return { retryInMs: Math.round(base * (0.8 + 0.4 * random())) };
}

export type DeliveryResult = 'delivered' | 'retry' | 'failed' | 'lost' | 'released';

export class WebhooksService {
  constructor(private readonly lib: Library) {}

  get settings(): WebhookSettings {
    return this.lib.webhooks;
  }

  /** An endpoint `p` may see, else 404. */
  private async endpoint(p: Principal, id: string): Promise<WebhookEndpointRow> {
    const e = await this.lib.catalog.webhooks.endpoint(id);
    if (!e || !canSee(p, e.owner)) throw new NotFoundError(`webhook not found: ${id}`);
    return e;
  }

  /**
   * Registers an endpoint for `p`'s owner, answering its secret this once. The URL passes the SSRF
   * guard unless private targets are allowed (`opts.allowPrivate`, default the library's setting:
   * the operator's grant); a collection is named by id or name and must be one `p` sees.
   */
  async create(p: Principal, req: CreateWebhookRequest, opts: { allowPrivate?: boolean } = {}): Promise<CreateWebhookResponse> {
    const allowPrivate = opts.allowPrivate ?? this.settings.allowPrivate;
    await checkWebhookUrl(req.url, { allowPrivate, resolve: this.settings.resolve });
    const collection = req.collection === undefined ? undefined : await this.lib.collection(p, req.collection);
    const secret = newWebhookSecret();
    const row = await this.lib.catalog.webhooks.addEndpoint({
      owner: p.owner,
      url: req.url,
      secret,
      events: req.events ? [...req.events] : [...WEBHOOK_EVENTS],
      collection_id: collection?.id ?? null,
      description: req.description ?? '',
      allow_private: allowPrivate,
    });
    return { ...summary(row), secret };
  }

  /** `p`'s owner's endpoints, oldest first (an admin's too: their own; others' are reached by id). */
  async list(p: Principal): Promise<ListWebhooksResponse> {
    return { webhooks: (await this.lib.catalog.webhooks.endpoints(p.owner)).map(summary) };
  }

  async get(p: Principal, id: string): Promise<WebhookSummary> {
    return summary(await this.endpoint(p, id));
  }

  /** Removes an endpoint with its pending deliveries and its log. */
  async remove(p: Principal, id: string): Promise<DeleteWebhookResponse> {
    await this.endpoint(p, id);
    await this.lib.catalog.webhooks.removeEndpoint(id);
    return { webhook_id: id, deleted: true };
  }

  /** Queues a `webhook.test` event for this endpoint alone; the deliveries log shows how it went. */
  async test(p: Principal, id: string): Promise<TestWebhookResponse> {
    const e = await this.endpoint(p, id);
    const event = webhookEvent(WEBHOOK_TEST_EVENT, e.owner, e.collection_id, { webhook_id: e.id, message: 'a test event from vidembed' });
    const [deliveryId] = await this.lib.catalog.webhooks.emit(event, e.id);
    await this.lib.onWorkQueued(); // the local CLI starts a worker to send it
    return { webhook_id: e.id, delivery_id: deliveryId, event_id: event.id, event_type: WEBHOOK_TEST_EVENT };
  }

  /** An endpoint's deliveries, newest first, each with its attempts. */
  async deliveries(p: Principal, id: string, req: WebhookDeliveriesRequest = {}): Promise<WebhookDeliveriesResponse> {
    await this.endpoint(p, id);
    const { webhooks } = this.lib.catalog;
    const rows = await webhooks.deliveries(id, req.limit ?? 20, req.offset ?? 0);
    const log = await webhooks.attempts(rows.map((d) => d.id));
    return { webhook_id: id, deliveries: rows.map((d) => deliverySummary(d, log.filter((a) => a.delivery_id === d.id))) };
  }

  // ---- delivery (run by workers: src/runtime/deliveries.ts) ------------------------------------

  /** Leases up to `limit` deliveries to `workerId`, those due longest ago first. */
  claim(workerId: string, limit = 1): Promise<ClaimedDelivery[]> {
    return this.lib.catalog.webhooks.claimMany(workerId, this.settings.leaseMs, limit);
  }

  /** Deliveries due now that no worker holds (an idle worker with some does not retire). */
  dueCount(): Promise<number> {
    return this.lib.catalog.webhooks.dueCount();
  }

  /**
   * One attempt of a claimed delivery: signed, POSTed within the time budget (shorter than the
   * lease, so no other worker takes the delivery over while it is in flight), then settled under
   * the claim's token: delivered on a 2xx, else retried later or, after 24 hours, given up.
   * `signal` (the worker stopping) abandons the attempt and hands the delivery back.
   */
  async deliver(d: ClaimedDelivery, signal?: AbortSignal): Promise<DeliveryResult> {
    const s = this.settings;
    const { webhooks } = this.lib.catalog;
    const timeoutMs = Math.min(s.timeoutMs, Math.max(1, s.leaseMs - 1000));
    let result;
    try {
      result = await postWebhook(d.url, signatureHeaders(d.secret, d.event_id, d.payload), d.payload, { allowPrivate: d.allow_private, resolve: s.resolve, timeoutMs, signal });
    } catch (err) {
      if (!signal?.aborted) throw err;
      await webhooks.release(d.id, d.token);
      return 'released';
    }
    const outcome: AttemptOutcome = result.error === null ? { delivered: true } : nextAttempt(d.attempts, d.claimed_at - d.created_at, s);
    const held = await webhooks.settle(d.id, d.token, { status_code: result.status, error: result.error, duration_ms: result.durationMs }, outcome);
    if (!held) return 'lost';
    return 'delivered' in outcome ? 'delivered' : 'failed' in outcome ? 'failed' : 'retry';
  }

  /** Settled deliveries (and their logs) older than the retention (VIDEMBED_RETENTION_DAYS) deleted; how many. */
  async purge(limit = 1000): Promise<number> {
    return this.lib.catalog.webhooks.purgeSettled(this.lib.retentionMs, limit);
  }
}

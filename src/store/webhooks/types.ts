/**
 * Webhooks in the catalog (issue 34): the endpoints owners registered, and the outbox — one
 * delivery per (event, endpoint), written in the same transaction as the state change it reports —
 * that workers drain under leases with fencing tokens, as they drain the job queue
 * (src/store/queue/types.ts). One conformance suite (test/conformance/webhooks.ts) holds the
 * memory, SQLite and PostgreSQL backends to these rules:
 *
 * - addEndpoint stores an endpoint as given (its secret too: deliveries are signed with it);
 *   endpoint / endpoints read it back (endpoints: one owner's, or every owner's with null; oldest
 *   first). removeEndpoint deletes it with its deliveries and their attempts (false: none).
 * - emit (also inside a transaction, CatalogTx.webhooks) writes one pending delivery, due now, for
 *   each endpoint of the event's owner that subscribes to the event's type and either names no
 *   collection or the event's collection; another owner's endpoints get nothing. With `endpointId`
 *   it writes one delivery for that endpoint alone, whatever it subscribes to (a test event), if
 *   the endpoint belongs to the event's owner. Answers the deliveries' ids.
 * - claim takes the delivery due longest ago — pending, due (next attempt time passed) and not
 *   under a live lease — and leases it to `workerId` for `leaseMs`: attempt + 1, token + 1. Two
 *   claimers never get the same delivery while its lease runs: one attempt in flight per delivery
 *   across every worker. The claim hands over the endpoint's URL and secret and the backend's clock
 *   at the claim (`claimed_at`, the clock `created_at` was read on). claimMany leases up to `limit`
 *   due deliveries in one go, each as claim would (a worker filling its free delivery slots).
 * - settle takes the claim's token and records the attempt (status code, error, duration) in the
 *   delivery's log and its outcome: delivered, failed for good, or pending again after
 *   `retryInMs`. It is refused (false, nothing recorded) once the token no longer holds the
 *   delivery (another claim took it over after the lease ran out, or it was settled or removed).
 * - release hands a claimed delivery back (due as it was), its attempt not counted (a worker stopping).
 * - expireLeasesOf ends the leases a stopped worker holds: its deliveries are claimable at once.
 * - deliveries lists an endpoint's deliveries newest first; attempts answers the log of the given
 *   deliveries, each one's in attempt order.
 * - dueCount: pending deliveries due now and not under a live lease.
 * - purgeSettled deletes delivered and failed deliveries settled more than `olderThanMs` ago
 *   (at most `limit`, least recently settled first) with their attempts; how many.
 * Times are milliseconds since the epoch by the backend's clock.
 */

/** pending: due at next_attempt_at (or in flight under a lease); delivered: a 2xx came back; failed: given up. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookEndpointRow {
  id: string;
  owner: string;
  url: string;
  /** `whsec_` and base64 of the key: what signs every delivery (shown to the owner once, at creation). */
  secret: string;
  /** The event types it receives. */
  events: string[];
  /** Only this collection's events (video events), or null: every event of the owner. */
  collection_id: string | null;
  description: string;
  /** Its URL may point at a private or loopback address: granted at creation by the operator. */
  allow_private: boolean;
  created_at: number;
}

export interface NewWebhookEndpoint {
  owner: string;
  url: string;
  secret: string;
  events: string[];
  collection_id: string | null;
  description: string;
  allow_private: boolean;
}

/** An event to fan out: `payload` is the body every endpoint receives, exactly. */
export interface NewWebhookEvent {
  /** The message id (`webhook-id`): the same for every endpoint and every attempt. */
  id: string;
  type: string;
  owner: string;
  collection_id: string | null;
  payload: string;
}

export interface WebhookDelivery {
  id: string;
  event_id: string;
  endpoint_id: string;
  owner: string;
  event_type: string;
  payload: string;
  status: DeliveryStatus;
  /** Claims that were not handed back: each started an attempt. */
  attempts: number;
  /** When it is due (pending), else null. */
  next_attempt_at: number | null;
  last_status_code: number | null;
  last_error: string | null;
  token: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface ClaimedDelivery extends WebhookDelivery {
  url: string;
  secret: string;
  allow_private: boolean;
  /** The backend's clock at the claim. */
  claimed_at: number;
}

/** One attempt of a delivery, as its log keeps it. */
export interface DeliveryAttempt {
  delivery_id: string;
  attempt: number;
  at: number;
  /** The receiver's HTTP status, or null when none came (refused, timed out, guard). */
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export interface AttemptResult {
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

/** What becomes of a delivery after an attempt. */
export type AttemptOutcome = { delivered: true } | { failed: true } | { retryInMs: number };

export interface WebhooksStore {
  addEndpoint(input: NewWebhookEndpoint): Promise<WebhookEndpointRow>;
  endpoint(id: string): Promise<WebhookEndpointRow | undefined>;
  endpoints(owner: string | null): Promise<WebhookEndpointRow[]>;
  removeEndpoint(id: string): Promise<boolean>;
  emit(event: NewWebhookEvent, endpointId?: string): Promise<string[]>;
  claim(workerId: string, leaseMs: number): Promise<ClaimedDelivery | undefined>;
  claimMany(workerId: string, leaseMs: number, limit: number): Promise<ClaimedDelivery[]>;
  settle(deliveryId: string, token: number, attempt: AttemptResult, outcome: AttemptOutcome): Promise<boolean>;
  release(deliveryId: string, token: number): Promise<boolean>;
  expireLeasesOf(workerId: string): Promise<number>;
  delivery(id: string): Promise<WebhookDelivery | undefined>;
  deliveries(endpointId: string, limit: number, offset: number): Promise<WebhookDelivery[]>;
  attempts(deliveryIds: string[]): Promise<DeliveryAttempt[]>;
  dueCount(): Promise<number>;
  purgeSettled(olderThanMs: number, limit: number): Promise<number>;
}

/** What a transaction may do with webhooks: write the outbox rows of the state change it commits. */
export type WebhooksTx = Pick<WebhooksStore, 'emit'>;

/** Does an endpoint get this event (its owner's, a type it subscribes to, its collection or none)? */
export function endpointWants(e: Pick<WebhookEndpointRow, 'owner' | 'events' | 'collection_id'>, event: Pick<NewWebhookEvent, 'owner' | 'type' | 'collection_id'>): boolean {
  return e.owner === event.owner && e.events.includes(event.type) && (e.collection_id === null || e.collection_id === event.collection_id);
}

/** An error text kept in the log: one line, at most 300 characters. */
export function logText(s: string | null): string | null {
  return s === null ? null : s.replace(/\s+/g, ' ').slice(0, 300);
}

/** A delivery row as either SQL backend reads it (PostgreSQL hands bigints over as strings, times as floats). */
export interface DeliveryRecord {
  id: string;
  event_id: string;
  endpoint_id: string;
  owner: string;
  event_type: string;
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: number | string | null;
  last_status_code: number | null;
  last_error: string | null;
  lease_token: number | string;
  lease_owner: string | null;
  lease_expires_at: number | string | null;
  created_at: number | string;
  updated_at: number | string;
}

const msOrNull = (v: number | string | null): number | null => (v === null ? null : Math.round(Number(v)));

export function deliveryFromRecord(r: DeliveryRecord): WebhookDelivery {
  return {
    id: r.id,
    event_id: r.event_id,
    endpoint_id: r.endpoint_id,
    owner: r.owner,
    event_type: r.event_type,
    payload: r.payload,
    status: r.status,
    attempts: Number(r.attempts),
    next_attempt_at: msOrNull(r.next_attempt_at),
    last_status_code: r.last_status_code === null ? null : Number(r.last_status_code),
    last_error: r.last_error,
    token: Number(r.lease_token),
    lease_owner: r.lease_owner,
    lease_expires_at: msOrNull(r.lease_expires_at),
    created_at: Math.round(Number(r.created_at)),
    updated_at: Math.round(Number(r.updated_at)),
  };
}

export interface EndpointRecord {
  id: string;
  owner: string;
  url: string;
  secret: string;
  events_json: string;
  collection_id: string | null;
  description: string;
  allow_private: number | boolean;
  created_at: number | string;
}

export function endpointFromRecord(r: EndpointRecord): WebhookEndpointRow {
  return {
    id: r.id,
    owner: r.owner,
    url: r.url,
    secret: r.secret,
    events: JSON.parse(r.events_json) as string[],
    collection_id: r.collection_id,
    description: r.description,
    allow_private: Boolean(r.allow_private),
    created_at: Math.round(Number(r.created_at)),
  };
}

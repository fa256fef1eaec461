import { newId } from '../ids.js';
import { checkLeaseMs } from '../queue/types.js';
import {
  endpointWants,
  logText,
  type AttemptOutcome,
  type AttemptResult,
  type ClaimedDelivery,
  type DeliveryAttempt,
  type NewWebhookEndpoint,
  type NewWebhookEvent,
  type WebhookDelivery,
  type WebhookEndpointRow,
  type WebhooksStore,
} from '../webhooks/types.js';
import type { MemoryStore } from './state.js';

const copyEndpoint = (e: WebhookEndpointRow): WebhookEndpointRow => ({ ...e, events: [...e.events] });
const copyDelivery = (d: WebhookDelivery & { seq?: number }): WebhookDelivery => {
  const { seq: _seq, ...out } = d;
  return out;
};

/**
 * Webhooks of an in-memory store (rules: src/store/webhooks/types.ts). Each call does its work
 * synchronously, so a claim is atomic; times are this process's clock.
 */
export class MemoryWebhooks implements WebhooksStore {
  constructor(private readonly store: MemoryStore) {}

  private get state() {
    return this.store.state;
  }

  /** The delivery while `token` holds it. */
  private held(id: string, token: number) {
    const d = this.state.webhookDeliveries.get(id);
    return d && d.status === 'pending' && d.token === token && d.lease_owner !== null ? d : undefined;
  }

  async addEndpoint(input: NewWebhookEndpoint): Promise<WebhookEndpointRow> {
    const row: WebhookEndpointRow = { id: newId('whk'), ...input, events: [...input.events], created_at: Date.now() };
    this.state.webhookEndpoints.set(row.id, row);
    return copyEndpoint(row);
  }

  async endpoint(id: string): Promise<WebhookEndpointRow | undefined> {
    const e = this.state.webhookEndpoints.get(id);
    return e && copyEndpoint(e);
  }

  async endpoints(owner: string | null): Promise<WebhookEndpointRow[]> {
    return [...this.state.webhookEndpoints.values()].filter((e) => owner === null || e.owner === owner).map(copyEndpoint);
  }

  async removeEndpoint(id: string): Promise<boolean> {
    const { state } = this;
    if (!state.webhookEndpoints.delete(id)) return false;
    for (const [did, d] of state.webhookDeliveries) {
      if (d.endpoint_id !== id) continue;
      state.webhookDeliveries.delete(did);
      state.webhookAttempts.delete(did);
    }
    return true;
  }

  async emit(event: NewWebhookEvent, endpointId?: string): Promise<string[]> {
    const { state } = this;
    const targets = [...state.webhookEndpoints.values()].filter((e) =>
      endpointId === undefined ? endpointWants(e, event) : e.id === endpointId && e.owner === event.owner,
    );
    const now = Date.now();
    return targets.map((e) => {
      const id = newId('dlv');
      state.webhookDeliveries.set(id, {
        id,
        event_id: event.id,
        endpoint_id: e.id,
        owner: event.owner,
        event_type: event.type,
        payload: event.payload,
        status: 'pending',
        attempts: 0,
        next_attempt_at: now,
        last_status_code: null,
        last_error: null,
        token: 0,
        lease_owner: null,
        lease_expires_at: null,
        created_at: now,
        updated_at: now,
        seq: state.nextSeq(),
      });
      return id;
    });
  }

  async claim(workerId: string, leaseMs: number): Promise<ClaimedDelivery | undefined> {
    return (await this.claimMany(workerId, leaseMs, 1))[0];
  }

  async claimMany(workerId: string, leaseMs: number, limit: number): Promise<ClaimedDelivery[]> {
    const lease = checkLeaseMs(leaseMs);
    const now = Date.now();
    const due = [...this.state.webhookDeliveries.values()]
      .filter((d) => d.status === 'pending' && d.next_attempt_at !== null && d.next_attempt_at <= now && (d.lease_expires_at === null || d.lease_expires_at < now))
      .sort((a, b) => a.next_attempt_at! - b.next_attempt_at! || a.seq - b.seq)
      .slice(0, Math.max(1, Math.floor(limit)));
    return due.map((d) => {
      Object.assign(d, { attempts: d.attempts + 1, lease_owner: workerId, token: d.token + 1, lease_expires_at: now + lease, updated_at: now });
      const e = this.state.webhookEndpoints.get(d.endpoint_id)!;
      return { ...copyDelivery(d), url: e.url, secret: e.secret, allow_private: e.allow_private, claimed_at: now };
    });
  }

  async settle(deliveryId: string, token: number, attempt: AttemptResult, outcome: AttemptOutcome): Promise<boolean> {
    const d = this.held(deliveryId, token);
    if (!d) return false;
    const now = Date.now();
    const log = (this.state.webhookAttempts.get(deliveryId) ?? []).filter((a) => a.attempt !== d.attempts);
    log.push({ delivery_id: deliveryId, attempt: d.attempts, at: now, status_code: attempt.status_code, error: logText(attempt.error), duration_ms: Math.max(0, Math.round(attempt.duration_ms)) });
    log.sort((a, b) => a.attempt - b.attempt);
    this.state.webhookAttempts.set(deliveryId, log);
    Object.assign(d, {
      status: 'delivered' in outcome ? 'delivered' : 'failed' in outcome ? 'failed' : 'pending',
      next_attempt_at: 'retryInMs' in outcome ? now + Math.max(0, Math.round(outcome.retryInMs)) : null,
      lease_owner: null,
      lease_expires_at: null,
      last_status_code: attempt.status_code,
      last_error: logText(attempt.error),
      updated_at: now,
    });
    return true;
  }

  async release(deliveryId: string, token: number): Promise<boolean> {
    const d = this.held(deliveryId, token);
    if (!d) return false;
    const now = Date.now();
    Object.assign(d, { attempts: Math.max(d.attempts - 1, 0), lease_owner: null, lease_expires_at: null, updated_at: now });
    return true;
  }

  async expireLeasesOf(workerId: string): Promise<number> {
    let n = 0;
    for (const d of this.state.webhookDeliveries.values()) {
      if (d.lease_owner === workerId && d.status === 'pending') {
        d.lease_expires_at = 0;
        n++;
      }
    }
    return n;
  }

  async delivery(id: string): Promise<WebhookDelivery | undefined> {
    const d = this.state.webhookDeliveries.get(id);
    return d && copyDelivery(d);
  }

  async deliveries(endpointId: string, limit: number, offset: number): Promise<WebhookDelivery[]> {
    return [...this.state.webhookDeliveries.values()]
      .filter((d) => d.endpoint_id === endpointId)
      .sort((a, b) => b.created_at - a.created_at || b.seq - a.seq)
      .slice(offset, offset + limit)
      .map(copyDelivery);
  }

  async attempts(deliveryIds: string[]): Promise<DeliveryAttempt[]> {
    return deliveryIds.flatMap((id) => (this.state.webhookAttempts.get(id) ?? []).map((a) => ({ ...a })));
  }

  async dueCount(): Promise<number> {
    const now = Date.now();
    let n = 0;
    for (const d of this.state.webhookDeliveries.values()) {
      if (d.status === 'pending' && d.next_attempt_at !== null && d.next_attempt_at <= now && (d.lease_expires_at === null || d.lease_expires_at < now)) n++;
    }
    return n;
  }

  async purgeSettled(olderThanMs: number, limit: number): Promise<number> {
    const before = Date.now() - olderThanMs;
    const old = [...this.state.webhookDeliveries.values()]
      .filter((d) => d.status !== 'pending' && d.updated_at < before)
      .sort((a, b) => a.updated_at - b.updated_at || a.seq - b.seq)
      .slice(0, limit);
    for (const d of old) {
      this.state.webhookDeliveries.delete(d.id);
      this.state.webhookAttempts.delete(d.id);
    }
    return old.length;
  }
}

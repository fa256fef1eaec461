import type { Db } from '../db.js';
import { newId } from '../ids.js';
import { checkLeaseMs } from '../queue/types.js';
import {
  deliveryFromRecord,
  endpointFromRecord,
  endpointWants,
  logText,
  type AttemptOutcome,
  type AttemptResult,
  type ClaimedDelivery,
  type DeliveryAttempt,
  type DeliveryRecord,
  type EndpointRecord,
  type NewWebhookEndpoint,
  type NewWebhookEvent,
  type WebhookDelivery,
  type WebhookEndpointRow,
  type WebhooksStore,
} from './types.js';

/**
 * Webhooks on a vidembed SQLite database (migration 30): the rules of ./types.ts. better-sqlite3 is
 * synchronous, so each call is done before its promise settles; a claim is one IMMEDIATE
 * transaction, so claimers in other connections or processes wait for it rather than read the same
 * delivery. Inside a caller's transaction (CatalogTx) emit is part of it. Times are this machine's
 * clock, which every process that opens the file shares.
 */
export class SqliteWebhooks implements WebhooksStore {
  constructor(readonly db: Db) {}

  async addEndpoint(input: NewWebhookEndpoint): Promise<WebhookEndpointRow> {
    const row = this.db
      .prepare(
        `INSERT INTO webhook_endpoints (id, owner, url, secret, events_json, collection_id, description, allow_private, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      )
      .get(newId('whk'), input.owner, input.url, input.secret, JSON.stringify(input.events), input.collection_id, input.description, input.allow_private ? 1 : 0, Date.now()) as EndpointRecord;
    return endpointFromRecord(row);
  }

  async endpoint(id: string): Promise<WebhookEndpointRow | undefined> {
    const row = this.db.prepare('SELECT * FROM webhook_endpoints WHERE id = ?').get(id) as EndpointRecord | undefined;
    return row && endpointFromRecord(row);
  }

  async endpoints(owner: string | null): Promise<WebhookEndpointRow[]> {
    const rows = (
      owner === null
        ? this.db.prepare('SELECT * FROM webhook_endpoints ORDER BY created_at, rowid').all()
        : this.db.prepare('SELECT * FROM webhook_endpoints WHERE owner = ? ORDER BY created_at, rowid').all(owner)
    ) as EndpointRecord[];
    return rows.map(endpointFromRecord);
  }

  async removeEndpoint(id: string): Promise<boolean> {
    // Deliveries and their attempts go with it (ON DELETE CASCADE).
    return this.db.prepare('DELETE FROM webhook_endpoints WHERE id = ?').run(id).changes === 1;
  }

  async emit(event: NewWebhookEvent, endpointId?: string): Promise<string[]> {
    const candidates = (
      endpointId === undefined
        ? this.db.prepare('SELECT * FROM webhook_endpoints WHERE owner = ? ORDER BY rowid').all(event.owner)
        : this.db.prepare('SELECT * FROM webhook_endpoints WHERE id = ? AND owner = ?').all(endpointId, event.owner)
    ) as EndpointRecord[];
    const targets = candidates.map(endpointFromRecord).filter((e) => endpointId !== undefined || endpointWants(e, event));
    if (targets.length === 0) return [];
    const insert = this.db.prepare(
      `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, owner, event_type, payload, status, next_attempt_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
    );
    const now = Date.now();
    const ids: string[] = [];
    this.db.transaction(() => {
      for (const e of targets) {
        const id = newId('dlv');
        insert.run(id, event.id, e.id, event.owner, event.type, event.payload, now, now, now);
        ids.push(id);
      }
    })();
    return ids;
  }

  async claim(workerId: string, leaseMs: number): Promise<ClaimedDelivery | undefined> {
    return (await this.claimMany(workerId, leaseMs, 1))[0];
  }

  async claimMany(workerId: string, leaseMs: number, limit: number): Promise<ClaimedDelivery[]> {
    const lease = checkLeaseMs(leaseMs);
    const next = this.db.prepare(
      `SELECT id FROM webhook_deliveries
       WHERE status = 'pending' AND next_attempt_at <= @now AND (lease_expires_at IS NULL OR lease_expires_at < @now)
       ORDER BY next_attempt_at, rowid LIMIT @limit`,
    );
    const take = this.db.prepare(
      `UPDATE webhook_deliveries SET attempts = attempts + 1, lease_owner = @worker, lease_token = lease_token + 1,
         lease_expires_at = @expires, updated_at = @now WHERE id = @id RETURNING *`,
    );
    const endpoint = this.db.prepare('SELECT url, secret, allow_private FROM webhook_endpoints WHERE id = ?');
    return this.db
      .transaction((): ClaimedDelivery[] => {
        const now = Date.now();
        const found = next.all({ now, limit: Math.max(1, Math.floor(limit)) }) as { id: string }[];
        return found.map(({ id }) => {
          const row = deliveryFromRecord(take.get({ worker: workerId, expires: now + lease, now, id }) as DeliveryRecord);
          const e = endpoint.get(row.endpoint_id) as { url: string; secret: string; allow_private: number };
          return { ...row, url: e.url, secret: e.secret, allow_private: Boolean(e.allow_private), claimed_at: now };
        });
      })
      .immediate();
  }

  async settle(deliveryId: string, token: number, attempt: AttemptResult, outcome: AttemptOutcome): Promise<boolean> {
    return this.db
      .transaction((): boolean => {
        const now = Date.now();
        const held = this.db
          .prepare(`SELECT attempts FROM webhook_deliveries WHERE id = ? AND lease_token = ? AND status = 'pending' AND lease_owner IS NOT NULL`)
          .get(deliveryId, token) as { attempts: number } | undefined;
        if (!held) return false;
        this.db
          .prepare('INSERT OR REPLACE INTO webhook_attempts (delivery_id, attempt, at, status_code, error, duration_ms) VALUES (?, ?, ?, ?, ?, ?)')
          .run(deliveryId, held.attempts, now, attempt.status_code, logText(attempt.error), Math.max(0, Math.round(attempt.duration_ms)));
        const status = 'delivered' in outcome ? 'delivered' : 'failed' in outcome ? 'failed' : 'pending';
        const nextAt = 'retryInMs' in outcome ? now + Math.max(0, Math.round(outcome.retryInMs)) : null;
        this.db
          .prepare(
            `UPDATE webhook_deliveries SET status = ?, next_attempt_at = ?, lease_owner = NULL, lease_expires_at = NULL,
               last_status_code = ?, last_error = ?, updated_at = ? WHERE id = ?`,
          )
          .run(status, nextAt, attempt.status_code, logText(attempt.error), now, deliveryId);
        return true;
      })
      .immediate();
  }

  async release(deliveryId: string, token: number): Promise<boolean> {
    const now = Date.now();
    return (
      this.db
        .prepare(
          `UPDATE webhook_deliveries SET attempts = MAX(attempts - 1, 0), lease_owner = NULL, lease_expires_at = NULL, updated_at = ?
           WHERE id = ? AND lease_token = ? AND status = 'pending' AND lease_owner IS NOT NULL`,
        )
        .run(now, deliveryId, token).changes === 1
    );
  }

  async expireLeasesOf(workerId: string): Promise<number> {
    return this.db.prepare(`UPDATE webhook_deliveries SET lease_expires_at = 0 WHERE lease_owner = ? AND status = 'pending'`).run(workerId).changes;
  }

  async delivery(id: string): Promise<WebhookDelivery | undefined> {
    const row = this.db.prepare('SELECT * FROM webhook_deliveries WHERE id = ?').get(id) as DeliveryRecord | undefined;
    return row && deliveryFromRecord(row);
  }

  async deliveries(endpointId: string, limit: number, offset: number): Promise<WebhookDelivery[]> {
    const rows = this.db
      .prepare('SELECT * FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?')
      .all(endpointId, limit, offset) as DeliveryRecord[];
    return rows.map(deliveryFromRecord);
  }

  async attempts(deliveryIds: string[]): Promise<DeliveryAttempt[]> {
    if (deliveryIds.length === 0) return [];
    const order = new Map(deliveryIds.map((id, i) => [id, i]));
    const rows = this.db
      .prepare(`SELECT * FROM webhook_attempts WHERE delivery_id IN (${deliveryIds.map(() => '?').join(', ')}) ORDER BY attempt`)
      .all(...deliveryIds) as DeliveryAttempt[];
    return rows.sort((a, b) => order.get(a.delivery_id)! - order.get(b.delivery_id)! || a.attempt - b.attempt);
  }

  async dueCount(): Promise<number> {
    const now = Date.now();
    return this.db
      .prepare(`SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ? AND (lease_expires_at IS NULL OR lease_expires_at < ?)`)
      .pluck()
      .get(now, now) as number;
  }

  async purgeSettled(olderThanMs: number, limit: number): Promise<number> {
    return this.db
      .prepare(
        `DELETE FROM webhook_deliveries WHERE id IN (
           SELECT id FROM webhook_deliveries WHERE status IN ('delivered', 'failed') AND updated_at < ? ORDER BY updated_at, rowid LIMIT ?)`,
      )
      .run(Date.now() - olderThanMs, limit).changes;
  }
}

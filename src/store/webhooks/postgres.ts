import { newId } from '../ids.js';
import { inTransaction, type Queryable } from '../pg/migrate.js';
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

const ms = (col: string) => `(extract(epoch FROM ${col}) * 1000)::float8`;
const ENDPOINT_COLS = `id, owner, url, secret, events_json, collection_id, description, allow_private, ${ms('created_at')} AS created_at`;
const deliveryCols = (t = '') =>
  `${t}id, ${t}event_id, ${t}endpoint_id, ${t}owner, ${t}event_type, ${t}payload, ${t}status, ${t}attempts, ${ms(`${t}next_attempt_at`)} AS next_attempt_at,
   ${t}last_status_code, ${t}last_error, ${t}lease_token, ${t}lease_owner, ${ms(`${t}lease_expires_at`)} AS lease_expires_at,
   ${ms(`${t}created_at`)} AS created_at, ${ms(`${t}updated_at`)} AS updated_at`;
const interval = (param: string) => `make_interval(secs => ${param}::float8 / 1000)`;

/**
 * One claim is one statement: the CTE picks the delivery due longest ago that no live lease holds
 * and locks it (`FOR UPDATE SKIP LOCKED`: one another claimer is taking is passed over), the UPDATE
 * leases it. READ COMMITTED re-checks a locked row's WHERE against its latest version, so a delivery
 * claimed and committed a moment ago is not handed out again.
 */
const CLAIM = `
  WITH cand AS (
    SELECT c.id FROM webhook_deliveries c
    WHERE c.status = 'pending' AND c.next_attempt_at <= clock_timestamp()
      AND (c.lease_expires_at IS NULL OR c.lease_expires_at < clock_timestamp())
    ORDER BY c.next_attempt_at, c.seq
    LIMIT $3
    FOR UPDATE OF c SKIP LOCKED
  )
  UPDATE webhook_deliveries d SET attempts = d.attempts + 1, lease_owner = $1, lease_token = d.lease_token + 1,
    lease_expires_at = clock_timestamp() + ${interval('$2')}, updated_at = clock_timestamp()
  FROM cand, webhook_endpoints e
  WHERE d.id = cand.id AND e.id = d.endpoint_id
  RETURNING ${deliveryCols('d.')}, d.seq, e.url, e.secret, e.allow_private, ${ms('clock_timestamp()')} AS claimed_at`;

/**
 * Webhooks on PostgreSQL (migration 30): the rules of ./types.ts. Each call runs on a Queryable:
 * the pool (one statement, one transaction), or inside PgCatalog.transaction the transaction's
 * client, where emit joins the caller's transaction. Times are the database's clock.
 */
export class PgWebhooks implements WebhooksStore {
  constructor(private readonly q: Queryable) {}

  async addEndpoint(input: NewWebhookEndpoint): Promise<WebhookEndpointRow> {
    const { rows } = await this.q.query<EndpointRecord>(
      `INSERT INTO webhook_endpoints (id, owner, url, secret, events_json, collection_id, description, allow_private)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${ENDPOINT_COLS}`,
      [newId('whk'), input.owner, input.url, input.secret, JSON.stringify(input.events), input.collection_id, input.description, input.allow_private],
    );
    return endpointFromRecord(rows[0]);
  }

  async endpoint(id: string): Promise<WebhookEndpointRow | undefined> {
    const { rows } = await this.q.query<EndpointRecord>(`SELECT ${ENDPOINT_COLS} FROM webhook_endpoints WHERE id = $1`, [id]);
    return rows[0] && endpointFromRecord(rows[0]);
  }

  async endpoints(owner: string | null): Promise<WebhookEndpointRow[]> {
    const { rows } = await this.q.query<EndpointRecord>(
      `SELECT ${ENDPOINT_COLS} FROM webhook_endpoints WHERE ($1::text IS NULL OR owner = $1) ORDER BY created_at, seq`,
      [owner],
    );
    return rows.map(endpointFromRecord);
  }

  async removeEndpoint(id: string): Promise<boolean> {
    const r = await this.q.query('DELETE FROM webhook_endpoints WHERE id = $1', [id]);
    return r.rowCount === 1;
  }

  async emit(event: NewWebhookEvent, endpointId?: string): Promise<string[]> {
    const { rows } = await this.q.query<EndpointRecord>(
      `SELECT ${ENDPOINT_COLS} FROM webhook_endpoints WHERE owner = $1 AND ($2::text IS NULL OR id = $2) ORDER BY seq`,
      [event.owner, endpointId ?? null],
    );
    const targets = rows.map(endpointFromRecord).filter((e) => endpointId !== undefined || endpointWants(e, event));
    if (targets.length === 0) return [];
    const ids = targets.map(() => newId('dlv'));
    // One statement for every endpoint: on the pool it is its own transaction, inside the caller's a part of it.
    await this.q.query(
      `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, owner, event_type, payload, status, next_attempt_at)
       SELECT d.id, $3, d.endpoint_id, $4, $5, $6, 'pending', clock_timestamp() FROM unnest($1::text[], $2::text[]) AS d (id, endpoint_id)`,
      [ids, targets.map((e) => e.id), event.id, event.owner, event.type, event.payload],
    );
    return ids;
  }

  async claim(workerId: string, leaseMs: number): Promise<ClaimedDelivery | undefined> {
    return (await this.claimMany(workerId, leaseMs, 1))[0];
  }

  async claimMany(workerId: string, leaseMs: number, limit: number): Promise<ClaimedDelivery[]> {
    type Row = DeliveryRecord & { seq: string; url: string; secret: string; allow_private: boolean; claimed_at: number };
    const { rows } = await this.q.query<Row>(CLAIM, [workerId, checkLeaseMs(leaseMs), Math.max(1, Math.floor(limit))]);
    // RETURNING keeps no order: the due order, as claimed.
    rows.sort((a, b) => Number(a.next_attempt_at) - Number(b.next_attempt_at) || Number(a.seq) - Number(b.seq));
    return rows.map((r) => ({ ...deliveryFromRecord(r), url: r.url, secret: r.secret, allow_private: r.allow_private, claimed_at: Math.round(Number(r.claimed_at)) }));
  }

  async settle(deliveryId: string, token: number, attempt: AttemptResult, outcome: AttemptOutcome): Promise<boolean> {
    const status = 'delivered' in outcome ? 'delivered' : 'failed' in outcome ? 'failed' : 'pending';
    const retryInMs = 'retryInMs' in outcome ? Math.max(0, Math.round(outcome.retryInMs)) : null;
    return inTransaction(this.q, async (client) => {
      // The row lock taken here holds until commit: a claim racing this settle waits, then sees it settled.
      const { rows } = await client.query<{ attempts: number }>(
        `SELECT attempts FROM webhook_deliveries WHERE id = $1 AND lease_token = $2 AND status = 'pending' AND lease_owner IS NOT NULL FOR UPDATE`,
        [deliveryId, token],
      );
      if (!rows[0]) return false;
      await client.query(
        `INSERT INTO webhook_attempts (delivery_id, attempt, status_code, error, duration_ms) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (delivery_id, attempt) DO UPDATE SET at = clock_timestamp(), status_code = excluded.status_code, error = excluded.error, duration_ms = excluded.duration_ms`,
        [deliveryId, rows[0].attempts, attempt.status_code, logText(attempt.error), Math.max(0, Math.round(attempt.duration_ms))],
      );
      await client.query(
        `UPDATE webhook_deliveries SET status = $2,
           next_attempt_at = CASE WHEN $3::float8 IS NULL THEN NULL ELSE clock_timestamp() + ${interval('$3')} END,
           lease_owner = NULL, lease_expires_at = NULL, last_status_code = $4, last_error = $5, updated_at = clock_timestamp()
         WHERE id = $1`,
        [deliveryId, status, retryInMs, attempt.status_code, logText(attempt.error)],
      );
      return true;
    });
  }

  async release(deliveryId: string, token: number): Promise<boolean> {
    const r = await this.q.query(
      `UPDATE webhook_deliveries SET attempts = greatest(attempts - 1, 0), lease_owner = NULL, lease_expires_at = NULL, updated_at = clock_timestamp()
       WHERE id = $1 AND lease_token = $2 AND status = 'pending' AND lease_owner IS NOT NULL`,
      [deliveryId, token],
    );
    return r.rowCount === 1;
  }

  async expireLeasesOf(workerId: string): Promise<number> {
    const r = await this.q.query(`UPDATE webhook_deliveries SET lease_expires_at = 'epoch' WHERE lease_owner = $1 AND status = 'pending'`, [workerId]);
    return r.rowCount ?? 0;
  }

  async delivery(id: string): Promise<WebhookDelivery | undefined> {
    const { rows } = await this.q.query<DeliveryRecord>(`SELECT ${deliveryCols()} FROM webhook_deliveries WHERE id = $1`, [id]);
    return rows[0] && deliveryFromRecord(rows[0]);
  }

  async deliveries(endpointId: string, limit: number, offset: number): Promise<WebhookDelivery[]> {
    const { rows } = await this.q.query<DeliveryRecord>(
      `SELECT ${deliveryCols()} FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY created_at DESC, seq DESC LIMIT $2 OFFSET $3`,
      [endpointId, limit, offset],
    );
    return rows.map(deliveryFromRecord);
  }

  async attempts(deliveryIds: string[]): Promise<DeliveryAttempt[]> {
    if (deliveryIds.length === 0) return [];
    const { rows } = await this.q.query<DeliveryAttempt & { at: number | string }>(
      `SELECT delivery_id, attempt, ${ms('at')} AS at, status_code, error, duration_ms FROM webhook_attempts
       WHERE delivery_id = ANY ($1::text[]) ORDER BY array_position($1::text[], delivery_id), attempt`,
      [deliveryIds],
    );
    return rows.map((r) => ({ ...r, at: Math.round(Number(r.at)) }));
  }

  async dueCount(): Promise<number> {
    const { rows } = await this.q.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= clock_timestamp()
         AND (lease_expires_at IS NULL OR lease_expires_at < clock_timestamp())`,
    );
    return rows[0].n;
  }

  async purgeSettled(olderThanMs: number, limit: number): Promise<number> {
    const r = await this.q.query(
      `DELETE FROM webhook_deliveries WHERE id IN (
         SELECT id FROM webhook_deliveries WHERE status IN ('delivered', 'failed') AND updated_at < clock_timestamp() - ${interval('$1')}
         ORDER BY updated_at, seq LIMIT $2)`,
      [olderThanMs, limit],
    );
    return r.rowCount ?? 0;
  }
}

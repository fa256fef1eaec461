import type { CollectionRow, SegmentRow, SignatureRow, TaskRow, VideoRow, ApiKeyRow, VideoCapabilityRow } from '../catalog/types.js';
import { Gate } from '../gate.js';
import type { LiveWorker, QueuedJob } from '../queue/types.js';
import type { DeliveryAttempt, WebhookDelivery, WebhookEndpointRow } from '../webhooks/types.js';

/*
 * The data of an in-memory store (src/store/memory/): plain maps of rows, in insertion order. Every
 * catalog, queue and registry opened on one MemoryStore sees the same data at once (as connections
 * to one database do). Rows are never handed out: callers get copies.
 */

/** A collection as kept: its row without the video count (counted when read). */
export type CollectionRecord = Omit<CollectionRow, 'video_count'> & { seq: number };
export type VideoRecord = VideoRow & { content_sha256: string | null; seq: number };
export type KeyRecord = ApiKeyRow & { seq: number };
/** `claimSeq`: the store's counter at the job's last claim (who was served least recently). */
export type JobRecord = QueuedJob & { seq: number; claimSeq: number | null };

export interface SegmentRecord {
  row: SegmentRow;
  vector: Float32Array;
  /** Tags that filters select on, kind → label (generic: any kind a segment was tagged with). */
  labels: Record<string, string>;
  /** Index tokens of its keywords (src/store/memory/words.ts). */
  tokens: string[];
}

export class MemoryState {
  collections = new Map<string, CollectionRecord>();
  videos = new Map<string, VideoRecord>();
  tasks = new Map<string, TaskRow>();
  keys = new Map<string, KeyRecord>();
  /** By segment id, ascending (ids only grow and are inserted in order). */
  segments = new Map<number, SegmentRecord>();
  signatures = new Map<string, SignatureRow & { updated_at: string }>();
  jobs = new Map<string, JobRecord>();
  workers = new Map<string, LiveWorker>();
  /** Folders indexed in place, by collection id, in the order added. */
  folders = new Map<string, string[]>();
  /** Capabilities' states, by video id then capability name. */
  capabilities = new Map<string, Map<string, VideoCapabilityRow>>();
  /** Webhook endpoints and the delivery outbox (src/store/memory/webhooks.ts), in insertion order; attempts by delivery. */
  webhookEndpoints = new Map<string, WebhookEndpointRow>();
  webhookDeliveries = new Map<string, WebhookDelivery & { seq: number }>();
  webhookAttempts = new Map<string, DeliveryAttempt[]>();
  /** Files deleted from a collection, by fingerprint → path (`rescan` leaves them out). */
  excluded = new Map<string, Map<string, string>>();
  /** The last segment id handed out, and the order of inserts of other rows. */
  lastSegmentId = 0;
  seq = 0;

  nextSeq(): number {
    return ++this.seq;
  }

  /** A copy that shares nothing mutable with this one (vectors and buffers are never mutated). */
  clone(): MemoryState {
    const out = new MemoryState();
    const copy = <K, V extends object>(m: Map<K, V>, f: (v: V) => V = (v) => ({ ...v })) => new Map([...m].map(([k, v]) => [k, f(v)]));
    out.collections = copy(this.collections);
    out.videos = copy(this.videos);
    out.tasks = copy(this.tasks);
    out.keys = copy(this.keys);
    out.segments = copy(this.segments, (s) => ({ ...s, row: { ...s.row } }));
    out.signatures = copy(this.signatures);
    out.jobs = copy(this.jobs);
    out.workers = copy(this.workers, (w) => ({ ...w, kinds: w.kinds && [...w.kinds] }));
    out.folders = new Map([...this.folders].map(([k, v]) => [k, [...v]]));
    out.capabilities = new Map([...this.capabilities].map(([k, v]) => [k, copy(v)]));
    out.webhookEndpoints = copy(this.webhookEndpoints, (e) => ({ ...e, events: [...e.events] }));
    out.webhookDeliveries = copy(this.webhookDeliveries);
    out.webhookAttempts = new Map([...this.webhookAttempts].map(([k, v]) => [k, v.map((a) => ({ ...a }))]));
    out.excluded = new Map([...this.excluded].map(([k, v]) => [k, new Map(v)]));
    out.lastSegmentId = this.lastSegmentId;
    out.seq = this.seq;
    return out;
  }
}

/**
 * One in-memory store: its data, and the gate every call of every catalog on it goes through, so a
 * transaction runs alone (its writes are all-or-nothing: on a rejection the store goes back to a
 * copy taken when it began).
 */
export class MemoryStore {
  state = new MemoryState();
  readonly gate = new Gate();
  inTransaction = false;

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    return this.gate.run(async () => {
      if (this.inTransaction) return fn(); // nested: part of the transaction already open
      const before = this.state.clone();
      this.inTransaction = true;
      try {
        return await fn();
      } catch (err) {
        this.state = before;
        throw err;
      } finally {
        this.inTransaction = false;
      }
    });
  }
}

/** Subjects waiting (`statuses`) that no queued or running job will finish, with the last error of their job updated last. */
export function strandedOf(state: MemoryState, subjects: Iterable<{ id: string; status: string }>, waiting: readonly string[]): Array<{ id: string; last_error: string | null }> {
  const out: Array<{ id: string; last_error: string | null }> = [];
  for (const s of subjects) {
    if (!waiting.includes(s.status)) continue;
    let last: JobRecord | undefined;
    let live = false;
    for (const j of state.jobs.values()) {
      if (j.refId !== s.id) continue;
      if (j.status === 'queued' || j.status === 'running') live = true;
      if (!last || j.updatedAt > last.updatedAt || (j.updatedAt === last.updatedAt && j.seq > last.seq)) last = j;
    }
    if (!live) out.push({ id: s.id, last_error: last?.lastError ?? null });
  }
  return out;
}

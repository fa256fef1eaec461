/**
 * Webhook deliveries, run by every worker beside its jobs (src/runtime/worker.ts): a small loop that
 * leases due deliveries from the outbox (src/store/webhooks) and sends up to `concurrency` at once.
 * Sending is I/O — a signed POST and a wait — so it neither holds up the job beside it nor needs a
 * core. A worker killed mid-delivery leaves its leases; the next worker to look frees them
 * (src/runtime/processes.ts) and the delivery is sent again, with the same `webhook-id`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage } from '../api/errors.js';
import type { DeliveryResult, WebhooksService } from '../services/webhooks.js';
import type { ClaimedDelivery } from '../store/webhooks/types.js';

export interface DeliveryLoopOptions {
  concurrency: number;
  /** How often to look for due deliveries while none is. */
  pollMs: number;
  /** Waits while the store cannot be reached: the first and the longest. */
  backoffMs?: readonly [number, number];
  log?: (line: string) => void;
  /** Told of every attempt's result (tests, the benchmark). */
  onResult?: (d: ClaimedDelivery, result: DeliveryResult) => void;
}

export class DeliveryLoop {
  constructor(
    private readonly webhooks: Pick<WebhooksService, 'claim' | 'deliver'>,
    private readonly opts: DeliveryLoopOptions,
  ) {}

  /** Sends due deliveries as `workerId` until `signal` aborts, then hands back those in flight. */
  async run(workerId: string, signal: AbortSignal): Promise<void> {
    const { concurrency, pollMs } = this.opts;
    const [firstBackoff, mostBackoff] = this.opts.backoffMs ?? [500, 5_000];
    const log = (line: string) => this.opts.log?.(line);
    const inFlight = new Set<Promise<void>>();
    let failures = 0;
    while (!signal.aborted) {
      // Claim when at least half the slots are free (or none is busy): a few claims of several
      // deliveries each, not one claim per delivery, while a backlog drains.
      if (inFlight.size >= concurrency || (inFlight.size > 0 && concurrency - inFlight.size < Math.ceil(concurrency / 2))) {
        await Promise.race(inFlight);
        continue;
      }
      let claimed: ClaimedDelivery[];
      try {
        // As many as there are free slots, in one claim (one transaction).
        claimed = await this.webhooks.claim(workerId, concurrency - inFlight.size);
        failures = 0;
      } catch (err) {
        if (signal.aborted) break;
        const wait = Math.min(mostBackoff, firstBackoff * 2 ** Math.min(failures++, 20));
        log(`webhook deliveries: the store failed (${errorMessage(err)}); retrying in ${wait / 1000} s`);
        await sleep(wait, undefined, { signal }).catch(() => {});
        continue;
      }
      if (claimed.length === 0) {
        await sleep(pollMs, undefined, { signal }).catch(() => {});
        continue;
      }
      for (const d of claimed) {
        const sending: Promise<void> = this.webhooks
          .deliver(d, signal)
          .then(
            (result) => {
              this.opts.onResult?.(d, result);
              if (result === 'failed') log(`webhook ${d.event_type} ${d.event_id} to ${d.endpoint_id}: given up after ${d.attempts} attempts`);
              if (result === 'lost') log(`webhook ${d.event_id}: its lease had passed to another worker`);
            },
            (err: unknown) => log(`webhook ${d.event_id}: ${errorMessage(err)} (its lease runs out and another attempt follows)`),
          )
          .finally(() => inFlight.delete(sending));
        inFlight.add(sending);
      }
    }
    await Promise.allSettled([...inFlight]);
  }
}

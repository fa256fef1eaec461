/**
 * `npm run bench -- webhooks` (issue 34): 1,000 events through the outbox to a receiver on
 * loopback, delivered by two `vidembed worker` processes on one SQLite library. Two runs: the
 * receiver always up (delivery latency after the event: p50 target ≤ 1 s), and the receiver
 * failing 30 % of requests at random with HTTP 500 (every event delivered exactly once after the
 * receiver's dedupe by webhook-id; every signature verified with the reference `standardwebhooks`
 * package). Events are written at a steady rate (`rate` a second), each in its own transaction, as
 * job results are; latency is from that commit to the receiver reading the request. The first retry
 * waits VIDEMBED_WEBHOOK_RETRY_MS=200 here (default 5 s), so a run ends in seconds, not minutes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { LocalEngine } from '../src/runtime/engine.js';
import { webhookEvent } from '../src/services/webhook-events.js';
import { BIN, benchDir, percentile, round } from './util.js';
import { seededRandom as prng } from '../eval/metrics.js';

const stats = (values: number[]) => {
  const s = [...values].sort((x, y) => x - y);
  return { p50: round(percentile(s, 50)), p95: round(percentile(s, 95)), max: round(s[s.length - 1] ?? 0) };
};

async function run(dir: string, name: string, total: number, failRate: number, rate: number, workers: number) {
  const home = path.join(dir, name);
  const random = prng(34);
  const firstSeen = new Map<string, number>();
  const firstOk = new Map<string, number>();
  let requests = 0;
  let failedOnPurpose = 0;
  let badSignatures = 0;
  let verify: Webhook | undefined;
  const receiver: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const at = performance.now();
      requests++;
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      try {
        verify!.verify(body, headers);
      } catch {
        badSignatures++;
      }
      const id = headers['webhook-id'];
      if (!firstSeen.has(id)) firstSeen.set(id, at);
      if (random() < failRate) {
        failedOnPurpose++;
        res.writeHead(500).end();
        return;
      }
      if (!firstOk.has(id)) firstOk.set(id, at); // the receiver's dedupe: the first accepted copy counts
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const engine = new LocalEngine({ home });
  const children: ChildProcess[] = [];
  try {
    const hook = await engine.createWebhook({ url }, { allowPrivate: true });
    verify = new Webhook(hook.secret);
    const env = { ...process.env, VIDEMBED_HOME: home, VIDEMBED_NO_AUTO_WORKER: '1', VIDEMBED_WARM_IDLE_MS: '0', VIDEMBED_WEBHOOK_RETRY_MS: '200' };
    for (let i = 0; i < workers; i++) children.push(spawn(process.execPath, [BIN, 'worker'], { env, stdio: ['ignore', 'ignore', 'ignore'] }));
    await sleep(3000); // the workers start (load their code, open the library) before the first event
    const emitted = new Map<string, number>();
    const t0 = performance.now();
    for (let i = 0; i < total; i++) {
      const due = t0 + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const event = webhookEvent('task.done', 'default', null, { request_id: `req_bench_${i}`, kind: 'tagging', status: 'completed' });
      await engine.catalog.transaction((tx) => tx.webhooks.emit(event));
      emitted.set(event.id, performance.now());
    }
    const emittedIn = (performance.now() - t0) / 1000;
    const deadline = Date.now() + 10 * 60_000;
    while (firstOk.size < total && Date.now() < deadline) await sleep(100);
    const drained = (performance.now() - t0) / 1000;
    await sleep(1000); // anything still in flight lands (a late duplicate would show here)
    let delivered = 0;
    let attemptsMax = 0;
    for (let offset = 0; offset < total; offset += 100) {
      for (const d of (await engine.webhookDeliveries(hook.webhook_id, { limit: 100, offset })).deliveries) {
        if (d.status === 'delivered') delivered++;
        attemptsMax = Math.max(attemptsMax, d.attempts);
      }
    }
    const latencies = [...firstOk].map(([id, at]) => at - emitted.get(id)!);
    const firstTry = [...firstOk].filter(([id, at]) => firstSeen.get(id) === at).map(([id, at]) => at - emitted.get(id)!);
    const unknown = [...firstOk.keys()].filter((id) => !emitted.has(id)).length;
    return {
      events: total,
      fail_rate_asked: failRate,
      requests,
      failed_on_purpose: failedOnPurpose,
      accepted_unique: firstOk.size,
      accepted_not_emitted: unknown,
      duplicates_after_accept: requests - failedOnPurpose - firstOk.size,
      deliveries_delivered: delivered,
      attempts_max: attemptsMax,
      signatures_failed: badSignatures,
      emitted_in_s: round(emittedIn),
      all_delivered_in_s: round(drained),
      latency_ms: stats(latencies),
      latency_first_attempt_ms: stats(firstTry),
      exactly_once_after_dedupe: firstOk.size === total && unknown === 0 && delivered === total,
    };
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((resolve) => c.once('exit', resolve)) : undefined)));
    await engine.close();
    await new Promise((resolve) => receiver.close(resolve));
  }
}

export async function benchWebhooks(total = 1000, rate = 100): Promise<Record<string, unknown>> {
  const dir = benchDir();
  try {
    const up = await run(dir, 'up', total, 0, rate, 2);
    const failing = await run(dir, 'failing', total, 0.3, rate, 2);
    return {
      setup: `${total} task.done events at ${rate}/s, each in its own transaction; 2 worker processes (8 deliveries in flight each); SQLite; receiver on loopback; first retry after 200 ms (VIDEMBED_WEBHOOK_RETRY_MS)`,
      cpus: os.cpus().length,
      load_average: round(os.loadavg()[0]),
      receiver_up: up,
      receiver_failing_30_percent: failing,
      targets: {
        every_event_once_after_dedupe: up.exactly_once_after_dedupe && failing.exactly_once_after_dedupe,
        signatures_verified: up.signatures_failed === 0 && failing.signatures_failed === 0,
        p50_latency_receiver_up_ms: up.latency_ms.p50,
        p50_at_most_1000_ms: up.latency_ms.p50 <= 1000,
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

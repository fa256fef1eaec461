/**
 * Webhooks end to end (issue 34): the CLI on a local library (add, a test event sent by the
 * background worker it starts, the delivery log, remove), and `vidembed worker` processes on SQLite
 * and PostgreSQL, one SIGKILLed while its deliveries hang at the receiver: another worker sends
 * them again, with the same webhook-id, and nothing is lost. Every request the receiver gets is
 * verified with the reference `standardwebhooks` package.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LocalEngine } from '../../src/runtime/engine.js';
import { BIN, runCli } from '../helpers/cli.js';
import { pgTestAvailable, usePgTestDatabase } from '../helpers/postgres.js';

interface Received {
  id: string;
  body: string;
  headers: Record<string, string>;
}

/** A receiver on loopback; `hold(n)` says whether the n-th request is left hanging (never answered). */
async function startReceiver(hold: (n: number) => boolean = () => false) {
  const got: Received[] = [];
  const hanging: ServerResponse[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      got.push({ id: headers['webhook-id'], body, headers });
      if (hold(got.length)) hanging.push(res);
      else res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    got,
    hanging,
    close: async () => {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function until(what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe('vidembed webhooks on a local library', () => {
  let home: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    home = mkdtempSync(path.join(os.tmpdir(), 'vidembed-webhooks-cli-'));
    receiver = await startReceiver();
  });
  afterAll(async () => {
    // The background worker the CLI started exits when idle (VIDEMBED_WORKER_IDLE_MS below).
    await sleep(1500);
    await receiver?.close();
    rmSync(home, { recursive: true, force: true });
  });
  const cli = (...args: string[]) => runCli(['--home', home, ...args], { VIDEMBED_WORKER_IDLE_MS: '1000' });

  it('adds, sends a signed test event through the background worker, logs it, lists and removes', async () => {
    const refused = await cli('webhooks', 'add', receiver.url);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/private, loopback/);
    const added = await cli('--json', 'webhooks', 'add', receiver.url, '--allow-private', '--events', 'video.processed,task.done');
    expect(added.code, added.stderr).toBe(0);
    const { webhook_id: id, secret } = added.json;
    expect(added.json.events).toEqual(['video.processed', 'task.done']);

    const test = await cli('--json', 'webhooks', 'test', id);
    expect(test.code, test.stderr + test.stdout).toBe(0);
    expect(test.json).toMatchObject({ event_type: 'webhook.test', status: 'delivered', attempts: 1, last_status_code: 200 });
    expect(receiver.got).toHaveLength(1);
    expect(new Webhook(secret).verify(receiver.got[0].body, receiver.got[0].headers)).toMatchObject({ type: 'webhook.test', data: { webhook_id: id } });
    expect(receiver.got[0].id).toBe(test.json.event_id);

    const log = await cli('webhooks', 'deliveries', id);
    expect(log.code).toBe(0);
    expect(log.stdout).toContain(test.json.event_id);
    expect(log.stdout).toContain('HTTP 200');
    const list = await cli('--json', 'webhooks', 'list');
    expect(list.json.webhooks.map((w: { webhook_id: string }) => w.webhook_id)).toEqual([id]);
    expect(list.stdout).not.toContain(secret);
    expect((await cli('webhooks', 'remove', id)).stdout).toContain(`removed ${id}`);
    const gone = await cli('webhooks', 'deliveries', id);
    expect(gone.code).toBe(3);
  });
});

/**
 * Two worker processes on one library; the first holds three deliveries hanging at the receiver
 * when it is SIGKILLed. Every event must still arrive (the receiver dedupes by webhook-id), each
 * signature must verify, and every delivery must end delivered.
 */
function sigkillSuite(backend: 'SQLite' | 'PostgreSQL', databaseUrl: () => string | undefined) {
  const children: ChildProcess[] = [];
  let home: string;
  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    rmSync(home, { recursive: true, force: true });
  });

  it(`${backend}: a worker SIGKILLed mid-delivery loses nothing`, async () => {
    home = mkdtempSync(path.join(os.tmpdir(), 'vidembed-webhooks-kill-'));
    const url = databaseUrl();
    const env = { ...process.env, VIDEMBED_HOME: home, VIDEMBED_NO_AUTO_WORKER: '1', VIDEMBED_WARM_IDLE_MS: '0', ...(url ? { VIDEMBED_DATABASE_URL: url } : {}) };
    const HELD = 3;
    const receiver = await startReceiver((n) => n <= HELD);
    const engine = new LocalEngine({ home, databaseUrl: url });
    try {
      const hook = await engine.createWebhook({ url: receiver.url }, { allowPrivate: true });
      const total = 12;
      const events: string[] = [];
      for (let i = 0; i < total; i++) events.push((await engine.testWebhook(hook.webhook_id)).event_id);

      const start = () => {
        const child = spawn(process.execPath, [BIN, 'worker'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
        let log = '';
        child.stderr!.on('data', (d: Buffer) => (log += d));
        children.push(child);
        return { child, log: () => log };
      };
      const first = start();
      await until('three deliveries hanging at the receiver', () => receiver.hanging.length >= HELD);
      // The others answered and recorded, so the kill falls on exactly the held ones.
      await until('the other deliveries recorded', async () => (await engine.webhookDeliveries(hook.webhook_id, { limit: 100 })).deliveries.filter((d) => d.status === 'delivered').length === total - HELD);
      first.child.kill('SIGKILL');
      await new Promise((resolve) => first.child.once('exit', resolve));
      const second = start();
      await until(`every event delivered (${new Set(receiver.got.map((g) => g.id)).size} of ${total} so far)\n${second.log()}`, async () => {
        const { deliveries } = await engine.webhookDeliveries(hook.webhook_id, { limit: 100 });
        return deliveries.length === total && deliveries.every((d) => d.status === 'delivered');
      });

      const wh = new Webhook(hook.secret);
      for (const g of receiver.got) expect(() => wh.verify(g.body, g.headers)).not.toThrow();
      const unique = new Set(receiver.got.map((g) => g.id));
      expect([...unique].sort()).toEqual([...events].sort());
      // The held ones came twice (the first worker's attempt, then the second's); no other twice.
      const counts = new Map<string, number>();
      for (const g of receiver.got) counts.set(g.id, (counts.get(g.id) ?? 0) + 1);
      expect([...counts.values()].filter((n) => n === 2)).toHaveLength(HELD);
      expect([...counts.values()].every((n) => n <= 2)).toBe(true);
      const { deliveries } = await engine.webhookDeliveries(hook.webhook_id, { limit: 100 });
      const redone = deliveries.filter((d) => d.attempts === 2);
      expect(redone).toHaveLength(HELD);
      // The killed worker's attempts left no log line; the second worker's each did.
      for (const d of deliveries) expect(d.attempt_log.map((a) => a.status_code)).toEqual([200]);
      second.child.kill('SIGTERM');
      await new Promise((resolve) => second.child.once('exit', resolve));
    } finally {
      await receiver.close();
      await engine.close();
    }
  });
}

describe('webhook deliveries survive a SIGKILLed worker', () => {
  sigkillSuite('SQLite', () => undefined);
});

describe.skipIf(!pgTestAvailable())('webhook deliveries survive a SIGKILLed worker (PostgreSQL)', () => {
  const db = usePgTestDatabase(['webhook_endpoints', 'webhook_deliveries', 'webhook_attempts', 'workers']);
  sigkillSuite('PostgreSQL', () => db.url);
});

/**
 * `vidembed webhooks` (issue 34; HTTP `/webhooks`): URLs told when videos are processed or fail
 * and when async tasks are done or fail, signed the Standard Webhooks way (docs/webhooks.md).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { BadRequestError, ValidationError } from '../../api/errors.js';
import { WEBHOOK_EVENTS } from '../../api/schemas.js';
import type { CreateWebhookRequest, WebhookDeliverySummary } from '../../api/types.js';
import type { CliContext, Run } from '../context.js';
import { printJson, printTable } from '../output.js';

/** `--events a,b`: the names, each one of WEBHOOK_EVENTS (the schema checks them too; this names the flag). */
function parseEvents(value: string | undefined): CreateWebhookRequest['events'] {
  if (value === undefined) return undefined;
  const names = value.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = names.filter((n) => !(WEBHOOK_EVENTS as readonly string[]).includes(n));
  if (names.length === 0 || unknown.length) {
    throw new ValidationError([{ loc: ['events'], msg: `${unknown.length ? `unknown event ${unknown.join(', ')}` : 'no event named'}; events are ${WEBHOOK_EVENTS.join(', ')}`, type: 'value_error.enum' }]);
  }
  return [...new Set(names)] as CreateWebhookRequest['events'];
}

function lastAnswer(d: WebhookDeliverySummary): string {
  const last = d.attempt_log[d.attempt_log.length - 1];
  if (!last) return d.status === 'pending' ? 'not sent yet' : '';
  return last.status_code !== undefined ? `HTTP ${last.status_code}${last.error && !last.error.startsWith('HTTP') ? ` (${last.error})` : ''}` : (last.error ?? '');
}

/** Waits for a delivery's first attempt (a worker sends it), at most `timeoutMs`. */
async function firstAttempt(ctx: CliContext, webhookId: string, deliveryId: string, timeoutMs: number): Promise<WebhookDeliverySummary | undefined> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { deliveries } = await ctx.service.webhookDeliveries(webhookId, { limit: 100 });
    const d = deliveries.find((x) => x.delivery_id === deliveryId);
    if (!d || d.attempt_log.length > 0 || d.status !== 'pending' || Date.now() >= until) return d;
    await sleep(250);
  }
}

export function registerWebhooks(program: Command, run: Run): void {
  const webhooks = program
    .command('webhooks')
    .description('URLs told when videos are processed or fail and async tasks finish (Standard Webhooks, signed)')
    .addHelpText(
      'after',
      `
Events: ${WEBHOOK_EVENTS.join(', ')}. Each delivery is a POST with the headers webhook-id,
webhook-timestamp and webhook-signature (HMAC-SHA256 with the secret printed once by \`add\`);
failed deliveries are retried with growing waits for 24 hours. Details: docs/webhooks.md.

Examples:
  $ vidembed webhooks add https://hooks.example.com/vidembed
  $ vidembed webhooks add https://hooks.example.com/in --events video.processed,video.failed --collection demo
  $ vidembed webhooks add http://localhost:3000/hook --allow-private
  $ vidembed webhooks list
  $ vidembed webhooks test whk_…
  $ vidembed webhooks deliveries whk_…
  $ vidembed webhooks remove whk_…`,
    )
    .action(async (_opts: unknown, cmd: Command) => run(cmd, async (ctx, globals) => listWebhooks(ctx, globals.json)));

  webhooks
    .command('add')
    .argument('<url>', 'where events are POSTed (http or https)')
    .option('--events <names>', `comma-separated events to receive (default: all: ${WEBHOOK_EVENTS.join(',')})`)
    .option('--collection <name>', "only this collection's video events (no task events)")
    .option('--description <text>', 'a note for yourself')
    .option('--allow-private', 'local library only: allow a private or loopback address (a server allows them with `serve --allow-private-webhooks`)')
    .description('register a webhook; its signing secret is printed once, now')
    .action(async (url: string, opts: { events?: string; collection?: string; description?: string; allowPrivate?: boolean }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const req: CreateWebhookRequest = { url, events: parseEvents(opts.events), collection: opts.collection, description: opts.description };
        if (opts.allowPrivate && !ctx.local) {
          throw new BadRequestError('--allow-private works on the local library only; on a server its operator allows private addresses (`vidembed serve --allow-private-webhooks`)');
        }
        const res = ctx.local ? await ctx.local.createWebhook(req, { allowPrivate: opts.allowPrivate }) : await ctx.service.createWebhook(req);
        if (globals.json) return printJson(res);
        process.stdout.write(
          `added ${res.webhook_id}: ${res.url}\n  events: ${res.events.join(', ')}${res.collection_id ? `\n  collection: ${res.collection_id}` : ''}\n` +
            `  secret: ${res.secret}\n  (shown this once: receivers verify webhook-signature with it)\n`,
        );
      }),
    );

  webhooks
    .command('list')
    .description('the webhooks of this library (on a server: of the key’s owner)')
    .action(async (_opts: unknown, cmd: Command) => run(cmd, async (ctx, globals) => listWebhooks(ctx, globals.json)));

  webhooks
    .command('remove')
    .alias('rm')
    .argument('<webhook_id>', 'a webhook id from `vidembed webhooks list`')
    .description('remove a webhook with its pending deliveries and its delivery log')
    .action(async (id: string, _opts: unknown, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const res = await ctx.service.deleteWebhook(id);
        if (globals.json) return printJson(res);
        process.stdout.write(`removed ${res.webhook_id}\n`);
      }),
    );

  webhooks
    .command('test')
    .argument('<webhook_id>', 'a webhook id from `vidembed webhooks list`')
    .option('--no-wait', 'queue the test event and return at once')
    .option('--timeout <seconds>', 'how long to wait for the first attempt', Number, 30)
    .description('send a webhook.test event to this webhook alone, and say what its receiver answered')
    .action(async (id: string, opts: { wait: boolean; timeout: number }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const res = await ctx.service.testWebhook(id);
        if (!opts.wait) {
          if (globals.json) return printJson(res);
          return void process.stdout.write(`queued ${res.event_type} ${res.event_id} (delivery ${res.delivery_id}); see \`vidembed webhooks deliveries ${id}\`\n`);
        }
        const d = await firstAttempt(ctx, id, res.delivery_id, opts.timeout * 1000);
        if (globals.json) return printJson(d ?? res);
        if (!d || d.attempt_log.length === 0) {
          process.stdout.write(`queued ${res.event_id}, not sent within ${opts.timeout} s: is a worker running? (\`vidembed worker\`, or \`serve\`)\n`);
          return 1;
        }
        const last = d.attempt_log[d.attempt_log.length - 1];
        if (d.status === 'delivered') return void process.stdout.write(`delivered ${res.event_id}: ${lastAnswer(d)} in ${last.duration_ms} ms\n`);
        process.stdout.write(`not delivered: ${lastAnswer(d)}${d.next_attempt_at ? `; retrying at ${d.next_attempt_at}` : ''}\n`);
        return 1;
      }),
    );

  webhooks
    .command('deliveries')
    .argument('<webhook_id>', 'a webhook id from `vidembed webhooks list`')
    .option('--limit <n>', 'how many (newest first; at most 100)', Number, 20)
    .option('--offset <n>', 'skip this many', Number, 0)
    .description("a webhook's deliveries, newest first: status, attempts and what the receiver answered")
    .action(async (id: string, opts: { limit: number; offset: number }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const res = await ctx.service.webhookDeliveries(id, { limit: opts.limit, offset: opts.offset });
        if (globals.json) return printJson(res);
        if (res.deliveries.length === 0) return void process.stdout.write('no deliveries yet\n');
        printTable(
          ['delivery', 'event', 'event id', 'status', 'attempts', 'last answer', 'next attempt', 'created'],
          res.deliveries.map((d) => [d.delivery_id, d.event_type, d.event_id, d.status, d.attempts, lastAnswer(d), d.next_attempt_at ?? '', d.created_at]),
        );
      }),
    );
}

async function listWebhooks(ctx: CliContext, json: boolean | undefined): Promise<void> {
  const res = await ctx.service.listWebhooks();
  if (json) return printJson(res);
  if (res.webhooks.length === 0) return void process.stdout.write('no webhooks: add one with `vidembed webhooks add URL`\n');
  printTable(
    ['webhook', 'url', 'events', 'collection', 'created'],
    res.webhooks.map((w) => [w.webhook_id, w.url, w.events.join(','), w.collection_id ?? '(all)', w.created_at]),
  );
}

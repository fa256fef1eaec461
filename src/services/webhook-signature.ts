/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): a secret is `whsec_` and the
 * base64 of random key bytes; each attempt is signed over `${webhook-id}.${webhook-timestamp}.${body}`
 * with HMAC-SHA256, sent as `webhook-signature: v1,<base64>`. Receivers verify with any Standard
 * Webhooks library (the tests use the reference npm package `standardwebhooks`).
 */
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new endpoint secret: 32 random bytes. */
export function newWebhookSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The headers of one attempt: the message id, the time of the attempt (seconds), its signature. */
export function signatureHeaders(secret: string, msgId: string, body: string, at = new Date()): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  const signature = createHmac('sha256', key).update(`${msgId}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': msgId, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}

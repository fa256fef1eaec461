/**
 * Webhooks (issue 34): the key's owner registers, lists, tests and removes endpoints, and reads
 * their delivery log. Events are delivered by the workers, never by this process's request path.
 */
import type { FastifyPluginAsync } from 'fastify';
import { schemas } from '../../api/schemas.js';
import type { RoutesOptions } from '../plumbing.js';

export const webhookRoutes: FastifyPluginAsync<RoutesOptions> = async (app, { ctx }) => {
  const { routes, services, who } = ctx;
  routes.add(
    app,
    {
      method: 'POST',
      url: '/webhooks',
      operationId: 'createWebhook',
      tags: ['webhooks'],
      status: 201,
      errors: [400, 404, 413, 422],
      summary: "register a URL told of the key's owner's events (video.processed, video.failed, task.done, task.failed), Standard Webhooks signed; the secret is in this answer only",
      schema: schemas.createWebhook,
    },
    async (request) => services.webhooks.create(who(request), request.body),
  );
  routes.add(
    app,
    { method: 'GET', url: '/webhooks', operationId: 'listWebhooks', tags: ['webhooks'], errors: [], summary: "the key's owner's webhooks, oldest first", schema: schemas.listWebhooks },
    async (request) => services.webhooks.list(who(request)),
  );
  routes.add(
    app,
    { method: 'GET', url: '/webhooks/:webhook_id', operationId: 'getWebhook', tags: ['webhooks'], errors: [400, 404, 414], summary: 'one webhook (without its secret)', schema: schemas.getWebhook },
    async (request) => services.webhooks.get(who(request), request.params.webhook_id),
  );
  routes.add(
    app,
    { method: 'DELETE', url: '/webhooks/:webhook_id', operationId: 'deleteWebhook', tags: ['webhooks'], errors: [400, 404, 414], summary: 'remove a webhook, its pending deliveries and its log', schema: schemas.deleteWebhook },
    async (request) => services.webhooks.remove(who(request), request.params.webhook_id),
  );
  routes.add(
    app,
    {
      method: 'POST',
      url: '/webhooks/:webhook_id/test',
      operationId: 'testWebhook',
      tags: ['webhooks'],
      status: 202,
      errors: [400, 404, 414],
      summary: 'queue a webhook.test event for this webhook alone; its deliveries show the answer',
      schema: schemas.testWebhook,
    },
    async (request) => services.webhooks.test(who(request), request.params.webhook_id),
  );
  routes.add(
    app,
    {
      method: 'GET',
      url: '/webhooks/:webhook_id/deliveries',
      operationId: 'listWebhookDeliveries',
      tags: ['webhooks'],
      errors: [400, 404, 414, 422],
      summary: "a webhook's deliveries, newest first, each with its attempts and the status codes they got",
      schema: schemas.webhookDeliveries,
    },
    async (request) => services.webhooks.deliveries(who(request), request.params.webhook_id, request.query),
  );
};

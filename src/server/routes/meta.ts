/** Liveness and the OpenAPI document: served without a key. */
import type { FastifyPluginAsync } from 'fastify';
import { schemas } from '../../api/schemas.js';
import { buildOpenApi } from '../openapi.js';
import type { RoutesOptions } from '../plumbing.js';

export const metaRoutes: FastifyPluginAsync<RoutesOptions> = async (app, { ctx }) => {
  const { routes } = ctx;
  routes.add(app, { method: 'GET', url: '/healthz', operationId: 'health', tags: ['meta'], open: true, errors: [], summary: 'liveness; no key needed', schema: schemas.health }, async () => ({ status: 'ok' }));
  routes.add(
    app,
    { method: 'GET', url: '/openapi.json', operationId: 'openapi', tags: ['meta'], open: true, errors: [], summary: 'this document', schema: schemas.openapi },
    // Made on each request from the whole table: every plugin has registered by then.
    async () => buildOpenApi(routes.docs, { auth: ctx.auth }),
  );
};

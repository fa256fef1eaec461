/** Liveness and the OpenAPI document: served without a key. */
import type { FastifyPluginAsync } from 'fastify';
import { UnavailableError } from '../../api/errors.js';
import { operationsSchemas, schemas } from '../../api/schemas.js';
import { DependencyProbe } from '../health.js';
import { buildOpenApi } from '../openapi.js';
import type { RoutesOptions } from '../plumbing.js';

export const metaRoutes: FastifyPluginAsync<RoutesOptions> = async (app, { ctx }) => {
  const { routes } = ctx;
  const probe = new DependencyProbe(ctx.services.library);
  routes.add(
    app,
    { method: 'GET', url: '/healthz', operationId: 'health', tags: ['meta'], open: true, errors: [], summary: 'liveness (200 while the process runs); degraded names a dependency that is down; no key needed', schema: schemas.health },
    async () => {
      const deps = await probe.check();
      return deps.detail ? { status: 'degraded' as const, ...deps } : { status: 'ok' as const };
    },
  );
  routes.add(
    app,
    { method: 'GET', url: '/readyz', operationId: 'ready', tags: ['meta'], open: true, errors: [503], summary: "readiness: 503 while the database or blob store cannot be reached or the server's disk is full; no key needed", schema: operationsSchemas.ready },
    async () => {
      const deps = await probe.check();
      if (deps.detail) throw new UnavailableError(`not ready: ${deps.detail}`);
      return { status: 'ready' as const };
    },
  );
  routes.add(
    app,
    { method: 'GET', url: '/openapi.json', operationId: 'openapi', tags: ['meta'], open: true, errors: [], summary: 'this document', schema: schemas.openapi },
    // Made on each request from the whole table: every plugin has registered by then.
    async () => buildOpenApi(routes.docs, { auth: ctx.auth }),
  );
};

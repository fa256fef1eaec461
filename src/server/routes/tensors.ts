/** Pre-processed tensor uploads, which async tasks then name by key. */
import type { FastifyPluginAsync } from 'fastify';
import { schemas } from '../../api/schemas.js';
import type { RoutesOptions } from '../plumbing.js';

export const tensorRoutes: FastifyPluginAsync<RoutesOptions> = async (app, { ctx }) => {
  const { routes, services, who } = ctx;
  routes.add(
    app,
    { method: 'POST', url: '/files/upload/tensors', operationId: 'uploadTensors', tags: ['tensors'], errors: [400, 409, 413, 422], summary: 'upload pre-processed tensors; returns keys for async calls', schema: schemas.tensorUpload },
    async (request) => services.tasks.uploadTensors(who(request), request.body),
    { bodyLimit: ctx.tensorBodyLimit },
  );
};

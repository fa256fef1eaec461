/** Pre-processed tensor uploads, which async tasks then name by key. */
import type { FastifyPluginAsync } from 'fastify';
import { operationsSchemas, schemas } from '../../api/schemas.js';
import type { RoutesOptions } from '../plumbing.js';
import { useTensorBodyParser } from '../tensor-body.js';

export const tensorRoutes: FastifyPluginAsync<RoutesOptions> = async (app, { ctx }) => {
  const { routes, services, who } = ctx;
  // The upload's body goes to a thread chunk by chunk and its tensors come back as bytes (this plugin's routes only).
  useTensorBodyParser(app);
  routes.add(
    app,
    { method: 'POST', url: '/files/upload/tensors', operationId: 'uploadTensors', tags: ['tensors'], errors: [400, 409, 413, 422], summary: 'upload pre-processed tensors; returns keys for async calls', schema: schemas.tensorUpload },
    async (request) => services.tasks.uploadTensors(who(request), request.body),
    { bodyLimit: ctx.tensorBodyLimit },
  );
  routes.add(
    app,
    { method: 'DELETE', url: '/files/upload/tensors/:request_id', operationId: 'deleteTensors', tags: ['tensors'], errors: [400, 404, 414, 422], summary: 'delete one of your tensor uploads (every part of it)', schema: operationsSchemas.deleteTensors },
    async (request) => services.tasks.deleteTensors(who(request), request.params.request_id),
  );
};

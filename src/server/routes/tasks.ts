/** Async tasks: their status and result (they are submitted under /video_embedding and /video_tagging). */
import type { FastifyPluginAsync } from 'fastify';
import { operationsSchemas, schemas } from '../../api/schemas.js';
import type { RoutesOptions } from '../plumbing.js';

export const taskRoutes: FastifyPluginAsync<RoutesOptions> = async (app, { ctx }) => {
  const { routes, services, who } = ctx;
  routes.add(
    app,
    { method: 'GET', url: '/async_status/:request_id', operationId: 'getTaskStatus', tags: ['tasks'], errors: [400, 404, 414], summary: "an async task's status and result", schema: schemas.asyncStatus },
    async (request) => services.tasks.status(who(request), request.params.request_id),
  );
  routes.add(
    app,
    { method: 'DELETE', url: '/async_status/:request_id', operationId: 'deleteTask', tags: ['tasks'], errors: [400, 404, 414], summary: 'forget an async task (result and payload); a waiting or running one is cancelled', schema: operationsSchemas.deleteTask },
    async (request) => services.tasks.delete(who(request), request.params.request_id),
  );
};

/** The job queue: what is queued or running, and cancelling a job (its owner, or an admin for anyone's). */
import type { FastifyPluginAsync } from 'fastify';
import { jobSchemas } from '../../api/schemas.js';
import type { RoutesOptions } from '../plumbing.js';

export const jobRoutes: FastifyPluginAsync<RoutesOptions> = async (app, { ctx }) => {
  const { routes, services, who } = ctx;
  routes.add(
    app,
    { method: 'GET', url: '/jobs', operationId: 'listJobs', tags: ['jobs'], errors: [], summary: "queued and running jobs, oldest first (the key's owner's; an admin's: everyone's)", schema: jobSchemas.listJobs },
    async (request) => services.queue.list(who(request), request.query.owner),
  );
  routes.add(
    app,
    {
      method: 'POST',
      url: '/jobs/:job_id/cancel',
      operationId: 'cancelJob',
      tags: ['jobs'],
      errors: [400, 404, 409, 414],
      summary: 'cancel a queued or running job; its video or task fails with "cancelled by …" (reprocess starts a video again)',
      schema: jobSchemas.cancelJob,
    },
    async (request) => services.queue.cancel(who(request), request.params.job_id),
  );
};

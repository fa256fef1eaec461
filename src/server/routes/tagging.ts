/** Shot size, camera angle and movement tags: synchronous (within the time budget) or as an async task. */
import type { FastifyPluginAsync } from 'fastify';
import { schemas } from '../../api/schemas.js';
import { withoutPath, type RoutesOptions } from '../plumbing.js';

export const taggingRoutes: FastifyPluginAsync<RoutesOptions> = async (app, { ctx }) => {
  const { routes, services, who, withTimeout, analysisThreads } = ctx;
  routes.add(
    app,
    { method: 'POST', url: '/video_tagging', operationId: 'tagVideo', tags: ['tagging'], errors: [400, 413, 422, 502, 504], mediaErrors: true, summary: 'tag a video synchronously', schema: schemas.tagVideo },
    async (request) => withTimeout(request, (signal) => services.analysis.tagVideo(withoutPath(request.body), { signal, threads: analysisThreads })),
  );
  routes.add(
    app,
    { method: 'POST', url: '/video_tagging/async', operationId: 'submitTaggingTask', tags: ['tagging', 'tasks'], errors: [400, 404, 413, 422], summary: 'submit a tagging task', schema: schemas.asyncSubmit, status: 202 },
    async (request) => services.tasks.submit(who(request), 'tagging', withoutPath(request.body)),
  );
};

/** Text and video embeddings: synchronous (within the time budget) or as an async task. */
import type { FastifyPluginAsync } from 'fastify';
import { schemas } from '../../api/schemas.js';
import { withoutPath, type RoutesOptions } from '../plumbing.js';

export const embeddingRoutes: FastifyPluginAsync<RoutesOptions> = async (app, { ctx }) => {
  const { routes, services, who, withTimeout, analysisThreads } = ctx;
  routes.add(
    app,
    { method: 'POST', url: '/video_embedding/encode_video', operationId: 'encodeVideo', tags: ['embedding'], errors: [400, 413, 422, 502, 504], mediaErrors: true, summary: 'embed a video synchronously', schema: schemas.encodeVideo },
    async (request) => withTimeout(request, (signal) => services.analysis.encodeVideo(withoutPath(request.body), { signal, threads: analysisThreads })),
  );
  routes.add(
    app,
    { method: 'POST', url: '/video_embedding/encode_text', operationId: 'encodeText', tags: ['embedding'], errors: [400, 413, 422], summary: 'embed a text', schema: schemas.encodeText },
    async (request) => services.search.encodeText(request.body),
  );
  routes.add(
    app,
    { method: 'POST', url: '/video_embedding/encode_video/async', operationId: 'submitEmbeddingTask', tags: ['embedding', 'tasks'], errors: [400, 404, 413, 422], summary: 'submit an embedding task', schema: schemas.asyncSubmit, status: 202 },
    async (request) => services.tasks.submit(who(request), 'embedding', withoutPath(request.body)),
  );
};

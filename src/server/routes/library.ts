/** Footage in place (issue 22): a collection indexes folders inside the server's library roots (`serve --library DIR`). */
import type { FastifyPluginAsync } from 'fastify';
import { inPlaceSchemas } from '../../api/schemas.js';
import { collectionParam, type RoutesOptions } from '../plumbing.js';

export const libraryRoutes: FastifyPluginAsync<RoutesOptions> = async (app, { ctx }) => {
  const { routes, services, who, libraryRoots } = ctx;
  // A scan of the collection's folders needs no body: none is read as {} (this plugin's routes only).
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined || request.body === null) request.body = {};
  });
  routes.add(
    app,
    {
      method: 'POST',
      url: '/collections/:collection_id/library-scan',
      operationId: 'libraryScan',
      tags: ['collections', 'videos'],
      errors: [400, 403, 404, 409, 414, 422],
      summary:
        "index footage in place: a folder inside the server's library folders (`serve --library DIR`; any other path, `..` or a link out: 403), or the collection's folders again (new, changed, moved and missing files)",
      schema: inPlaceSchemas.libraryScan,
    },
    async (request) => services.inPlace.libraryScan(who(request), collectionParam(request.params), request.body, libraryRoots),
  );
};

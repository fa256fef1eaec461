/** Collections: create, list, see, rename, delete, reindex, and search over them; near-duplicate videos. */
import type { FastifyPluginAsync } from 'fastify';
import { schemas } from '../../api/schemas.js';
import { collectionParam, withoutPath, type RoutesOptions } from '../plumbing.js';

export const collectionRoutes: FastifyPluginAsync<RoutesOptions> = async (app, { ctx }) => {
  const { routes, services, who, withTimeout } = ctx;
  routes.add(
    app,
    { method: 'POST', url: '/collections', operationId: 'createCollection', tags: ['collections'], errors: [400, 409, 413, 422], summary: 'create a collection', schema: schemas.createCollection, status: 201 },
    async (request) => services.collections.create(who(request), request.body),
  );
  routes.add(
    app,
    { method: 'GET', url: '/collections', operationId: 'listCollections', tags: ['collections'], errors: [422], summary: 'list collections, newest first', schema: schemas.listCollections },
    async (request) => services.collections.list(who(request), request.query),
  );
  routes.add(
    app,
    { method: 'POST', url: '/collections/:collection_id/reindex', operationId: 'reindexCollection', tags: ['collections'], errors: [400, 404, 409, 414], summary: "run again what changed for a collection's videos (a model pulled, a version, the speech setting; `all`: everything); search answers from the old results until each video's are redone", schema: schemas.reindexCollection, status: 202 },
    async (request) => services.collections.reindex(who(request), collectionParam(request.params), request.query),
  );
  routes.add(
    app,
    { method: 'GET', url: '/collections/:collection_id/duplicates', operationId: 'findDuplicates', tags: ['collections'], errors: [400, 404, 409, 414, 422], summary: 'groups of near-identical videos (re-encoded, resized, trimmed copies), with a similarity', schema: schemas.duplicates },
    async (request) => services.videos.duplicates(who(request), collectionParam(request.params), request.query),
  );
  routes.add(
    app,
    { method: 'POST', url: '/collections/:collection_id/search', operationId: 'searchCollection', tags: ['collections'], errors: [400, 404, 409, 413, 414, 422, 502, 504], mediaErrors: true, summary: 'search a collection by text, a picture or a moment (or a mix)', schema: schemas.search },
    async (request) => {
      const body = withoutPath(request.body);
      return withTimeout(request, (signal) => services.search.search(who(request), collectionParam(request.params), body, { explain: body.explain === true, signal }));
    },
  );
  routes.add(
    app,
    { method: 'GET', url: '/collections/:collection_id', operationId: 'getCollection', tags: ['collections'], errors: [400, 404, 409, 414], summary: 'a collection, with how many of its videos are in each status', schema: schemas.collectionDetails },
    async (request) => services.collections.details(who(request), collectionParam(request.params)),
  );
  routes.add(
    app,
    { method: 'PATCH', url: '/collections/:collection_id', operationId: 'updateCollection', tags: ['collections'], errors: [400, 404, 409, 413, 414, 422], summary: "rename a collection or change its description", schema: schemas.updateCollection },
    async (request) => services.collections.update(who(request), collectionParam(request.params), request.body),
  );
  routes.add(
    app,
    { method: 'DELETE', url: '/collections/:collection_id', operationId: 'deleteCollection', tags: ['collections'], errors: [400, 404, 409, 414], summary: 'delete a collection with its videos, segments, vectors, files and pending jobs', schema: schemas.deleteCollection },
    async (request) => services.collections.delete(who(request), collectionParam(request.params)),
  );
};

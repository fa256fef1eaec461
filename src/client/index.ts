/**
 * `vidembed/client`: the typed client of a vidembed server, for Node programs — the same client the
 * remote CLI uses (./remote.ts), with the same errors (src/api/errors.ts) and retries. Every API
 * operation is a typed `request(operationId, …)` (the table ./operations.ts is generated from the
 * server's route table and checked against /openapi.json); the common ones are methods too.
 *
 *   import { VidembedClient } from 'vidembed/client';
 *   const client = new VidembedClient({ baseUrl: 'http://localhost:8080', apiKey: 'vk_…' });
 *   const { results } = await client.search('demo', { text: 'a dog on the grass' });
 */
export { RemoteService as VidembedClient, type RemoteOptions as VidembedClientOptions } from './remote.js';
export { OPERATIONS, type OperationId } from './operations.js';
export type { OperationBody, OperationParams, OperationQuery, OperationRequest, OperationResponse, OperationTypes, RawResponse } from './request-types.js';
export * from '../api/errors.js';
export type * from '../api/types.js';
export { WEBHOOK_EVENTS, WEBHOOK_TEST_EVENT, type WebhookEvent } from '../api/schemas.js';

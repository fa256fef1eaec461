import { describe } from 'vitest';
import { openPgCatalog } from '../../src/store/catalog/postgres.js';
import { conformance } from '../conformance/webhooks.js';
import { pgTestAvailable, usePgTestDatabase } from '../helpers/postgres.js';

/* The webhook outbox rules (test/conformance/webhooks.ts) on PostgreSQL (a throwaway cluster). */

const pgOk = pgTestAvailable();

describe.skipIf(!pgOk)('webhook outbox conformance: PostgreSQL', () => {
  const db = usePgTestDatabase(['webhook_endpoints', 'webhook_deliveries', 'webhook_attempts']);

  conformance(() => ({ open: () => openPgCatalog(db.url, { max: 2 }) }));
});

/**
 * Bounded synchronous work (issue 21, docs/limits.md). Two kinds of request hold a slot from the
 * moment they are authenticated until their response ends (or the client goes away):
 *
 * - synchronous analysis of a video (`encodeVideo`, `tagVideo`): ffmpeg and the models of one call
 *   take the machine's cores for seconds;
 * - a large body (Content-Length over VIDEMBED_LARGE_BODY_MB) on the operations that accept one:
 *   it is held in memory while it is received and parsed.
 *
 * Each kind has a cap per server and per key (src/env.ts `syncLimits`, read once). A key at its own
 * cap is answered 429 (its limit); a server at its cap 503 (busy: another key's work fills it);
 * both with Retry-After. Without a key (`serve --no-auth`, the web page's own sign-in) only the
 * server's cap applies.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RateLimitedError, ServerBusyError } from '../api/errors.js';
import { syncLimits } from '../env.js';
import type { RouteTable } from './plumbing.js';

/** Operations that analyse a video while the client waits. */
export const SYNC_OPERATIONS: ReadonlySet<string> = new Set(['encodeVideo', 'tagVideo']);
/** Operations whose body may be large (a video, tensors, a picture in base64). */
export const LARGE_BODY_OPERATIONS: ReadonlySet<string> = new Set([
  'uploadVideo',
  'uploadTensors',
  'encodeVideo',
  'tagVideo',
  'submitEmbeddingTask',
  'submitTaggingTask',
  'searchCollection',
]);

/** The statuses an operation may answer because of these caps (besides the auth hook's 429). */
export function boundedStatuses(operationId: string): number[] {
  return SYNC_OPERATIONS.has(operationId) || LARGE_BODY_OPERATIONS.has(operationId) ? [503] : [];
}

/** Retry-After of a refusal: work of this kind usually ends within seconds. */
const RETRY_AFTER_S = 2;

/** Slots of one kind: at most `total` at once, at most `perKey` for one key. */
export class Slots {
  private used = 0;
  private readonly byKey = new Map<string, number>();

  constructor(
    readonly what: string,
    readonly total: number,
    readonly perKey: number,
  ) {}

  /** Takes a slot for `key` (undefined: no key, only the server's cap), or throws 429 / 503. */
  take(key: string | undefined): () => void {
    const mine = key === undefined ? 0 : (this.byKey.get(key) ?? 0);
    if (key !== undefined && mine >= this.perKey) {
      throw new RateLimitedError(`this key has ${mine} ${this.what} in progress, its limit; retry when one has ended`, RETRY_AFTER_S);
    }
    if (this.used >= this.total) throw new ServerBusyError(`the server has ${this.used} ${this.what} in progress, its limit; retry shortly`, RETRY_AFTER_S);
    this.used++;
    if (key !== undefined) this.byKey.set(key, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used--;
      if (key === undefined) return;
      const n = (this.byKey.get(key) ?? 1) - 1;
      if (n > 0) this.byKey.set(key, n);
      else this.byKey.delete(key);
    };
  }

  get inUse(): number {
    return this.used;
  }
}

/** Who a slot is counted against: the stored key, or the page's ephemeral key; none without auth. */
function slotKey(request: FastifyRequest): string | undefined {
  if (request.apiKey) return request.apiKey.id;
  if (request.credential?.kind === 'ephemeral') return `eph:${request.credential.hash}`;
  return undefined;
}

const installed = new WeakMap<FastifyInstance, { sync: Slots; largeBodies: Slots }>();

/** The slots of a server built with the caps (what is in use now). */
export function workSlotsOf(app: FastifyInstance): { sync: Slots; largeBodies: Slots } | undefined {
  return installed.get(app);
}

/**
 * Installs the caps as an onRequest hook; call it after the auth hook is added, so the key is
 * known. `routes` maps a request to its operation.
 */
export function installWorkLimits(app: FastifyInstance, routes: RouteTable, limits = syncLimits()): { sync: Slots; largeBodies: Slots } {
  const sync = new Slots('synchronous video analyses', limits.sync, limits.syncPerKey);
  const largeBodies = new Slots('large request bodies', limits.largeBodies, limits.largeBodiesPerKey);
  let operations: Map<string, string> | undefined;
  const operationOf = (request: FastifyRequest) => {
    operations ??= new Map(routes.docs.map((d) => [`${d.method} ${d.url}`, d.operationId]));
    return operations.get(`${request.method} ${request.routeOptions.url ?? ''}`);
  };
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const op = operationOf(request);
    if (!op) return;
    const key = slotKey(request);
    const releases: (() => void)[] = [];
    const release = () => releases.forEach((r) => r());
    try {
      const length = Number(request.headers['content-length']);
      if (LARGE_BODY_OPERATIONS.has(op) && length > limits.largeBodyBytes) releases.push(largeBodies.take(key));
      if (SYNC_OPERATIONS.has(op)) releases.push(sync.take(key));
    } catch (err) {
      release();
      throw err;
    }
    // 'close' comes once the response has been sent, or when the client went away first.
    if (releases.length) reply.raw.once('close', release);
  });
  installed.set(app, { sync, largeBodies });
  return { sync, largeBodies };
}

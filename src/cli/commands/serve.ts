import path from 'node:path';
import type { Command } from 'commander';
import { BadRequestError, errorMessage } from '../../api/errors.js';
import type { LocalEngine } from '../../runtime/engine.js';
import type { UiSessions } from '../../server/ui.js';
import type { Run } from '../context.js';
import { DEFAULTS, encoderThreads, searchConcurrency, searchThreads } from '../../config.js';
import { encoderThreadsSetting, searchThreadsSetting } from '../../env.js';
import { startWarmHost } from '../../runtime/warm.js';
import { warmIdleMs } from '../../config.js';

export interface ServeOptions {
  port: number;
  host: string;
  auth: boolean;
  worker: boolean;
  maxUploadMb?: number;
  syncTimeout?: number;
  allowPrivateUrls?: boolean;
  /** Webhooks registered through this server may point at private/loopback addresses (issue 34). */
  allowPrivateWebhooks?: boolean;
  log?: boolean;
  /** Threads encoding query text (default: VIDEMBED_ENCODER_THREADS, else one per core; 0: the event loop). */
  encoderThreads?: number;
  /** Threads running searches (default: VIDEMBED_SEARCH_THREADS, else one per core; 0: the event loop). */
  searchThreads?: number;
  /** Searches run at once on the event loop, the rest wait oldest first (default: VIDEMBED_SEARCH_CONCURRENCY, else cores + 1; 0: no limit). */
  searchConcurrency?: number;
  /** Folders clients may index in place (repeatable `--library DIR`). */
  library?: string[];
}

export function registerServe(program: Command, run: Run): void {
  program
    .command('serve')
    .option('-p, --port <port>', 'port', Number, 8080)
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--no-auth', 'accept requests without an API key (local development only)')
    .option('--no-worker', 'do not process queued work in this process (run `vidembed worker` elsewhere)')
    .option('--max-upload-mb <mb>', 'largest video upload in MiB (default 2048)', Number)
    .option('--sync-timeout <seconds>', 'time budget of synchronous model calls (default 120)', Number)
    .option('--allow-private-urls', 'let video_url point at private/loopback addresses (SSRF guard off)')
    .option('--allow-private-webhooks', 'let webhooks registered through this server point at private/loopback addresses (docs/webhooks.md)')
    .option('--log', 'log every request as JSON lines')
    .option('--encoder-threads <n>', 'threads encoding query text (default: VIDEMBED_ENCODER_THREADS, else one per core; 0: on the event loop)', Number)
    .option('--search-threads <n>', 'threads running searches, each with its own in-memory index (default: VIDEMBED_SEARCH_THREADS, else one per core; 0: on the event loop)', Number)
    .option('--search-concurrency <n>', 'searches run at once on the event loop, as a pgvector library\'s are; the rest wait their turn (default: VIDEMBED_SEARCH_CONCURRENCY, else one more than the cores; 0: no limit)', Number)
    .option('--library <dir>', 'a folder whose footage clients may index in place (POST /collections/{id}/library-scan); repeatable', (v: string, all: string[] = []) => [...all, v])
    .description('serve the HTTP API, and the web page at /, over the local engine')
    .addHelpText('after', '\nExamples:\n  $ vidembed keys create --name me --qps 5\n  $ vidembed serve --port 8080\n  $ curl -H "X-API-Key: $KEY" http://127.0.0.1:8080/collections')
    .action(async (opts: ServeOptions, cmd: Command) =>
      run(
        cmd,
        async (ctx) => {
          await ctx.close(); // the server opens its own engine with server settings
          await serveUntilStopped(ctx.paths.home, opts, {
            ready: async (address, engine) => {
              process.stderr.write(`vidembed serving on ${address}${opts.auth ? '' : ' (no auth)'}\n`);
              // A database out of reach at start is an outage like any other: say so and serve (503s).
              const keys = opts.auth ? await engine.catalog.keys.list().catch((err: unknown) => {
                process.stderr.write(`the database cannot be reached yet (${errorMessage(err)}): answering 503 until it can\n`);
                return undefined;
              }) : undefined;
              if (keys?.every((k) => k.revoked_at)) {
                process.stderr.write('no API keys yet: create one with `vidembed keys create --name NAME --qps 5`\n');
              }
              // Where searches run, and why (PostgreSQL: pgvector in the database, or each process's in-memory index).
              const vectors = await engine.catalog.vectorStore?.().catch((err: unknown) => {
                // A refusal (--pg-vector pgvector on a library that cannot) stops the server; an outage is said above.
                if ((err as { cause?: { name?: string } }).cause?.name === 'VectorStoreRefusedError') {
                  process.stderr.write(`vidembed: error: ${errorMessage(err)}\n`);
                  process.exitCode = 2;
                  setImmediate(() => process.kill(process.pid, 'SIGTERM')); // the orderly shutdown below
                }
                return undefined;
              });
              if (vectors) process.stderr.write(`vector search: ${vectors.mode} (${vectors.reason})\n`);
            },
          });
          return process.exitCode === 2 ? 2 : undefined; // refused at start (above)
        },
        { localOnly: true },
      ),
    );
}

/**
 * Opens the engine, listens (a busy port is a one-line error before any worker starts), runs the
 * worker, calls `ready`, and serves until SIGTERM/SIGINT, then shuts down in order. Shared by
 * `serve` and `ui`.
 */
export async function serveUntilStopped(
  home: string,
  opts: ServeOptions,
  hooks: { ui?: UiSessions; ready: (address: string, engine: LocalEngine) => void | Promise<void> },
): Promise<void> {
  const threads = encoderThreads(opts.encoderThreads); // a bad value fails before anything starts
  const searchers = searchThreads(opts.searchThreads);
  const gate = searchConcurrency(opts.searchConcurrency);
  const searchersChosen = opts.searchThreads !== undefined || searchThreadsSetting() !== undefined;
  const [{ LocalEngine }, { startAttachedWorker }, { buildServer }, { CachedTextEncoder }, { TextEncoderPool }, { SearchThreads }, { SearchGate }] = await Promise.all([
    import('../../runtime/engine.js'),
    import('../../runtime/launcher.js'),
    import('../../server/app.js'),
    import('../../embedders/text-encoder.js'),
    import('../../embedders/text-encoder-pool.js'),
    import('../../runtime/search-threads.js'),
    import('../../runtime/search-gate.js'),
  ]);
  const encoderPool = threads > 0 ? new TextEncoderPool({ threads }) : undefined;
  const libraryRoots = (opts.library ?? []).map((d) => path.resolve(d));
  const engine = new LocalEngine({
    // Query text is encoded on worker threads, so the event loop keeps reading requests.
    textEncoder: encoderPool ? new CachedTextEncoder(encoderPool, DEFAULTS.textCacheEntries) : undefined,
    home,
    maxUploadBytes: opts.maxUploadMb ? opts.maxUploadMb * 1024 ** 2 : undefined,
    fetchPolicy: { allowPrivate: Boolean(opts.allowPrivateUrls) },
    webhooks: { allowPrivate: Boolean(opts.allowPrivateWebhooks) },
    memoryIndex: true,
    // Footage in place is read (served, processed) only from inside these.
    libraryRoots,
  });
  // A pgvector library's searches run in the database: search threads would add connections and
  // CPU, not speed (1M segments, 32 clients: 67 rps against 81–93 on the event loop), and one text
  // encoder thread encodes all the text such a server needs (each holds the text model, ~120 MB).
  // So, unless asked for, neither. Unknown (the database out of reach at start): as for SQLite.
  const encodersChosen = opts.encoderThreads !== undefined || encoderThreadsSetting() !== undefined;
  const inDatabase = searchersChosen && encodersChosen ? Promise.resolve(false) : engine.catalog.vectorStore?.().then((v) => v.mode === 'pgvector', () => false) ?? Promise.resolve(false);
  if (!encodersChosen) void inDatabase.then((yes) => yes && encoderPool?.setThreads(1));
  // Searches on the event loop (a pgvector library's, or all with --search-threads 0): at most
  // `gate` at once, the rest wait their turn (src/runtime/search-gate.ts).
  const local = gate > 0 ? new SearchGate(engine.services.search, gate) : engine.services.search;
  // Searches on threads of their own: this event loop reads requests and writes answers meanwhile.
  const search =
    searchers > 0
      ? new SearchThreads({
          threads: searchers,
          data: { home, fetchPolicy: { allowPrivate: Boolean(opts.allowPrivateUrls) }, libraryRoots },
          local,
          useThreads: searchersChosen ? undefined : async () => !(await inDatabase),
        })
      : undefined;
  const app = await buildServer({ ...engine.services, search: search ?? local }, {
    auth: opts.auth,
    keys: engine.catalog.keys,
    syncTimeoutMs: opts.syncTimeout ? opts.syncTimeout * 1000 : undefined,
    logger: Boolean(opts.log),
    ui: hooks.ui,
    libraryRoots,
    // The engine above uses the registry's models: synchronous analyses run on threads of their own.
    analysisThreads: true,
  });
  // Listen first: a busy port is a one-line error and exit code, with no worker left running.
  let address: string;
  try {
    address = await app.listen({ port: opts.port, host: opts.host });
  } catch (err) {
    await engine.close();
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new BadRequestError(`port ${opts.port} on ${opts.host} is already in use: pick another with --port`);
    if (code === 'EACCES') throw new BadRequestError(`not allowed to listen on ${opts.host}:${opts.port}: pick a port above 1024 with --port`);
    throw err;
  }
  // Listening: the search threads open the library while the rest starts.
  void search?.start().then((threaded) => process.stderr.write(threaded ? `searches: on ${searchers} thread${searchers === 1 ? '' : 's'}\n` : `searches: on the event loop (pgvector searches in the database)${gate > 0 ? `, ${gate} at once` : ''}\n`));
  const log = (l: string) => process.stderr.write(`${new Date().toISOString()} ${l}\n`);
  // The worker is a process of its own: its jobs' model inference and ffmpeg piping never hold up
  // this event loop, which only does I/O (src/runtime/launcher.ts). It fetches tasks' video_url
  // under this server's settings; it waits out outages itself and is started again should it exit.
  const workerArgs = [...(opts.allowPrivateUrls ? ['--allow-private-urls'] : []), ...(opts.maxUploadMb ? ['--max-upload-mb', String(opts.maxUploadMb)] : [])];
  const worker = opts.worker ? startAttachedWorker(home, { log, args: workerArgs }) : undefined;
  // The CLI on this machine sends its searches here (no model load per call).
  const warm = warmIdleMs() > 0 ? await startWarmHost(engine, home) : undefined;
  await hooks.ready(address, engine);
  await new Promise<void>((resolve) => {
    const shutdown = async (sig: string) => {
      process.stderr.write(`${sig}: stopping (in-flight requests finish; the running job goes back to the queue)\n`);
      const workerStopped = worker?.stop();
      await warm?.close();
      await app.close();
      await search?.close();
      await workerStopped;
      await engine.close();
      resolve();
    };
    process.once('SIGTERM', () => void shutdown('SIGTERM'));
    process.once('SIGINT', () => void shutdown('SIGINT'));
  });
}

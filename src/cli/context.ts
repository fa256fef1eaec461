import { defaultCollection, remoteSettings } from '../env.js';
import { BadRequestError, NotFoundError } from '../api/errors.js';
import type { VideoService } from '../api/types.js';
import { pathsFor, readUserConfig, resolveHome, warmIdleMs, type Paths } from '../config.js';
import { callWarm, WARM_OPS, type WarmOp } from '../runtime/warm.js';
import type { LocalEngine } from '../runtime/engine.js';
import { isInteractive } from './output.js';

export interface GlobalOptions {
  json?: boolean;
  debug?: boolean;
  home?: string;
  databaseUrl?: string;
  pgVector?: string;
  remote?: boolean;
  local?: boolean;
  baseUrl?: string;
  apiKey?: string;
}

export interface CliContext {
  service: VideoService;
  /** Present when the local engine serves (commands that only exist locally use it). */
  local?: LocalEngine;
  paths: Paths;
  /** The server's address when commands go to one. */
  remoteBaseUrl?: string;
  close(): Promise<void>;
}

export function homePaths(globals: GlobalOptions): Paths {
  return pathsFor(globals.home ? globals.home : resolveHome());
}

/** Where the remote face points, if anywhere: flags, then environment, then `vidembed login`. */
export function remoteTarget(globals: GlobalOptions, paths: Paths): { baseUrl: string; apiKey?: string } | undefined {
  if (globals.local) return undefined;
  const config = readUserConfig(paths);
  const remote = remoteSettings();
  const baseUrl = globals.baseUrl ?? remote.baseUrl ?? config.base_url;
  const apiKey = globals.apiKey ?? remote.apiKey ?? config.api_key;
  if (!baseUrl) {
    if (globals.remote) throw new BadRequestError('--remote needs a server: pass --base-url URL, set VIDEMBED_BASE_URL, or run `vidembed login`');
    return undefined;
  }
  return { baseUrl, apiKey };
}

export async function openContext(globals: GlobalOptions, opts: { localOnly?: boolean | 'say'; warm?: boolean } = {}): Promise<CliContext> {
  const paths = homePaths(globals);
  const target = opts.localOnly ? undefined : remoteTarget(globals, paths);
  if (target) {
    const { RemoteService } = await import('../client/remote.js');
    const service = new RemoteService({ baseUrl: target.baseUrl, apiKey: target.apiKey });
    return { service, paths, remoteBaseUrl: target.baseUrl, close: () => service.close() };
  }
  // Loaded on demand: a command a warm process answers never loads the engine here.
  const makeEngine = async () => {
    const [{ LocalEngine }, { ensureBackgroundWorker }] = await Promise.all([import('../runtime/engine.js'), import('../runtime/launcher.js')]);
    const engine: LocalEngine = new LocalEngine({ home: paths.home, onWorkQueued: async () => void (await ensureBackgroundWorker(engine.catalog.registry, paths)) });
    return { engine, warmUp: () => ensureBackgroundWorker(engine.catalog.registry, paths) };
  };
  if (opts.warm && warmIdleMs() > 0) return warmContext(paths, makeEngine);
  const { engine } = await makeEngine();
  return { service: engine, local: engine, paths, close: () => engine.close() };
}

/**
 * The CLI's face for `search` and `embed text`: each call goes to a warm process of this home
 * (`serve`, or the background worker) when one answers on its socket, else to the local engine,
 * opened only then — after which a background worker is started, so the next call finds one warm.
 */
function warmContext(paths: Paths, makeEngine: () => Promise<{ engine: LocalEngine; warmUp: () => unknown }>): CliContext {
  let local: Promise<{ engine: LocalEngine; warmUp: () => unknown }> | undefined;
  let warmGone = false;
  const service = new Proxy({} as VideoService, {
    get(_target, prop) {
      if (prop === 'then') return undefined;
      if (prop === 'close') return async () => (local ? (await local).engine.close() : undefined);
      return async (...args: unknown[]) => {
        if (!warmGone && (WARM_OPS as readonly (string | symbol)[]).includes(prop)) {
          const warm = await callWarm(paths.home, prop as WarmOp, args);
          if (warm.answered) return warm.result;
          warmGone = true; // nobody warm: the rest of this call runs here
        }
        local ??= makeEngine();
        const { engine, warmUp } = await local;
        const out = await (engine[prop as keyof LocalEngine] as (...a: unknown[]) => Promise<unknown>).apply(engine, args);
        if (prop === 'search' || prop === 'encodeText') {
          // Starting a helper process is a convenience; the answer is already here.
          await Promise.resolve()
            .then(warmUp)
            .catch(() => {});
        }
        return out;
      };
    },
  });
  return { service, paths, close: () => service.close() };
}

/**
 * The collection a command works on: --collection, else VIDEMBED_COLLECTION, else the configured
 * default, else the only collection there is, else (on a terminal) a picker. A remote CLI never
 * sends this machine's ids: its configured default goes by name (resolved on the server), and a
 * default the server does not have is passed over.
 */
export async function resolveCollection(ctx: CliContext, given: string | undefined): Promise<string> {
  const explicit = given ?? defaultCollection();
  const config = readUserConfig(ctx.paths);
  const configured = ctx.remoteBaseUrl ? config.default_collection_name : config.default_collection;
  const chosen = explicit ?? configured;
  if (chosen) {
    try {
      return (await ctx.service.getCollection(chosen)).id;
    } catch (err) {
      if (explicit !== undefined || !ctx.remoteBaseUrl || !(err instanceof NotFoundError)) throw err;
    }
  }
  const all = await ctx.service.listCollections({ limit: 1000 });
  if (all.length === 1) return all[0].id;
  if (all.length > 1 && isInteractive()) {
    const { select } = await import('@inquirer/prompts');
    return select({ message: 'Which collection?', choices: all.map((c) => ({ name: `${c.name} (${c.video_count} videos)`, value: c.id })) });
  }
  throw new BadRequestError(
    all.length === 0
      ? 'no collection yet: create one with `vidembed collection create NAME`'
      : 'which collection? pass --collection NAME, set VIDEMBED_COLLECTION, or run `vidembed collection use NAME`',
  );
}

/** How every command runs: with a service context, errors mapped once in src/cli/main.ts. */
export type Run = (
  cmd: import('commander').Command,
  fn: (ctx: CliContext, globals: GlobalOptions) => Promise<number | void>,
  /** true: runs on the local engine; 'say': and says so when a server is configured (keys, models). */
  opts?: { localOnly?: boolean | 'say'; warm?: boolean },
) => Promise<void>;

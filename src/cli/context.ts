import { select } from '@inquirer/prompts';
import { BadRequestError } from '../api/errors.js';
import type { VideoService } from '../api/types.js';
import { pathsFor, readUserConfig, resolveHome, type Paths } from '../engine/config.js';
import { LocalEngine } from '../engine/engine.js';
import { ensureBackgroundWorker } from '../engine/launcher.js';
import { isInteractive } from './output.js';

export interface GlobalOptions {
  json?: boolean;
  debug?: boolean;
  home?: string;
}

export interface CliContext {
  service: VideoService;
  /** Present when the local engine serves (commands that only exist locally use it). */
  local?: LocalEngine;
  paths: Paths;
  close(): Promise<void>;
}

export function homePaths(globals: GlobalOptions): Paths {
  return pathsFor(globals.home ? globals.home : resolveHome());
}

export async function openContext(globals: GlobalOptions): Promise<CliContext> {
  const paths = homePaths(globals);
  let engine: LocalEngine | undefined;
  engine = new LocalEngine({
    home: paths.home,
    onWorkQueued: () => ensureBackgroundWorker(engine!.store, paths),
  });
  return { service: engine, local: engine, paths, close: () => engine!.close() };
}

/**
 * The collection a command works on: --collection, else VIDEMBED_COLLECTION, else the configured
 * default, else the only collection there is, else (on a terminal) a picker.
 */
export async function resolveCollection(ctx: CliContext, given: string | undefined): Promise<string> {
  const chosen = given ?? process.env.VIDEMBED_COLLECTION ?? readUserConfig(ctx.paths).default_collection;
  if (chosen) return (await ctx.service.getCollection(chosen)).id;
  const all = await ctx.service.listCollections({ limit: 1000 });
  if (all.length === 1) return all[0].id;
  if (all.length > 1 && isInteractive()) {
    return select({ message: 'Which collection?', choices: all.map((c) => ({ name: `${c.name} (${c.video_count} videos)`, value: c.id })) });
  }
  throw new BadRequestError(
    all.length === 0
      ? 'no collection yet: create one with `vidembed collection create NAME`'
      : 'which collection? pass --collection NAME, set VIDEMBED_COLLECTION, or run `vidembed collection use NAME`',
  );
}

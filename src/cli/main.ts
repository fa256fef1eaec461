import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { registerCollection } from './commands/collection.js';
import { registerEmbed } from './commands/embed.js';
import { registerSearch } from './commands/search.js';
import { registerVideos } from './commands/videos.js';
import { registerWorker } from './commands/worker.js';
import { registerServe } from './commands/serve.js';
import { registerUi } from './commands/ui.js';
import { registerKeys } from './commands/keys.js';
import { registerTensors } from './commands/tensors.js';
import { registerTag } from './commands/tag.js';
import { registerModels } from './commands/models.js';
import { registerOpen } from './commands/open.js';
import { registerDuplicates } from './commands/duplicates.js';
import { registerRescan } from './commands/rescan.js';
import { registerJobs } from './commands/jobs.js';
import { registerWebhooks } from './commands/webhooks.js';
import { registerMcp } from './commands/mcp.js';
import { BadRequestError } from '../api/errors.js';
import { homePaths, openContext, remoteTarget, type CliContext, type GlobalOptions } from './context.js';
import { describeError, exitCodeFor } from './errors.js';
import { useDatabaseUrl, usePgVectorRequest } from '../env.js';
import { registerMigrate } from './commands/migrate.js';
import { registerDb } from './commands/db.js';
import { registerDoctor } from './commands/doctor.js';

/** Runs one command with a service context, mapping any error to one line and an exit code. */
async function run(
  cmd: Command,
  fn: (ctx: CliContext, globals: GlobalOptions) => Promise<number | void>,
  opts: { localOnly?: boolean | 'say'; warm?: boolean } = {},
): Promise<void> {
  const globals = cmd.optsWithGlobals() as GlobalOptions;
  let ctx: CliContext | undefined;
  try {
    if (globals.databaseUrl) useDatabaseUrl(globals.databaseUrl);
    if (globals.pgVector) usePgVectorRequest(globals.pgVector);
    if (opts.localOnly === 'say') sayLocalOnly(cmd, globals);
    ctx = await openContext(globals, opts);
    const code = await fn(ctx, globals);
    process.exitCode = code ?? 0;
  } catch (err) {
    if (err instanceof Error && err.name === 'ExitPromptError') {
      process.exitCode = 130;
      return;
    }
    process.stderr.write(`vidembed: error: ${describeError(err)}\n`);
    if (globals.debug && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
    process.exitCode = exitCodeFor(err);
  } finally {
    await ctx?.close();
  }
}

/**
 * Commands that manage this machine's library only (API keys, installed models) say so when a
 * server is configured, rather than silently answering for the wrong place; asked for explicitly
 * with --remote or --base-url, they refuse.
 */
function sayLocalOnly(cmd: Command, globals: GlobalOptions): void {
  if (globals.local) return;
  const target = remoteTarget(globals, homePaths(globals));
  if (!target) return;
  const name = `${cmd.parent?.name() === 'vidembed' ? '' : `${cmd.parent?.name()} `}${cmd.name()}`;
  if (globals.remote || globals.baseUrl) {
    throw new BadRequestError(`\`vidembed ${name}\` works on this machine's library only; run it on the server's machine (drop --remote/--base-url)`);
  }
  process.stderr.write(`note: \`vidembed ${name}\` is local-only: it works on this machine's library, not on ${target.baseUrl} (--local hides this note)\n`);
}

/** The version in the package's own package.json (two levels above dist/src/cli or src/cli). */
function packageVersion(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'vidembed') return pkg.version ?? '0.0.0';
    }
  }
  return '0.0.0';
}

export function buildProgram(): Command {
  const program = new Command('vidembed')
    .version(packageVersion(), '-V, --version', 'print the version')
    .description('Embed, tag and search videos by text — locally, or as an HTTP API')
    .option('--json', 'machine-readable output: exactly the API response object')
    .option('--debug', 'print stack traces on errors')
    .option('--home <dir>', 'data directory (default: VIDEMBED_HOME, else ~/.vidembed if it exists, else ~/.local/share/vidembed on Linux: docs/install.md)')
    .option('--database-url <url>', 'keep the library in PostgreSQL (postgres://…; default: VIDEMBED_DATABASE_URL, else SQLite in the home)')
    .option('--pg-vector <mode>', 'where a PostgreSQL library\'s vectors are searched: auto, pgvector (in the database) or memory (default: VIDEMBED_PG_VECTOR, else auto)')
    .option('--remote', 'use a remote server (VIDEMBED_BASE_URL / --base-url / vidembed login)')
    .option('--local', 'use the local engine even when a server is configured')
    .option('--base-url <url>', 'remote server address (implies --remote)')
    .option('--api-key <key>', 'API key for the remote server (default: VIDEMBED_API_KEY)')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText(
      'after',
      `
Quick start:
  $ vidembed collection create demo --description "first try"
  $ vidembed upload ./clip.mp4 --collection demo --wait
  $ vidembed search "a dog on the grass" --collection demo
  $ vidembed serve --port 8080`,
    );
  registerCollection(program, run);
  registerVideos(program, run);
  registerSearch(program, run);
  registerOpen(program, run);
  registerDuplicates(program, run);
  registerRescan(program, run);
  registerJobs(program, run);
  registerWebhooks(program, run);
  registerMcp(program, run);
  registerEmbed(program, run);
  registerWorker(program, run);
  registerServe(program, run);
  registerUi(program, run);
  registerKeys(program, run);
  registerTensors(program, run);
  registerTag(program, run);
  registerModels(program, run);
  registerMigrate(program, run);
  registerDb(program, run);
  registerDoctor(program, run);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  // `vidembed ... | head`: the reader went away, which is no error of ours.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(0);
      throw err;
    });
  }
  const program = buildProgram();
  program.exitOverride();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode === 0 ? 0 : 2;
      return;
    }
    throw err;
  }
}

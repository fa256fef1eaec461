import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { BadRequestError } from '../api/errors.js';
import { homePaths, openContext, remoteTarget, type CliContext, type GlobalOptions, type Run } from './context.js';
import { describeError, exitCodeFor } from './errors.js';
import { useDatabaseUrl, usePgVectorRequest } from '../env.js';

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

type Register = (program: Command, run: Run) => void;

/**
 * Each command module, in the order help lists them, with the top-level commands it registers.
 * A command line loads only the module of the command it runs (a warm `vidembed search` then
 * skips the store, server, speech and media modules the other commands import: most of a one-shot
 * CLI call's time was loading them); no command, an unknown one or `help` loads all.
 * test/unit/cli-commands.test.ts checks the names against what each module registers.
 */
export const COMMAND_MODULES: { commands: string[]; load: () => Promise<Register> }[] = [
  { commands: ['collection'], load: async () => (await import('./commands/collection.js')).registerCollection },
  { commands: ['upload', 'video'], load: async () => (await import('./commands/videos.js')).registerVideos },
  { commands: ['search'], load: async () => (await import('./commands/search.js')).registerSearch },
  { commands: ['open'], load: async () => (await import('./commands/open.js')).registerOpen },
  { commands: ['duplicates'], load: async () => (await import('./commands/duplicates.js')).registerDuplicates },
  { commands: ['rescan'], load: async () => (await import('./commands/rescan.js')).registerRescan },
  { commands: ['jobs'], load: async () => (await import('./commands/jobs.js')).registerJobs },
  { commands: ['webhooks'], load: async () => (await import('./commands/webhooks.js')).registerWebhooks },
  { commands: ['mcp'], load: async () => (await import('./commands/mcp.js')).registerMcp },
  { commands: ['embed', 'task'], load: async () => (await import('./commands/embed.js')).registerEmbed },
  { commands: ['worker'], load: async () => (await import('./commands/worker.js')).registerWorker },
  { commands: ['serve'], load: async () => (await import('./commands/serve.js')).registerServe },
  { commands: ['ui'], load: async () => (await import('./commands/ui.js')).registerUi },
  { commands: ['keys', 'login', 'logout'], load: async () => (await import('./commands/keys.js')).registerKeys },
  { commands: ['tensors', 'upload-tensors'], load: async () => (await import('./commands/tensors.js')).registerTensors },
  { commands: ['tag'], load: async () => (await import('./commands/tag.js')).registerTag },
  { commands: ['models'], load: async () => (await import('./commands/models.js')).registerModels },
  { commands: ['migrate'], load: async () => (await import('./commands/migrate.js')).registerMigrate },
  { commands: ['db'], load: async () => (await import('./commands/db.js')).registerDb },
  { commands: ['doctor'], load: async () => (await import('./commands/doctor.js')).registerDoctor },
];

/**
 * The command a command line names: its first operand after the global options (a global option
 * that takes a value skips that value too); undefined when there is none.
 */
export function commandOf(program: Command, args: string[]): string | undefined {
  const takesValue = new Set<string>();
  for (const o of program.options) {
    if (!o.required && !o.optional) continue;
    if (o.long) takesValue.add(o.long);
    if (o.short) takesValue.add(o.short);
  }
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') return args[i + 1];
    if (!a.startsWith('-')) return a;
    if (!a.includes('=') && takesValue.has(a)) i++;
  }
  return undefined;
}

/** The program with its global options and the commands `argv` may run (all of them without argv). */
export async function buildProgram(argv?: string[]): Promise<Command> {
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
  const name = argv ? commandOf(program, argv.slice(2)) : undefined;
  const one = name === undefined ? undefined : COMMAND_MODULES.find((m) => m.commands.includes(name));
  // `vidembed --version` alone needs no command.
  const versionOnly = argv !== undefined && name === undefined && argv.slice(2).some((a) => a === '-V' || a === '--version');
  for (const m of one ? [one] : versionOnly ? [] : COMMAND_MODULES) (await m.load())(program, run);
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
  const program = await buildProgram(argv);
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

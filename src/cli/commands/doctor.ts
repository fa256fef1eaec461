import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { databaseUrl } from '../../env.js';
import type { Run } from '../context.js';
import { printJson } from '../output.js';
import { pgVectorReport, printStatus } from './db.js';

/**
 * `vidembed doctor`: where this machine's library is and where its searches run, and why. Changes
 * nothing (a PostgreSQL library is migrated to the current schema, as any command would).
 */
export function registerDoctor(program: Command, run: Run): void {
  program
    .command('doctor')
    .description('say where the library is kept and where its vector searches run, and why')
    .addHelpText('after', '\nExamples:\n  $ vidembed doctor\n  $ VIDEMBED_DATABASE_URL=postgres://vidembed@db.lan/vidembed vidembed doctor --json')
    .action(async (_o: unknown, cmd: Command) =>
      run(
        cmd,
        async (ctx, globals) => {
          const url = databaseUrl();
          if (url) {
            const report = await pgVectorReport(url);
            if (globals.json) return printJson(report);
            return printStatus(report);
          }
          const report = {
            backend: 'sqlite',
            database: ctx.paths.dbFile,
            exists: existsSync(ctx.paths.dbFile),
            vector_store: 'sqlite-vec',
            reason: 'SQLite library: vectors in sqlite-vec tables; `serve` and workers keep an in-memory index of each collection they search (PostgreSQL with pgvector: docs/scale.md)',
          };
          if (globals.json) return printJson(report);
          process.stdout.write(`database: ${report.database}${report.exists ? '' : ' (not created yet)'}\nvector search: ${report.vector_store} — ${report.reason}\n`);
        },
        { localOnly: true },
      ),
    );
}

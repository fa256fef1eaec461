import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { BadRequestError } from '../../api/errors.js';
import { openBlobStore, storageRoot } from '../../config.js';
import { pgVectorRequest, pgVectorSettings } from '../../env.js';
import type { Run } from '../context.js';
import { printJson, printTable } from '../output.js';

/** Every file under `dir`, as blob keys relative to it (temp files of interrupted writes left out). */
async function* blobKeys(dir: string, prefix = ''): AsyncGenerator<string> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const key = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) yield* blobKeys(path.join(dir, e.name), key);
    else if (e.isFile() && !e.name.endsWith('.tmp')) yield key;
  }
}

export function registerMigrate(program: Command, run: Run): void {
  program
    .command('migrate')
    .requiredOption('--to <url>', 'the PostgreSQL database to copy this library into (postgres://user:pass@host:5432/db; must be empty)')
    .option('--storage-to <url>', 'also copy the files (videos, thumbnails, tensors) into this storage (file:///shared/dir or s3://bucket/prefix)')
    .description('copy this machine\'s SQLite library into PostgreSQL, so many workers and servers can share it')
    .addHelpText(
      'after',
      '\nCopies collections, videos, segments (vectors, keywords, facts, tags), signatures, tasks, API keys and open jobs in one\ntransaction, then checks the counts on both sides. The SQLite library is left as it was.\n\nExample:\n  $ vidembed migrate --to postgres://vidembed@db.lan/vidembed --storage-to file:///mnt/footage/vidembed\n  $ export VIDEMBED_DATABASE_URL=postgres://vidembed@db.lan/vidembed VIDEMBED_STORAGE_URL=file:///mnt/footage/vidembed',
    )
    .action(async (opts: { to: string; storageTo?: string }, cmd: Command) =>
      run(
        cmd,
        async (ctx, globals) => {
          if (!/^postgres(ql)?:\/\//.test(opts.to)) throw new BadRequestError('--to must be a postgres:// URL');
          if (!existsSync(ctx.paths.dbFile)) throw new BadRequestError(`no library to migrate at ${ctx.paths.home}`);
          const [{ Store }, { copySqliteToPg }, { openPgPool }, { redactUrl }] = await Promise.all([
            import('../../store/index.js'),
            import('../../store/pg/copy-sqlite.js'),
            import('../../store/pg/migrate.js'),
            import('../../store/open.js'),
          ]);
          const store = Store.open(ctx.paths.dbFile);
          const pool = openPgPool(opts.to, 2);
          const say = (line: string) => !globals.json && process.stderr.write(`${line}\n`);
          try {
            say(`copying ${ctx.paths.dbFile} into ${redactUrl(opts.to)}`);
            const counts = await copySqliteToPg(
              store,
              pool,
              (table, done, total) => {
                if (table === 'segments' && done < total) say(`  segments ${done}/${total}`);
                if (table === 'hnsw index') say(`  vector index ${done}/${total} built`);
              },
              { request: pgVectorRequest(), settings: pgVectorSettings() },
            );
            let blobs = 0;
            if (opts.storageTo) {
              const from = storageRoot(ctx.paths);
              const to = openBlobStore(ctx.paths, { ...process.env, VIDEMBED_STORAGE_URL: opts.storageTo });
              if (existsSync(from)) {
                for await (const key of blobKeys(from)) {
                  await to.putFile(key, path.join(from, key));
                  if (++blobs % 100 === 0) say(`  files ${blobs}`);
                }
              }
            }
            const legacy = store.videos.countWithPathOnly();
            if (globals.json) return printJson({ tables: counts, files_copied: opts.storageTo ? blobs : undefined, videos_kept_by_path: legacy });
            printTable(
              ['table', 'sqlite', 'postgres'],
              counts.map((c) => [c.table, c.sqlite, c.postgres]),
            );
            if (opts.storageTo) say(`copied ${blobs} file(s) into ${opts.storageTo}`);
            if (legacy) say(`note: ${legacy} video(s) stored before blob keys are kept by their path on this machine; other machines cannot read them`);
            const inPlace = store.videos.countInPlace();
            if (inPlace) say(`note: ${inPlace} video(s) indexed in place are read from their folders: workers on other machines need those folders at the same paths`);
            say(`done: set VIDEMBED_DATABASE_URL${opts.storageTo ? ' and VIDEMBED_STORAGE_URL' : ''} on every worker and server`);
          } finally {
            store.close();
            await pool.end();
          }
        },
        { localOnly: true },
      ),
    );
}

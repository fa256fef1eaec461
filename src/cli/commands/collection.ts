import type { Command } from 'commander';
import { ValidationError } from '../../api/errors.js';
import { readUserConfig, writeUserConfig } from '../../engine/config.js';
import type { Run } from '../context.js';
import { isInteractive, printJson, printTable } from '../output.js';

export function registerCollection(program: Command, run: Run): void {
  const collection = program.command('collection').description('create, list and choose collections');

  collection
    .command('create')
    .argument('[name]', 'collection name (asked for on a terminal when missing)')
    .option('-d, --description <text>', 'what the collection holds', '')
    .option('--model <id>', 'embedder for its vectors (default: the configured default model)')
    .description('create a collection')
    .addHelpText('after', '\nExamples:\n  $ vidembed collection create demo --description "first try"\n  $ vidembed collection create trips --json')
    .action(async (name: string | undefined, opts: { description: string; model?: string }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        let collectionName = name;
        if (!collectionName && isInteractive() && !globals.json) {
          const { input } = await import('@inquirer/prompts');
          collectionName = await input({ message: 'Collection name:', required: true });
        }
        if (!collectionName) throw new ValidationError([{ loc: ['body', 'name'], msg: 'is required', type: 'value_error.missing' }]);
        const res = await ctx.service.createCollection({ name: collectionName, description: opts.description, model: opts.model });
        // The first collection becomes the default, so upload and search work without --collection.
        if (!readUserConfig(ctx.paths).default_collection) writeUserConfig(ctx.paths, { default_collection: res.collection_id });
        if (globals.json) printJson(res);
        else process.stdout.write(`created collection ${res.name} (${res.collection_id}, model ${res.model})\n`);
      }),
    );

  collection
    .command('list')
    .option('--limit <n>', 'at most this many', (v) => Number(v), 100)
    .option('--offset <n>', 'skip this many', (v) => Number(v), 0)
    .description('list collections, newest first')
    .addHelpText('after', '\nExamples:\n  $ vidembed collection list\n  $ vidembed collection list --json')
    .action(async (opts: { limit: number; offset: number }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const list = await ctx.service.listCollections({ limit: opts.limit, offset: opts.offset });
        if (globals.json) return printJson(list);
        if (list.length === 0) return void process.stdout.write('no collections yet: vidembed collection create NAME\n');
        const def = readUserConfig(ctx.paths).default_collection;
        printTable(
          ['', 'name', 'id', 'videos', 'model', 'created', 'description'],
          list.map((c) => [c.id === def || c.name === def ? '*' : '', c.name, c.id, c.video_count, c.model, c.created_at.slice(0, 19).replace('T', ' '), c.description]),
        );
      }),
    );

  collection
    .command('use')
    .argument('<name>', 'collection name or id')
    .description('make a collection the default for upload and search')
    .addHelpText('after', '\nExample:\n  $ vidembed collection use demo')
    .action(async (name: string, _opts: unknown, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const c = await ctx.service.getCollection(name);
        writeUserConfig(ctx.paths, { default_collection: c.id });
        if (globals.json) printJson(c);
        else process.stdout.write(`default collection: ${c.name} (${c.id})\n`);
      }),
    );
}

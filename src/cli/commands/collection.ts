import { waitForReindex } from '../wait.js';
import { isSpeechSetting, resolveSpeech, SPEECH_SETTINGS } from '../../speech/engines.js';
import { imagenetEnabled } from '../../env.js';
import type { Command } from 'commander';
import { ValidationError } from '../../api/errors.js';
import { readUserConfig, writeUserConfig, type Paths } from '../../config.js';
import type { Run } from '../context.js';
import { isInteractive, printJson, printTable } from '../output.js';
import { confirmOrRefuse } from './videos.js';

export function registerCollection(program: Command, run: Run): void {
  const collection = program
    .command('collection')
    .description('create, list, rename, delete, reindex and choose collections')
    .addHelpText('after', '\nExamples:\n  $ vidembed collection create demo\n  $ vidembed collection list\n  $ vidembed collection use demo\n  $ vidembed collection rename demo trips\n  $ vidembed collection delete trips --yes');

  collection
    .command('create')
    .argument('[name]', 'collection name (asked for on a terminal when missing)')
    .option('-d, --description <text>', 'what the collection holds', '')
    .option('--model <id>', 'embedder for its vectors (default: the configured default model)')
    .option('--speech <engine>', 'who transcribes what is said: auto (the best engine installed), off, pocketsphinx or whisper', 'auto')
    .option('--language <code>', 'the language spoken in its videos (BCP 47: en, de, pt-BR); speech in a language no installed engine knows is not transcribed', 'en')
    .description('create a collection')
    .addHelpText('after', '\nExamples:\n  $ vidembed collection create demo --description "first try"\n  $ vidembed collection create silent-b-roll --speech off\n  $ vidembed collection create interviews-de --language de\n  $ vidembed collection create trips --json')
    .action(async (name: string | undefined, opts: { description: string; model?: string; speech: string; language: string }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        let collectionName = name;
        if (!collectionName && isInteractive() && !globals.json) {
          const { input } = await import('@inquirer/prompts');
          collectionName = await input({ message: 'Collection name:', required: true });
        }
        if (!collectionName) throw new ValidationError([{ loc: ['body', 'name'], msg: 'is required', type: 'value_error.missing' }]);
        if (ctx.local && isInteractive() && !globals.json) await offerModels(ctx.paths, opts.model);
        if (!isSpeechSetting(opts.speech)) throw new ValidationError([{ loc: ['body', 'speech'], msg: `must be one of ${SPEECH_SETTINGS.join(', ')}`, type: 'value_error.enum' }]);
        const res = await ctx.service.createCollection({ name: collectionName, description: opts.description, model: opts.model, speech: opts.speech, language: opts.language });
        // The first collection becomes the default, so upload and search work without --collection.
        if (!readUserConfig(ctx.paths).default_collection) writeUserConfig(ctx.paths, { default_collection: res.collection_id, default_collection_name: res.name });
        if (globals.json) printJson(res);
        else {
          process.stdout.write(`created collection ${res.name} (${res.collection_id}, model ${res.model})\n`);
          if (ctx.local) {
            const { reason } = resolveSpeech(res.speech ?? 'auto', process.env, res.language);
            if (reason && res.speech !== 'off') process.stderr.write(`note: its videos will be indexed without what is said in them: ${reason}\n`);
          }
        }
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
          list.map((c) => [
            c.id === def || c.name === def ? '*' : '',
            c.name,
            c.id,
            c.video_count,
            c.needs_reindex ? `${c.model} (reindex)` : c.model,
            c.created_at.slice(0, 19).replace('T', ' '),
            c.description,
          ]),
        );
        const stale = list.filter((c) => c.needs_reindex);
        if (stale.length) {
          process.stderr.write(`note: the engine would make ${stale.map((c) => c.name).join(', ')}'s vectors differently now (new or updated analyzers): vidembed collection reindex NAME\n`);
        }
      }),
    );

  collection
    .command('rename')
    .argument('<name>', 'collection name or id')
    .argument('<new_name>', 'its new name')
    .description('rename a collection')
    .addHelpText('after', '\nExample:\n  $ vidembed collection rename demo holidays-2026')
    .action(async (name: string, newName: string, _opts: unknown, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const res = await ctx.service.updateCollection(name, { name: newName });
        if (globals.json) return printJson(res);
        process.stdout.write(`renamed ${name} to ${res.name} (${res.id})\n`);
      }),
    );

  collection
    .command('delete')
    .argument('<name>', 'collection name or id')
    .option('-y, --yes', 'do not ask (scripts)')
    .description("delete a collection with all its videos, their segments and vectors, and the library's copies of uploaded files (files indexed in place stay)")
    .addHelpText('after', '\nExamples:\n  $ vidembed collection delete demo\n  $ vidembed collection delete demo --yes --json')
    .action(async (name: string, opts: { yes?: boolean }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const c = await ctx.service.collectionDetails(name);
        await confirmOrRefuse(`Delete collection ${c.name} and its ${c.video_count} video${c.video_count === 1 ? '' : 's'}? The library's copies of uploaded files are deleted; files indexed in place stay where they are.`, opts.yes, globals.json);
        const res = await ctx.service.deleteCollection(c.id);
        const config = readUserConfig(ctx.paths);
        if (config.default_collection === c.id || config.default_collection === c.name) writeUserConfig(ctx.paths, { default_collection: undefined, default_collection_name: undefined });
        if (globals.json) return printJson(res);
        process.stdout.write(`deleted collection ${c.name} (${res.videos ?? 0} videos)\n`);
      }),
    );

  collection
    .command('reindex')
    .argument('<name>', 'collection name or id')
    .option('-w, --wait', 'wait until every video is done, with progress and the time left')
    .option('--all', 'run every capability of every video again (by default only what changed)')
    .description("run again what changed for a collection's videos (a model pulled or updated, the speech setting), in the background")
    .addHelpText(
      'after',
      "\nOnly what changed runs again, and what derives from it: after pulling the ImageNet model, ImageNet runs\non each video's stored keyframes and the vectors are made again from the facts — no decode.\nSearch keeps answering from each video's old results until its new ones are complete.\n\nExamples:\n  $ vidembed models pull imagenet-mobilenet-v2\n  $ vidembed collection reindex demo --wait\n  $ vidembed collection reindex demo --all",
    )
    .action(async (name: string, opts: { wait?: boolean; all?: boolean }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const res = await ctx.service.reindexCollection(name, opts.all ? { all: true } : {});
        if (!res.queued) {
          if (globals.json) return printJson(res);
          process.stdout.write(`${name}: nothing to run again (every video is up to date; --all runs everything again)\n`);
          return;
        }
        const what = Object.entries(res.capabilities ?? {})
          .map(([c, n]) => (n === res.queued ? c : `${c} (${n})`))
          .join(', ');
        if (!globals.json) {
          process.stdout.write(
            `queued ${res.queued} video${res.queued === 1 ? '' : 's'} of ${name}: ${what}${res.decodes !== undefined ? `; ${res.decodes} decoded again, ${res.queued - res.decodes} from stored keyframes` : ''}\n`,
          );
        }
        if (!opts.wait) {
          if (globals.json) return printJson(res);
          process.stderr.write('search answers from the old results until each video is done (vidembed collection reindex NAME --wait to follow it)\n');
          return;
        }
        const done = await waitForReindex(ctx.service, res, { json: globals.json, label: name });
        if (globals.json) printJson({ ...res, failed: done.failed, seconds: Math.round(done.seconds * 10) / 10 });
        return done.failed ? 6 : 0;
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
        writeUserConfig(ctx.paths, { default_collection: c.id, default_collection_name: c.name });
        if (globals.json) printJson(c);
        else process.stdout.write(`default collection: ${c.name} (${c.id})\n`);
      }),
    );
}

/**
 * On a terminal, before a local collection is created: offers the ImageNet classifier when it is
 * missing (3.5 MB; searches can then name a thousand kinds of things), and says once what a CLIP
 * model would bring and how to get it.
 */
async function offerModels(paths: Paths, model: string | undefined): Promise<void> {
  const { ModelManager } = await import('../../models/manager.js');
  const manager = new ModelManager();
  const installed = (id: string): boolean => {
    try {
      return manager.isInstalled(id);
    } catch {
      return false;
    }
  };
  const perception = !model || model.startsWith('perception');
  if (perception && !installed('imagenet-mobilenet-v2') && imagenetEnabled()) {
    const { confirm } = await import('@inquirer/prompts');
    const yes = await confirm({
      message: 'Pull the ImageNet classifier (3.5 MB) so searches can name a thousand kinds of things (a tabby cat, a pier, a fig)?',
      default: true,
    });
    if (yes) {
      try {
        await manager.pull('imagenet-mobilenet-v2');
        process.stderr.write('installed imagenet-mobilenet-v2: new videos get its labels\n');
      } catch (err) {
        process.stderr.write(`could not pull it (${(err as Error).message}); the collection works without it: vidembed models pull imagenet-mobilenet-v2 later, then vidembed collection reindex NAME\n`);
      }
    }
  }
  const config = readUserConfig(paths);
  if (perception && !installed('clip-vit-b32') && !config.clip_hint_shown) {
    process.stderr.write(
      'tip: with the internet, a CLIP model matches what is in the pictures far better than the offline tier: vidembed models pull clip-vit-b32, then vidembed collection create NAME --model clip-vit-b32 (docs/models.md compares them)\n',
    );
    writeUserConfig(paths, { clip_hint_shown: true });
  }
}

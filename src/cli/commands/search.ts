import type { Command } from 'commander';
import type { Run } from '../context.js';
import { resolveCollection } from '../context.js';
import { formatSeconds, printJson, printTable } from '../output.js';

function parseTopK(v: string): number {
  const n = Number(v);
  return Number.isFinite(n) ? n : NaN;
}

export function registerSearch(program: Command, run: Run): void {
  program
    .command('search')
    .argument('<text>', 'what you are looking for, in words')
    .option('-c, --collection <name>', 'collection name or id (default: VIDEMBED_COLLECTION or the default collection)')
    .option('-k, --top-k <n>', 'number of videos, 1-100', parseTopK, 10)
    .option('--explain', 'show what the engine saw in each matching moment')
    .option('--shot <size>', 'only segments with this shot size (e.g. close_up)')
    .option('--movement <movement>', 'only segments with this camera movement (e.g. pan_left)')
    .option('--angle <angle>', 'only segments with this shooting angle (e.g. low_angle)')
    .description('search a collection by text; one result per video, at its best-matching moment')
    .addHelpText('after', '\nExamples:\n  $ vidembed search "sunset drone shot"\n  $ vidembed search "a dog on the grass" --collection demo --top-k 5 --json')
    .action(async (text: string, opts: { collection?: string; topK: number; explain?: boolean; shot?: string; movement?: string; angle?: string }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const collectionId = await resolveCollection(ctx, opts.collection);
        const res = await ctx.service.search(
          collectionId,
          { text, top_k: opts.topK, shot_size: opts.shot, camera_movement: opts.movement, shooting_angle: opts.angle },
          { explain: opts.explain },
        );
        if (globals.json) return printJson(res);
        if (res.results.length === 0) return void process.stdout.write('no results\n');
        const head = ['rank', 'video', 'file', 'similarity', 'moment'];
        if (opts.explain) head.push('what was seen');
        printTable(
          head,
          res.results.map((r, i) => {
            const row: (string | number)[] = [i + 1, r.video_id, r.filename, r.similarity.toFixed(3), `${formatSeconds(r.start)}–${formatSeconds(r.end)}`];
            if (opts.explain) row.push(r.description ?? '');
            return row;
          }),
        );
      }),
    );
}

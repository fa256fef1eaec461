import type { Command } from 'commander';
import type { Run } from '../context.js';
import { resolveCollection } from '../context.js';
import { saveLastSearch } from '../last-search.js';
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
    .option('--min-confidence <c>', 'leave out results below this confidence, 0-1 (e.g. 0.4 drops low ones)', Number)
    .description('search a collection by text; one result per video, at its best-matching moment')
    .addHelpText(
      'after',
      '\nResults are ordered by relevance (similarity plus a bonus for query words that analysis found in the moment);\nconfidence says how likely a result is what you asked for (high / medium / low).\n\nExamples:\n  $ vidembed search "sunset drone shot"\n  $ vidembed search "a dog on the grass" --collection demo --top-k 5 --json\n  $ vidembed search "EXIT sign" --min-confidence 0.4 --explain\n  $ vidembed search "a crowd" --shot wide --movement pan_left',
    )
    .action(async (text: string, opts: { collection?: string; topK: number; explain?: boolean; shot?: string; movement?: string; angle?: string; minConfidence?: number }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const collectionId = await resolveCollection(ctx, opts.collection);
        const res = await ctx.service.search(
          collectionId,
          { text, top_k: opts.topK, shot_size: opts.shot, camera_movement: opts.movement, shooting_angle: opts.angle, min_confidence: opts.minConfidence },
          { explain: opts.explain },
        );
        saveLastSearch(ctx.paths, collectionId, text, res);
        if (globals.json) return printJson(res);
        for (const w of res.warnings ?? []) process.stderr.write(`note: ${w}\n`);
        if (res.results.length === 0) return void process.stdout.write('no results\n');
        const head = ['rank', 'video', 'file', 'relevance', 'confidence', 'moment'];
        if (opts.explain) head.push('what was seen');
        printTable(
          head,
          res.results.map((r, i) => {
            const conf = r.confidence === undefined ? '' : `${r.confidence_label ?? ''} ${r.confidence.toFixed(2)}`.trim();
            const row: (string | number)[] = [i + 1, r.video_id, r.filename, (r.relevance ?? r.similarity).toFixed(3), conf, `${formatSeconds(r.start)}–${formatSeconds(r.end)}`];
            if (opts.explain) row.push(`${r.description ?? ''}${r.matched_words?.length ? ` [matched: ${r.matched_words.join(', ')}]` : ''}`);
            return row;
          }),
        );
      }),
    );
}

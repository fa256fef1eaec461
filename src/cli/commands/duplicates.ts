import type { Command } from 'commander';
import type { Run } from '../context.js';
import { resolveCollection } from '../context.js';
import { formatSeconds, printJson, printTable } from '../output.js';

export function registerDuplicates(program: Command, run: Run): void {
  program
    .command('duplicates')
    .option('-c, --collection <name>', 'collection name or id (default: VIDEMBED_COLLECTION or the default collection)')
    .option('--min-similarity <x>', 'group videos at this similarity or above, in (0, 1] (default 0.5)', (v) => Number(v))
    .option('--segments', "also show where each segment of a group's first video is in the others")
    .description('groups of near-identical videos in a collection: re-encoded, resized or trimmed copies')
    .addHelpText(
      'after',
      "\nSimilarity is the share of the two videos' pictures (4 per second) that the other one holds: 1 for a\nre-encode or a resize, a little less for a trim. Lower --min-similarity to find clips inside longer videos.\n\nExamples:\n  $ vidembed duplicates --collection demo\n  $ vidembed duplicates --min-similarity 0.3 --segments\n  $ vidembed duplicates --json",
    )
    .action(async (opts: { collection?: string; minSimilarity?: number; segments?: boolean }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const collectionId = await resolveCollection(ctx, opts.collection);
        const res = await ctx.service.findDuplicates(collectionId, { min_similarity: opts.minSimilarity, segments: opts.segments === true });
        if (globals.json) return printJson(res);
        for (const w of res.warnings ?? []) process.stderr.write(`note: ${w}\n`);
        if (res.groups.length === 0) {
          process.stdout.write(`no near-duplicates among ${res.compared} video${res.compared === 1 ? '' : 's'} (similarity ≥ ${res.min_similarity})\n`);
          return;
        }
        printTable(
          ['group', 'video', 'file', 'duration', 'similarity'],
          res.groups.flatMap((g, i) =>
            g.videos.map((v, k) => [
              k === 0 ? String(i + 1) : '',
              v.video_id,
              v.filename,
              v.duration !== undefined ? formatSeconds(v.duration) : '',
              k === 0 ? 'first added' : (v.similarity ?? 0).toFixed(2),
            ]),
          ),
        );
        if (opts.segments) {
          const rows = res.groups.flatMap((g, i) =>
            (g.segments ?? []).flatMap((s) =>
              s.matches.map((m) => [String(i + 1), `${formatSeconds(s.start)}–${formatSeconds(s.end)}`, m.video_id, `${formatSeconds(m.start)}–${formatSeconds(m.end)}`, m.similarity.toFixed(2)]),
            ),
          );
          if (rows.length) printTable(['group', "first video's segment", 'in video', 'at', 'similarity'], rows);
        }
        const videos = res.groups.reduce((n, g) => n + g.videos.length, 0);
        process.stderr.write(`${res.groups.length} group${res.groups.length === 1 ? '' : 's'} (${videos} videos) among ${res.compared} compared, similarity ≥ ${res.min_similarity}\n`);
      }),
    );
}

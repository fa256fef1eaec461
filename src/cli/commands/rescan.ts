/** `vidembed rescan`: footage indexed in place, brought up to date with the disk (issue 22). */
import path from 'node:path';
import type { Command } from 'commander';
import type { RescanResponse } from '../../api/types.js';
import type { Run } from '../context.js';
import { resolveCollection } from '../context.js';
import { printJson } from '../output.js';

export function registerRescan(program: Command, run: Run): void {
  program
    .command('rescan')
    .argument('[folder]', 'also index this folder in place from now on (on a server: a folder inside its `serve --library` folders)')
    .option('-c, --collection <name>', 'collection name or id (default: VIDEMBED_COLLECTION or the default collection)')
    .option('--include-deleted', 'also take back files deleted from the collection before (a scan leaves them out)')
    .description('pick up new, changed, moved, renamed and deleted files of the folders a collection indexes in place')
    .addHelpText(
      'after',
      "\nFootage indexed in place (`upload DIR --in-place`) stays where it is. rescan walks its folders again:\nnew video files are added, changed ones processed again, moved or renamed ones followed (same\nfingerprint, same video, new path), and videos whose file is gone (or was replaced by a link) are listed as missing (kept:\n`video delete` removes them; it never deletes your file, and later scans leave it out:\n--include-deleted takes such files back). Links are followed only inside the folders.\n\nExamples:\n  $ vidembed rescan --collection card\n  $ vidembed rescan ./more-footage/ --json",
    )
    .action(async (folder: string | undefined, opts: { collection?: string; includeDeleted?: boolean }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const collectionId = await resolveCollection(ctx, opts.collection);
        const req = { ...(folder === undefined ? {} : { path: ctx.local ? path.resolve(folder) : folder }), ...(opts.includeDeleted ? { include_deleted: true } : {}) };
        const res = await ctx.service.scanLibrary(collectionId, req);
        if (globals.json) return printJson(res);
        printScan(res);
      }),
    );
}

/** One line per change, then the counts (`rescan`). */
export function printScan(res: RescanResponse): void {
  printScanLines(res);
  const rel = (f: string) => path.relative(process.cwd(), f) || f;
  process.stderr.write(
    `collection ${res.collection_name}: ${res.added.length} added, ${res.changed.length} changed, ${res.moved.length} moved, ${res.missing.length} missing, ${res.unchanged} unchanged, ${res.skipped.length} skipped (folders: ${res.folders.map(rel).join(', ') || 'none'})\n`,
  );
}

/** One line per change (`upload DIR --in-place` counts them in its own summary line). */
export function printScanLines(res: RescanResponse): void {
  const rel = (f: string) => path.relative(process.cwd(), f) || f;
  const out: string[] = [];
  for (const a of res.added) out.push(`added    ${a.video_id}  ${rel(a.file)}`);
  for (const c of res.changed) out.push(`changed  ${c.video_id}  ${rel(c.file)} (processed again)`);
  for (const m of res.moved) out.push(`moved    ${m.video_id}  ${rel(m.from)} -> ${rel(m.to)}`);
  for (const m of res.missing) out.push(`missing  ${m.video_id}  ${rel(m.file)}${m.reason ? `: ${m.reason}` : ''}`);
  // Files refused or left out are listed; the many that are not videos by their name (sidecars, stills) are counted.
  const byName = res.skipped.filter((s) => s.reason.startsWith('not a video file (by its extension)'));
  for (const s of res.skipped) if (!byName.includes(s)) out.push(`skipped  ${rel(s.file)}: ${s.reason}`);
  if (byName.length) out.push(`skipped  ${byName.length} file${byName.length === 1 ? '' : 's'} that are not videos by their extension${byName.length <= 3 ? ` (${byName.map((s) => rel(s.file)).join(', ')})` : ''}`);
  if (out.length) process.stdout.write(`${out.join('\n')}\n`);
}

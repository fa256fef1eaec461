import path from 'node:path';
import type { Command } from 'commander';
import { BadRequestError } from '../../api/errors.js';
import type { UploadVideoResponse, VideoStatus, VideoStatusResponse } from '../../api/types.js';
import type { Run } from '../context.js';
import { resolveCollection } from '../context.js';
import { formatSeconds, isInteractive, printJson, printTable } from '../output.js';
import { waitForVideo } from '../wait.js';

export function registerVideos(program: Command, run: Run): void {
  program
    .command('upload')
    .argument('<files...>', 'video files')
    .option('-c, --collection <name>', 'collection name or id (default: VIDEMBED_COLLECTION or the default collection)')
    .option('-w, --wait', 'wait until processed, with a progress spinner')
    .option('--no-wait', 'return as soon as the file is stored (the default)')
    .description('upload videos into a collection; a background worker processes them')
    .addHelpText('after', '\nExamples:\n  $ vidembed upload ./clip.mp4 --collection demo --wait\n  $ vidembed upload ./a.mp4 ./b.mov --json')
    .action(async (files: string[], opts: { collection?: string; wait?: boolean }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const collectionId = await resolveCollection(ctx, opts.collection);
        const outputs: (UploadVideoResponse | VideoStatusResponse)[] = [];
        let failures = 0;
        for (const file of files) {
          const uploaded = await ctx.service.uploadVideo(collectionId, { path: path.resolve(file), filename: path.basename(file) });
          if (!globals.json && !opts.wait) process.stdout.write(`${uploaded.video_id}  ${path.basename(file)}  ${uploaded.status}\n`);
          if (opts.wait) {
            const st = await waitForVideo(ctx.service, uploaded.video_id, { json: globals.json, label: path.basename(file) });
            if (st.status === 'failed') failures++;
            outputs.push(st);
            if (!globals.json) process.stdout.write(`${st.video_id}  ${path.basename(file)}  ${st.status}${st.error_message ? `: ${st.error_message}` : ''}\n`);
          } else outputs.push(uploaded);
        }
        if (globals.json) printJson(outputs.length === 1 ? outputs[0] : outputs);
        else if (!opts.wait && outputs.length) {
          process.stderr.write(`processing in the background: vidembed video status ${outputs[0].video_id} (or upload --wait next time)\n`);
        }
        return failures ? 6 : 0;
      }),
    );

  const video = program
    .command('video')
    .description('look at and manage uploaded videos')
    .addHelpText('after', '\nExamples:\n  $ vidembed video list --collection demo\n  $ vidembed video status vid_abc123 --wait\n  $ vidembed video show vid_abc123\n  $ vidembed video delete vid_abc123 --yes');
  video
    .command('status')
    .argument('<video_id>')
    .option('-w, --wait', 'wait until processed or failed')
    .description("a video's processing status")
    .addHelpText('after', '\nExample:\n  $ vidembed video status vid_abc123 --json')
    .action(async (videoId: string, opts: { wait?: boolean }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const st = opts.wait ? await waitForVideo(ctx.service, videoId, { json: globals.json }) : await ctx.service.videoStatus(videoId);
        if (globals.json) printJson(st);
        else process.stdout.write(`${st.video_id}  ${st.status}${st.progress !== undefined && st.status === 'processing' ? ` ${Math.round(st.progress)}%` : ''}${st.error_message ? `: ${st.error_message}` : ''}\n`);
        return st.status === 'failed' ? 6 : 0;
      }),
    );
  video
    .command('show')
    .argument('<video_id>')
    .description('a video with its tags, segments and what the engine saw in each')
    .addHelpText('after', '\nExamples:\n  $ vidembed video show vid_abc123\n  $ vidembed video show vid_abc123 --json')
    .action(async (videoId: string, _o: unknown, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const d = await ctx.service.videoDetails(videoId);
        if (globals.json) return printJson(ctx.local ? { ...d, file: ctx.local.videoFile(videoId).path } : d);
        process.stdout.write(`${d.video_id}  ${d.filename}  ${d.status}${d.error_message ? `: ${d.error_message}` : ''}\n`);
        if (d.duration) process.stdout.write(`duration ${formatSeconds(d.duration)}  ${d.width}x${d.height}${d.fps ? `  ${Math.round(d.fps * 100) / 100} fps` : ''}\n`);
        if (ctx.local) process.stdout.write(`file ${ctx.local.videoFile(videoId).path}\n`);
        const label = (t: unknown) => {
          const v = t as { label?: string; confidence?: number } | undefined;
          return v?.label ? `${v.label} ${Math.round((v.confidence ?? 0) * 100)}%` : '';
        };
        if (d.tags) {
          const t = d.tags as Record<string, unknown>;
          process.stdout.write(`shot ${label(t.shot_size) || '?'}, movement ${label(t.camera_movement) || '?'}, angle ${label(t.shooting_angle) || '?'}\n`);
        }
        if (d.segments.length) {
          printTable(
            ['start', 'end', 'shot', 'movement', 'description'],
            d.segments.map((s) => [formatSeconds(s.start), formatSeconds(s.end), label(s.tags?.shot_size), label(s.tags?.camera_movement), s.description]),
          );
        }
      }),
    );
  video
    .command('list')
    .option('-c, --collection <name>', 'collection name or id (default: VIDEMBED_COLLECTION or the default collection)')
    .option('--status <status>', 'only videos in this status: uploaded, processing, processed or failed')
    .option('--limit <n>', 'at most this many', (v) => Number(v), 100)
    .option('--offset <n>', 'skip this many', (v) => Number(v), 0)
    .description("a collection's videos, newest first")
    .addHelpText('after', '\nExamples:\n  $ vidembed video list --collection demo\n  $ vidembed video list --status failed --json')
    .action(async (opts: { collection?: string; status?: string; limit: number; offset: number }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const collectionId = await resolveCollection(ctx, opts.collection);
        const list = await ctx.service.listVideos(collectionId, { status: opts.status as VideoStatus | undefined, limit: opts.limit, offset: opts.offset });
        if (globals.json) return printJson(list);
        if (list.length === 0) return void process.stdout.write(opts.status ? `no ${opts.status} videos\n` : 'no videos yet: vidembed upload FILE\n');
        printTable(
          ['video', 'file', 'status', 'duration', 'size', 'added'],
          list.map((v) => [
            v.video_id,
            v.filename,
            `${v.status}${v.status === 'processing' && v.progress !== undefined ? ` ${Math.round(v.progress)}%` : ''}${v.error_message ? `: ${v.error_message}` : ''}`,
            v.duration ? formatSeconds(v.duration) : '',
            v.width ? `${v.width}x${v.height}` : '',
            v.created_at.slice(0, 19).replace('T', ' '),
          ]),
        );
      }),
    );
  video
    .command('delete')
    .argument('<video_ids...>')
    .option('-y, --yes', 'do not ask (scripts)')
    .description('delete videos with their segments, vectors and files')
    .addHelpText('after', '\nExamples:\n  $ vidembed video delete vid_abc123\n  $ vidembed video delete vid_a vid_b --yes --json')
    .action(async (ids: string[], opts: { yes?: boolean }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        await confirmOrRefuse(`Delete ${ids.length === 1 ? ids[0] : `${ids.length} videos`} and their files?`, opts.yes, globals.json);
        const out = [];
        for (const id of ids) out.push(await ctx.service.deleteVideo(id));
        if (globals.json) return printJson(out.length === 1 ? out[0] : out);
        for (const r of out) process.stdout.write(`deleted ${r.id}\n`);
      }),
    );
}

/**
 * Destructive commands ask on a terminal; in a script they need `--yes` (refused otherwise, so a
 * script never deletes by accident).
 */
export async function confirmOrRefuse(question: string, yes: boolean | undefined, json: boolean | undefined): Promise<void> {
  if (yes) return;
  if (!isInteractive() || json) throw new BadRequestError(`${question.replace(/\?$/, '')}: pass --yes to confirm (not asked outside a terminal)`);
  const { confirm } = await import('@inquirer/prompts');
  if (!(await confirm({ message: question, default: false }))) throw new BadRequestError('cancelled: nothing was deleted');
}

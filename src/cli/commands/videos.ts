import path from 'node:path';
import type { Command } from 'commander';
import { stat } from 'node:fs/promises';
import { BadRequestError, MediaError, NotFoundError } from '../../api/errors.js';
import type { UploadVideoResponse, VideoStatus, VideoStatusResponse, VideoSummary } from '../../api/types.js';
import type { Run } from '../context.js';
import { resolveCollection } from '../context.js';
import { formatSeconds, isInteractive, printJson, printTable } from '../output.js';
import { spinner } from '../spinner.js';
import { stillRunning, waitForVideo, waitUntil } from '../wait.js';
import { printScan } from './rescan.js';
import { FILTERABLE_KINDS } from '../../tags/registry.js';
import { formatTranscript, isTranscriptFormat, TRANSCRIPT_FORMATS } from '../../speech/format.js';
import { resolveSpeech } from '../../speech/engines.js';
import { isVideoFile, VIDEO_EXTENSIONS, walkFiles } from '../../services/footage-files.js';
import { lookupVideo, resolveVideo, videoName } from '../video-ref.js';
import { registerUpload } from './upload.js';

export function registerVideos(program: Command, run: Run): void {
  registerUpload(program, run);

  const video = program
    .command('video')
    .description('look at and manage uploaded videos')
    .addHelpText('after', '\nExamples:\n  $ vidembed video list --collection demo\n  $ vidembed video status vid_abc123 --wait\n  $ vidembed video show vid_abc123\n  $ vidembed video delete vid_abc123 --yes');
  video
    .command('status')
    .argument('<video>', VIDEO_ARG)
    .option('-w, --wait', 'wait until processed or failed')
    .option('--until <state>', 'with --wait: complete (the default) or searchable (the pictures done: search finds it; speech lands later)')
    .option('-c, --collection <name>', IN_COLLECTION)
    .description("a video's processing status")
    .addHelpText('after', '\nExamples:\n  $ vidembed video status vid_abc123 --json\n  $ vidembed video status card-01/C0001.MP4 --wait\n  $ vidembed video status vid_abc123 --wait --until searchable')
    .action(async (ref: string, opts: { wait?: boolean; until?: string; collection?: string }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const until = waitUntil(opts.until);
        const videoId = await resolveVideo(ctx, ref, opts);
        const wait = opts.wait || opts.until !== undefined;
        const st = wait ? await waitForVideo(ctx.service, videoId, { json: globals.json, until }) : await ctx.service.videoStatus(videoId);
        const rest = st.status === 'processing' ? stillRunning(st) : '';
        if (globals.json) printJson(st);
        else
          process.stdout.write(
            `${st.video_id}  ${st.status}${st.progress !== undefined && st.status === 'processing' ? ` ${Math.round(st.progress)}%` : ''}${st.searchable && st.status === 'processing' ? ' (searchable)' : ''}${rest ? ` — ${rest}` : ''}${st.error_message ? `: ${st.error_message}` : ''}\n`,
          );
        return st.status === 'failed' ? 6 : 0;
      }),
    );
  video
    .command('show')
    .argument('<video>', VIDEO_ARG)
    .option('-c, --collection <name>', IN_COLLECTION)
    .description('a video with its tags, segments and what the engine saw in each')
    .addHelpText('after', '\nExamples:\n  $ vidembed video show vid_abc123\n  $ vidembed video show INTERVIEW_01.mp4\n  $ vidembed video show card-01/C0001.MP4 --json')
    .action(async (ref: string, opts: { collection?: string }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const videoId = await resolveVideo(ctx, ref, opts);
        const d = await ctx.service.videoDetails(videoId);
        // Locally: where the file and its thumbnails are on disk. Remotely: the URLs that serve them.
        const thumbs = ctx.local ? await ctx.local.thumbnailFiles(videoId) : undefined;
        if (globals.json) {
          return printJson(ctx.local ? { ...d, file: await ctx.local.videoPath(videoId), thumbnail_files: thumbs } : d);
        }
        process.stdout.write(`${d.video_id}  ${videoName(d)}  ${d.status}${d.error_message ? `: ${d.error_message}` : ''}\n`);
        if (d.analysis) process.stdout.write(`analysis ${analysisLine(d.analysis)}\n`);
        if (d.duration) {
          process.stdout.write(`duration ${formatSeconds(d.duration)}  ${d.width}x${d.height}${d.fps ? `  ${Math.round(d.fps * 100) / 100} fps` : ''}${d.codec ? `  ${d.codec}` : ''}\n`);
        }
        const base = ctx.remoteBaseUrl?.replace(/\/+$/, '');
        const gone = d.missing ? ` (missing: ${d.missing_reason ?? 'moved, renamed or deleted outside vidembed'}; \`vidembed rescan\` follows moved files)` : '';
        const kept = d.in_place && !d.missing ? ' (in place: your own file, never copied or deleted)' : '';
        if (ctx.local) process.stdout.write(`file ${(await ctx.local.videoPath(videoId)) ?? '(in object storage: see it through a server)'}${gone || kept}\n`);
        else if (d.missing) process.stdout.write(`file missing on the server${gone}\n`);
        else if (base) process.stdout.write(`file ${base}/videos/${d.video_id}/file (send your API key)\n`);
        if (thumbs?.poster) process.stdout.write(`poster ${thumbs.poster}\n`);
        else if (base && d.status === 'processed') process.stdout.write(`poster ${base}/videos/${d.video_id}/thumbnail\n`);
        const label = (t: unknown) => {
          const v = t as { label?: string; confidence?: number } | undefined;
          return v?.label ? `${v.label} ${Math.round((v.confidence ?? 0) * 100)}%` : '';
        };
        if (d.tags) {
          const t = d.tags as Record<string, unknown>;
          process.stdout.write(`${FILTERABLE_KINDS.map((k) => `${k.option} ${label(t[k.name]) || '?'}`).join(', ')}\n`);
        }
        if (d.segments.length) {
          printTable(
            ['start', 'end', ...FILTERABLE_KINDS.map((k) => k.option), 'description', 'thumbnail'],
            d.segments.map((s, i) => [
              formatSeconds(s.start),
              formatSeconds(s.end),
              ...FILTERABLE_KINDS.map((k) => label(s.tags?.[k.name])),
              s.description,
              thumbs?.segments[i] ?? (base && s.thumbnail_url ? `${base}${s.thumbnail_url}` : ''),
            ]),
          );
        }
      }),
    );
  video
    .command('transcript')
    .argument('<video>', VIDEO_ARG)
    .option('--format <format>', 'txt, srt, vtt or json', 'txt')
    .option('-c, --collection <name>', IN_COLLECTION)
    .description('what is said in a video, as text, subtitles (srt, vtt) or words with times (json)')
    .addHelpText('after', '\nExamples:\n  $ vidembed video transcript vid_abc123\n  $ vidembed video transcript INTERVIEW_01.mp4 --format srt > talk.srt')
    .action(async (ref: string, opts: { format: string; collection?: string }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const format = globals.json ? 'json' : opts.format;
        if (!isTranscriptFormat(format)) throw new BadRequestError(`--format must be one of ${TRANSCRIPT_FORMATS.join(', ')}, got ${format}`);
        const t = await ctx.service.videoTranscript(await resolveVideo(ctx, ref, opts));
        if (t.reason && !t.words.length && format !== 'json') process.stderr.write(`no transcript: ${t.reason}\n`);
        process.stdout.write(formatTranscript(t, format, t.video_id));
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
            videoName(v),
            `${v.missing ? 'missing, ' : ''}${v.status}${v.status === 'processing' && v.progress !== undefined ? ` ${Math.round(v.progress)}%` : ''}${v.error_message ? `: ${v.error_message}` : ''}`,
            v.duration ? formatSeconds(v.duration) : '',
            v.width ? `${v.width}x${v.height}` : '',
            v.created_at.slice(0, 19).replace('T', ' '),
          ]),
        );
        const missing = list.filter((v) => v.missing).length;
        if (missing) process.stderr.write(`${missing} file${missing === 1 ? ' is' : 's are'} missing (moved, renamed or deleted outside vidembed): \`vidembed rescan\` follows moved files\n`);
      }),
    );
  video
    .command('reprocess')
    .argument('<video>', VIDEO_ARG)
    .option('-w, --wait', 'wait until processed or failed')
    .option('-c, --collection <name>', IN_COLLECTION)
    .description('process a video again (after a failure, or to pick up what a newer release sees)')
    .addHelpText('after', '\nExamples:\n  $ vidembed video reprocess vid_abc123 --wait\n  $ vidembed video reprocess card-01/C0001.MP4')
    .action(async (ref: string, opts: { wait?: boolean; collection?: string }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const videoId = await resolveVideo(ctx, ref, opts);
        let st = await ctx.service.reprocessVideo(videoId);
        if (opts.wait) st = await waitForVideo(ctx.service, videoId, { json: globals.json });
        if (globals.json) printJson(st);
        else if (!opts.wait) process.stdout.write(`${st.video_id}  ${st.status}: processing again in the background (vidembed video status ${st.video_id} --wait)\n`);
        return st.status === 'failed' ? 6 : 0;
      }),
    );
  video
    .command('delete')
    .argument('<videos...>', 'video ids, file names or paths in place (card-01/C0001.MP4)')
    .option('-y, --yes', 'do not ask (scripts)')
    .option('-c, --collection <name>', IN_COLLECTION)
    .description("take videos out of the library: their segments, vectors, thumbnails and transcripts, and the library's copy of an uploaded file; a file indexed in place is yours and stays where it is")
    .addHelpText('after', '\nExamples:\n  $ vidembed video delete vid_abc123\n  $ vidembed video delete card-01/C0001.MP4 card-01/C0002.MP4 --yes --json')
    .action(async (refs: string[], opts: { yes?: boolean; collection?: string }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const videos: VideoSummary[] = [];
        for (const ref of refs) videos.push(await lookupVideo(ctx, ref, opts));
        await confirmOrRefuse(deleteQuestion(videos), opts.yes, globals.json);
        const out = [];
        for (const v of videos) out.push(await ctx.service.deleteVideo(v.video_id));
        if (globals.json) return printJson(out.length === 1 ? out[0] : out);
        for (const v of videos) {
          process.stdout.write(`deleted ${v.video_id}  ${videoName(v)}: ${v.in_place ? 'your file is kept where it is (it was indexed in place)' : "the library's copy is deleted"}\n`);
        }
      }),
    );
}

const VIDEO_ARG = 'a video id, a file name (INTERVIEW_01.mp4) or a path in place (card-01/C0001.MP4)';
const IN_COLLECTION = 'look the name up in this collection only (when the same name is in several)';

/** What `video delete` asks: in place, the user's file stays; uploaded, the library's copy goes. */
export function deleteQuestion(videos: Pick<VideoSummary, 'video_id' | 'filename' | 'relative_path' | 'in_place'>[]): string {
  const inPlace = videos.filter((v) => v.in_place).length;
  const copies = videos.length - inPlace;
  if (videos.length === 1) {
    const v = videos[0];
    return v.in_place
      ? `Delete ${v.video_id} (${videoName(v)}) from the library? Your file stays where it is: only its index, thumbnails and transcript are deleted.`
      : `Delete ${v.video_id} (${videoName(v)}) with the library's copy of the file? (The file you uploaded it from is not touched.)`;
  }
  const parts = [inPlace ? `${inPlace} indexed in place (your files stay where they are)` : '', copies ? `${copies} uploaded (the library's copies are deleted)` : ''].filter(Boolean);
  return `Delete ${videos.length} videos from the library: ${parts.join(', ')}?`;
}

/**
 * Destructive commands ask on a terminal; in a script they need `--yes` (refused otherwise, so a
 * script never deletes by accident).
 */
export async function confirmOrRefuse(question: string, yes: boolean | undefined, json: boolean | undefined): Promise<void> {
  if (yes) return;
  if (!isInteractive() || json) throw new BadRequestError(`${question} Pass --yes to confirm (not asked outside a terminal).`);
  const { confirm } = await import('@inquirer/prompts');
  if (!(await confirm({ message: question, default: false }))) throw new BadRequestError('cancelled: nothing was deleted');
}

/** Each capability's state in one line: "perception done, imagenet skipped (not installed: …), speech running". */
export function analysisLine(analysis: NonNullable<VideoStatusResponse['analysis']>): string {
  return Object.entries(analysis)
    .map(([name, a]) => `${name} ${a.status}${a.reason ? ` (${a.reason})` : ''}${a.message ? ` (${a.message})` : ''}`)
    .join(', ');
}

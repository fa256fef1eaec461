import path from 'node:path';
import type { Command } from 'commander';
import { stat } from 'node:fs/promises';
import { BadRequestError, MediaError, NotFoundError } from '../../api/errors.js';
import type { UploadVideoResponse, VideoStatus, VideoStatusResponse } from '../../api/types.js';
import type { Run } from '../context.js';
import { resolveCollection } from '../context.js';
import { formatSeconds, isInteractive, printJson, printTable, spinner } from '../output.js';
import { waitForVideo } from '../wait.js';
import { printScan } from './rescan.js';
import { FILTERABLE_KINDS } from '../../tags/registry.js';
import { formatTranscript, isTranscriptFormat, TRANSCRIPT_FORMATS } from '../../speech/format.js';
import { resolveSpeech } from '../../speech/engines.js';
import { isVideoFile, VIDEO_EXTENSIONS, walkFiles } from '../../services/footage-files.js';

export function registerVideos(program: Command, run: Run): void {
  program
    .command('upload')
    .argument('<paths...>', 'video files, folders (walked recursively) or globs ("footage/*.mp4", "card/**/*.mov")')
    .option('-c, --collection <name>', 'collection name or id (default: VIDEMBED_COLLECTION or the default collection)')
    .option('-w, --wait', 'wait until processed, then print one summary table')
    .option('--no-wait', 'return as soon as the files are stored (the default)')
    .option('--force', 'add files whose bytes the collection already holds')
    .option('--skip-duplicates', 'also skip files whose pictures the collection already holds (re-encoded, resized or trimmed copies)')
    .option('--in-place', 'index the files where they are: nothing is copied, folders are remembered for `vidembed rescan`')
    .description('upload videos into a collection; a background worker processes them')
    .addHelpText(
      'after',
      '\nFolders are walked for video files (' + VIDEO_EXTENSIONS.join(' ') + '); other files are skipped and listed,\nand so is a file that is not a video whatever its name (text, a still image, audio only).\nA file whose bytes are already in the collection is skipped (--force adds it again).\nWith --skip-duplicates, so is a file whose pictures are already in one of its videos (each file is\ndecoded once more to compare its pictures; `vidembed duplicates` finds copies already stored).\n\nExamples:\n  $ vidembed upload ./clip.mp4 --collection demo --wait\n  $ vidembed upload ./card/ --wait\n  $ vidembed upload "footage/*.mov" --json\n  $ vidembed upload ./exports/ --skip-duplicates --wait\n  $ vidembed upload ~/footage/ --in-place --wait   # nothing copied; \`vidembed rescan\` later',
    )
    .action(async (paths: string[], opts: { collection?: string; wait?: boolean; force?: boolean; skipDuplicates?: boolean; inPlace?: boolean }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const collectionId = await resolveCollection(ctx, opts.collection);
        if (opts.inPlace) {
          // Folders in place: indexed where they lie and remembered (a server resolves them inside its library folders).
          const folders = await inPlaceFolders(paths, Boolean(ctx.local));
          paths = paths.filter((p) => !folders.given.includes(p));
          let failed = 0;
          for (const dir of folders.dirs) {
            const res = await ctx.service.scanLibrary(collectionId, { path: dir });
            if (globals.json) printJson(res);
            else printScan(res);
            if (!opts.wait) continue;
            for (const [k, a] of res.added.entries()) {
              const st = await waitForVideo(ctx.service, a.video_id, { json: globals.json, label: `${k + 1}/${res.added.length} ${path.basename(a.file)}` });
              if (st.status === 'failed') failed++;
            }
          }
          if (!paths.length) return failed ? 6 : 0;
        }
        const { files, skipped } = await expandVideoPaths(paths);
        // The background worker logs it; say it here too, where the user looks.
        if (ctx.local && !globals.json) {
          const c = await ctx.service.getCollection(collectionId);
          const setting = c.speech ?? 'auto';
          const { reason } = resolveSpeech(setting, process.env, c.language);
          if (reason && setting !== 'off') process.stderr.write(`note: videos are indexed without what is said in them: ${reason}\n`);
        }
        if (files.length === 0) throw new BadRequestError(`no video files in ${paths.join(', ')}${skipped.length ? ` (${skipped.length} other file${skipped.length === 1 ? '' : 's'} skipped)` : ''}`);
        const total = files.reduce((a, f) => a + f.size, 0);
        const collection = await ctx.service.getCollection(collectionId);
        if (!globals.json && files.length > 1) process.stderr.write(`uploading ${files.length} files to collection ${collection.name}\n`);
        const progress = spinner('uploading', { json: globals.json }).start();
        const rows: { file: string; res: UploadVideoResponse | VideoStatusResponse; duplicate?: boolean; near?: UploadVideoResponse['near_duplicate'] }[] = [];
        let sent = 0;
        for (const [i, f] of files.entries()) {
          progress.text = `uploading ${i + 1}/${files.length} files, ${formatBytes(sent)} of ${formatBytes(total)}: ${path.basename(f.path)}`;
          // One file that is not a video fails the command; among several it is skipped and listed.
          const uploaded = await ctx.service
            .uploadVideo(collectionId, { path: f.path, filename: path.basename(f.path), force: opts.force, skipDuplicates: opts.skipDuplicates, inPlace: opts.inPlace })
            .catch((err: unknown) => {
              if (files.length === 1 || !(err instanceof MediaError)) throw err;
              skipped.push({ file: f.path, reason: err.message.replace(/^.* is not a video: /, 'not a video: ') });
              return undefined;
            });
          sent += f.size;
          if (!uploaded) continue;
          const near = uploaded.near_duplicate;
          rows.push({ file: f.path, res: uploaded, duplicate: uploaded.duplicate, near });
          if (uploaded.duplicate && !globals.json) {
            progress.clear();
            process.stderr.write(
              near
                ? `skipped ${f.path}: its pictures are already in the collection as ${uploaded.video_id} (${near.filename}: ${Math.round(near.coverage * 100)}% of its pictures, similarity ${near.similarity.toFixed(2)}; --force adds it)\n`
                : `skipped ${f.path}: already in the collection as ${uploaded.video_id} (--force adds it again)\n`,
            );
          }
        }
        progress.stop();
        const added = rows.filter((r) => !r.duplicate);
        if (opts.wait) {
          for (const [k, r] of added.entries()) r.res = await waitForVideo(ctx.service, r.res.video_id, { json: globals.json, label: `${k + 1}/${added.length} ${path.basename(r.file)}` });
        }
        const outputs = rows.map((r) => r.res);
        const failures = rows.filter((r) => r.res.status === 'failed').length;
        if (globals.json) {
          printJson(outputs.length === 1 ? outputs[0] : outputs);
          return failures ? 6 : 0;
        }
        if (rows.length > 1 || opts.wait) {
          printTable(
            ['video', 'file', 'status'],
            rows.map((r) => [
              r.res.video_id,
              path.relative(process.cwd(), r.file) || r.file,
              r.near
                ? `skipped (near-duplicate of ${r.near.filename}, similarity ${r.near.similarity.toFixed(2)})`
                : r.duplicate
                  ? 'skipped (already there)'
                  : `${r.res.status}${'error_message' in r.res && r.res.error_message ? `: ${r.res.error_message}` : ''}`,
            ]),
          );
        } else {
          for (const r of rows) {
            const what = r.near ? `near-duplicate of ${r.near.filename} (similarity ${r.near.similarity.toFixed(2)}): not added` : r.duplicate ? 'already in the collection' : r.res.status;
            process.stdout.write(`${r.res.video_id}  ${path.basename(r.file)}  ${what}\n`);
          }
        }
        const nears = rows.filter((r) => r.near).length;
        const counts = [
          `${added.length} uploaded`,
          opts.wait ? `${added.filter((r) => r.res.status === 'processed').length} processed, ${failures} failed` : '',
          rows.length - added.length ? `${rows.length - added.length} already there${nears ? ` (${nears} as near-duplicates)` : ''}` : '',
          skipped.length ? `${skipped.length} file${skipped.length === 1 ? '' : 's'} skipped (not videos)` : '',
        ].filter(Boolean);
        for (const s of skipped) process.stderr.write(`skipped ${path.relative(process.cwd(), s.file) || s.file}: ${s.reason}\n`);
        process.stderr.write(`collection ${collection.name}: ${counts.join(', ')}\n`);
        if (!opts.wait && added.length) process.stderr.write(`processing in the background: vidembed video status ${added[0].res.video_id} (or upload --wait next time)\n`);
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
        // Locally: where the file and its thumbnails are on disk. Remotely: the URLs that serve them.
        const thumbs = ctx.local ? await ctx.local.thumbnailFiles(videoId) : undefined;
        if (globals.json) {
          return printJson(ctx.local ? { ...d, file: await ctx.local.videoPath(videoId), thumbnail_files: thumbs } : d);
        }
        process.stdout.write(`${d.video_id}  ${d.filename}  ${d.status}${d.error_message ? `: ${d.error_message}` : ''}\n`);
        if (d.duration) {
          process.stdout.write(`duration ${formatSeconds(d.duration)}  ${d.width}x${d.height}${d.fps ? `  ${Math.round(d.fps * 100) / 100} fps` : ''}${d.codec ? `  ${d.codec}` : ''}\n`);
        }
        const base = ctx.remoteBaseUrl?.replace(/\/+$/, '');
        if (ctx.local) process.stdout.write(`file ${(await ctx.local.videoPath(videoId)) ?? '(in object storage: see it through a server)'}\n`);
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
    .argument('<video_id>')
    .option('--format <format>', 'txt, srt, vtt or json', 'txt')
    .description('what is said in a video, as text, subtitles (srt, vtt) or words with times (json)')
    .addHelpText('after', '\nExamples:\n  $ vidembed video transcript vid_abc123\n  $ vidembed video transcript vid_abc123 --format srt > talk.srt')
    .action(async (videoId: string, opts: { format: string }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const format = globals.json ? 'json' : opts.format;
        if (!isTranscriptFormat(format)) throw new BadRequestError(`--format must be one of ${TRANSCRIPT_FORMATS.join(', ')}, got ${format}`);
        const t = await ctx.service.videoTranscript(videoId);
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
            v.filename,
            `${v.missing ? 'file missing (vidembed rescan), ' : ''}${v.status}${v.status === 'processing' && v.progress !== undefined ? ` ${Math.round(v.progress)}%` : ''}${v.error_message ? `: ${v.error_message}` : ''}`,
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

const isVideo = isVideoFile;

/** Glob pattern → RegExp over a relative path: `**` any folders, `*` and `?` inside one name. */
function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      re += '(?:.*/)?';
      i += glob[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

const walk = (dir: string, out: string[]) => walkFiles(dir, out).then(() => {});

/**
 * Files, folders (recursive) and globs → the video files to upload (sorted, de-duplicated) and how
 * many other files were skipped. A path given by name is taken whatever its extension.
 */
export async function expandVideoPaths(args: string[]): Promise<{ files: { path: string; size: number }[]; skipped: { file: string; reason: string }[] }> {
  const found = new Set<string>();
  const skipped: { file: string; reason: string }[] = [];
  const skip = (file: string) => skipped.push({ file, reason: `not a video file (by its extension; ${VIDEO_EXTENSIONS.length} are taken: --help)` });
  for (const arg of args) {
    const abs = path.resolve(arg);
    if (/[*?]/.test(arg)) {
      const firstWild = arg.search(/[*?]/);
      const base = path.resolve(arg.slice(0, arg.lastIndexOf('/', firstWild) + 1) || '.');
      const re = globToRegExp(path.relative(base, abs).split(path.sep).join('/'));
      const all: string[] = [];
      await walk(base, all).catch(() => {});
      for (const f of all) {
        if (!re.test(path.relative(base, f).split(path.sep).join('/'))) continue;
        if (isVideo(f)) found.add(f);
        else skip(f);
      }
      continue;
    }
    const st = await stat(abs).catch(() => undefined);
    if (!st) throw new NotFoundError(`file not found: ${arg}`);
    if (st.isDirectory()) {
      const all: string[] = [];
      await walk(abs, all);
      for (const f of all) {
        if (isVideo(f)) found.add(f);
        else skip(f);
      }
    } else found.add(abs);
  }
  const files = await Promise.all([...found].sort().map(async (p) => ({ path: p, size: (await stat(p)).size })));
  return { files, skipped };
}

/** The folders among `upload --in-place` arguments: absolute locally, as given for a server (it resolves them in its library). */
async function inPlaceFolders(args: string[], local: boolean): Promise<{ given: string[]; dirs: string[] }> {
  const given: string[] = [];
  for (const a of args) if (!local || (await stat(a).catch(() => undefined))?.isDirectory()) if (!/[*?]/.test(a)) given.push(a);
  return { given, dirs: given.map((a) => (local ? path.resolve(a) : a)) };
}

function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

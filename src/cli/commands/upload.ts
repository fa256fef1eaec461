/**
 * `vidembed upload`: files, folders and globs into a collection, copied into the library or
 * indexed in place (issue 22). What a person sees (issue 33): the bytes sent of the file and of the
 * whole batch with the time left; Ctrl-C says in one line what it stopped and what was kept; a
 * folder upload, copied or in place, waited for or not, ends with one summary line after naming
 * each file that failed and why.
 */
import path from 'node:path';
import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { BadRequestError, MediaError, NotFoundError, PayloadTooLargeError, ValidationError } from '../../api/errors.js';
import type { RescanResponse, UploadVideoResponse, VideoStatusResponse } from '../../api/types.js';
import type { CliContext, GlobalOptions, Run } from '../context.js';
import { resolveCollection } from '../context.js';
import { describeError } from '../errors.js';
import { printJson, printTable } from '../output.js';
import { spinner, stopSpinner } from '../spinner.js';
import { TransferProgress } from '../progress.js';
import { waitForVideo, waitUntil } from '../wait.js';
import type { WaitUntil } from '../../api/defaults.js';
import { printScanLines } from './rescan.js';
import { resolveSpeech } from '../../speech/engines.js';
import { isVideoFile, VIDEO_EXTENSIONS, walkFiles } from '../../services/footage-files.js';

interface UploadOptions {
  collection?: string;
  wait?: boolean;
  /** With --wait: `complete` (every capability done) or `searchable` (the pictures done). */
  until?: string;
  force?: boolean;
  skipDuplicates?: boolean;
  inPlace?: boolean;
}

export function registerUpload(program: Command, run: Run): void {
  program
    .command('upload')
    .argument('<paths...>', 'video files, folders (walked recursively) or globs ("footage/*.mp4", "card/**/*.mov")')
    .option('-c, --collection <name>', 'collection name or id (default: VIDEMBED_COLLECTION or the default collection)')
    .option('-w, --wait', 'wait until processed, then print one summary table')
    .option('--until <state>', 'with --wait: complete (every capability done, the default) or searchable (the pictures done: search finds them; speech lands later)')
    .option('--no-wait', 'return as soon as the files are stored (the default)')
    .option('--force', 'add files whose bytes the collection already holds')
    .option('--skip-duplicates', 'also skip files whose pictures the collection already holds (re-encoded, resized or trimmed copies)')
    .option('--in-place', 'index the files where they are: nothing is copied, folders are remembered for `vidembed rescan`')
    .description('upload videos into a collection; a background worker processes them')
    .addHelpText(
      'after',
      '\nFolders are walked for video files (' +
        VIDEO_EXTENSIONS.join(' ') +
        '); other files are skipped and listed,\nand so is a file that is not a video whatever its name (text, a still image, audio only).\nA file whose bytes are already in the collection is skipped (--force adds it again).\nWith --skip-duplicates, so is a file whose pictures are already in one of its videos (each file is\ndecoded once more to compare its pictures; `vidembed duplicates` finds copies already stored).\nOn a terminal it shows the bytes sent, of the file and of all, and the time left. Ctrl-C says what it\nstopped and what was kept; the last line counts what happened to every file.\n\nExamples:\n  $ vidembed upload ./clip.mp4 --collection demo --wait\n  $ vidembed upload ./card/ --wait\n  $ vidembed upload ./card/ --until searchable\n  $ vidembed upload "footage/*.mov" --json\n  $ vidembed upload ./exports/ --skip-duplicates --wait\n  $ vidembed upload ~/footage/ --in-place --wait   # nothing copied; `vidembed rescan` later',
    )
    .action(async (paths: string[], opts: UploadOptions, cmd: Command) => run(cmd, (ctx, globals) => upload(ctx, globals, paths, opts)));
}

/** What happened to one file. */
interface Row {
  file: string;
  res: UploadVideoResponse | VideoStatusResponse;
  duplicate?: boolean;
  near?: UploadVideoResponse['near_duplicate'];
  inPlace?: boolean;
  /** Found by scanning a folder in place (listed by the scan's own lines, not in --json's file answers). */
  fromScan?: boolean;
}

/** Everything one upload did so far: what the summary counts and what Ctrl-C says was kept. */
class Batch {
  rows: Row[] = [];
  failed: { file: string; reason: string }[] = [];
  skipped: { file: string; reason: string }[] = [];
  /** Files a scan in place left out (its own lines list them). */
  scanSkipped: { file: string; reason: string }[] = [];
  scans: RescanResponse[] = [];
  processed = 0;
  /** What it is doing now (for the Ctrl-C line). */
  doing: { kind: 'scan'; dir: string } | { kind: 'send'; file: string; index: number; count: number } | { kind: 'wait'; count: number } | undefined;

  constructor(
    readonly collection: string,
    readonly remote: boolean,
  ) {}

  /**
   * How a file is shown: relative to the current folder; a server's file in place (a path on the
   * server) relative to the library folder it was found in, as `video list` shows it.
   */
  shown(file: string): string {
    if (!this.remote) return rel(file);
    const folders = this.scans.flatMap((s) => s.folders).filter((d) => file.startsWith(d.endsWith('/') ? d : `${d}/`));
    const outer = folders.sort((a, b) => a.length - b.length)[0];
    return outer ? file.slice(outer.length).replace(/^\/+/, '') : rel(file);
  }

  get added(): Row[] {
    return this.rows.filter((r) => !r.duplicate);
  }

  /** The one line Ctrl-C prints: what was stopped, what was kept. */
  interrupted(progress?: TransferProgress): string {
    const kept = this.added.length;
    const keptText = kept ? `kept: ${kept} video${kept === 1 ? '' : 's'} already in the library, processing in the background (vidembed video list --collection ${this.collection})` : 'nothing was added';
    const d = this.doing;
    if (d?.kind === 'send') {
      const left = d.count - d.index - 1;
      const sent = progress ? ` after ${Math.floor((progress.sent / Math.max(1, progress.total)) * 100)}% of all bytes` : '';
      return `stopped uploading ${rel(d.file)} (${d.index + 1} of ${d.count}${sent}): nothing of it is kept${left ? `, ${left} more not sent` : ''}; ${keptText}`;
    }
    if (d?.kind === 'scan') {
      return this.remote
        ? `stopped waiting for the server's scan of ${d.dir} (the server finishes it); ${keptText}`
        : `stopped indexing ${rel(d.dir)} in place: the files indexed before are kept, processing in the background; \`vidembed rescan --collection ${this.collection}\` picks up the rest`;
    }
    if (d?.kind === 'wait') {
      return `stopped waiting (${this.processed} of ${d.count} done); kept: all ${d.count} in the library, processing goes on in the background (vidembed video list --collection ${this.collection})`;
    }
    return `stopped; ${keptText}`;
  }
}

const rel = (f: string) => path.relative(process.cwd(), f) || f;

/** A reason without the file name it starts with (the line names the file already). */
function withoutName(reason: string, name: string): string {
  return reason.startsWith(`${name}: `) ? reason.slice(name.length + 2) : reason;
}

/** `2 files skipped (not videos)`, or without the reason when some were left out for another. */
function skippedCount(batch: Batch): string {
  const all = [...batch.skipped, ...batch.scanSkipped];
  if (!all.length) return '';
  const notVideos = all.every((s) => /^not a video/.test(s.reason));
  return `${all.length} file${all.length === 1 ? '' : 's'} skipped${notVideos ? ' (not videos)' : ''}`;
}

/** Ctrl-C during the whole command: one line (from `line`), exit 130. Returns the remover. */
function onInterrupt(line: () => string): () => void {
  const handler = () => {
    stopSpinner();
    process.stderr.write(`${line()}\n`);
    process.exit(130);
  };
  process.on('SIGINT', handler);
  return () => process.off('SIGINT', handler);
}

/** Errors that concern one file of several (it is listed, the rest go on); anything else stops the upload. */
function isFileError(err: unknown): boolean {
  return err instanceof MediaError || err instanceof PayloadTooLargeError || err instanceof ValidationError || err instanceof NotFoundError || err instanceof BadRequestError;
}

async function upload(ctx: CliContext, globals: GlobalOptions, paths: string[], opts: UploadOptions): Promise<number> {
  const until = waitUntil(opts.until);
  if (opts.until !== undefined && opts.wait === undefined) opts.wait = true;
  const collectionId = await resolveCollection(ctx, opts.collection);
  const collection = await ctx.service.getCollection(collectionId);
  const batch = new Batch(collection.name, Boolean(ctx.remoteBaseUrl));
  let progress: TransferProgress | undefined;
  const stopListening = onInterrupt(() => batch.interrupted(progress));
  let several = false;
  try {
    if (opts.inPlace) {
      // Folders in place: indexed where they lie and remembered (a server resolves them inside its library folders).
      const folders = await inPlaceFolders(paths, Boolean(ctx.local));
      paths = paths.filter((p) => !folders.given.includes(p));
      several = folders.dirs.length > 0;
      for (const dir of folders.dirs) {
        batch.doing = { kind: 'scan', dir };
        const res = await ctx.service.scanLibrary(collectionId, { path: dir });
        batch.scans.push(res);
        if (globals.json) printJson(res);
        else printScanLines(res);
        for (const a of res.added) batch.rows.push({ file: a.file, res: { video_id: a.video_id, status: 'uploaded' }, inPlace: true, fromScan: true });
        for (const s of res.skipped) {
          const same = /^the same file as (\S+)$/.exec(s.reason);
          if (same) batch.rows.push({ file: s.file, res: { video_id: same[1], status: 'uploaded' }, duplicate: true, inPlace: true, fromScan: true });
          else batch.scanSkipped.push(s);
        }
      }
    }
    if (paths.length) {
      const { files, skipped } = await expandVideoPaths(paths);
      batch.skipped.push(...skipped);
      several ||= files.length > 1 || paths.some((p) => /[*?]/.test(p));
      // The background worker logs it; say it here too, where the user looks.
      if (ctx.local && !globals.json) {
        const setting = collection.speech ?? 'auto';
        const { reason } = resolveSpeech(setting, process.env, collection.language);
        if (reason && setting !== 'off') process.stderr.write(`note: videos are indexed without what is said in them: ${reason}\n`);
      }
      if (files.length === 0 && !batch.rows.length) {
        throw new BadRequestError(`no video files in ${paths.join(', ')}${skipped.length ? ` (${skipped.length} other file${skipped.length === 1 ? '' : 's'} skipped)` : ''}`);
      }
      if (!globals.json && files.length > 1) process.stderr.write(`uploading ${files.length} files to collection ${collection.name}\n`);
      progress = new TransferProgress(
        files.reduce((a, f) => a + f.size, 0),
        files.length,
      );
      await send(ctx, globals, opts, collectionId, files, batch, progress);
    }
    if (opts.wait) await waitForAll(ctx, globals, batch, until);
  } catch (err) {
    // Stopped by an error that is not one file's: say what was done before it, then the error.
    if (several && !globals.json) summarize(batch, opts, collection.name, describeError(err));
    throw err;
  } finally {
    stopListening();
  }
  if (globals.json) {
    // The answers for files (a folder in place printed its scan above).
    const outputs = batch.rows.filter((r) => !r.fromScan).map((r) => r.res);
    if (outputs.length || !batch.scans.length) printJson(outputs.length === 1 ? outputs[0] : outputs);
  } else {
    report(batch, opts);
    summarize(batch, opts, collection.name);
  }
  return batch.failed.length ? 6 : 0;
}

/** Sends (or, locally, stores) each file, with byte progress; one file's failure among several is listed and the rest go on. */
async function send(
  ctx: CliContext,
  globals: GlobalOptions,
  opts: UploadOptions,
  collectionId: string,
  files: { path: string; size: number }[],
  batch: Batch,
  progress: TransferProgress,
): Promise<void> {
  const spin = spinner(progress.text(), { json: globals.json }).start();
  try {
    for (const [i, f] of files.entries()) {
      batch.doing = { kind: 'send', file: f.path, index: i, count: files.length };
      progress.startFile(path.basename(f.path), f.size, i);
      spin.text = progress.text();
      const onProgress = (bytes: number) => {
        progress.fileBytes(bytes);
        spin.text = progress.text();
      };
      let uploaded: UploadVideoResponse | undefined;
      try {
        uploaded = await ctx.service.uploadVideo(collectionId, {
          path: f.path,
          filename: path.basename(f.path),
          force: opts.force,
          skipDuplicates: opts.skipDuplicates,
          inPlace: opts.inPlace,
          onProgress,
        });
      } catch (err) {
        // One file that is not a video fails the command; among several it is listed and the rest go on.
        if (files.length === 1 || !isFileError(err)) throw err;
        const message = describeError(err);
        if (err instanceof MediaError) batch.skipped.push({ file: f.path, reason: message.replace(/^.* is not a video: /, 'not a video: ') });
        else batch.failed.push({ file: f.path, reason: message });
      } finally {
        progress.fileDone();
      }
      if (!uploaded) continue;
      const near = uploaded.near_duplicate;
      batch.rows.push({ file: f.path, res: uploaded, duplicate: uploaded.duplicate, near, inPlace: opts.inPlace });
      if (uploaded.duplicate && !globals.json) {
        spin.clear();
        process.stderr.write(
          near
            ? `skipped ${f.path}: its pictures are already in the collection as ${uploaded.video_id} (${near.filename}: ${Math.round(near.coverage * 100)}% of its pictures, similarity ${near.similarity.toFixed(2)}; --force adds it)\n`
            : `skipped ${f.path}: already in the collection as ${uploaded.video_id} (--force adds it again)\n`,
        );
      }
    }
  } finally {
    spin.stop();
  }
}

/** Waits for every video added, one after the other; a failure is listed with its reason. */
async function waitForAll(ctx: CliContext, globals: GlobalOptions, batch: Batch, until: WaitUntil): Promise<void> {
  const added = batch.added;
  batch.doing = { kind: 'wait', count: added.length };
  for (const [k, r] of added.entries()) {
    r.res = await waitForVideo(ctx.service, r.res.video_id, { json: globals.json, until, label: `${k + 1}/${added.length} ${path.basename(r.file)}`, interrupt: false });
    if (r.res.status === 'processed' || (until === 'searchable' && r.res.status !== 'failed')) batch.processed++;
    if (r.res.status === 'failed') batch.failed.push({ file: r.file, reason: ('error_message' in r.res && r.res.error_message) || 'failed' });
  }
}

/** The table (several files, or --wait) or one line per file; a folder in place listed its files already, unless waited for. */
function report(batch: Batch, opts: UploadOptions): void {
  const rows = batch.rows.filter((r) => !r.fromScan || opts.wait);
  if (!rows.length) return;
  if (rows.length > 1 || opts.wait) {
    printTable(
      ['video', 'file', 'status'],
      rows.map((r) => [
        r.res.video_id,
        batch.shown(r.file),
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
}

/**
 * Each file skipped or failed, with its reason, then the one summary line: `collection card: 3
 * uploaded, 2 processed, 1 failed, 2 files skipped (not videos)`. After an error that stopped the
 * upload, the line says so.
 */
function summarize(batch: Batch, opts: UploadOptions, name: string, stoppedBy?: string): void {
  for (const s of batch.skipped) process.stderr.write(`skipped ${batch.shown(s.file)}: ${s.reason}\n`);
  for (const f of batch.failed) process.stderr.write(`failed ${batch.shown(f.file)}: ${withoutName(f.reason, path.basename(f.file))}\n`);
  const added = batch.added;
  const copies = added.filter((r) => !r.inPlace).length;
  const inPlace = added.length - copies;
  const already = batch.rows.length - added.length;
  const nears = batch.rows.filter((r) => r.near).length;
  const missing = batch.scans.reduce((n, s) => n + s.missing.length, 0);
  const moved = batch.scans.reduce((n, s) => n + s.moved.length, 0);
  const changed = batch.scans.reduce((n, s) => n + s.changed.length, 0);
  const counts = [
    copies || !inPlace ? `${copies} uploaded` : '',
    inPlace || batch.scans.length ? `${inPlace} indexed in place` : '',
    opts.wait && !stoppedBy ? `${batch.processed} ${opts.until === 'searchable' ? 'searchable' : 'processed'}` : '',
    opts.wait || batch.failed.length ? `${batch.failed.length} failed` : '',
    already ? `${already} already there${nears ? ` (${nears} as near-duplicates)` : ''}` : '',
    changed ? `${changed} changed (processed again)` : '',
    moved ? `${moved} moved` : '',
    missing ? `${missing} missing (vidembed rescan)` : '',
    skippedCount(batch),
  ].filter(Boolean);
  if (!opts.wait && !stoppedBy && added.length) process.stderr.write(`processing in the background: vidembed video status ${added[0].res.video_id} (or upload --wait next time)\n`);
  process.stderr.write(`collection ${name}: ${counts.join(', ')}${stoppedBy ? `; then stopped: ${stoppedBy}` : ''}\n`);
}


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
        if (isVideoFile(f)) found.add(f);
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
        if (isVideoFile(f)) found.add(f);
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

import path from 'node:path';
import type { Command } from 'commander';
import { BadRequestError } from '../../api/errors.js';
import { EXPORT_FORMATS, exportMoments, SELECT_DEFAULTS, type ExportFormat } from '../export.js';
import type { Run } from '../context.js';
import { resolveCollection } from '../context.js';
import { resolveVideo } from '../video-ref.js';
import { saveLastSearch } from '../last-search.js';
import { FILTERABLE_KINDS } from '../../tags/registry.js';
import { LIMITS } from '../../api/defaults.js';
import { formatSeconds, printJson } from '../output.js';
import { formatSearchResults } from '../search-results.js';
import { NO_STRONG_MATCH } from '../../search/confidence.js';

function parseTopK(v: string): number {
  const n = Number(v);
  return Number.isFinite(n) ? n : NaN;
}

function parseSeconds(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || n > 3600) throw new BadRequestError(`expected seconds (0-3600), not "${v}"`);
  return n;
}

/** `VIDEO` or `VIDEO@SECONDS` → a `like` query; VIDEO is an id, a file name or a path in place (src/cli/video-ref.ts). */
export function parseLike(v: string): { video_id: string; t?: number } {
  const m = /^(.+?)(?:@(\d+(?:\.\d+)?))?$/.exec(v.trim());
  if (!m) throw new BadRequestError(`--like takes VIDEO or VIDEO@SECONDS, not "${v}"`);
  return m[2] === undefined ? { video_id: m[1] } : { video_id: m[1], t: Number(m[2]) };
}

interface SearchOptions {
  collection?: string;
  topK: number;
  offset?: number;
  explain?: boolean;
  /** One per filterable tag kind, by its option name (`--shot`...): src/tags/registry.ts. */
  [tagOption: string]: unknown;
  minConfidence?: number;
  said?: string;
  seen?: string;
  handles?: number;
  minLength?: number;
  image?: string;
  like?: string;
  export?: string;
}

export function registerSearch(program: Command, run: Run): void {
  const command = program
    .command('search')
    .argument('[text]', 'what you are looking for, in words (optional with --image or --like)')
    .option('-c, --collection <name>', 'collection name or id (default: VIDEMBED_COLLECTION or the default collection)')
    .option('-k, --top-k <n>', `number of videos, ${LIMITS.topK.min}-${LIMITS.topK.max}`, parseTopK, LIMITS.topK.default)
    .option('--offset <n>', `skip this many results (next pages; offset + top-k up to ${LIMITS.maxSearchHits})`, parseTopK)
    .option('--said <words>', 'words somebody says: searches what is said only (transcripts, matched exactly and by sound)')
    .option('--seen <words>', 'words for what is seen: searches the pictures only (what analysis saw and the picture embedding; never what is said or written)')
    .option('--image <photo>', 'a picture as the query (a still, a frame grab), alone or with text')
    .option('--like <video[@seconds]>', 'a moment as the query (a video id, file name or path in place, @ seconds into it): the segment at that time, or the whole video; it is left out of the results')
    .option('--explain', 'show what the engine saw in each matching moment');
  // One option per filterable tag kind (src/tags/registry.ts): `--shot <label>` and so on.
  for (const k of FILTERABLE_KINDS) {
    command.option(`--${k.option} <${k.option}>`, `only segments with this ${k.name.replace(/_/g, ' ')}: ${k.labels.join(', ')}`);
  }
  command
    .option('--min-confidence <c>', 'leave out results below this confidence, 0-1 (e.g. 0.4 drops low ones)', Number)
    .option('--export <format>', `write the moments as ${EXPORT_FORMATS.join(', ')} to standard output (edl: CMX 3600 for an editor's timeline)`)
    .option('--handles <seconds>', `with --export: seconds added before and after each moment (default ${SELECT_DEFAULTS.handles})`, parseSeconds)
    .option('--min-length <seconds>', `with --export: the shortest event, seconds (default ${SELECT_DEFAULTS.minLength}); moments of one file that then touch are merged`, parseSeconds)
    .description('search a collection by text, by a picture or by a moment; one result per video, at its best-matching moment')
    .addHelpText(
      'after',
      '\nEach result says which kinds of evidence matched: seen (the picture), said (the transcript), written\n(text on screen), with the snippet that matched. Its confidence (high / medium / low) is how likely it is\nwhat you asked for, each kind weighed by its own probability; results are ordered by it (--explain shows\neach kind\'s probability and the raw numbers). Text, --image and --like can be combined: each counts the\nsame. Text also matches what is said when it is said clearly enough for the words asked (common words\nheard by sound alone never count); --said searches what is said alone, --seen the pictures alone.\n`vidembed open N` plays result N. Exports cut selects: --handles (default 1 s) around each moment, events\nof at least --min-length (default 2 s), moments of one file that then touch merged.\n\nExamples:\n  $ vidembed search "sunset drone shot"\n  $ vidembed search "a dog on the grass" --collection demo --top-k 5 --json\n  $ vidembed search --image still.jpg\n  $ vidembed search --like vid_abc123@12.5 "at night"\n  $ vidembed search "EXIT sign" --min-confidence 0.4 --explain\n  $ vidembed search "a crowd" --shot wide --movement pan_left\n  $ vidembed search --said "quarterly revenue"\n  $ vidembed search --seen "a rocket launch"\n  $ vidembed search "applause" --audio music\n  $ vidembed search "interview" --top-k 50 --export edl --handles 1 --min-length 2 > selects.edl',
    )
    .action(async (text: string | undefined, opts: SearchOptions, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const format = opts.export;
        if (format !== undefined && !(EXPORT_FORMATS as readonly string[]).includes(format)) {
          throw new BadRequestError(`--export takes ${EXPORT_FORMATS.join(', ')}, not "${format}"`);
        }
        if (text === undefined && !opts.image && !opts.like && !opts.said && !opts.seen) throw new BadRequestError('search needs words, --said WORDS, --seen WORDS, --image PHOTO or --like VIDEO_ID[@SECONDS]');
        if (opts.seen !== undefined && text !== undefined) throw new BadRequestError('--seen takes the words itself: give them to --seen, not as well as text');
        if ((opts.handles !== undefined || opts.minLength !== undefined) && format === undefined) throw new BadRequestError('--handles and --min-length shape exports: give --export too');
        const like = opts.like ? parseLike(opts.like) : undefined;
        const collectionId = await resolveCollection(ctx, opts.collection);
        if (like) like.video_id = await resolveVideo(ctx, like.video_id);
        const res = await ctx.service.search(
          collectionId,
          {
            text,
            said: opts.said,
            seen: opts.seen,
            image_path: opts.image ? path.resolve(opts.image) : undefined, // a warm process has another cwd
            like,
            top_k: opts.topK,
            offset: opts.offset,
            ...Object.fromEntries(FILTERABLE_KINDS.map((k) => [k.name, opts[k.option] as string | undefined])),
            min_confidence: opts.minConfidence,
          },
          { explain: opts.explain || format !== undefined },
        );
        const what = [text, opts.said && `said "${opts.said}"`, opts.seen && `seen "${opts.seen}"`, opts.image && `picture ${path.basename(opts.image)}`, like && `like ${opts.like}`].filter(Boolean).join(' + ');
        const first = (opts.offset ?? 0) + 1;
        saveLastSearch(ctx.paths, collectionId, what, res, opts.offset ?? 0);
        if (format) {
          for (const w of res.warnings ?? []) process.stderr.write(`note: ${w}\n`);
          // Each file's frame rate, and the user's own path of a video indexed in place (exports name it).
          const files = new Map<string, { fps?: number; duration?: number; path?: string }>();
          for (const id of new Set(res.results.map((r) => r.video_id))) {
            const d = await ctx.service.videoDetails(id);
            files.set(id, { fps: d.fps, duration: d.duration ?? undefined, path: d.in_place && ctx.local ? await ctx.local.videoPath(id) : undefined });
          }
          const moments = res.results.map((r, i) => ({ ...r, rank: first + i, ...files.get(r.video_id) }));
          process.stdout.write(exportMoments(format as ExportFormat, what, moments, { handles: opts.handles, minLength: opts.minLength }));
          return;
        }
        if (globals.json) return printJson(res);
        // The answer's own line says when nothing is likely (src/cli/search-results.ts).
        for (const w of res.warnings ?? []) if (!(w === NO_STRONG_MATCH && res.results.length)) process.stderr.write(`note: ${w}\n`);
        if (res.results.length === 0) return void process.stdout.write(opts.offset ? 'no more results\n' : 'no results\n');
        process.stdout.write(formatSearchResults(res.results, { first, explain: opts.explain, width: process.stdout.isTTY ? process.stdout.columns : undefined }));
        // What was said where a result was found by it: the words around the match, the match marked.
        const said = res.results.map((r, i) => (r.said ? `${first + i}. said: "${r.said.text}" (at ${formatSeconds(r.said.start)})` : '')).filter(Boolean);
        if (said.length) process.stdout.write(said.join('\n') + '\n');
        if (res.next_offset !== undefined) process.stderr.write(`more: --offset ${res.next_offset}\n`);
      }, { warm: true }),
    );
}

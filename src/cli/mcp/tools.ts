/**
 * The tools `vidembed mcp` offers an assistant (issue 34): search, list_collections, list_videos,
 * get_transcript, find_similar and export_clip, on the VideoService both faces implement (the
 * local engine, or a server through the typed client). Every input is checked by the API's own
 * schemas (src/api/schemas.ts through validateRequest; the few fields of a tool's own, such as
 * which collection, by schemas made of the API's parts through validateWith), so an assistant
 * gets the same 422 issues a client of the HTTP API would. Outputs pass on what the API answers
 * (search results carry whatever the result schema carries: evidence, said, tags).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BadRequestError, ForbiddenError } from '../../api/errors.js';
import { schemas } from '../../api/schemas.js';
import type { SearchRequest, SearchResponse, TranscriptResponse, VideoService } from '../../api/types.js';
import { validateRequest, validateWith } from '../../api/validate.js';
import { confidenceLabel } from '../../search/confidence.js';
import { trimVideo } from '../../media/trim.js';
import { SELECT_DEFAULTS, selects, toEdl, type ExportMoment } from '../export.js';

/** What the tools work on: the service, how to find a video's file on this machine, and whether they may write files. */
export interface ToolContext {
  service: VideoService;
  /** The collection a call names, or the default one (src/cli/context.ts resolveCollection). */
  collection(given: string | undefined): Promise<string>;
  /** A video's original file as a path on this machine (a temp copy when it is elsewhere), and its clean-up. */
  videoFile(videoId: string): Promise<{ path: string; release(): Promise<void> }>;
  allowWrites: boolean;
}

export interface ToolResult {
  text: string;
  structured: Record<string, unknown>;
}

export interface Tool {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  readOnly: boolean;
  run(ctx: ToolContext, args: Record<string, unknown>): Promise<ToolResult>;
}

type Props = Record<string, Record<string, unknown>>;
const searchBody = schemas.search.body as unknown as { properties: Props };
const collection = { type: 'string', minLength: 1, maxLength: 256, description: 'a collection by name or id (default: the configured default, or the only one there is)' } as const;
const videoId = { type: 'string', minLength: 1, maxLength: 256, description: 'a video id (video_id of a search result or of list_videos)' } as const;

/** A tool's own fields (not an API request's), checked with the same machinery and issues. */
function own<T>(tool: string, properties: Props, required: string[], args: Record<string, unknown>): T {
  const picked = Object.fromEntries(Object.keys(properties).map((k) => [k, args[k]]));
  return validateWith(`mcp.${tool}`, () => ({ type: 'object', required, properties }), 'body', picked) as T;
}

const without = (args: Record<string, unknown>, keys: string[]) => Object.fromEntries(Object.entries(args).filter(([k]) => !keys.includes(k)));
const json = (value: unknown) => JSON.stringify(value, null, 1);

const clock = (s: number) => `${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, '0')}`;

/** Words as lines of text, each starting with its time: a new line after a pause of a second or more, or every 14 words. */
export function transcriptText(words: TranscriptResponse['words']): string {
  const lines: string[] = [];
  let line: string[] = [];
  let lineStart = 0;
  let lastEnd = -Infinity;
  for (const w of words) {
    if (line.length && (w.start - lastEnd >= 1 || line.length >= 14)) {
      lines.push(`[${clock(lineStart)}] ${line.join(' ')}`);
      line = [];
    }
    if (!line.length) lineStart = w.start;
    line.push(w.w);
    lastEnd = w.end;
  }
  if (line.length) lines.push(`[${clock(lineStart)}] ${line.join(' ')}`);
  return lines.join('\n');
}

/** Search results as the assistant reads them: the API's answer, whole. */
function searchResult(res: SearchResponse): ToolResult {
  return { text: json(res), structured: res as unknown as Record<string, unknown> };
}

/** Search's filters and paging, as the API states them (for find_similar too). */
const searchOptions = without(searchBody.properties, ['text', 'said', 'image_base64', 'image_url', 'like', 'explain']);

export const TOOLS: Tool[] = [
  {
    name: 'search',
    title: 'Search videos',
    description:
      'Find the moments of a collection\'s videos that match: `text` (what is seen, read or said), `said` (the transcripts only), a picture (`image_path` on this machine, `image_url`), or a mix; with tag filters (shot_size, camera_movement, …) and min_confidence. Each result names the video (video_id, filename), the moment (start, end in seconds), its confidence (0–1 and high/medium/low), and what matched (evidence seen/said/written, `said` with the words around a spoken match).',
    inputSchema: {
      type: 'object',
      properties: {
        collection,
        ...without(searchBody.properties, ['explain', 'image_base64']),
        image_path: { type: 'string', minLength: 1, description: 'a picture on this machine as the query' },
      },
    },
    readOnly: true,
    async run(ctx, args) {
      const { collection: given } = own<{ collection?: string }>('search', { collection }, [], args);
      const req = validateRequest('search', 'body', without(args, ['collection']) as SearchRequest);
      return searchResult(await ctx.service.search(await ctx.collection(given), req));
    },
  },
  {
    name: 'list_collections',
    title: 'List collections',
    description: 'The collections of the library (newest first): id, name, description, model, how many videos.',
    inputSchema: { type: 'object', properties: { ...(schemas.listCollections.querystring.properties as unknown as Props) } },
    readOnly: true,
    async run(ctx, args) {
      const collections = await ctx.service.listCollections(validateRequest('listCollections', 'querystring', args));
      return { text: json(collections), structured: { collections } };
    },
  },
  {
    name: 'list_videos',
    title: 'List videos',
    description: "A collection's videos (newest first): video_id, filename, status (uploaded, processing, processed, failed), duration.",
    inputSchema: { type: 'object', properties: { collection, ...(schemas.listVideos.querystring.properties as unknown as Props) } },
    readOnly: true,
    async run(ctx, args) {
      const { collection: given } = own<{ collection?: string }>('list_videos', { collection }, [], args);
      const query = validateRequest('listVideos', 'querystring', without(args, ['collection']));
      const videos = await ctx.service.listVideos(await ctx.collection(given), query);
      return { text: json(videos), structured: { videos } };
    },
  },
  {
    name: 'get_transcript',
    title: 'Read a transcript',
    description: 'What is said in a video, word by word with times (seconds) and confidence, and as text with a time every line; `start`/`end` keep only that stretch. Empty, with `reason`, when nothing could be heard.',
    inputSchema: {
      type: 'object',
      required: ['video_id'],
      properties: {
        video_id: videoId,
        start: { type: 'number', minimum: 0, description: 'from this second' },
        end: { type: 'number', exclusiveMinimum: 0, description: 'up to this second' },
      },
    },
    readOnly: true,
    async run(ctx, args) {
      const { video_id } = validateRequest('videoTranscript', 'params', { video_id: args.video_id } as { video_id: string });
      const { start, end } = own<{ start?: number; end?: number }>('get_transcript', { start: { type: 'number', minimum: 0 }, end: { type: 'number', exclusiveMinimum: 0 } }, [], args);
      const t = await ctx.service.videoTranscript(video_id);
      const words = t.words.filter((w) => (start === undefined || w.end >= start) && (end === undefined || w.start <= end));
      const transcript: TranscriptResponse = { ...t, words };
      const text = words.length ? transcriptText(words) : `(no words${t.reason ? `: ${t.reason}` : ''})`;
      return { text, structured: { ...transcript, text } };
    },
  },
  {
    name: 'find_similar',
    title: 'Find similar moments',
    description: "Moments that look like a moment of a video (the segment at `t` seconds, or the whole video without it), in that video's collection or another; the video itself is left out. The same results as search.",
    inputSchema: {
      type: 'object',
      required: ['video_id'],
      properties: { video_id: videoId, t: { type: 'number', minimum: 0, description: 'the moment, in seconds (default: the whole video)' }, collection, ...searchOptions },
    },
    readOnly: true,
    async run(ctx, args) {
      const { collection: given } = own<{ collection?: string }>('find_similar', { collection }, [], args);
      const like = { video_id: args.video_id, ...(args.t !== undefined ? { t: args.t } : {}) };
      const req = validateRequest('search', 'body', { ...without(args, ['collection', 'video_id', 't']), like } as SearchRequest);
      const where = given !== undefined ? await ctx.collection(given) : (await ctx.service.videoDetails(String(args.video_id))).collection_id;
      return searchResult(await ctx.service.search(where, req));
    },
  },
  {
    name: 'export_clip',
    title: 'Export moments',
    description: `Moments as an editor's files: an EDL (CMX 3600) cutting each clip out of its source file onto one timeline, returned as text or written to \`output\`; or (format mp4) one clip cut out as its own MP4 file at \`output\`. Clips get handles (default ${SELECT_DEFAULTS.handles} s each side) and a minimum length (default ${SELECT_DEFAULTS.minLength} s), as \`vidembed search --export\` does. Writing a file needs the server started with --allow-writes.`,
    inputSchema: {
      type: 'object',
      required: ['clips'],
      properties: {
        clips: {
          type: 'array',
          minItems: 1,
          maxItems: 100,
          description: 'the moments, in the order of the timeline (video_id, start and end from search results)',
          items: {
            type: 'object',
            required: ['video_id', 'start', 'end'],
            properties: { video_id: videoId, start: { type: 'number', minimum: 0 }, end: { type: 'number', exclusiveMinimum: 0 }, confidence: { type: 'number', minimum: 0, maximum: 1 } },
          },
        },
        format: { type: 'string', enum: ['edl', 'mp4'], default: 'edl' },
        output: { type: 'string', minLength: 1, description: 'a path on this machine to write (an EDL: optional; mp4: required)' },
        title: { type: 'string', maxLength: 70 },
        handles: { type: 'number', minimum: 0, maximum: 60, default: SELECT_DEFAULTS.handles },
        min_length: { type: 'number', minimum: 0, maximum: 600, default: SELECT_DEFAULTS.minLength },
      },
    },
    readOnly: false,
    run: exportClip,
  },
];

interface ExportArgs {
  clips: { video_id: string; start: number; end: number; confidence?: number }[];
  format: 'edl' | 'mp4';
  output?: string;
  title?: string;
  handles: number;
  min_length: number;
}

async function exportClip(ctx: ToolContext, args: Record<string, unknown>): Promise<ToolResult> {
  const tool = TOOLS.find((t) => t.name === 'export_clip')!;
  const a = own<ExportArgs>('export_clip', (tool.inputSchema as { properties: Props }).properties, ['clips'], args);
  for (const [i, c] of a.clips.entries()) {
    if (c.end <= c.start) throw new BadRequestError(`clips.${i}: end (${c.end}) must come after start (${c.start})`);
  }
  if (a.output !== undefined && !ctx.allowWrites) throw new ForbiddenError('this MCP server is read-only: writing a file needs `vidembed mcp --allow-writes` (without `output`, an EDL comes back as text)');
  const moments: ExportMoment[] = [];
  for (const [i, c] of a.clips.entries()) {
    const v = await ctx.service.videoDetails(c.video_id);
    const confidence = c.confidence ?? 1;
    moments.push({
      rank: i + 1,
      video_id: v.video_id,
      filename: v.filename,
      start: c.start,
      end: c.end,
      fps: v.fps ?? undefined,
      duration: v.duration ?? undefined,
      similarity: 0,
      relevance: confidence,
      confidence,
      confidence_label: confidenceLabel(confidence),
    } as ExportMoment);
  }
  const opts = { handles: a.handles, minLength: a.min_length };
  if (a.format === 'edl') {
    const edl = toEdl(a.title ?? 'vidembed clips', selects(moments, opts));
    if (a.output === undefined) return { text: edl, structured: { format: 'edl', edl } };
    const file = path.resolve(a.output);
    await writeFile(file, edl);
    return { text: `wrote ${file} (${moments.length} event(s))`, structured: { format: 'edl', output: file, events: moments.length } };
  }
  if (a.clips.length !== 1) throw new BadRequestError('format mp4 cuts one clip: give exactly one (an EDL takes several)');
  if (a.output === undefined) throw new BadRequestError('format mp4 writes a file: give `output`, a path on this machine');
  const [m] = selects(moments, opts);
  const file = path.resolve(a.output);
  const source = await ctx.videoFile(m.video_id);
  try {
    await trimVideo(source.path, file, m.start, m.end, { name: m.filename });
  } finally {
    await source.release();
  }
  return { text: `wrote ${file}: ${m.filename} ${m.start}–${m.end} s`, structured: { format: 'mp4', output: file, video_id: m.video_id, start: m.start, end: m.end } };
}

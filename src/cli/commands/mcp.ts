/**
 * `vidembed mcp` (issue 34): the library — this machine's, or a server's with --base-url and a key —
 * served to an assistant (Claude Desktop, an IDE agent) over the Model Context Protocol on stdin
 * and stdout. Read-only unless started with --allow-writes (export_clip writing files).
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { BadRequestError } from '../../api/errors.js';
import type { RemoteService } from '../../client/remote.js';
import { resolveCollection, type CliContext, type Run } from '../context.js';
import type { ToolContext } from '../mcp/tools.js';

/** A video's original file on this machine: where the local library keeps it, else a temp copy (an object store, a server). */
async function videoFile(ctx: CliContext, videoId: string): Promise<{ path: string; release(): Promise<void> }> {
  if (ctx.local) {
    const f = await ctx.local.videoFile(videoId);
    if (f.path) return { path: f.path, release: async () => {} };
    const dir = await mkdtemp(path.join(os.tmpdir(), 'vidembed-mcp-'));
    const file = path.join(dir, path.basename(f.filename) || 'video');
    await pipeline(f.open(), createWriteStream(file));
    return { path: file, release: () => rm(dir, { recursive: true, force: true }) };
  }
  const remote = ctx.service as Partial<RemoteService>;
  if (typeof remote.downloadVideo !== 'function') throw new BadRequestError('this face has no video files');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'vidembed-mcp-'));
  const file = path.join(dir, 'video');
  try {
    await remote.downloadVideo(videoId, file);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return { path: file, release: () => rm(dir, { recursive: true, force: true }) };
}

export function registerMcp(program: Command, run: Run): void {
  program
    .command('mcp')
    .option('--allow-writes', 'let export_clip write files on this machine (without it the server only reads)')
    .description('serve the library to an assistant over the Model Context Protocol (stdio): search, transcripts, similar moments, EDL exports')
    .addHelpText(
      'after',
      `
Tools: search, list_collections, list_videos, get_transcript, find_similar, export_clip.
The assistant starts this command itself; configure it in the client (README: "Use it from an
assistant"). Against a server: add --base-url URL (and VIDEMBED_API_KEY, or --api-key).

Examples:
  $ vidembed mcp
  $ vidembed mcp --allow-writes
  $ vidembed --base-url https://videos.example.com mcp`,
    )
    .action(async (opts: { allowWrites?: boolean }, cmd: Command) =>
      run(cmd, async (ctx) => {
        const [{ StdioServerTransport }, { serveMcp }] = await Promise.all([import('@modelcontextprotocol/sdk/server/stdio.js'), import('../mcp/server.js')]);
        const tools: ToolContext = {
          service: ctx.service,
          allowWrites: Boolean(opts.allowWrites),
          videoFile: (id) => videoFile(ctx, id),
          async collection(given) {
            if (given !== undefined) return (await ctx.service.getCollection(given)).id;
            return resolveCollection(ctx, undefined).catch((err: unknown) => {
              throw err instanceof BadRequestError ? new BadRequestError('which collection? give `collection` (list_collections names them)') : err;
            });
          },
        };
        const transport = new StdioServerTransport();
        // The client closing our stdin ends the session (the SDK's transport does not watch for it).
        process.stdin.once('end', () => void transport.close());
        await serveMcp(tools, transport, (cmd.parent?.version() as string | undefined) ?? '0.0.0');
      }),
    );
}

import { playerSetting } from '../../env.js';
import { spawn, spawnSync } from 'node:child_process';
import type { Command } from 'commander';
import { BadRequestError } from '../../api/errors.js';
import type { Run } from '../context.js';
import { resolveMoment } from '../last-search.js';
import { formatSeconds, printJson } from '../output.js';

/** Players that can start at a moment, in order of preference, with how to ask them to. */
const PLAYERS: { bin: string; args: (file: string, start: number, end?: number) => string[] }[] = [
  { bin: 'mpv', args: (f, s, e) => [`--start=${s}`, ...(e !== undefined ? [`--end=${e}`] : []), f] },
  { bin: 'vlc', args: (f, s, e) => [`--start-time=${s}`, ...(e !== undefined ? [`--stop-time=${e}`] : []), f] },
  { bin: 'ffplay', args: (f, s) => ['-autoexit', '-ss', String(s), f] },
  { bin: 'celluloid', args: (f, s) => [`--mpv-start=${s}`, f] },
];

function onPath(bin: string): boolean {
  return spawnSync(process.platform === 'win32' ? 'where' : 'which', [bin], { stdio: 'ignore' }).status === 0;
}

/** The player `open` would start, or undefined (VIDEMBED_PLAYER=none: never start one). */
export function findPlayer(env = process.env): (typeof PLAYERS)[number] | undefined {
  const wanted = playerSetting(env);
  if (wanted === 'none') return undefined;
  if (wanted) return PLAYERS.find((p) => p.bin === wanted) ?? { bin: wanted, args: (f) => [f] };
  return PLAYERS.find((p) => onPath(p.bin));
}

export function registerOpen(program: Command, run: Run): void {
  program
    .command('open')
    .argument('<result>', 'a rank of your last search (1, 2, …) or VIDEO_ID[@SECONDS]')
    .option('--print', 'only print the file and the moment; start no player')
    .description('play a search result at its moment in a video player (mpv, vlc, ffplay), else print where it is')
    .addHelpText(
      'after',
      '\nThe player: VIDEMBED_PLAYER=mpv|vlc|ffplay|… picks one (none: never start one); otherwise the first of\nmpv, vlc, ffplay found. Without a player (or with a server configured) it prints the file or URL and the time.\n\nExamples:\n  $ vidembed search "a dog on the grass"\n  $ vidembed open 1\n  $ vidembed open vid_abc123@12.5 --print',
    )
    .action(async (ref: string, opts: { print?: boolean }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const m = resolveMoment(ctx.paths, ref);
        const d = await ctx.service.videoDetails(m.video_id); // not found / not yours: one clear error
        const end = m.end;
        const local = ctx.local ? await ctx.local.videoPath(d.video_id) : undefined;
        if (ctx.local && local === undefined) {
          throw new BadRequestError(`${d.filename} is in object storage, not on this disk: open it in the web page (vidembed ui) or through a server`);
        }
        const where = local ?? `${(ctx.remoteBaseUrl ?? '').replace(/\/+$/, '')}/videos/${d.video_id}/file`;
        const player = opts.print || globals.json || !ctx.local ? undefined : findPlayer();
        if (globals.json) return printJson({ video_id: d.video_id, filename: d.filename, [ctx.local ? 'path' : 'url']: where, start: m.start, ...(end !== undefined ? { end } : {}) });
        const moment = `${formatSeconds(m.start)}${end !== undefined ? `–${formatSeconds(end)}` : ''}`;
        if (!player) {
          // The library's copy is named by the user's original file name; a video in place is the user's file.
          process.stdout.write(`${where}${d.in_place ? '' : `  (${d.filename})`}  at ${moment} (${m.start} s)\n`);
          if (!ctx.local && !opts.print) process.stderr.write('note: the file is on the server (send your API key to fetch it), or see it in the web page: vidembed serve, then open the server in a browser\n');
          return;
        }
        process.stderr.write(`playing ${d.in_place ? where : d.filename} from ${moment} in ${player.bin}\n`);
        const child = spawn(player.bin, player.args(where, m.start, end), { stdio: 'ignore', detached: true });
        await new Promise<void>((resolve, reject) => {
          child.once('error', (err) => reject(new Error(`could not start ${player.bin}: ${err.message}`)));
          child.once('spawn', () => resolve());
        });
        child.unref();
      }),
    );
}

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { LOGIN_TOKEN_TTL_MS, UiSessions } from '../../server/ui.js';
import type { Run } from '../context.js';
import { serveUntilStopped } from './serve.js';

interface UiOptions {
  port: number;
  open: boolean;
  worker: boolean;
  log?: boolean;
}

/** The system's "open this address" command, if there is one on PATH. */
export function systemOpener(platform: NodeJS.Platform = process.platform, envPath = process.env.PATH ?? ''): { cmd: string; args: (url: string) => string[] } | undefined {
  if (platform === 'win32') return { cmd: 'cmd', args: (url) => ['/c', 'start', '', url] };
  const name = platform === 'darwin' ? 'open' : 'xdg-open';
  const found = envPath
    .split(path.delimiter)
    .filter(Boolean)
    .map((dir) => path.join(dir, name))
    .find((p) => existsSync(p));
  return found ? { cmd: found, args: (url) => [url] } : undefined;
}

/** Runs the opener; resolves false when it could not be started or reported a failure. */
function openInBrowser(url: string): Promise<boolean> {
  const opener = systemOpener();
  if (!opener) return Promise.resolve(false);
  return new Promise((resolve) => {
    const child = spawn(opener.cmd, opener.args(url), { stdio: 'ignore', detached: true, windowsHide: true });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
    child.unref();
  });
}

export function registerUi(program: Command, run: Run): void {
  program
    .command('ui')
    .option('-p, --port <port>', 'port (0: any free one)', Number, 0)
    .option('--no-open', 'print the sign-in link instead of opening a browser')
    .option('--no-worker', 'do not process queued work in this process (run `vidembed worker` elsewhere)')
    .option('--log', 'log every request as JSON lines (never keys, tokens or cookies)')
    .description('open the web page: a server on 127.0.0.1 and a one-time sign-in link, so nobody types a key')
    .addHelpText(
      'after',
      `
The link carries a one-time token in its #fragment (never sent in a request line, so never in a
log); it works once, within ${LOGIN_TOKEN_TTL_MS / 60_000} minutes, and signs the page in as the local user (like the CLI).
Ctrl-C stops the server.

Examples:
  $ vidembed ui
  $ vidembed ui --no-open --port 8090`,
    )
    .action(async (opts: UiOptions, cmd: Command) =>
      run(
        cmd,
        async (ctx) => {
          await ctx.close(); // the server opens its own engine with server settings
          const sessions = new UiSessions();
          await serveUntilStopped(
            ctx.paths.home,
            { port: opts.port, host: '127.0.0.1', auth: true, worker: opts.worker, log: opts.log },
            {
              ui: sessions,
              ready: async (address) => {
                const url = `${address}/#login=${sessions.mintLoginToken()}`;
                process.stderr.write(`vidembed ui on ${address} (Ctrl-C stops it)\n`);
                if (opts.open && (await openInBrowser(url))) {
                  process.stderr.write(`opened the page in your browser; if it did not appear, stop this and run \`vidembed ui --no-open\`\n`);
                  return;
                }
                process.stdout.write(`open this link within ${LOGIN_TOKEN_TTL_MS / 60_000} minutes (it works once): ${url}\n`);
              },
            },
          );
        },
        { localOnly: true },
      ),
    );
}

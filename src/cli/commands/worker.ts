import { Option, type Command } from 'commander';
import { warmIdleMs } from '../../config.js';
import type { Run } from '../context.js';

interface WorkerCommandOptions {
  idleExit?: number;
  allowPrivateUrls?: boolean;
  maxUploadMb?: number;
  /** Started by `serve` as its own worker (src/runtime/launcher.ts startAttachedWorker). */
  attached?: boolean;
}

export function registerWorker(program: Command, run: Run): void {
  program
    .command('worker')
    .option('--idle-exit <seconds>', 'exit after this many seconds with nothing to do (default: run until stopped)', Number)
    .option('--allow-private-urls', "let async tasks' video_url point at private/loopback addresses (as `serve --allow-private-urls`)")
    .option('--max-upload-mb <mb>', "largest video an async task's video_url may fetch, in MiB (as `serve --max-upload-mb`; default 2048)", Number)
    .addOption(new Option('--attached', "run as `serve`'s own worker: stop when the server does, answer no CLI searches").hideHelp())
    .description('process queued uploads and tasks (upload starts one in the background by itself)')
    .addHelpText('after', '\nExamples:\n  $ vidembed worker\n  $ vidembed worker --idle-exit 30')
    .action(async (opts: WorkerCommandOptions, cmd: Command) =>
      run(cmd, async (ctx) => {
        if (!ctx.local) throw new Error('a worker runs against the local engine only');
        const stop = new AbortController();
        const onSignal = () => stop.abort();
        process.once('SIGTERM', onSignal);
        process.once('SIGINT', onSignal);
        // Serve's own worker: the server going away (even killed) closes the IPC channel it was started with.
        if (opts.attached && process.connected) process.once('disconnect', onSignal);
        const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);
        const [{ Worker }, { startWarmHost }, { LocalEngine }] = await Promise.all([import('../../runtime/worker.js'), import('../../runtime/warm.js'), import('../../runtime/engine.js')]);
        // The settings the server's tasks were accepted under (their video_url is fetched here).
        let engine = ctx.local;
        if (opts.allowPrivateUrls || opts.maxUploadMb) {
          await ctx.close();
          engine = new LocalEngine({ home: ctx.paths.home, fetchPolicy: { allowPrivate: Boolean(opts.allowPrivateUrls) }, maxUploadBytes: opts.maxUploadMb ? opts.maxUploadMb * 1024 ** 2 : undefined });
        }
        // Answer the CLI's searches while alive (a warm process skips loading the models each call); serve answers them itself.
        const warm = !opts.attached && warmIdleMs() > 0 ? await startWarmHost(engine, ctx.paths.home) : undefined;
        const worker = new Worker(engine, {
          idleExitMs: opts.idleExit !== undefined ? opts.idleExit * 1000 : undefined,
          log,
          lastActiveAt: () => warm?.lastRequestAt ?? 0,
          busyGraceMs: warmIdleMs(),
        });
        log(`worker ${worker.id} pid ${process.pid} started${warm ? `; answering CLI searches on ${warm.socketPath}` : ''}${opts.attached ? ` for the server (pid ${process.ppid})` : ''}`);
        if (warm) void engine.preloadEmbedders();
        try {
          await worker.run(stop.signal);
        } finally {
          await warm?.close();
          if (engine !== ctx.local) await engine.close();
          if (process.connected) process.disconnect();
        }
        log(`worker ${worker.id} stopped`);
      }, { localOnly: true }),
    );
}

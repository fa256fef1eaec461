import type { Command } from 'commander';
import { warmIdleMs } from '../../config.js';
import type { Run } from '../context.js';

export function registerWorker(program: Command, run: Run): void {
  program
    .command('worker')
    .option('--idle-exit <seconds>', 'exit after this many seconds with nothing to do (default: run until stopped)', Number)
    .description('process queued uploads and tasks (upload starts one in the background by itself)')
    .addHelpText('after', '\nExamples:\n  $ vidembed worker\n  $ vidembed worker --idle-exit 30')
    .action(async (opts: { idleExit?: number }, cmd: Command) =>
      run(cmd, async (ctx) => {
        if (!ctx.local) throw new Error('a worker runs against the local engine only');
        const stop = new AbortController();
        const onSignal = () => stop.abort();
        process.once('SIGTERM', onSignal);
        process.once('SIGINT', onSignal);
        const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);
        // Answer the CLI's searches while alive (a warm process skips loading the models each call).
        const [{ Worker }, { startWarmHost }] = await Promise.all([import('../../runtime/worker.js'), import('../../runtime/warm.js')]);
        const warm = warmIdleMs() > 0 ? await startWarmHost(ctx.local, ctx.paths.home) : undefined;
        const worker = new Worker(ctx.local, {
          idleExitMs: opts.idleExit !== undefined ? opts.idleExit * 1000 : undefined,
          log,
          lastActiveAt: () => warm?.lastRequestAt ?? 0,
          busyGraceMs: warmIdleMs(),
        });
        log(`worker ${worker.id} pid ${process.pid} started${warm ? `; answering CLI searches on ${warm.socketPath}` : ''}`);
        if (warm) void ctx.local.preloadEmbedders();
        try {
          await worker.run(stop.signal);
        } finally {
          await warm?.close();
        }
        log(`worker ${worker.id} stopped`);
      }, { localOnly: true }),
    );
}

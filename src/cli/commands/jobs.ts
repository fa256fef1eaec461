/** `vidembed jobs`: what the queue holds, and cancelling a job (issue 21; HTTP `GET /jobs`, `POST /jobs/{id}/cancel`). */
import type { Command } from 'commander';
import type { Run } from '../context.js';
import { printJson, printTable } from '../output.js';

export function registerJobs(program: Command, run: Run): void {
  const jobs = program
    .command('jobs')
    .description('queued and running jobs (videos being processed, async tasks), oldest first; cancel one')
    .option('--owner <owner>', "admins on a server: only this owner's jobs (other keys always see their own)")
    .addHelpText(
      'after',
      '\nOn a server a key sees its own owner\'s jobs; an admin key sees every owner\'s.\n\nExamples:\n  $ vidembed jobs\n  $ vidembed jobs --json\n  $ vidembed jobs cancel job_01H…',
    )
    .action(async (opts: { owner?: string }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const res = await ctx.service.listJobs(opts.owner);
        if (globals.json) return printJson(res);
        if (res.jobs.length === 0) return void process.stdout.write('no queued or running jobs\n');
        printTable(
          ['job', 'kind', 'subject', 'owner', 'status', 'attempts', 'queued at'],
          res.jobs.map((j) => [j.job_id, j.kind, j.subject_id, j.owner, j.status, j.attempts, j.created_at]),
        );
      }),
    );
  jobs
    .command('cancel')
    .argument('<job_id>', 'a job id from `vidembed jobs`')
    .description('cancel a queued or running job: its video or task fails with "cancelled by …" (`video reprocess` starts a video again)')
    .action(async (jobId: string, _opts: unknown, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const res = await ctx.service.cancelJob(jobId);
        if (globals.json) return printJson(res);
        process.stdout.write(`cancelled ${res.job_id} (${res.kind} of ${res.subject_id})\n`);
      }),
    );
}

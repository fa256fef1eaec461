import path from 'node:path';
import type { Command } from 'commander';
import type { TagValue } from '../../api/types.js';
import type { Run } from '../context.js';
import { formatSeconds, printJson, printTable } from '../output.js';
import { spinner } from '../spinner.js';
import { waitForTask } from '../wait.js';
import { FILTERABLE_KINDS, FILTER_NAMES } from '../../tags/registry.js';

function cell(v: unknown): string {
  const t = v as TagValue | undefined;
  return t?.label ? `${t.label} ${Math.round((t.confidence ?? 0) * 100)}%` : '';
}

export function registerTag(program: Command, run: Run): void {
  program
    .command('tag')
    .argument('[file_or_url]', 'a local file or an http(s) URL')
    .option('--async', 'submit as an asynchronous task and poll it')
    .option('--no-wait', 'with --async: print the request id and return')
    .option('--tensor-keys <video_input_key[,video_kwargs_key]>', 'tag tensors uploaded with upload-tensors (async)')
    .description('tag shot size, camera movement and shooting angle, per segment')
    .addHelpText('after', '\nExamples:\n  $ vidembed tag ./clip.mp4\n  $ vidembed tag ./clip.mp4 --json\n  $ vidembed tag --tensor-keys tensors/r1/video_input,tensors/r1/video_kwargs')
    .action(async (source: string | undefined, opts: { async?: boolean; wait: boolean; tensorKeys?: string }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const req = opts.tensorKeys
          ? { tensor: { video_input_key: opts.tensorKeys.split(',')[0], video_kwargs_key: opts.tensorKeys.split(',')[1] } }
          : /^https?:\/\//i.test(source ?? '')
            ? { video_url: source }
            : { video_path: path.resolve(source ?? '') };
        if (!opts.tensorKeys && !source) throw new Error('give a video file or URL, or --tensor-keys');
        let tags;
        if (opts.async || opts.tensorKeys) {
          const sub = await ctx.service.submitTask('tagging', req);
          if (!opts.wait) return globals.json ? printJson(sub) : void process.stdout.write(`${sub.request_id}  ${sub.status}\n`);
          const st = await waitForTask(ctx.service, sub.request_id, { json: globals.json });
          if (st.status === 'failed') {
            if (globals.json) printJson(st);
            else process.stdout.write(`${st.request_id}  failed: ${st.error_message}\n`);
            return 6;
          }
          tags = st.tags!;
        } else {
          const spin = spinner(`tagging ${path.basename(source!)}`, { json: globals.json }).start();
          try {
            tags = (await ctx.service.tagVideo(req)).tags;
          } finally {
            spin.stop();
          }
        }
        if (globals.json) return printJson({ tags });
        // The filterable tag kinds (src/tags/registry.ts), whole video then per segment.
        process.stdout.write(`whole video: ${FILTER_NAMES.map((k) => `${k} ${cell(tags[k])}`).join(', ')}\n`);
        printTable(
          ['start', 'end', ...FILTERABLE_KINDS.map((k) => k.title.toLowerCase())],
          tags.segments.map((s) => [formatSeconds(s.start), formatSeconds(s.end), ...FILTER_NAMES.map((k) => cell(s[k]))]),
        );
      }),
    );
}

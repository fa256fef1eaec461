import path from 'node:path';
import type { Command } from 'commander';
import type { Run } from '../context.js';
import { formatSeconds, printJson, printTable } from '../output.js';
import { spinner } from '../spinner.js';
import { waitForTask } from '../wait.js';
import { LIMITS } from '../../api/defaults.js';

export function registerEmbed(program: Command, run: Run): void {
  const embed = program.command('embed').description('embed text or a video into the shared vector space');
  embed
    .command('text')
    .argument('<text>')
    .option('--model <id>', 'embedder id')
    .description('embed a text')
    .addHelpText('after', '\nExample:\n  $ vidembed embed text "sunset over the sea" --json')
    .action(async (text: string, opts: { model?: string }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const res = await ctx.service.encodeText({ text, ...(opts.model ? { model: opts.model } : {}) } as { text: string });
        if (globals.json) return printJson(res);
        process.stdout.write(`model ${res.model}, dim ${res.dim}${res.truncated ? ' (text truncated)' : ''}\n[${res.embedding.slice(0, 8).map((x) => x.toFixed(4)).join(', ')}, …]\n`);
      }, { warm: true }),
    );
  embed
    .command('video')
    .argument('[file_or_url]', 'a local file, or an http(s) URL')
    .option('--segment-seconds <s>', `segment length in seconds, ${LIMITS.segmentSeconds.min}-${LIMITS.segmentSeconds.max}`, Number)
    .option('--fps <n>', `frames sampled per second, (${LIMITS.fps.min}, ${LIMITS.fps.max}]`, Number)
    .option('--async', 'submit as an asynchronous task and poll it')
    .option('--no-wait', 'with --async: print the request id and return')
    .option('--tensor-keys <video_input_key[,audio_input_key]>', 'embed tensors uploaded with upload-tensors (async)')
    .description('embed a video: one vector per segment, plus a whole-video vector')
    .addHelpText('after', '\nExamples:\n  $ vidembed embed video ./clip.mp4 --json\n  $ vidembed embed video https://example.com/clip.mp4 --async')
    .action(async (source: string | undefined, opts: { segmentSeconds?: number; fps?: number; async?: boolean; wait: boolean; tensorKeys?: string }, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        if (!source && !opts.tensorKeys) throw new Error('give a video file or URL, or --tensor-keys');
        const [videoKey, audioKey] = (opts.tensorKeys ?? '').split(',');
        const isUrl = /^https?:\/\//i.test(source ?? '');
        const input = opts.tensorKeys
          ? { tensor: { video_input_key: videoKey, ...(audioKey ? { audio_input_key: audioKey } : {}) } }
          : isUrl
            ? { video_url: source }
            : { video_path: path.resolve(source!) };
        const req = { ...input, segment_seconds: opts.segmentSeconds, fps: opts.fps };
        if (opts.async || opts.tensorKeys) {
          const sub = await ctx.service.submitEmbeddingTask(req);
          if (!opts.wait) return globals.json ? printJson(sub) : void process.stdout.write(`${sub.request_id}  ${sub.status}\n`);
          const st = await waitForTask(ctx.service, sub.request_id, { json: globals.json });
          if (globals.json) printJson(st);
          else process.stdout.write(`${st.request_id}  ${st.status}${st.error_message ? `: ${st.error_message}` : ''}\n`);
          return st.status === 'failed' ? 6 : 0;
        }
        const spin = spinner(`embedding ${path.basename(source!)}`, { json: globals.json }).start();
        try {
          const res = await ctx.service.encodeVideo(req);
          spin.stop();
          if (globals.json) return printJson(res);
          process.stdout.write(`model ${res.model}, dim ${res.dim}, ${res.embeddings.length} segments\n`);
          printTable(['segment', 'start', 'end', 'description'], res.segments.map((s, i) => [i, formatSeconds(s.start), formatSeconds(s.end), res.descriptions?.[i] ?? '']));
        } catch (err) {
          spin.stop();
          throw err;
        }
      }),
    );

  const task = program
    .command('task')
    .description('asynchronous tasks')
    .addHelpText('after', '\nExamples:\n  $ vidembed embed video ./clip.mp4 --async\n  $ vidembed task status req_abc123\n  $ vidembed task wait req_abc123 --json');
  task
    .command('status')
    .argument('<request_id>')
    .description("an asynchronous task's status")
    .action(async (id: string, _o: unknown, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const st = await ctx.service.taskStatus(id);
        if (globals.json) printJson(st);
        else process.stdout.write(`${st.request_id}  ${st.status}${st.error_message ? `: ${st.error_message}` : ''}\n`);
        return st.status === 'failed' ? 6 : 0;
      }),
    );
  task
    .command('wait')
    .argument('<request_id>')
    .description('wait for an asynchronous task, polling every 2 s')
    .action(async (id: string, _o: unknown, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const st = await waitForTask(ctx.service, id, { json: globals.json });
        if (globals.json) printJson(st);
        else process.stdout.write(`${st.request_id}  ${st.status}${st.error_message ? `: ${st.error_message}` : ''}\n`);
        return st.status === 'failed' ? 6 : 0;
      }),
    );
}

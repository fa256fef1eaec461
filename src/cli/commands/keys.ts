import type { Command } from 'commander';
import { ConflictError, NotFoundError, ValidationError } from '../../api/errors.js';
import { limitSettings } from '../../api/limits.js';
import { DEFAULT_OWNER, isValidOwner } from '../../api/principal.js';
import { principalOf, type ApiKeyRow } from '../../store/keys.js';
import { writeUserConfig } from '../../config.js';
import type { Run } from '../context.js';
import { isInteractive, printJson, printTable } from '../output.js';

export function registerKeys(program: Command, run: Run): void {
  const keys = program
    .command('keys')
    .description('API keys of the local server (stored hashed); each key sees only its owner\'s library')
    .addHelpText('after', '\nExamples:\n  $ vidembed keys create --name me --qps 5\n  $ vidembed keys create --name alice --owner alice\n  $ vidembed keys create --name ops --admin\n  $ vidembed keys list\n  $ vidembed keys revoke alice');
  keys
    .command('create')
    .requiredOption('--name <name>', 'who or what the key is for')
    .option('--qps <n>', 'requests per second allowed (token bucket)', Number, 5)
    .option('--quota <n>', 'requests allowed in total (default: unlimited)', Number)
    .option('--owner <owner>', 'whose library the key works on; keys with the same owner share one (default: "default", the library this machine\'s CLI works on)')
    .option('--admin', 'an admin key: sees and manages every owner\'s collections, videos and tasks')
    .option('--max-jobs <n>', "jobs its owner may have queued or running (default: the server's, VIDEMBED_KEY_MAX_JOBS; 0: no limit)", Number)
    .option('--max-video-s <s>', "longest video it may upload, in seconds (default: VIDEMBED_KEY_MAX_VIDEO_S; 0: no limit)", Number)
    .option('--max-upload-mb <mib>', "largest video it may upload, in MiB (default: VIDEMBED_KEY_MAX_UPLOAD_MB; 0: the server's limit)", Number)
    .description('create a key; the key itself is printed once, now')
    .addHelpText(
      'after',
      '\nEach key sees only its owner\'s collections, videos, tasks and tensors; other owners\' ids answer 404.\nWithout --owner the key works on this machine\'s library (the collections the CLI made here).\n\nExamples:\n  $ vidembed keys create --name me --qps 5\n  $ vidembed keys create --name alice --owner alice --qps 10 --quota 100000 --json\n  $ vidembed keys create --name ops --admin\n  $ vidembed keys create --name bob --max-jobs 10 --max-video-s 600 --max-upload-mb 200\n\nLimits: docs/limits.md (over them: 429 for jobs, 413 for an upload, 422 for a video too long).',
    )
    .action(async (opts: { name: string; qps: number; quota?: number; owner?: string; admin?: boolean; maxJobs?: number; maxVideoS?: number; maxUploadMb?: number }, cmd: Command) =>
      run(
        cmd,
        async (ctx, globals) => {
          if (!Number.isFinite(opts.qps) || opts.qps <= 0) throw new ValidationError([{ loc: ['qps'], msg: 'must be a positive number', type: 'value_error' }]);
          if (opts.quota !== undefined && (!Number.isInteger(opts.quota) || opts.quota < 0)) {
            throw new ValidationError([{ loc: ['quota'], msg: 'must be a non-negative integer', type: 'value_error' }]);
          }
          const name = opts.name.trim();
          if (!name) throw new ValidationError([{ loc: ['name'], msg: 'must not be empty', type: 'value_error' }]);
          // By default the key works on this machine's own library (its collections belong to the owner "default").
          const owner = opts.owner ?? DEFAULT_OWNER;
          if (!isValidOwner(owner)) {
            throw new ValidationError([
              { loc: ['owner'], msg: `"${owner}" is not a valid owner: letters, digits, _ . - (at most 64)${opts.owner ? '' : '; pass --owner'}`, type: 'value_error' },
            ]);
          }
          const limits = limitSettings({ maxJobs: opts.maxJobs, maxVideoSeconds: opts.maxVideoS, maxUploadMiB: opts.maxUploadMb });
          const keys = ctx.local!.catalog.keys;
          if ((await keys.byName(name)).length) throw new ConflictError(`a key named "${name}" already exists: choose another name`);
          const { row, key } = await keys.create({ name, qps: opts.qps, quota: opts.quota, owner, role: opts.admin ? 'admin' : 'user', limits });
          const out = { id: row.id, name: row.name, owner: row.owner, role: row.role, qps: row.qps, quota: row.quota, limits: limitsOf(row), key };
          if (globals.json) return printJson(out);
          process.stdout.write(
            `created ${row.role === 'admin' ? 'admin ' : ''}key ${row.name} (${row.id}) for owner ${row.owner}, ${row.qps} req/s${row.quota !== null ? `, quota ${row.quota} requests` : ''}\n${key}\nkeep it: it is not stored and cannot be shown again\n`,
          );
        },
        { localOnly: 'say' },
      ),
    );
  keys
    .command('list')
    .description('list keys (never the keys themselves)')
    .action(async (_o: unknown, cmd: Command) =>
      run(
        cmd,
        async (ctx, globals) => {
          const rows = (await ctx.local!.catalog.keys.list()).map((k) => ({
            id: k.id,
            name: k.name,
            owner: k.owner,
            role: k.role,
            prefix: k.prefix,
            qps: k.qps,
            quota: k.quota,
            used: k.used,
            limits: limitsOf(k),
            created_at: k.created_at,
            revoked: Boolean(k.revoked_at),
          }));
          if (globals.json) return printJson(rows);
          if (!rows.length) return void process.stdout.write('no keys: vidembed keys create --name NAME\n');
          printTable(
            ['id', 'name', 'owner', 'role', 'key', 'qps', 'quota', 'used', 'revoked'],
            rows.map((r) => [r.id, r.name, r.owner, r.role, `${r.prefix}…`, r.qps, r.quota ?? '∞', r.used, r.revoked ? 'yes' : '']),
          );
        },
        { localOnly: 'say' },
      ),
    );
  keys
    .command('revoke')
    .argument('<id_or_name>')
    .description('revoke a key at once')
    .action(async (idOrName: string, _o: unknown, cmd: Command) =>
      run(
        cmd,
        async (ctx, globals) => {
          const keys = ctx.local!.catalog.keys;
          let target = idOrName;
          const named = (await keys.byName(idOrName)).filter((k) => !k.revoked_at);
          if (!(await keys.byId(idOrName)) && named.length > 1) {
            // Names were not unique before owners: never revoke several keys on a guess.
            if (!isInteractive() || globals.json) {
              throw new ConflictError(`${named.length} active keys are named ${idOrName}: revoke one by id (${named.map((k) => k.id).join(', ')})`);
            }
            const { select } = await import('@inquirer/prompts');
            target = await select({ message: `${named.length} keys are named ${idOrName}; revoke which?`, choices: named.map((k) => ({ name: `${k.id} (${k.prefix}…, owner ${k.owner}, created ${k.created_at.slice(0, 10)})`, value: k.id })) });
          }
          const n = await keys.revoke(target);
          if (!n) throw new NotFoundError(`no active key with id or name ${idOrName}`);
          if (globals.json) printJson({ revoked: n });
          else process.stdout.write(`revoked ${n} key${n > 1 ? 's' : ''}\n`);
        },
        { localOnly: 'say' },
      ),
    );

  program
    .command('login')
    .option('--base-url <url>', 'server address, e.g. http://127.0.0.1:8080')
    .option('--api-key <key>', 'API key')
    .description('point every command at a remote server (saved in the config file)')
    .addHelpText('after', '\nExample:\n  $ vidembed login --base-url http://127.0.0.1:8080 --api-key vk_...')
    .action(async (_o: unknown, cmd: Command) =>
      run(
        cmd,
        async (ctx, globals) => {
          const g = cmd.optsWithGlobals() as { baseUrl?: string; apiKey?: string };
          if (!g.baseUrl || !g.apiKey) throw new ValidationError([{ loc: ['base-url'], msg: 'login needs --base-url and --api-key', type: 'value_error.missing' }]);
          // Check the key before saving it: a wrong key is an error now, not on the next command.
          const { RemoteService } = await import('../../client/remote.js');
          await new RemoteService({ baseUrl: g.baseUrl, apiKey: g.apiKey, retries: 0 }).listCollections({ limit: 1 });
          writeUserConfig(ctx.paths, { base_url: g.baseUrl, api_key: g.apiKey });
          if (globals.json) printJson({ base_url: g.baseUrl });
          else process.stdout.write(`commands now go to ${g.baseUrl} (vidembed logout to go back to the local engine)\n`);
        },
        { localOnly: true },
      ),
    );
  program
    .command('logout')
    .description('forget the remote server; commands use the local engine again')
    .action(async (_o: unknown, cmd: Command) =>
      run(
        cmd,
        async (ctx, globals) => {
          writeUserConfig(ctx.paths, { base_url: undefined, api_key: undefined });
          if (globals.json) printJson({ base_url: null });
          else process.stdout.write('commands use the local engine\n');
        },
        { localOnly: true },
      ),
    );
}

/** The limits in force for a key (its own over the server's defaults; 0: no limit), as shown. */
function limitsOf(row: ApiKeyRow): { max_jobs: number; max_video_s: number; max_upload_bytes: number } {
  const l = principalOf(row).limits!;
  return { max_jobs: l.maxJobs, max_video_s: l.maxVideoSeconds, max_upload_bytes: l.maxUploadBytes };
}

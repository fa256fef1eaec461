import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram, COMMAND_MODULES, commandOf } from '../../src/cli/main.js';
import type { Run } from '../../src/cli/context.js';

const names = (p: Command) => p.commands.map((c) => c.name());
const noRun: Run = async () => {};

describe('the CLI loads only the module of the command it runs', () => {
  it('each module registers exactly the top-level commands the table names', async () => {
    for (const m of COMMAND_MODULES) {
      const program = new Command('vidembed');
      (await m.load())(program, noRun);
      expect(names(program)).toEqual(m.commands);
    }
  });

  it('without a command line every command is there, in the table order', async () => {
    const all = await buildProgram();
    expect(names(all)).toEqual(COMMAND_MODULES.flatMap((m) => m.commands));
    expect(new Set(names(all)).size).toBe(names(all).length);
  });

  it('finds the command after global options, skipping the values of those that take one', async () => {
    const p = await buildProgram();
    expect(commandOf(p, ['search', 'a dog'])).toBe('search');
    expect(commandOf(p, ['--json', '--home', '/tmp/h', 'search', 'x'])).toBe('search');
    expect(commandOf(p, ['--home=/tmp/h', '--api-key', 'k', '--base-url', 'http://x', 'video', 'list'])).toBe('video');
    expect(commandOf(p, ['--home', 'search', 'upload', 'f.mp4'])).toBe('upload');
    expect(commandOf(p, ['--version'])).toBeUndefined();
    expect(commandOf(p, [])).toBeUndefined();
  });

  it('a command line registers its own command only; help, an unknown word or none registers all', async () => {
    const argv = (...a: string[]) => ['node', 'vidembed', ...a];
    expect(names(await buildProgram(argv('--json', 'search', 'a red car', '--collection', 'c')))).toEqual(['search']);
    expect(names(await buildProgram(argv('login')))).toEqual(['keys', 'login', 'logout']);
    const all = COMMAND_MODULES.flatMap((m) => m.commands);
    expect(names(await buildProgram(argv('help', 'search')))).toEqual(all);
    expect(names(await buildProgram(argv('serach')))).toEqual(all);
    expect(names(await buildProgram(argv('--help')))).toEqual(all);
    expect(names(await buildProgram(argv('--version')))).toEqual([]);
  });
});

import { spawn } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from './clips.js';

export const BIN = path.join(repoRoot, 'bin', 'vidembed');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

/** Runs the built CLI (`bin/vidembed` → dist) as a user would, never on a TTY. */
export function runCli(args: string[], env: Record<string, string | undefined> = {}, timeoutMs = 240_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, CI: '1', VIDEMBED_POLL_MS: '250', VIDEMBED_WARM_IDLE_MS: '2000', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`vidembed ${args.join(' ')} timed out\n${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code: code ?? -1, stdout, stderr, json });
    });
  });
}

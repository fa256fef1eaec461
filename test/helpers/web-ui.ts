/**
 * The web page's end-to-end tests share these: Debian's Chromium (driven by playwright-core with
 * `executablePath`) and `vidembed ui --no-open --log` as a real process with its own home.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { BIN } from './cli.js';

export const CHROMIUM = '/usr/bin/chromium';
export const haveChromium = existsSync(CHROMIUM);

export interface Ui {
  proc: ChildProcess;
  link: string;
  base: string;
  output: () => string;
}

/** `vidembed ui --no-open --log` with its own home; resolves with the link it prints. */
export function startUi(home: string): Promise<Ui> {
  const proc = spawn(process.execPath, [BIN, 'ui', '--no-open', '--log'], { env: { ...process.env, VIDEMBED_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /(http:\/\/127\.0\.0\.1:\d+)\/#login=[A-Za-z0-9_-]+/.exec(out);
      if (m) resolve({ proc, link: m[0], base: m[1], output: () => out });
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.on('exit', (code) => reject(new Error(`vidembed ui exited ${code}: ${out}`)));
  });
}

export function stop(proc: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (proc.exitCode !== null) return resolve(proc.exitCode);
    proc.once('exit', (code) => resolve(code));
    proc.kill('SIGTERM');
  });
}

/** Headless Chromium as these machines can run it (no sandbox, no GPU, no background traffic). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
}

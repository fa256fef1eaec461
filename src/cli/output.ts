import Table from 'cli-table3';
import ora, { type Ora } from 'ora';

export interface OutputOptions {
  json?: boolean;
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

export function printTable(head: string[], rows: (string | number)[][]): void {
  const table = new Table({ head, style: { head: [], border: [] } });
  for (const r of rows) table.push(r.map((c) => String(c)));
  process.stdout.write(table.toString() + '\n');
}

export function isInteractive(): boolean {
  return Boolean(process.stdin.isTTY && process.stdout.isTTY && !process.env.CI);
}

/** A spinner on stderr for people; silent for --json and non-terminals. */
export function spinner(text: string, opts: OutputOptions): Ora {
  const tty = Boolean(process.stderr.isTTY);
  return ora({ text, stream: process.stderr, isEnabled: !opts.json && tty, isSilent: Boolean(opts.json) || !tty });
}

export function formatSeconds(s: number): string {
  const m = Math.floor(s / 60);
  const sec = s - m * 60;
  return `${m}:${sec.toFixed(1).padStart(4, '0')}`;
}

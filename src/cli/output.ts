import { inCi } from '../env.js';
import { createRequire } from 'node:module';
import type TableType from 'cli-table3';

export interface OutputOptions {
  json?: boolean;
}

// Spinners are in ./spinner.js (ora and its ~30 modules load only for the commands that spin).

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

/**
 * A table as text. With `width` (a terminal's columns) it fits: the widest columns give up room
 * first, and long cells wrap inside their column. Without (a pipe), cells keep their full length.
 */
export function formatTable(head: string[], rows: (string | number)[][], width?: number): string {
  const cells = rows.map((r) => r.map((c) => String(c)));
  // Loaded on first use: commands that print no table start without it.
  const Table = createRequire(import.meta.url)('cli-table3') as typeof TableType;
  const opts: ConstructorParameters<typeof TableType>[0] = { head, style: { head: [], border: [] } };
  if (width && width > 20) {
    // cli-table3 widths include one space of padding on each side; borders add 1 per column + 1.
    const natural = head.map((h, i) => Math.max(h.length, ...cells.map((r) => Math.max(...(r[i] ?? '').split('\n').map((l) => l.length)))) + 2);
    const room = width - (head.length + 1);
    const widths = [...natural];
    while (widths.reduce((a, b) => a + b, 0) > room) {
      const widest = widths.indexOf(Math.max(...widths));
      if (widths[widest] <= 6) break; // nothing left to give: let the terminal wrap
      widths[widest]--;
    }
    opts.colWidths = widths;
    opts.wordWrap = true;
    opts.wrapOnWordBoundary = false;
  }
  const table = new Table(opts);
  for (const r of cells) table.push(r);
  return table.toString();
}

export function printTable(head: string[], rows: (string | number)[][]): void {
  process.stdout.write(formatTable(head, rows, process.stdout.isTTY ? process.stdout.columns : undefined) + '\n');
}

export function isInteractive(): boolean {
  return Boolean(process.stdin.isTTY && process.stdout.isTTY && !inCi());
}

export function formatSeconds(s: number): string {
  const m = Math.floor(s / 60);
  const sec = s - m * 60;
  return `${m}:${sec.toFixed(1).padStart(4, '0')}`;
}

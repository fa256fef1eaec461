import { describe, expect, it } from 'vitest';
import { formatTable } from '../../src/cli/output.js';

describe('tables', () => {
  const head = ['rank', 'video', 'file', 'relevance', 'what was seen'];
  const rows = [
    [1, 'vid_0123456789abcdef', 'holiday-at-the-beach-with-the-family.mp4', '0.812', 'A dog on the grass. Looks like a golden retriever (92%). Outdoor daylight scene, green grass at the bottom.'],
    [2, 'vid_fedcba9876543210', 'b.mp4', '0.402', 'A cat.'],
  ];

  it('fits the terminal: no line longer than its width, every word still there', () => {
    for (const width of [60, 80, 120]) {
      const text = formatTable(head, rows, width);
      for (const line of text.split('\n')) expect(line.length, `${width}: ${line}`).toBeLessThanOrEqual(width);
      // Wrapped, not cut: every letter and digit of every cell is still in the table.
      const count = (t: string) => (t.match(/[A-Za-z0-9]/g) ?? []).sort().join('');
      expect(count(text)).toBe(count([...head, ...rows.flat().map(String)].join(' ')));
    }
  });

  it('keeps full cells when there is no terminal (pipes, scripts)', () => {
    const text = formatTable(head, rows);
    expect(text.split('\n').some((l) => l.includes(String(rows[0][4])))).toBe(true);
  });
});

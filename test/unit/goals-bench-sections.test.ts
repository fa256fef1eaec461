/** The goals bench's GOALS_SECTIONS (bench/goals.ts): which sections a run measures. */
import { describe, expect, it } from 'vitest';
import { goalSections } from '../../bench/goals.js';

describe('goalSections', () => {
  it('runs every section when none is asked for', () => {
    expect(goalSections(undefined)).toEqual(['cli', 'http', 'ingest']);
    expect(goalSections('')).toEqual(['cli', 'http', 'ingest']);
  });
  it('runs the asked ones in the bench order, whatever order they were given in', () => {
    expect(goalSections('http')).toEqual(['http']);
    expect(goalSections(' ingest , cli ')).toEqual(['cli', 'ingest']);
  });
  it('refuses a section it does not have', () => {
    expect(() => goalSections('cli,htp')).toThrow(/unknown section "htp"/);
  });
});

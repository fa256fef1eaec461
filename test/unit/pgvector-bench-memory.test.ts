/**
 * The pgvector bench's index-build memory (bench/pgvector-scale.ts): enough for the whole HNSW graph
 * when the machine has it, never more than a quarter of its memory nor half of what is free — the
 * fixed 2 GB the bench used before could ask for more than a loaded machine had left.
 */
import { describe, expect, it } from 'vitest';
import { buildMemoryFor } from '../../bench/pgvector-scale.js';

const GiB = 1024 ** 3;
const mb = (s: string) => Number(/^(\d+)MB$/.exec(s)![1]);

describe('buildMemoryFor', () => {
  it('covers the graph (about 1.4 KB per 512-d halfvec element, plus a quarter) on a roomy machine', () => {
    expect(mb(buildMemoryFor(200_000, 24 * GiB, 20 * GiB))).toBe(333);
    expect(mb(buildMemoryFor(1_000_000, 24 * GiB, 20 * GiB))).toBe(1668);
    expect(mb(buildMemoryFor(2_000_000, 24 * GiB, 20 * GiB))).toBe(3337);
  });
  it('stays within a quarter of the machine and half of what is free', () => {
    expect(mb(buildMemoryFor(4_000_000, 24 * GiB, 20 * GiB))).toBe(6144);
    expect(mb(buildMemoryFor(4_000_000, 24 * GiB, 4 * GiB))).toBe(2048);
  });
  it('never goes below 256 MB', () => {
    expect(buildMemoryFor(1000, 24 * GiB, 20 * GiB)).toBe('256MB');
    expect(buildMemoryFor(1_000_000, 1 * GiB, 0.1 * GiB)).toBe('256MB');
  });
});

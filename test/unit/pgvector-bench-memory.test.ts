/**
 * The pgvector bench's index-build memory (bench/pgvector-scale.ts): enough for the whole HNSW graph
 * when the machine has it, never more than a quarter of its memory nor half of what is free — the
 * fixed 2 GB the bench used before could ask for more than a loaded machine had left.
 */
import { describe, expect, it } from 'vitest';
import { buildMemoryFor } from '../../bench/pgvector-scale.js';
import { hnswBuildMemoryKb } from '../../src/store/pg/vector-store.js';

const GiB = 1024 ** 3;
const mb = (s: string) => Number(/^(\d+)MB$/.exec(s)![1]);

describe('buildMemoryFor', () => {
  it('covers the graph as the product sizes it (about 1.5 KB per 512-d halfvec element at m 16, more at a larger m, plus a quarter) on a roomy machine', () => {
    expect(mb(buildMemoryFor(200_000, 16, 24 * GiB, 20 * GiB))).toBe(359);
    expect(mb(buildMemoryFor(1_000_000, 16, 24 * GiB, 20 * GiB))).toBe(1797);
    expect(mb(buildMemoryFor(2_000_000, 16, 24 * GiB, 20 * GiB))).toBe(3595);
    expect(mb(buildMemoryFor(1_000_000, 24, 24 * GiB, 20 * GiB))).toBe(2026);
  });
  it('stays within a quarter of the machine and half of what is free', () => {
    expect(mb(buildMemoryFor(4_000_000, 16, 24 * GiB, 20 * GiB))).toBe(6144);
    expect(mb(buildMemoryFor(4_000_000, 16, 24 * GiB, 4 * GiB))).toBe(2048);
  });
  it('never goes below 256 MB', () => {
    expect(buildMemoryFor(1000, 16, 24 * GiB, 20 * GiB)).toBe('256MB');
    expect(buildMemoryFor(1_000_000, 16, 1 * GiB, 0.1 * GiB)).toBe('256MB');
  });
});

describe('hnswBuildMemoryKb (the product\'s builds: db migrate, db reindex, a dimension\'s first rows)', () => {
  it('sizes the graph plus a quarter: 1M 512-d halfvec rows at m 16 ≈ 1.7 GB, as vector ≈ 3 GB but capped', () => {
    expect(hnswBuildMemoryKb(1_000_000, 512, 'halfvec', 16, '2GB')).toBe(Math.ceil((1_000_000 * (1024 + 384 + 100) * 1.25) / 1024));
    expect(hnswBuildMemoryKb(1_000_000, 512, 'vector', 16, '2GB')).toBe(2 * 1024 * 1024);
    expect(hnswBuildMemoryKb(1_000_000, 512, 'vector', 16, '4GB')).toBe(Math.ceil((1_000_000 * (2048 + 384 + 100) * 1.25) / 1024));
  });
  it('asks a small library for 64 MB, not the 2 GB cap a parallel build would reserve in /dev/shm', () => {
    expect(hnswBuildMemoryKb(0, 512, 'halfvec', 16, '2GB')).toBe(64 * 1024);
    expect(hnswBuildMemoryKb(20_000, 512, 'halfvec', 16, '2GB')).toBe(64 * 1024);
    expect(hnswBuildMemoryKb(100_000, 512, 'halfvec', 16, '2GB')).toBe(Math.ceil((100_000 * 1508 * 1.25) / 1024));
  });
  it('reads the cap in kB, MB and GB', () => {
    expect(hnswBuildMemoryKb(10_000_000, 512, 'halfvec', 16, '512MB')).toBe(512 * 1024);
    expect(hnswBuildMemoryKb(10_000_000, 512, 'halfvec', 16, '70000kB')).toBe(70000);
  });
});

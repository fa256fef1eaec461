/**
 * An HNSW build's progress (`db migrate`, `db reindex`, the bench): while the graph loads its rows
 * the total is the rows counted before the build, not PostgreSQL's estimate, which a bulk write
 * leaves stale (560,106 of 334,000 was reported at 1M).
 */
import { describe, expect, it } from 'vitest';
import { buildProgress } from '../../src/store/pg/vector-store.js';

describe('buildProgress', () => {
  it('loading the rows: the counted rows are the total, whatever PostgreSQL estimated', () => {
    expect(buildProgress({ phase: 'building index: loading tuples', done: 560_106, total: 334_000 }, 1_002_000)).toEqual({ phase: 'building index: loading tuples', done: 560_106, total: 1_002_000 });
    // Rows written while a concurrent build runs: never more done than the total.
    expect(buildProgress({ phase: 'building index: loading tuples', done: 1_003_000, total: 334_000 }, 1_002_000).total).toBe(1_003_000);
  });
  it('other phases: as PostgreSQL reports them', () => {
    const p = { phase: 'waiting for writers before build', done: 3, total: 7 };
    expect(buildProgress(p, 1_002_000)).toEqual(p);
  });
});

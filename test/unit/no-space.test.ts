import { describe, expect, it } from 'vitest';
import { DependencyProbe } from '../../src/server/health.js';
import { fullDisks, haveRoom, type DiskStats } from '../../src/services/no-space.js';
import { MemoryBlobStore } from '../../src/store/memory/blobs.js';
import { MemoryCatalog } from '../../src/store/memory/catalog.js';

const MiB = 1024 ** 2;
/** A file system of `size` bytes with `free` of them available, in 4 KiB blocks. */
const disk = (size: number, free: number): DiskStats => ({ bsize: 4096, blocks: Math.floor(size / 4096), bavail: Math.floor(free / 4096) });
const on = (st: DiskStats) => async () => st;

/** Issue 30: a full disk is said by /healthz and /readyz, and a small disk's videos are retried. */
describe('room on a disk', () => {
  it('retries videos failed for lack of space once the disk has 256 MiB free, or a quarter of a smaller disk', async () => {
    expect(await haveRoom(['/x'], undefined, on(disk(1024 ** 4, 200 * MiB)))).toBe(false);
    expect(await haveRoom(['/x'], undefined, on(disk(1024 ** 4, 300 * MiB)))).toBe(true);
    // A 48 MiB file system never has 256 MiB free: a quarter of it is room enough.
    expect(await haveRoom(['/x'], undefined, on(disk(48 * MiB, 20 * MiB)))).toBe(true);
    expect(await haveRoom(['/x'], undefined, on(disk(48 * MiB, 4 * MiB)))).toBe(false);
    // A directory that is not there says nothing.
    expect(await haveRoom(['/x'], undefined, async () => undefined)).toBe(true);
  });

  it('calls a disk full below 16 MiB free, or a sixteenth of a smaller disk', async () => {
    expect(await fullDisks(['/a', '/b'], on(disk(1024 ** 4, 10 * MiB)))).toBe(2);
    expect(await fullDisks(['/a'], on(disk(1024 ** 4, 20 * MiB)))).toBe(0);
    expect(await fullDisks(['/a'], on(disk(48 * MiB, 2 * MiB)))).toBe(1);
    expect(await fullDisks(['/a'], on(disk(48 * MiB, 4 * MiB)))).toBe(0);
  });

  it('/healthz and /readyz hear of a full disk from the probe', async () => {
    let st = disk(48 * MiB, 0);
    const lib = { catalog: new MemoryCatalog(), blobs: new MemoryBlobStore(), paths: { home: '/home' } } as never;
    let now = 0;
    const probe = new DependencyProbe(lib, () => now, async () => st);
    const full = await probe.check();
    expect(full).toMatchObject({ database: 'up', storage: 'up', disk: 'full' });
    expect(full.detail).toMatch(/disk is full/);
    expect(full.detail).not.toMatch(/\/home/); // no server path
    st = disk(48 * MiB, 30 * MiB);
    now += 5000;
    expect(await probe.check()).toEqual({ database: 'up', storage: 'up', disk: 'ok' });
  });
});

/** Where a home's warm socket lives (src/runtime/warm.ts): inside the home when the path fits, else a per-user name in the temp dir. */
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { warmSocketPath } from '../../src/runtime/warm.js';

describe('warmSocketPath', () => {
  it('is warm.sock inside a home whose path fits', () => {
    expect(warmSocketPath('/home/ann/.vidembed')).toBe('/home/ann/.vidembed/warm.sock');
  });

  it('is a name made from the hash of a long home, in the temp dir', () => {
    const home = `/srv/${'very-long-folder-name/'.repeat(6)}vidembed`;
    const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
    const hash = createHash('sha256').update(home).digest('hex').slice(0, 16);
    expect(warmSocketPath(home)).toBe(path.join(os.tmpdir(), `vidembed-${uid}-${hash}.sock`));
    expect(warmSocketPath(`${home}2`)).not.toBe(warmSocketPath(home));
  });
});

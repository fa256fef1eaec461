/**
 * What `/healthz` and `/readyz` report about the server's dependencies: the catalog (SQLite or
 * PostgreSQL) answers a query, the blob store answers a lookup, the disks it writes to have room. One probe runs at a time and its
 * answer is reused for a second, so neither endpoint puts load on the database however often load
 * balancers ask, and each answers within the probe's time budget even when a dependency hangs.
 */
import type { Library } from '../services/library.js';
import { fullDisks, libraryDirs, type StatDisk } from '../services/no-space.js';
import { asUnavailable } from '../store/unavailable.js';

export type DependencyState = 'up' | 'down';

export interface Dependencies {
  database: DependencyState;
  storage: DependencyState;
  /** `full`: a disk the server writes to is full (src/services/no-space.ts): calls that write answer 507. */
  disk: 'ok' | 'full';
  /** What failed, in words (no addresses): only when something is down. */
  detail?: string;
}

/** A probe answer is reused this long. */
const FRESH_MS = 1000;
/** A dependency that has not answered in this long counts as down. */
const PROBE_TIMEOUT_MS = 2000;

export class DependencyProbe {
  private last?: { at: number; deps: Dependencies };
  private running?: Promise<Dependencies>;

  constructor(
    private readonly lib: Pick<Library, 'catalog' | 'blobs' | 'paths' | 'blobPath'>,
    private readonly now: () => number = Date.now,
    private readonly statDisk?: StatDisk,
  ) {}

  check(): Promise<Dependencies> {
    if (this.last && this.now() - this.last.at < FRESH_MS) return Promise.resolve(this.last.deps);
    this.running ??= this.probe().finally(() => (this.running = undefined));
    return this.running;
  }

  private async probe(): Promise<Dependencies> {
    const [db, blobs, full] = await Promise.all([
      within(this.lib.catalog.collections.list(1, 0, null), 'the database'),
      within(this.lib.blobs.has('readyz/probe'), 'the blob store'),
      fullDisks(libraryDirs(this.lib), this.statDisk).catch(() => 0),
    ]);
    const disk = full ? "the server's disk is full: calls that store anything answer 507 until space is freed" : undefined;
    const deps: Dependencies = { database: db ? 'down' : 'up', storage: blobs ? 'down' : 'up', disk: full ? 'full' : 'ok' };
    const down = [db, blobs, disk].filter(Boolean);
    if (down.length) deps.detail = down.join('; ');
    this.last = { at: this.now(), deps };
    return deps;
  }
}

/** undefined when `work` settles in time, else what went wrong (in words that name no address). */
async function within(work: Promise<unknown>, what: string): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`${what} did not answer within ${PROBE_TIMEOUT_MS / 1000} s`), PROBE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([
      work.then(
        () => undefined,
        (err: unknown) => (asUnavailable(err) ? `${what} cannot be reached` : `${what} fails (see the server's log)`),
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

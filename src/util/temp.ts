/**
 * Temporary directories of this program in the system's temp dir, named so that the ones a
 * stopped process left behind can be told and removed: `vidembed-<what>-<pid>-XXXXXX`. A process
 * killed in the middle (SIGKILL during a playback-proxy encode) cannot clean up after itself;
 * `sweepTempDirs` — run by workers when they start and while idle — removes the directories of
 * processes that are gone, and any of ours older than a day.
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** What the program's own temp dirs are for: each a prefix `vidembed-<what>-`. */
export const TEMP_KINDS = ['proxy', 'blob', 'src', 'query', 'job'] as const;
export type TempKind = (typeof TEMP_KINDS)[number];

const NAME_RE = new RegExp(`^vidembed-(${TEMP_KINDS.join('|')})-(\\d+)-[A-Za-z0-9]{6}$`);

/** A fresh directory `vidembed-<kind>-<pid>-XXXXXX` under `base` (default: the system's temp dir). */
export function makeTempDir(kind: TempKind, base = os.tmpdir()): Promise<string> {
  return mkdtemp(path.join(base, `vidembed-${kind}-${process.pid}-`));
}

function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // someone else's process: alive
  }
}

export interface SweepOptions {
  base?: string;
  /** A directory of a process that is gone is removed once it is this old (default 0: at once; its process cannot be writing it). */
  goneAfterMs?: number;
  /** Any of ours is removed once it is this old, whoever made it (default 24 h: a pid reused since). */
  maxAgeMs?: number;
  now?: number;
}

/**
 * Removes this program's stale temp dirs (by name: `vidembed-<kind>-<pid>-XXXXXX`, owned by this
 * user): those whose process is gone, and those older than `maxAgeMs`. Other names — another
 * program's, a test cluster's `vidembed-pg-*`, a warm process's socket — are never touched.
 * Answers the directories removed.
 */
export async function sweepTempDirs(opts: SweepOptions = {}): Promise<string[]> {
  const base = opts.base ?? os.tmpdir();
  const now = opts.now ?? Date.now();
  const goneAfter = opts.goneAfterMs ?? 0;
  const maxAge = opts.maxAgeMs ?? 24 * 3600_000;
  const uid = process.getuid?.();
  const removed: string[] = [];
  const names = await readdir(base).catch(() => [] as string[]);
  for (const name of names) {
    const m = NAME_RE.exec(name);
    if (!m) continue;
    const dir = path.join(base, name);
    const st = await stat(dir).catch(() => undefined);
    if (!st?.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
    const age = now - st.mtimeMs;
    const pid = Number(m[2]);
    if ((age >= goneAfter && !alive(pid)) || age >= maxAge) {
      await rm(dir, { recursive: true, force: true }).catch(() => {});
      removed.push(dir);
    }
  }
  return removed;
}

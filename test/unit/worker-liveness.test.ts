import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reapStoppedWorkers, STALE_HEARTBEAT_MS, workerStopped } from '../../src/runtime/processes.js';
import { liveWorkerCount } from '../../src/runtime/launcher.js';
import { Store } from '../../src/store/index.js';

/**
 * The pid of no process: the first one above 2^22 (Linux's largest pid_max; other systems stay far
 * below it) that signal 0 says does not exist. Unit tests start no process to get one that exited.
 */
function deadPid(): number {
  for (let pid = 2 ** 22 + 1; ; pid++) {
    try {
      process.kill(pid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') return pid;
    }
  }
}

describe('worker liveness by heartbeat (and, on this host, by its process)', () => {
  let dir: string;
  let store: Store;
  const host = os.hostname();
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vidembed-liveness-'));
    store = Store.open(path.join(dir, 'vidembed.db'));
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the rule: a stale heartbeat anywhere; a gone process only on this host', () => {
    const now = Date.now();
    expect(workerStopped({ pid: process.pid, host, heartbeatAt: now }, now)).toBe(false);
    expect(workerStopped({ pid: process.pid, host, heartbeatAt: now - STALE_HEARTBEAT_MS - 1 }, now)).toBe(true);
    expect(workerStopped({ pid: deadPid(), host, heartbeatAt: now }, now)).toBe(true);
    // Another machine's pid means nothing here: only its heartbeat counts.
    expect(workerStopped({ pid: deadPid(), host: `${host}-elsewhere`, heartbeatAt: now }, now)).toBe(false);
    expect(workerStopped({ pid: deadPid(), host: `${host}-elsewhere`, heartbeatAt: now - STALE_HEARTBEAT_MS - 1 }, now)).toBe(true);
  });

  it('reaping frees the running jobs of stopped workers at once and drops them; live workers keep theirs', async () => {
    const { queue, registry } = store;
    const j1 = await queue.enqueue('video.process', 'v1');
    const j2 = await queue.enqueue('video.process', 'v2');
    const j3 = await queue.enqueue('video.process', 'v3');
    await registry.heartbeat('wrk_killed', { pid: deadPid(), host });
    await registry.heartbeat('wrk_remote_live', { pid: deadPid(), host: `${host}-elsewhere` });
    await registry.heartbeat('wrk_remote_silent', { pid: 1, host: `${host}-elsewhere` });
    // The silent one's last beat is old.
    store.db.prepare('UPDATE workers SET heartbeat_at = ? WHERE id = ?').run(Date.now() - STALE_HEARTBEAT_MS - 5000, 'wrk_remote_silent');
    const a = (await queue.claim('wrk_killed', 3_600_000))!;
    const b = (await queue.claim('wrk_remote_live', 3_600_000))!;
    const c = (await queue.claim('wrk_remote_silent', 3_600_000))!;
    expect([a.id, b.id, c.id]).toEqual([j1, j2, j3]);
    expect(await liveWorkerCount(store.registry)).toBe(1); // the remote one that beats

    expect(await reapStoppedWorkers(store, 'wrk_me')).toBe(2);
    expect((await registry.alive(Number.MAX_SAFE_INTEGER)).map((w) => w.id)).toEqual(['wrk_remote_live']);
    const again = [(await queue.claim('wrk_me', 60_000))!, (await queue.claim('wrk_me', 60_000))!];
    expect(again.map((j) => j.id).sort()).toEqual([j1, j3].sort());
    expect(await queue.claim('wrk_me', 60_000)).toBeUndefined(); // j2's holder is alive
    // The stopped workers' claims are fenced off.
    expect(await queue.complete(j1, a.token)).toBe(false);
    expect(await queue.complete(j3, c.token)).toBe(false);
    expect(await queue.complete(j2, b.token)).toBe(true);
  });
});

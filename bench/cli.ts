/**
 * `npm run bench -- cli`: wall time of a repeated `vidembed search` as a user runs it (a new
 * process each time), cold (no warm process: every call loads tfjs and the text encoder) and warm
 * (the background worker the first search started answers over the home's socket).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { warmSocketPath } from '../src/runtime/warm.js';
import { Store } from '../src/store/index.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/vidembed');

function timeCli(args: string[], env: NodeJS.ProcessEnv): number {
  const t = performance.now();
  const r = spawnSync(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`vidembed ${args.join(' ')} failed: ${r.stderr}`);
  return performance.now() - t;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const r1 = (x: number) => Math.round(x);

export async function benchCli(runs = 7): Promise<unknown> {
  const home = mkdtempSync(path.join(os.tmpdir(), 'vidembed-bench-cli-'));
  const base = { ...process.env, VIDEMBED_HOME: home, VIDEMBED_WORKER_IDLE_MS: '5000', VIDEMBED_WARM_IDLE_MS: '60000' };
  try {
    timeCli(['collection', 'create', 'bench'], base);
    const queries = Array.from({ length: runs }, (_, i) => `a red car on a wet street, take ${i}`);
    // Cold: no warm process at all.
    const coldEnv = { ...base, VIDEMBED_WARM_IDLE_MS: '0', VIDEMBED_NO_AUTO_WORKER: '1' };
    const cold = queries.map((q) => timeCli(['search', q, '--collection', 'bench'], coldEnv));
    // The first search of a session runs cold and leaves a warm worker behind.
    const first = timeCli(['search', 'first of the session', '--collection', 'bench'], base);
    const sock = warmSocketPath(home);
    const t0 = Date.now();
    while (!existsSync(sock) && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 100));
    if (!existsSync(sock)) throw new Error('no warm process came up');
    await new Promise((r) => setTimeout(r, 3000)); // its models load in the background
    const warm = queries.map((q) => timeCli(['search', `${q} again`, '--collection', 'bench'], base));
    const noop = queries.map(() => timeCli(['--version'], base));
    return {
      runs,
      cold_ms: { p50: r1(median(cold)), min: r1(Math.min(...cold)), max: r1(Math.max(...cold)) },
      first_search_ms: r1(first),
      warm_ms: { p50: r1(median(warm)), min: r1(Math.min(...warm)), max: r1(Math.max(...warm)) },
      node_startup_ms: { p50: r1(median(noop)) },
      target_warm_ms: 300,
    };
  } finally {
    // Stop the warm worker this bench started (the workers table has its pid).
    const store = Store.open(path.join(home, 'vidembed.db'));
    for (const pid of store.db.prepare('SELECT pid FROM workers').pluck().all() as number[]) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // gone already
      }
    }
    store.close();
    rmSync(home, { recursive: true, force: true });
  }
}

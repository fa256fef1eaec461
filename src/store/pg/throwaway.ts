import { pgBinSetting } from '../../env.js';
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * A throwaway PostgreSQL cluster in a temp dir on a free loopback port, for tests and benches
 * (never for data): Debian's server binaries, trust authentication, user `postgres`. initdb and the
 * server refuse to run as root, so as root they run as the `postgres` user (runuser), in a dir
 * handed to it.
 */
export interface ThrowawayCluster {
  dir: string;
  port: number;
  /** A URL for `database` (default `postgres`) over TCP on 127.0.0.1. */
  url(database?: string): string;
  /** Stops the server (pg_ctl stop, fast) and removes the dir; synchronous, so an exit handler can call it. Idempotent. */
  stop(): void;
  /** Stops the server as an outage would (pg_ctl stop -m fast: connections are cut), keeping its data. */
  halt(): void;
  /** Starts the halted server again on the same port. */
  resume(): void;
}

/** The directory of initdb/pg_ctl: VIDEMBED_PG_BIN, else the newest /usr/lib/postgresql/N/bin; undefined when none. */
export function findPgBin(): string | undefined {
  const fromEnv = pgBinSetting();
  if (fromEnv) return existsSync(path.join(fromEnv, 'initdb')) ? fromEnv : undefined;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && existsSync(path.join(root, v, 'bin', 'initdb')) && existsSync(path.join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(root, versions[0], 'bin') : undefined;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function postgresIds(): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

export interface ClusterOptions {
  /** Keep fsync and synchronous commit on (benches); tests turn them off for speed. */
  durable?: boolean;
  /** The directory the cluster's temp dir is made in (default: the OS temp dir; benches put big data elsewhere). */
  parent?: string;
  /** More server settings (name → value), e.g. shared_buffers for a bench. */
  settings?: Record<string, string>;
}

export async function startThrowawayCluster(opts: ClusterOptions = {}): Promise<ThrowawayCluster> {
  const bin = findPgBin();
  if (!bin) throw new Error('PostgreSQL server binaries not found (looked in VIDEMBED_PG_BIN and /usr/lib/postgresql/*/bin); install postgresql');
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) => {
    const file = path.join(bin, cmd);
    // stdout/stderr are collected, never inherited: the server pg_ctl leaves behind must not hold our pipes.
    return asRoot
      ? execFileSync('runuser', ['-u', 'postgres', '--', file, ...args], { stdio: ['ignore', 'pipe', 'pipe'], cwd: '/' })
      : execFileSync(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  };
  const dir = mkdtempSync(path.join(opts.parent ?? os.tmpdir(), 'vidembed-pg-'));
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'server.log');
  let started = false;
  const stop = () => {
    if (started) {
      started = false;
      try {
        run('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
      } catch {
        // Already stopped, or it would not stop: the dir goes anyway.
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (asRoot) {
      const { uid, gid } = postgresIds();
      chownSync(dir, uid, gid);
    }
    run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '-N']);
    const settings = ['-c listen_addresses=127.0.0.1', `-k ${dir}`, '-c max_connections=100'];
    if (!opts.durable) settings.push('-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off');
    for (const [k, v] of Object.entries(opts.settings ?? {})) {
      if (!/^[a-z_.]+$/.test(k) || !/^[\w.]+$/.test(v)) throw new Error(`bad server setting ${k}=${v}`);
      settings.push(`-c ${k}=${v}`);
    }
    let lastError: unknown;
    // A free port can be taken between the probe and the server's bind: try a few.
    for (let attempt = 0; attempt < 3; attempt++) {
      const port = await freePort();
      try {
        started = true;
        const start = () => run('pg_ctl', ['-D', data, '-l', log, '-w', '-t', '60', '-o', `-p ${port} ${settings.join(' ')}`, 'start']);
        start();
        const halt = () => {
          if (started) run('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
        };
        const resume = () => {
          if (started) start();
        };
        return { dir, port, url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`, stop, halt, resume };
      } catch (err) {
        lastError = err;
        try {
          run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']); // in case it came up late
        } catch {
          // nothing was running
        }
        started = false;
      }
    }
    const tail = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-15).join('\n') : '';
    throw new Error(`pg_ctl start failed: ${(lastError as Error).message}\n${tail}`);
  } catch (err) {
    stop();
    throw err;
  }
}

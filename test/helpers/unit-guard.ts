/**
 * Setup of the `unit` test project (vitest.config.ts): the rule "a unit test runs no child process
 * and reaches no other machine" enforced, not only written down (docs/testing.md). Any attempt to
 * start a process (ffmpeg, the CLI, a database cluster, a helper script) or to connect anywhere but
 * this machine fails the test that made it, naming what it tried: such a test belongs in test/e2e.
 * Worker threads are allowed (they are not processes); loopback servers in the test's own process
 * too.
 */
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

function refuse(what: string): never {
  throw new Error(`unit tests run no child process (${what}): a test that needs one is an end-to-end test (test/e2e, docs/testing.md)`);
}

const cp = childProcess as unknown as Record<string, unknown>;
for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
  cp[name] = (file: unknown, args?: unknown) => refuse(`${name} ${String(file)}${Array.isArray(args) ? ` ${args.slice(0, 3).join(' ')}` : ''}`);
}
syncBuiltinESMExports();

const LOCAL = /^(localhost|127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+|0\.0\.0\.0|::)$/i;
const connect = net.Socket.prototype.connect as (...args: unknown[]) => net.Socket;
net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
  const first = args[0];
  const opts = (Array.isArray(first) ? first[0] : first) as { host?: string; path?: string; lookup?: unknown } | number | string;
  const host = typeof opts === 'object' && opts !== null ? opts.host : typeof args[1] === 'string' ? args[1] : undefined;
  const isPath = typeof opts === 'string' || (typeof opts === 'object' && opts !== null && typeof opts.path === 'string');
  // A name resolved by the caller's own lookup (the fetcher's pinned resolver) is the caller's to fence.
  const ownLookup = typeof opts === 'object' && opts !== null && typeof opts.lookup === 'function';
  if (!isPath && !ownLookup && host !== undefined && !LOCAL.test(host)) {
    throw new Error(`unit tests reach no other machine (a connection to ${host}): a test that needs one is an end-to-end test (test/e2e, docs/testing.md)`);
  }
  return connect.apply(this, args);
} as typeof net.Socket.prototype.connect;

/**
 * A warm CLI: a long-running local process (`vidembed serve`, or the background worker) answers
 * `search` and `encode_text` (and the reads they make: collections, video details) for one-shot CLI calls over a unix-domain socket in VIDEMBED_HOME
 * (mode 0600: only this user), so a repeated `vidembed search` skips loading tfjs and the text
 * encoder. The CLI falls back to running the call itself when nothing answers. The protocol is one
 * JSON object per line each way: `{id, op, args}` → `{id, ok, result | error}`; errors travel as
 * their class name and fields and are rebuilt as the same classes, so exit codes stay the same.
 */
import { chmodSync, existsSync, unlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as errors from '../api/errors.js';
import { errorFromWire, errorToWire, type WireError } from '../api/errors.js';
import type { LocalEngine } from './engine.js';

/** node:crypto, loaded only for a home whose socket path is too long (loading it cost every CLI call ~10 ms). */
const nodeRequire = createRequire(import.meta.url);

/** Longest unix socket path Linux and macOS accept (sun_path), with room for the terminator. */
const MAX_SOCKET_PATH = 103;

/** The socket of a home: inside it when the path fits, else a per-user name in the temp dir. */
export function warmSocketPath(home: string): string {
  const inside = path.join(home, 'warm.sock');
  if (Buffer.byteLength(inside) <= MAX_SOCKET_PATH) return inside;
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  return path.join(os.tmpdir(), `vidembed-${uid}-${(nodeRequire('node:crypto') as typeof import('node:crypto')).createHash('sha256').update(home).digest('hex').slice(0, 16)}.sock`);
}

/** What a warm process answers: the read calls a search or `embed text` makes. */
export const WARM_OPS = ['search', 'encodeText', 'getCollection', 'listCollections', 'videoDetails'] as const;
export type WarmOp = (typeof WARM_OPS)[number];

export interface WarmHost {
  /** When the last request arrived (ms since epoch); 0 before any. */
  readonly lastRequestAt: number;
  readonly socketPath: string;
  close(): Promise<void>;
}

/**
 * Serves `search` and `encode_text` of `engine` on the home's socket. Returns undefined when
 * another live process already serves it (one host per home is enough). A socket file left by a
 * process that died is replaced.
 */
export async function startWarmHost(engine: LocalEngine, home: string): Promise<WarmHost | undefined> {
  const socketPath = warmSocketPath(home);
  let lastRequestAt = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let buffered = '';
    socket.on('data', (chunk) => {
      buffered += chunk.toString('utf8');
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line.trim()) void answer(socket, line);
      }
      if (buffered.length > 64 * 1024 ** 2) socket.destroy(); // no line is ever this long
    });
  });
  const answer = async (socket: net.Socket, line: string) => {
    lastRequestAt = Date.now();
    let id: unknown;
    try {
      const msg = JSON.parse(line) as { id: unknown; op: WarmOp; args: unknown[] };
      id = msg.id;
      if (!(WARM_OPS as readonly string[]).includes(msg.op) || !Array.isArray(msg.args)) throw new errors.BadRequestError(`unknown operation ${String(msg.op)}`);
      // The caller is this machine's user (the socket is 0600), as the local CLI: the local principal.
      const result: unknown = await (engine[msg.op] as (...a: unknown[]) => Promise<unknown>).apply(engine, msg.args);
      socket.write(`${JSON.stringify({ id, ok: true, result })}\n`);
    } catch (err) {
      if (!socket.destroyed) socket.write(`${JSON.stringify({ id, ok: false, error: errorToWire(err) })}\n`);
    } finally {
      lastRequestAt = Date.now();
    }
  };

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      // Created 0600 from the start: the umask covers the instant before chmod.
      const mask = process.umask(0o177);
      server.once('error', reject);
      server.listen(socketPath, () => {
        process.umask(mask);
        server.off('error', reject);
        resolve();
      });
      // listen() takes the umask synchronously when it binds; restore it on failure too.
      setImmediate(() => process.umask(mask));
    });
  try {
    await listen();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') return undefined;
    if (await answers(socketPath)) return undefined; // someone else is warm already
    try {
      unlinkSync(socketPath); // left by a process that died
      await listen();
    } catch {
      return undefined;
    }
  }
  chmodSync(socketPath, 0o600);
  return {
    socketPath,
    get lastRequestAt() {
      return lastRequestAt;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      // Closing removes the socket file (Node unlinks its own unix sockets).
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Does a live process answer on this socket? */
function answers(socketPath: string, timeoutMs = 300): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(socketPath);
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
    setTimeout(() => done(false), timeoutMs).unref();
  });
}

/**
 * Sends one call to a warm host. Resolves `{ answered: false }` when nothing answers (no socket,
 * refused, the host went away mid-call): the caller then does the work itself. A host's error is
 * rethrown as the same error class.
 */
export function callWarm<T>(home: string, op: WarmOp, args: unknown[], opts: { connectTimeoutMs?: number } = {}): Promise<{ answered: true; result: T } | { answered: false }> {
  const socketPath = warmSocketPath(home);
  if (!existsSync(socketPath)) return Promise.resolve({ answered: false });
  return new Promise((resolve, reject) => {
    const s = net.connect(socketPath);
    let settled = false;
    let buffered = '';
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      s.destroy();
      fn();
    };
    const connectTimer = setTimeout(() => settle(() => resolve({ answered: false })), opts.connectTimeoutMs ?? 300);
    s.once('connect', () => {
      clearTimeout(connectTimer);
      s.write(`${JSON.stringify({ id: 1, op, args })}\n`);
    });
    s.on('data', (chunk) => {
      buffered += chunk.toString('utf8');
      const nl = buffered.indexOf('\n');
      if (nl < 0) return;
      try {
        const msg = JSON.parse(buffered.slice(0, nl)) as { ok: boolean; result?: T; error?: WireError };
        if (msg.ok) settle(() => resolve({ answered: true, result: msg.result as T }));
        else settle(() => reject(errorFromWire(msg.error ?? { name: 'Error', message: 'the warm process failed' })));
      } catch {
        settle(() => resolve({ answered: false }));
      }
    });
    s.once('error', () => settle(() => resolve({ answered: false })));
    s.once('close', () => settle(() => resolve({ answered: false })));
  });
}

import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PayloadTooLargeError, UpstreamError, ValidationError } from '../../src/api/errors.js';
import {
  fetchVideoToFile,
  makePinnedLookup,
  UPSTREAM_FAILURE_MESSAGE,
  type FetchPolicy,
  type Resolver,
} from '../../src/net/fetch-video.js';
import { classifyAddress, formatIP, isPublicAddress, parseIP, parseIPv4, parseIPv6, sameAddress } from '../../src/net/net-guard.js';

// Nothing here leaves the machine: every listener is on loopback, every host name goes through an
// injected resolver, and public addresses are only ever classified, never connected to.

interface Listener {
  host: string;
  port: number;
  connections: number;
  hosts: string[];
  close(): Promise<void>;
}

/** Starts `server` on loopback, counting its TCP connections (and destroying them on close). */
function track(server: net.Server, host: string, port: number, l: Listener): Promise<Listener> {
  const sockets = new Set<net.Socket>();
  l.close = () =>
    new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    });
  server.on('connection', (s: net.Socket) => {
    l.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      l.port = (server.address() as net.AddressInfo).port;
      resolve(l);
    });
  });
}

const newListener = (host: string): Listener => ({ host, port: 0, connections: 0, hosts: [], close: async () => {} });

/** An HTTP server on loopback that counts TCP connections and answers with who it is. */
function listen(host: string, port = 0, handler?: http.RequestListener): Promise<Listener> {
  const l = newListener(host);
  const server = http.createServer(
    handler ??
      ((req, res) => {
        l.hosts.push(String(req.headers.host));
        res.writeHead(200, { 'content-type': 'video/mp4', connection: 'close' });
        res.end(`served-by-${host}`);
      }),
  );
  return track(server, host, port, l);
}

/** A raw TCP server (for non-HTTP replies, resets, silence); counts connections too. */
function listenRaw(onConnection: (s: net.Socket) => void): Promise<Listener> {
  return track(net.createServer(onConnection), '127.0.0.1', 0, newListener('127.0.0.1'));
}

// An egress fence for this file: every socket this process opens must go to loopback. A host
// name may only be connected through a `lookup` option (the fetcher's pinned one), whose answers
// are checked too; anything else is blocked before a packet leaves and recorded here. So even a
// broken guard cannot make these tests reach the network, and the record is asserted empty.
const egress: string[] = [];
const isLoopback = (ip: string): boolean => {
  const a = parseIP(ip);
  if (!a) return false;
  const b = a.bytes;
  if (a.family === 4) return b[0] === 127;
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  if (zero(0, 15) && b[15] === 1) return true;
  return zero(0, 10) && b[10] === 0xff && b[11] === 0xff && b[12] === 127;
};
const realConnect = net.Socket.prototype.connect;
type LookupCb = (err: Error | null, address?: string | { address: string }[], family?: number) => void;
function fencedConnect(this: net.Socket, ...args: unknown[]): net.Socket {
  const normalized = Array.isArray(args[0]) ? (args[0] as unknown[]) : null;
  const first = normalized ? normalized[0] : args[0];
  if (first && typeof first === 'object' && !('path' in first && (first as { path?: unknown }).path)) {
    const opts = first as net.TcpSocketConnectOpts;
    const host = opts.host ?? 'localhost';
    if (net.isIP(host)) {
      if (!isLoopback(host)) {
        egress.push(host);
        return this.destroy(new Error('egress blocked by the test fence'));
      }
    } else if (typeof opts.lookup !== 'function') {
      egress.push(`dns:${host}`);
      return this.destroy(new Error('unpinned host name blocked by the test fence'));
    } else {
      const inner = opts.lookup as unknown as (h: string, o: unknown, cb: LookupCb) => void;
      const lookup = (h: string, o: unknown, cb: LookupCb) =>
        inner(h, o, (err, address, family) => {
          if (err) return cb(err);
          const list = Array.isArray(address) ? address.map((x) => x.address) : [String(address)];
          const outside = list.filter((x) => !isLoopback(x));
          if (outside.length > 0) {
            egress.push(...outside);
            return cb(new Error('egress blocked by the test fence'));
          }
          cb(null, address, family);
        });
      const fenced = { ...opts, lookup } as unknown;
      if (normalized) normalized[0] = fenced;
      else args[0] = fenced;
    }
  } else if (!normalized && (typeof first === 'number' || typeof first === 'string') && typeof args[1] === 'string' && !isLoopback(args[1])) {
    egress.push(String(args[1]));
    return this.destroy(new Error('egress blocked by the test fence'));
  }
  return (realConnect as (...a: unknown[]) => net.Socket).apply(this, args);
}

beforeAll(() => {
  net.Socket.prototype.connect = fencedConnect as typeof net.Socket.prototype.connect;
});
afterAll(() => {
  net.Socket.prototype.connect = realConnect;
});
afterEach(() => {
  expect(egress.splice(0), 'connection attempts outside loopback').toEqual([]);
});

let dir: string;
let n = 0;
const target = () => path.join(dir, `out-${n++}`);
const exists = (f: string) => stat(f).then(() => true, () => false);

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'vidembed-ssrf-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A resolver from a table; asking it about any other name is a test failure, never a real lookup. */
function tableResolver(table: Record<string, string[]>, calls: string[] = []): Resolver {
  return async (host) => {
    calls.push(host);
    const answers = table[host];
    if (!answers) throw new Error(`test resolver: unexpected lookup of ${host}`);
    return answers.map((address) => ({ address, family: net.isIPv6(address) ? 6 : 4 }));
  };
}

const outcome = (p: Promise<unknown>) => p.then(() => 'fetched' as const, (e: unknown) => e);

describe('the test egress fence', () => {
  it('blocks a non-loopback literal and an unpinned or outward-pinned name, without a packet leaving', async () => {
    const attempt = (opts: net.NetConnectOpts) =>
      new Promise<string>((resolve) => {
        const s = net.connect(opts);
        s.on('error', (e) => resolve(e.message));
        s.on('connect', () => {
          s.destroy();
          resolve('connected');
        });
      });
    // Targets that stay on this machine even if the fence failed: 0.0.0.0 means "this host",
    // localhost comes from the hosts file.
    expect(await attempt({ host: '0.0.0.0', port: 9 })).toMatch(/fence/);
    expect(await attempt({ host: 'localhost', port: 9 })).toMatch(/fence/);
    expect(await attempt({ host: 'localhost', port: 9, lookup: makePinnedLookup([parseIP('0.0.0.0')!]) as never })).toMatch(/fence/);
    expect(egress).toEqual(['0.0.0.0', 'dns:localhost', '0.0.0.0']);
    egress.length = 0;
  });
});

// ------------------------------------------------------------------------------------------------

describe('net-guard: parsing', () => {
  it('parses IPv4 in every notation inet_aton and the URL parser accept', () => {
    for (const s of ['127.0.0.1', '127.1', '127.0.1', '0x7f.0.0.1', '0x7F.1', '0177.0.0.1', '2130706433', '0x7f000001', '017700000001', '127.0.0.1.', '127.000.000.001']) {
      expect(Array.from(parseIPv4(s) ?? []), s).toEqual([127, 0, 0, 1]);
    }
    expect(Array.from(parseIPv4('0') ?? [])).toEqual([0, 0, 0, 0]);
    expect(Array.from(parseIPv4('4294967295') ?? [])).toEqual([255, 255, 255, 255]);
    expect(Array.from(parseIPv4('1.2.65535') ?? [])).toEqual([1, 2, 255, 255]);
    for (const bad of ['', '.', '1..2', '1.2.3.4.5', '256.1.1.1', '1.256.1.1', '4294967296', '1.2.3.256', '1.2.65536', '08.1.1.1', '0x1g.1.1.1', 'example.com', '1.2.3.4..', '-1.2.3.4', '1.2.3.4 ']) {
      expect(parseIPv4(bad), bad).toBeNull();
    }
  });

  it('parses IPv6 with ::, an IPv4 tail, brackets and zone ids, and agrees with the URL parser', () => {
    for (const s of ['::1', '0:0:0:0:0:0:0:1', '[::1]', '::0:1', '0::1']) expect(formatIP(parseIP(s)!), s).toBe('::1');
    expect(formatIP(parseIP('fe80::1%eth0')!)).toBe('fe80::1');
    expect(formatIP(parseIP('[fe80::1%25eth0]')!)).toBe('fe80::1');
    expect(formatIP(parseIP('FE80:0000::0001')!)).toBe('fe80::1');
    for (const bad of ['1::2::3', ':1:2:3:4:5:6:7', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7::8', '12345::', '::ffff:1.2.3', '::ffff:1.2.3.256', '::ffff:01.2.3.4', '::1.2.3.4:5', 'g::1', 'fe80::1%', '[::1', '::1]']) {
      expect(parseIPv6(bad), bad).toBeNull();
      expect(parseIP(bad), bad).toBeNull();
    }
    // Same canonical text as the WHATWG URL parser for a spread of spellings.
    for (const s of ['::', '::1', '::ffff:127.0.0.1', '0:0:0:0:0:ffff:127.0.0.1', '::127.0.0.1', '64:ff9b::127.0.0.1', '2001:db8:0:0:1:0:0:1', '2606:4700::1111', 'fe80::', '1::', '1:0:0:2::3', '2002:7f00:1::']) {
      expect(formatIP(parseIP(s)!), s).toBe(new URL(`http://[${s}]/`).hostname.slice(1, -1));
    }
  });

  it('compares spellings by bytes, IPv4-mapped equal to IPv4', () => {
    expect(sameAddress('127.0.0.1', '::ffff:127.0.0.1')).toBe(true);
    expect(sameAddress('::ffff:7f00:1', '127.1')).toBe(true);
    expect(sameAddress('::1', '0:0:0:0:0:0:0:1')).toBe(true);
    expect(sameAddress('127.0.0.1', '127.0.0.2')).toBe(false);
    expect(sameAddress('::1', '127.0.0.1')).toBe(false);
    expect(sameAddress('::127.0.0.1', '127.0.0.1')).toBe(false);
    expect(sameAddress('nope', 'nope')).toBe(false);
  });
});

describe('net-guard: classification', () => {
  it('allows public addresses (classification only, nothing is contacted)', () => {
    for (const ip of [
      '8.8.8.8', '1.1.1.1', '93.184.216.34', '11.0.0.1', '172.15.255.255', '172.32.0.0', '100.63.255.255', '100.128.0.0',
      '169.253.255.255', '169.255.0.0', '192.0.1.0', '192.167.255.255', '198.17.255.255', '198.20.0.0', '223.255.255.255',
      '2606:4700::1111', '2a00:1450:4001::200e', '[::ffff:8.8.8.8]', '::ffff:808:808', '64:ff9b::808:808', '64:ff9b::8.8.8.8',
      '2002:808:808::1', '::8.8.8.8', '2001:4860:4860::8888', '2001:200::1', '0x8.0x8.0x8.0x8', '134744072',
    ]) {
      expect(classifyAddress(ip), ip).toEqual({ public: true, reason: 'public' });
      expect(isPublicAddress(ip), ip).toBe(true);
    }
  });

  it('refuses every special-purpose range, in every spelling, at its edges', () => {
    const refused = [
      // IPv4
      '0.0.0.0', '0.255.255.255', '0', '10.0.0.0', '10.255.255.255', '100.64.0.0', '100.127.255.255', '127.0.0.1', '127.255.255.255',
      '127.1', '0x7f.1', '0177.0.0.1', '2130706433', '127.0.0.1.', '169.254.0.0', '169.254.169.254', '169.254.255.255',
      '172.16.0.0', '172.31.255.255', '192.0.0.0', '192.0.0.255', '192.0.2.1', '192.88.99.1', '192.168.0.0', '192.168.255.255',
      '198.18.0.0', '198.19.255.255', '198.51.100.1', '203.0.113.1', '224.0.0.0', '239.255.255.255', '240.0.0.0', '255.255.255.255',
      // IPv6
      '::', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '::ffff:7f00:1', '0:0:0:0:0:ffff:127.0.0.1', '[::ffff:169.254.169.254]',
      '::ffff:a9fe:a9fe', '::ffff:10.0.0.1', '::ffff:0.0.0.0', '::127.0.0.1', '::7f00:1', '::0.0.0.2', '::ffff:0:127.0.0.1', '::ffff:0:808:808',
      '64:ff9b::127.0.0.1', '64:ff9b::7f00:1', '64:ff9b::a9fe:a9fe', '64:ff9b:1::808:808', '64:ff9b:1:ffff::1',
      '2002:7f00:1::', '2002:a9fe:a9fe::1', '2002:c0a8:101::1', '2001:0:4136:e378:8000:63bf:80ff:fffe', '2001:0:808:808:0:0:f7f7:f7f7',
      'fc00::1', 'fd12:3456::1', 'fdff:ffff::1', 'fe80::1', 'fe80::1%eth0', '[fe80::1%25eth0]', 'febf::1', 'fec0::1', 'feff::1',
      'ff02::1', 'ff05::1:3', '2001:db8::1', '2001:db8:ffff::1', '3fff::1', '3fff:fff::1', '100::1', '100::ffff:ffff:ffff:ffff',
      '2001:10::1', '2001:1f:ffff::1', '2001:20::1', '2001:2f::1', '2001:2::1', '2001:2:0:ffff::1',
      '1::1', '4000::1', 'e000::1',
      // not addresses at all
      '', 'localhost', 'example.com', '1.2.3.4.5', '::ffff:1.2.3',
    ];
    for (const ip of refused) {
      const v = classifyAddress(ip);
      expect(v.public, `${ip} (${v.reason})`).toBe(false);
      expect(isPublicAddress(ip), ip).toBe(false);
    }
    // The reason names the embedded IPv4's class for the forms that carry one.
    expect(classifyAddress('::ffff:7f00:1').reason).toMatch(/mapped.*loopback/);
    expect(classifyAddress('64:ff9b::a9fe:a9fe').reason).toMatch(/NAT64.*link-local/);
    expect(classifyAddress('2002:7f00:1::').reason).toMatch(/6to4.*loopback/);
    expect(classifyAddress('2001:0:808:808:0:0:f7f7:f7f7').reason).toMatch(/Teredo/); // Teredo refused outright, even with public IPv4s
  });

  it('just outside the IPv6 ranges is public', () => {
    for (const ip of ['2001:db9::1', '2001:db7::1', '3ffe:ffff::1', '3fff:1000::1', '2400::1', '2001:30::1', '2001:3::1', '2001:1::1', '2001:2:1::1', '2003::1', '2064:ff9b::1']) {
      expect(classifyAddress(ip), ip).toEqual({ public: true, reason: 'public' });
    }
  });
});

// ------------------------------------------------------------------------------------------------

describe('video_url: every spelling of an inside address is refused before any connection', () => {
  let v4: Listener;
  let v6: Listener | undefined;
  beforeAll(async () => {
    v4 = await listen('127.0.0.1');
    v6 = await listen('::1').catch(() => undefined);
  });
  afterAll(async () => {
    await v4?.close();
    await v6?.close();
  });
  afterEach(() => {
    v4.connections = 0;
    if (v6) v6.connections = 0;
  });

  const dns: Record<string, string[]> = {
    'loop4.test': ['127.0.0.1'],
    'loop6.test': ['::1'],
    'mapped.test': ['::ffff:127.0.0.1'],
    'mixed.test': ['93.184.216.34', '127.0.0.1'],
    'mixed6.test': ['2606:4700::1111', 'fe80::1'],
    'metadata.test': ['169.254.169.254'],
    'nat64.test': ['64:ff9b::7f00:1'],
    'trailing.test.': ['127.0.0.1'],
    localhost: ['127.0.0.1', '::1'],
  };

  const spellings = (p: number, p6: number): string[] => [
    // IPv4 notations of loopback
    `http://127.0.0.1:${p}/v.mp4`,
    `http://127.1:${p}/v.mp4`,
    `http://0x7f.0.0.1:${p}/v.mp4`,
    `http://0x7f.1:${p}/v.mp4`,
    `http://0177.0.0.1:${p}/v.mp4`,
    `http://2130706433:${p}/v.mp4`,
    `http://0x7f000001:${p}/v.mp4`,
    `http://017700000001:${p}/v.mp4`,
    `http://0x7f.0x0.0x0.0x1:${p}/v.mp4`,
    `http://127.000.000.001:${p}/v.mp4`,
    `http://127.0.0.1.:${p}/v.mp4`,
    `http://127。0。0。1:${p}/v.mp4`,
    `http://127.0.0.2:${p}/v.mp4`,
    `http://0.0.0.0:${p}/v.mp4`,
    `http://0:${p}/v.mp4`,
    `HTTP://127.0.0.1:${p}/v.mp4`,
    `https://127.0.0.1:${p}/v.mp4`,
    // IPv6 loopback / unspecified
    `http://[::1]:${p6}/v.mp4`,
    `http://[::]:${p6}/v.mp4`,
    `http://[0:0:0:0:0:0:0:1]:${p6}/v.mp4`,
    `http://[0000:0000:0000:0000:0000:0000:0000:0001]:${p6}/v.mp4`,
    // IPv4 embedded in IPv6
    `http://[::ffff:127.0.0.1]:${p}/v.mp4`,
    `http://[::ffff:7f00:1]:${p}/v.mp4`,
    `http://[0:0:0:0:0:ffff:127.0.0.1]:${p}/v.mp4`,
    `http://[::FFFF:7F00:0001]:${p}/v.mp4`,
    `http://[::ffff:0.0.0.0]:${p}/v.mp4`,
    `http://[::127.0.0.1]:${p}/v.mp4`,
    `http://[::ffff:0:127.0.0.1]:${p}/v.mp4`,
    `http://[64:ff9b::127.0.0.1]:${p}/v.mp4`,
    `http://[64:ff9b::7f00:1]:${p}/v.mp4`,
    `http://[64:ff9b:1::7f00:1]:${p}/v.mp4`,
    `http://[2002:7f00:1::]:${p}/v.mp4`,
    `http://[2001:0:4136:e378:8000:63bf:80ff:fffe]:${p}/v.mp4`, // Teredo, client 127.0.0.1
    // link-local, ULA, site-local, multicast, documentation
    `http://[fe80::1]:${p6}/v.mp4`,
    `http://[fc00::1]:${p6}/v.mp4`,
    `http://[fd12:3456::1]:${p6}/v.mp4`,
    `http://[fec0::1]:${p6}/v.mp4`,
    `http://[ff02::1]:${p6}/v.mp4`,
    `http://[2001:db8::1]:${p6}/v.mp4`,
    `http://[::ffff:169.254.169.254]/latest/meta-data/`,
    `http://[::ffff:a9fe:a9fe]/latest/meta-data/`,
    `http://[64:ff9b::169.254.169.254]/latest/meta-data/`,
    `http://[2002:a9fe:a9fe::]/latest/meta-data/`,
    `http://169.254.169.254/latest/meta-data/`,
    `http://10.0.0.1:${p}/v.mp4`,
    `http://172.16.0.1:${p}/v.mp4`,
    `http://192.168.1.1:${p}/v.mp4`,
    `http://100.64.0.1:${p}/v.mp4`,
    `http://198.18.0.1:${p}/v.mp4`,
    `http://224.0.0.1:${p}/v.mp4`,
    `http://255.255.255.255:${p}/v.mp4`,
    // host names through the injected resolver
    `http://loop4.test:${p}/v.mp4`,
    `http://loop6.test:${p6}/v.mp4`,
    `http://mapped.test:${p}/v.mp4`,
    `http://mixed.test:${p}/v.mp4`,
    `http://mixed6.test:${p6}/v.mp4`,
    `http://metadata.test/latest/meta-data/`,
    `http://nat64.test:${p}/v.mp4`,
    `http://trailing.test.:${p}/v.mp4`,
    `http://localhost:${p}/v.mp4`,
    `http://LOCALHOST:${p}/v.mp4`,
    // user-info and delimiter tricks
    `http://example.com@127.0.0.1:${p}/v.mp4`,
    `http://user:pass@127.0.0.1:${p}/v.mp4`,
    `http://127.0.0.1:${p}#@example.com/`,
    `http://127.0.0.1:${p}?@example.com/`,
    `http://127.0.0.1:${p}\\@example.com/`,
    `http:\\\\127.0.0.1:${p}\\v.mp4`,
    `http:/127.0.0.1:${p}/v.mp4`,
    // other schemes and unparsable URLs
    'file:///etc/passwd',
    `ftp://127.0.0.1:${p}/v.mp4`,
    `gopher://127.0.0.1:${p}/_GET%20/`,
    'data:video/mp4;base64,AAAA',
    `ws://127.0.0.1:${p}/`,
    'javascript:alert(1)',
    `http://[fe80::1%25lo]:${p6}/v.mp4`,
    `http://[::ffff:127.0.0.1:${p}/v.mp4`,
    `http://127.0.0.1:99999/v.mp4`,
    'http://',
    'not a url',
  ];

  it('refuses each spelling with a 422 on body.video_url, and the loopback listeners see nothing', async () => {
    const p = v4.port;
    const p6 = v6?.port ?? v4.port;
    const table = spellings(p, p6);
    expect(table.length).toBeGreaterThanOrEqual(40);
    const calls: string[] = [];
    const policy: FetchPolicy = { allowPrivate: false, timeoutMs: 5_000, resolve: tableResolver(dns, calls) };
    const wrong: string[] = [];
    for (const url of table) {
      const file = target();
      const err = await outcome(fetchVideoToFile(url, file, policy));
      const ok =
        err instanceof ValidationError &&
        err.status === 422 &&
        err.issues.length === 1 &&
        JSON.stringify(err.issues[0].loc) === JSON.stringify(['body', 'video_url']);
      if (!ok) wrong.push(`${url} -> ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
      if (await exists(file)) wrong.push(`${url} -> wrote ${file}`);
    }
    expect(wrong).toEqual([]);
    expect(v4.connections).toBe(0);
    expect(v6?.connections ?? 0).toBe(0);
    // Every name was really put to the resolver (refused on its answers, not on something else).
    expect(new Set(calls)).toEqual(new Set(Object.keys(dns)));
  });

  it('(control) the same listeners are reachable when the guard is off, so zero above means refused', async () => {
    const policy: FetchPolicy = { allowPrivate: true, timeoutMs: 5_000, resolve: tableResolver(dns) };
    const f1 = target();
    await fetchVideoToFile(`http://[::ffff:127.0.0.1]:${v4.port}/v.mp4`, f1, policy);
    expect(await readFile(f1, 'utf8')).toBe('served-by-127.0.0.1');
    const f2 = target();
    await fetchVideoToFile(`http://0x7f.1:${v4.port}/v.mp4`, f2, policy);
    expect(await readFile(f2, 'utf8')).toBe('served-by-127.0.0.1');
    const f3 = target();
    await fetchVideoToFile(`http://mapped.test:${v4.port}/v.mp4`, f3, policy);
    expect(await readFile(f3, 'utf8')).toBe('served-by-127.0.0.1');
    expect(v4.connections).toBe(3);
    if (v6) {
      const f4 = target();
      await fetchVideoToFile(`http://[0:0:0:0:0:0:0:1]:${v6.port}/v.mp4`, f4, policy);
      expect(await readFile(f4, 'utf8')).toBe('served-by-::1');
      expect(v6.connections).toBe(1);
    }
  });
});

// ------------------------------------------------------------------------------------------------

describe('video_url: the connection goes to the address that was checked (DNS rebinding)', () => {
  let a: Listener;
  let b: Listener;
  beforeAll(async () => {
    // Same port on 127.0.0.1 and 127.0.0.2, so only the address decides who gets the connection.
    for (let attempt = 0; attempt < 20 && !b; attempt++) {
      a = await listen('127.0.0.1');
      const other = await listen('127.0.0.2', a.port).catch(() => undefined);
      if (other) b = other;
      else await a.close();
    }
    if (!b) throw new Error('could not bind 127.0.0.1 and 127.0.0.2 on one port');
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });
  afterEach(() => {
    a.connections = 0;
    b.connections = 0;
    a.hosts.length = 0;
    b.hosts.length = 0;
  });

  it('(control) 127.0.0.2 on the same port is reachable', async () => {
    const f = target();
    await fetchVideoToFile(`http://127.0.0.2:${a.port}/v.mp4`, f, { allowPrivate: true, timeoutMs: 5_000 });
    expect(await readFile(f, 'utf8')).toBe('served-by-127.0.0.2');
    expect([a.connections, b.connections]).toEqual([0, 1]);
  });

  it('resolves once and connects to the first answer, whatever the name resolves to later', async () => {
    let asked = 0;
    const rebinding: Resolver = async (host) => {
      expect(host).toBe('rebind.test');
      asked++;
      return [{ address: asked === 1 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    };
    const f = target();
    await fetchVideoToFile(`http://rebind.test:${a.port}/v.mp4`, f, { allowPrivate: true, timeoutMs: 5_000, resolve: rebinding });
    expect(await readFile(f, 'utf8')).toBe('served-by-127.0.0.1');
    expect(asked).toBe(1);
    expect([a.connections, b.connections]).toEqual([1, 0]);
    expect(a.hosts).toEqual([`rebind.test:${a.port}`]); // Host stays the name the caller gave
  });

  it('the pinned lookup answers in both callback forms, and net.connect uses it with and without autoSelectFamily', async () => {
    const lookup = makePinnedLookup([parseIP('127.0.0.1')!, parseIP('::ffff:127.0.0.1')!]);
    const one = await new Promise<unknown[]>((r) => lookup('anything.test', {}, (...args) => r(args)));
    expect(one).toEqual([null, '127.0.0.1', 4]);
    const bare = await new Promise<unknown[]>((r) => (lookup as (h: string, cb: (...a: unknown[]) => void) => void)('x.test', (...args) => r(args)));
    expect(bare).toEqual([null, '127.0.0.1', 4]);
    const all = await new Promise<unknown[]>((r) => lookup('anything.test', { all: true }, (...args) => r(args)));
    expect(all).toEqual([null, [{ address: '127.0.0.1', family: 4 }, { address: '::ffff:7f00:1', family: 6 }]]);

    const pin2 = makePinnedLookup([parseIP('127.0.0.2')!]);
    for (const autoSelectFamily of [true, false]) {
      const remote = await new Promise<string | undefined>((resolve, reject) => {
        const s = net.connect({ host: 'rebind.test', port: a.port, lookup: pin2 as never, autoSelectFamily }, () => {
          const addr = s.remoteAddress;
          s.destroy();
          resolve(addr);
        });
        s.on('error', reject);
      });
      expect(remote).toBe('127.0.0.2');
    }
    expect([a.connections, b.connections]).toEqual([0, 2]);
  });

  it('with the guard on, a name with a public and a private answer is refused without connecting', async () => {
    const calls: string[] = [];
    for (const answers of [['93.184.216.34', '127.0.0.1'], ['127.0.0.2', '93.184.216.34'], ['2606:4700::1111', '::ffff:127.0.0.1']]) {
      const err = await outcome(
        fetchVideoToFile(`http://split.test:${a.port}/v.mp4`, target(), {
          allowPrivate: false,
          timeoutMs: 5_000,
          resolve: tableResolver({ 'split.test': answers }, calls),
        }),
      );
      expect(err, answers.join(',')).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).issues[0].loc).toEqual(['body', 'video_url']);
    }
    expect(calls).toEqual(['split.test', 'split.test', 'split.test']);
    expect([a.connections, b.connections]).toEqual([0, 0]);
  });
});

// ------------------------------------------------------------------------------------------------

describe('video_url: upstream failures all read the same', () => {
  const SECRET = 'TOP-SECRET-b7f3e1';
  const servers: Listener[] = [];
  const open = async (l: Promise<Listener>) => {
    const x = await l;
    servers.push(x);
    return x;
  };
  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  it('500 with a secret body, refused port, 404, redirect, reset, non-HTTP banner, silence, DNS failure: one message', async () => {
    const s500 = await open(
      listen('127.0.0.1', 0, (_req, res) => {
        res.writeHead(500, { 'x-secret': SECRET, 'content-type': 'text/plain' });
        res.end(`internal error: ${SECRET}`);
      }),
    );
    const s404 = await open(listen('127.0.0.1', 0, (_req, res) => res.writeHead(404).end(`no such video ${SECRET}`)));
    const inside = await open(listen('127.0.0.1'));
    const s302 = await open(listen('127.0.0.1', 0, (_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${inside.port}/${SECRET}` }).end()));
    const reset = await open(listenRaw((s) => s.resetAndDestroy()));
    const banner = await open(listenRaw((s) => s.end(`SSH-2.0-OpenSSH_9.6 ${SECRET}\r\n`)));
    const silent = await open(listenRaw(() => {}));
    const closed = await listen('127.0.0.1');
    const refusedPort = closed.port;
    await closed.close();

    const policy: FetchPolicy = {
      allowPrivate: true,
      timeoutMs: 1_500,
      resolve: async (host) => {
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host} ${SECRET}`), { code: 'ENOTFOUND' });
      },
    };
    const cases: [string, string][] = [
      ['500', `http://127.0.0.1:${s500.port}/v.mp4`],
      ['refused', `http://127.0.0.1:${refusedPort}/v.mp4`],
      ['404', `http://127.0.0.1:${s404.port}/v.mp4`],
      ['302', `http://127.0.0.1:${s302.port}/v.mp4`],
      ['reset', `http://127.0.0.1:${reset.port}/v.mp4`],
      ['banner', `http://127.0.0.1:${banner.port}/v.mp4`],
      ['silence', `http://127.0.0.1:${silent.port}/v.mp4`],
      ['dns', `http://nowhere.test:${s500.port}/v.mp4`],
    ];
    const messages: string[] = [];
    for (const [what, url] of cases) {
      const err = await outcome(fetchVideoToFile(url, target(), policy));
      expect(err, what).toBeInstanceOf(UpstreamError);
      expect((err as UpstreamError).status, what).toBe(502);
      messages.push((err as Error).message);
    }
    expect(new Set(messages)).toEqual(new Set([UPSTREAM_FAILURE_MESSAGE]));
    for (const leak of [SECRET, '500', '404', '302', 'SSH', 'ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'timeout', String(s500.port), String(refusedPort), 'nowhere']) {
      expect(UPSTREAM_FAILURE_MESSAGE).not.toContain(leak);
    }
    // Each server was really reached (the failures are theirs, not the guard's), and the redirect was not followed.
    expect([s500.connections, s404.connections, s302.connections, reset.connections, banner.connections, silent.connections]).toEqual([1, 1, 1, 1, 1, 1]);
    expect(inside.connections).toBe(0);
  });

  it('size caps stay, without echoing the declared length', async () => {
    const big = await open(
      listen('127.0.0.1', 0, (_req, res) => {
        res.writeHead(200, { 'content-length': '123457' });
        res.end(Buffer.alloc(123457));
      }),
    );
    const chunked = await open(
      listen('127.0.0.1', 0, (_req, res) => {
        res.writeHead(200); // no content-length: the cap applies while streaming
        res.write(Buffer.alloc(600));
        res.end(Buffer.alloc(600));
      }),
    );
    for (const l of [big, chunked]) {
      const err = await outcome(fetchVideoToFile(`http://127.0.0.1:${l.port}/v.mp4`, target(), { allowPrivate: true, timeoutMs: 5_000, maxBytes: 1000 }));
      expect(err).toBeInstanceOf(PayloadTooLargeError);
      expect((err as Error).message).not.toContain('123457');
    }
    const ok = target();
    await fetchVideoToFile(`http://127.0.0.1:${chunked.port}/v.mp4`, ok, { allowPrivate: true, timeoutMs: 5_000, maxBytes: 1200 });
    expect((await readFile(ok)).length).toBe(1200);
  });
});

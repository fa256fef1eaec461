/**
 * Address classification for the video_url SSRF guard.
 *
 * Addresses are parsed into bytes first and classified on the bytes, never on string prefixes, so
 * every spelling of an address (IPv4 in octal/hex/short/integer form, IPv6 with or without `::`,
 * with an IPv4 tail, upper case, bracketed, with a zone id) lands in the same class. IPv6 forms that
 * carry an IPv4 address (mapped, compatible, NAT64, 6to4) are classified by that IPv4 address.
 */

export interface ParsedAddress {
  family: 4 | 6;
  /** 4 or 16 bytes, network order. */
  bytes: Uint8Array;
}

export interface AddressVerdict {
  /** True only for an address that is globally reachable unicast. */
  public: boolean;
  /** Why it is not public (or 'public'); for logs and tests, never shown to callers. */
  reason: string;
}

// ---------------------------------------------------------------------------------------------
// Parsing

/**
 * Parses an IPv4 address in any notation `inet_aton` and the WHATWG URL parser accept: one to four
 * dot-separated parts, each decimal, octal (leading 0) or hex (0x), the last part filling the
 * remaining bytes (`127.1`, `2130706433`, `0x7f.1`, `0177.0.0.1`), and one trailing dot.
 */
export function parseIPv4(input: string): Uint8Array | null {
  let parts = input.split('.');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts = parts.slice(0, -1);
  if (parts.length < 1 || parts.length > 4) return null;
  const nums: number[] = [];
  for (const p of parts) {
    const n = parseIPv4Part(p);
    if (n === null) return null;
    nums.push(n);
  }
  const last = nums[nums.length - 1];
  for (let i = 0; i < nums.length - 1; i++) if (nums[i] > 255) return null;
  if (last >= 256 ** (5 - nums.length)) return null;
  let value = last;
  for (let i = 0; i < nums.length - 1; i++) value += nums[i] * 256 ** (3 - i);
  return new Uint8Array([(value >>> 24) & 255, (value >>> 16) & 255, (value >>> 8) & 255, value & 255]);
}

function parseIPv4Part(p: string): number | null {
  if (p === '') return null;
  let digits = p;
  let radix = 10;
  if (/^0x/i.test(p)) {
    digits = p.slice(2);
    radix = 16;
    if (digits === '') return 0; // WHATWG: "0x" alone is zero
  } else if (p.length > 1 && p[0] === '0') {
    digits = p.slice(1);
    radix = 8;
  }
  const re = radix === 16 ? /^[0-9a-f]+$/i : radix === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
  if (!re.test(digits)) return null;
  const n = parseInt(digits, radix);
  // Anything above 2^32 is invalid in every position; guard before precision is lost.
  return Number.isSafeInteger(n) && n <= 0xffffffff ? n : null;
}

/** Strict dotted-decimal IPv4, as allowed at the end of an IPv6 address (`::ffff:127.0.0.1`). */
function parseDottedQuad(input: string): number[] | null {
  const parts = input.split('.');
  if (parts.length !== 4) return null;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out.push(n);
  }
  return out;
}

/**
 * Parses an IPv6 address: brackets and a zone id (`%eth0`, `%25eth0`) are stripped, `::` expands,
 * and the last 32 bits may be written as dotted-decimal IPv4.
 */
export function parseIPv6(input: string): Uint8Array | null {
  let s = input;
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  if (zone !== -1) {
    if (zone === s.length - 1) return null;
    s = s.slice(0, zone);
  }
  if (!s.includes(':')) return null;
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const parseGroups = (text: string, allowV4Tail: boolean): number[] | null => {
    if (text === '') return [];
    const groups = text.split(':');
    const out: number[] = [];
    for (let i = 0; i < groups.length; i++) {
      const g = groups[i];
      if (allowV4Tail && i === groups.length - 1 && g.includes('.')) {
        const quad = parseDottedQuad(g);
        if (!quad) return null;
        out.push((quad[0] << 8) | quad[1], (quad[2] << 8) | quad[3]);
      } else {
        if (!/^[0-9a-f]{1,4}$/i.test(g)) return null;
        out.push(parseInt(g, 16));
      }
    }
    return out;
  };
  let groups: number[];
  if (halves.length === 2) {
    const head = parseGroups(halves[0], false);
    const tail = parseGroups(halves[1], true);
    if (!head || !tail || head.length + tail.length > 7) return null;
    groups = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  } else {
    const all = parseGroups(s, true);
    if (!all || all.length !== 8) return null;
    groups = all;
  }
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 255;
  });
  return bytes;
}

/** Parses an IP address in any notation (IPv4 or IPv6, bracketed or not); null if it is not one. */
export function parseIP(input: string): ParsedAddress | null {
  const s = input.trim();
  if (s.startsWith('[')) {
    const v6 = parseIPv6(s);
    return v6 ? { family: 6, bytes: v6 } : null;
  }
  if (s.includes(':') || s.includes('%')) {
    const v6 = parseIPv6(s);
    return v6 ? { family: 6, bytes: v6 } : null;
  }
  const v4 = parseIPv4(s);
  return v4 ? { family: 4, bytes: v4 } : null;
}

/** Canonical text for a parsed address (dotted quad; RFC 5952-style IPv6), as handed to connect(). */
export function formatIP(addr: ParsedAddress): string {
  const b = addr.bytes;
  if (addr.family === 4) return Array.from(b).join('.');
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((b[i] << 8) | b[i + 1]);
  // Longest run of at least two zero groups becomes '::'.
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestLen < 2) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/** Two spellings of the same address? (Compares bytes; IPv4 vs IPv4-mapped IPv6 count as equal.) */
export function sameAddress(a: string, b: string): boolean {
  const pa = parseIP(a);
  const pb = parseIP(b);
  if (!pa || !pb) return false;
  const norm = (p: ParsedAddress): string => {
    const x = p.bytes;
    if (p.family === 6 && x.slice(0, 10).every((v) => v === 0) && x[10] === 0xff && x[11] === 0xff) return x.slice(12).join('.');
    return Array.from(x).join(p.family === 4 ? '.' : ',');
  };
  return norm(pa) === norm(pb);
}

// ---------------------------------------------------------------------------------------------
// Classification

/** [network bytes, prefix length, reason] */
type Range = [number[], number, string];

const V4_BLOCKED: Range[] = [
  [[0, 0, 0, 0], 8, 'this network (0/8)'],
  [[10, 0, 0, 0], 8, 'private (10/8)'],
  [[100, 64, 0, 0], 10, 'shared address space / CGNAT (100.64/10)'],
  [[127, 0, 0, 0], 8, 'loopback (127/8)'],
  [[169, 254, 0, 0], 16, 'link-local (169.254/16)'],
  [[172, 16, 0, 0], 12, 'private (172.16/12)'],
  [[192, 0, 0, 0], 24, 'IETF protocol assignments (192.0.0/24)'],
  [[192, 0, 2, 0], 24, 'documentation (192.0.2/24)'],
  [[192, 88, 99, 0], 24, '6to4 relay anycast (192.88.99/24)'],
  [[192, 168, 0, 0], 16, 'private (192.168/16)'],
  [[198, 18, 0, 0], 15, 'benchmarking (198.18/15)'],
  [[198, 51, 100, 0], 24, 'documentation (198.51.100/24)'],
  [[203, 0, 113, 0], 24, 'documentation (203.0.113/24)'],
  [[224, 0, 0, 0], 4, 'multicast (224/4)'],
  [[240, 0, 0, 0], 4, 'reserved / broadcast (240/4)'],
];

const V6_BLOCKED: Range[] = [
  [[0xfc], 7, 'unique local (fc00::/7)'],
  [[0xfe, 0xc0], 10, 'site-local (fec0::/10)'],
  [[0xfe, 0x80], 10, 'link-local (fe80::/10)'],
  [[0xff], 8, 'multicast (ff00::/8)'],
  [[0x20, 0x01, 0x0d, 0xb8], 32, 'documentation (2001:db8::/32)'],
  [[0x3f, 0xff], 20, 'documentation (3fff::/20)'],
  [[0x01, 0x00, 0, 0, 0, 0, 0, 0], 64, 'discard-only (100::/64)'],
  [[0x20, 0x01, 0x00, 0x10], 28, 'ORCHID (2001:10::/28)'],
  [[0x20, 0x01, 0x00, 0x20], 28, 'ORCHIDv2 (2001:20::/28)'],
  [[0x20, 0x01, 0x00, 0x02, 0, 0], 48, 'benchmarking (2001:2::/48)'],
  [[0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48, 'NAT64 local-use (64:ff9b:1::/48)'],
  // Teredo is refused outright: the tunnel is set up by whoever runs the Teredo client, the
  // addresses it embeds (server, obfuscated client) are not where the packets go, and no video host
  // is reached over it.
  [[0x20, 0x01, 0x00, 0x00], 32, 'Teredo (2001::/32)'],
];

function inRange(bytes: Uint8Array, [net, len]: Range): boolean {
  for (let bit = 0; bit < len; bit += 8) {
    const take = Math.min(8, len - bit);
    const mask = (0xff << (8 - take)) & 0xff;
    if ((bytes[bit / 8] & mask) !== ((net[bit / 8] ?? 0) & mask)) return false;
  }
  return true;
}

function classifyV4(b: Uint8Array): AddressVerdict {
  for (const r of V4_BLOCKED) if (inRange(b, r)) return { public: false, reason: r[2] };
  return { public: true, reason: 'public' };
}

function embedded(b: Uint8Array, from: number, what: string): AddressVerdict {
  const v = classifyV4(b.slice(from, from + 4));
  return v.public ? v : { public: false, reason: `${what} of ${v.reason}` };
}

function classifyV6(b: Uint8Array): AddressVerdict {
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  if (zero(0, 16)) return { public: false, reason: 'unspecified (::)' };
  if (zero(0, 15) && b[15] === 1) return { public: false, reason: 'loopback (::1)' };
  // ::ffff:a.b.c.d — IPv4-mapped
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return embedded(b, 12, 'IPv4-mapped form');
  // ::ffff:0:a.b.c.d — IPv4-translated (SIIT): refused outright, only meaningful inside a translator
  if (zero(0, 8) && b[8] === 0xff && b[9] === 0xff && zero(10, 12)) return { public: false, reason: 'IPv4-translated (::ffff:0:0:0/96)' };
  // ::a.b.c.d — IPv4-compatible (deprecated)
  if (zero(0, 12)) return embedded(b, 12, 'IPv4-compatible form');
  // 64:ff9b::a.b.c.d — NAT64 well-known prefix
  if (inRange(b, [[0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0], 96, ''])) return embedded(b, 12, 'NAT64 form');
  for (const r of V6_BLOCKED) if (inRange(b, r)) return { public: false, reason: r[2] };
  // 2002:a.b.c.d::/48 — 6to4
  if (b[0] === 0x20 && b[1] === 0x02) return embedded(b, 2, '6to4 form');
  // Everything else outside 2000::/3 (global unicast) is reserved or unassigned.
  if ((b[0] & 0xe0) !== 0x20) return { public: false, reason: 'not global unicast (outside 2000::/3)' };
  return { public: true, reason: 'public' };
}

/** Classifies an address in any notation; anything that does not parse is not public. */
export function classifyAddress(input: string | ParsedAddress): AddressVerdict {
  const addr = typeof input === 'string' ? parseIP(input) : input;
  if (!addr) return { public: false, reason: 'not an IP address' };
  return addr.family === 4 ? classifyV4(addr.bytes) : classifyV6(addr.bytes);
}

export function isPublicAddress(input: string): boolean {
  return classifyAddress(input).public;
}

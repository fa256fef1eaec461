/**
 * The S3 store's Signature V4 signer against AWS's own test suite (awslabs/aws-c-auth,
 * `../shared/conformance/aws-sigv4`, 38 cases; README there). Each case is a raw HTTP request, its
 * context (credentials, region, service, time, whether the path is normalized, whether the body is
 * signed) and the expected canonical request, string to sign and Authorization header.
 *
 * The signer is called as the store calls it (`S3BlobStore.send`): the path URI-encoded once with
 * slashes kept, the query as decoded name/value pairs, every header of the request plus
 * `x-amz-date`, `x-amz-content-sha256` when the body is signed and `x-amz-security-token` when the
 * credentials carry one. Header signing only: the store never presigns URLs (the suite's `query-*`
 * files are not used).
 *
 * Which cases: all but one. The six `*-normalized` cases whose path has dot segments or repeated
 * slashes follow the generic services' rule, so they run with `normalizePath` (S3 itself signs the
 * path as sent: their `*-unnormalized` twins are the S3 mode). `post-sts-header-after` adds the
 * session token after signing (`omit_session_token`), which the store never does: it signs its
 * token, as `post-sts-header-before` and `get-vanilla-with-session-token` check.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { signV4Steps, uriEncode } from '../../src/store/s3-blobs.js';
import { requireSharedData, repoRoot } from '../helpers/clips.js';

const suiteDir = path.resolve(repoRoot, '../shared/conformance/aws-sigv4');
const have = requireSharedData([suiteDir], 'the AWS SigV4 test suite');

interface Context {
  credentials: { access_key_id: string; secret_access_key: string; token?: string };
  normalize: boolean;
  region: string;
  service: string;
  sign_body: boolean;
  timestamp: string;
  omit_session_token?: boolean;
}

interface RawRequest {
  method: string;
  path: string;
  query: [string, string][];
  headers: [string, string][];
  body: string;
}

/** Parses `request.txt`: request line, headers (a line that starts with white space continues the previous one), body. */
function parseRequest(text: string): RawRequest {
  const [head, ...rest] = text.split('\n\n');
  const [requestLine, ...lines] = head!.split('\n');
  const m = /^(\S+) (.*) HTTP\/1\.1$/.exec(requestLine!);
  if (!m) throw new Error(`bad request line: ${requestLine}`);
  const target = m[2]!;
  const q = target.indexOf('?');
  const rawPath = q < 0 ? target : target.slice(0, q);
  const query: [string, string][] =
    q < 0
      ? []
      : target
          .slice(q + 1)
          .split('&')
          .filter((p) => p !== '')
          .map((p) => {
            const eq = p.indexOf('=');
            const [k, v] = eq < 0 ? [p, ''] : [p.slice(0, eq), p.slice(eq + 1)];
            return [decodeURIComponent(k), decodeURIComponent(v)];
          });
  const headers: [string, string][] = [];
  for (const line of lines.filter((l) => l !== '')) {
    if (/^\s/.test(line) && headers.length > 0) headers[headers.length - 1]![1] += `\n${line}`;
    else {
      const colon = line.indexOf(':');
      headers.push([line.slice(0, colon), line.slice(colon + 1)]);
    }
  }
  // The store sends its path URI-encoded once, slashes kept (S3's rule: encoded once, not normalized).
  return { method: m[1]!, path: uriEncode(rawPath, true), query, headers, body: rest.join('\n\n') };
}

const cases = have ? readdirSync(suiteDir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort() : [];
const NOT_AS_THE_STORE_SIGNS = new Set(['post-sts-header-after']);
const applicable = cases.filter((c) => !NOT_AS_THE_STORE_SIGNS.has(c));

describe.skipIf(!have)('Signature V4: the AWS test suite, as the S3 store signs', () => {
  it('has the whole suite (38 cases, 37 as the store signs)', () => {
    expect(cases).toHaveLength(38);
    expect(applicable).toHaveLength(37);
    for (const c of ['get-header-key-duplicate', 'get-header-value-multiline', 'post-x-www-form-urlencoded', 'post-x-www-form-urlencoded-parameters']) {
      expect(applicable).toContain(c);
    }
  });

  it.each(applicable)('%s', (name) => {
    const read = (f: string) => readFileSync(path.join(suiteDir, name, f), 'utf8');
    const ctx = JSON.parse(read('context.json')) as Context;
    const req = parseRequest(read('request.txt'));
    const amzDate = ctx.timestamp.replace(/[-:]/g, '');
    const payloadHash = createHash('sha256').update(req.body).digest('hex');
    const headers: [string, string][] = [...req.headers, ['x-amz-date', amzDate]];
    if (ctx.sign_body) headers.push(['x-amz-content-sha256', payloadHash]);
    if (ctx.credentials.token && !ctx.omit_session_token) headers.push(['x-amz-security-token', ctx.credentials.token]);
    const segmentsMoved = ctx.normalize && /\/\.{1,2}(\/|$)|\/\//.test(req.path);
    const steps = signV4Steps(
      {
        method: req.method,
        path: req.path,
        query: req.query,
        headers,
        payloadHash,
        amzDate,
        region: ctx.region,
        service: ctx.service,
        normalizePath: segmentsMoved,
      },
      { accessKeyId: ctx.credentials.access_key_id, secretAccessKey: ctx.credentials.secret_access_key, sessionToken: ctx.credentials.token },
    );
    expect(steps.canonicalRequest).toBe(read('header-canonical-request.txt'));
    expect(steps.stringToSign).toBe(read('header-string-to-sign.txt'));
    const expectedAuth = /^Authorization:(.*)$/m.exec(read('header-signed-request.txt'))![1];
    expect(steps.authorization).toBe(expectedAuth);
    expect(steps.authorization.endsWith(`Signature=${read('header-signature.txt').trim()}`)).toBe(true);
  });
});

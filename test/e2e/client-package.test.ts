/**
 * `vidembed/client` as a Node program uses it (issue 34): `import { VidembedClient } from
 * 'vidembed/client'` resolves through package.json `exports` to the built client and its
 * declarations; the README's example compiles (tsc, strict) and runs against a real server; typed
 * requests are checked by the compiler (a wrong path parameter or body field does not compile).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/clips.js';
import { http, startTestServer, type TestServer } from '../helpers/server.js';

const TSC = path.join(repoRoot, 'node_modules/typescript/bin/tsc');

/** The README's example: the TypeScript block between the client-example markers. */
function readmeExample(): string {
  const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  const m = /<!-- client-example[^>]*-->\s*```ts\n([\s\S]*?)```\s*<!-- \/client-example -->/.exec(readme);
  if (!m) throw new Error('README.md has no client example between <!-- client-example --> markers');
  return m[1];
}

const TYPED = `import { VidembedClient, ValidationError, type OperationResponse, type SearchResponse } from 'vidembed/client';
const client = new VidembedClient({ baseUrl: process.env.VIDEMBED_BASE_URL!, apiKey: process.env.VIDEMBED_API_KEY, retries: 0 });
const created = await client.request('createCollection', { body: { name: 'typed', description: 'from a program' } });
const id: string = created.collection_id;
const hook: OperationResponse<'createWebhook'> = await client.request('createWebhook', { body: { url: 'https://hooks.example.invalid/in', events: ['video.processed'] } });
const secret: string = hook.secret;
const found: SearchResponse = await client.search(id, { text: 'anything', top_k: 3 });
let issue = '';
try {
  await client.request('searchCollection', { params: { collection_id: id }, body: { text: 'x', top_k: 0 } });
} catch (err) {
  if (err instanceof ValidationError) issue = err.issues[0].loc.join('.');
}
console.log(JSON.stringify({ id, secret: secret.startsWith('whsec_'), results: found.results.length, issue }));
`;

const WRONG = `import { VidembedClient } from 'vidembed/client';
const client = new VidembedClient({ baseUrl: 'http://127.0.0.1:1' });
await client.request('getVideo', { params: { videoId: 'x' } });
await client.request('createCollection', { body: { title: 'no such field' } });
await client.request('createWebhook', { body: { url: 'https://x.example', events: ['video.deleted'] } });
await client.request('noSuchOperation', {});
`;

describe('vidembed/client from a program', () => {
  let dir: string;
  let s: TestServer;

  const tsconfig = (name: string, files: string[]) =>
    writeFileSync(
      path.join(dir, name),
      JSON.stringify({
        compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, outDir: 'out', types: ['node'], skipLibCheck: false, rootDir: '.' },
        files,
      }),
    );
  const tsc = (project: string) => spawnSync(process.execPath, [TSC, '-p', path.join(dir, project)], { encoding: 'utf8', cwd: dir });

  beforeAll(async () => {
    expect(existsSync(path.join(repoRoot, 'dist/src/client/index.d.ts')), 'run npm run build first (it builds the declarations)').toBe(true);
    // Inside the package, so `vidembed/client` resolves by the package's own name (as it does for a dependency).
    dir = path.join(repoRoot, 'scratch', `client-consumer-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'example.ts'), readmeExample());
    writeFileSync(path.join(dir, 'typed.ts'), TYPED);
    writeFileSync(path.join(dir, 'wrong.ts'), WRONG);
    tsconfig('tsconfig.json', ['example.ts', 'typed.ts']);
    tsconfig('tsconfig.wrong.json', ['wrong.ts']);
    s = await startTestServer();
    expect((await http(s.url, 'POST', '/collections', { key: s.key, json: { name: 'demo' } })).status).toBe(201);
  });
  afterAll(async () => {
    await s?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("the README's example and typed requests compile against the package's declarations", () => {
    const r = tsc('tsconfig.json');
    expect(r.status, r.stdout + r.stderr).toBe(0);
  });

  it('a wrong path parameter, body field, enum value or operation does not compile', () => {
    const r = tsc('tsconfig.wrong.json');
    expect(r.status).not.toBe(0);
    const errors = r.stdout.split('\n').filter((l) => l.includes('error TS'));
    expect(errors.map((l) => /wrong\.ts\((\d+),/.exec(l)?.[1]).filter(Boolean).map(Number).sort()).toEqual(expect.arrayContaining([3, 4, 5, 6]));
    expect(r.stdout).toContain('videoId');
    expect(r.stdout).toContain('video.deleted');
  });

  it('runs against a real server: the README example, typed requests, the same errors', () => {
    const env = { ...process.env, VIDEMBED_BASE_URL: s.url, VIDEMBED_API_KEY: s.key };
    const example = spawnSync(process.execPath, [path.join(dir, 'out/example.js')], { encoding: 'utf8', env });
    expect(example.status, example.stderr).toBe(0);
    expect(example.stdout).toContain('0 processed video(s)');
    expect(example.stdout).toContain('not found, as expected');
    const typed = spawnSync(process.execPath, [path.join(dir, 'out/typed.js')], { encoding: 'utf8', env });
    expect(typed.status, typed.stderr).toBe(0);
    expect(JSON.parse(typed.stdout)).toMatchObject({ secret: true, results: 0, issue: 'body.top_k' });
  });
});

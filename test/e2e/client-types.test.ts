/**
 * The typed client as a consumer's program sees it: a program outside the repository imports
 * `vidembed/client` through the package's exports (its built declarations, dist/src/client) and is
 * compiled by tsc (strict, NodeNext). It holds the README's example, and `request(operationId, …)`
 * calls whose types must be right: a right call compiles, and each wrong one is an error at the line
 * marked `@ts-expect-error` (tsc fails on a marked line that compiles). Before OperationTypes, the
 * schema-derived types of `request()` stopped a consumer's compiler with TS2589/TS2590.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { removeDir, tempDir } from '../helpers/clips.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

/** The README's TypeScript example of the typed client (the code block after "**A typed client.**"). */
function readmeExample(): string {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const from = readme.indexOf('**A typed client.**');
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(from));
  if (from < 0 || !block) throw new Error('README.md has no typed-client example');
  return block[1];
}

const REQUESTS = `import { VidembedClient, type OperationTypes } from 'vidembed/client';
const client = new VidembedClient({ baseUrl: 'http://127.0.0.1:8080' });
const r = await client.request('searchCollection', { params: { collection_id: 'demo' }, body: { text: 'a dog', top_k: 5 } });
for (const h of r.results) console.log(h.filename.toUpperCase(), h.start.toFixed(1), h.confidence_label);
const v = await client.request('getVideo', { params: { video_id: 'vid_1' } });
console.log(v.filename);
const list: OperationTypes['listCollections']['response'] = await client.request('listCollections');
console.log(list.length);
// @ts-expect-error a body field of the wrong type
await client.request('searchCollection', { params: { collection_id: 'demo' }, body: { text: 5 } });
// @ts-expect-error a hit's filename is a string
const n: number = r.results[0].filename;
// @ts-expect-error getVideo needs its video_id
await client.request('getVideo', { params: {} });
// @ts-expect-error no such operation
await client.request('noSuchOperation', {});
console.log(n);
`;

describe('vidembed/client in a consumer program', () => {
  const dir = tempDir('client-types');
  afterAll(() => removeDir(dir));

  it('compiles the README example and typed request() calls against the package declarations; wrong calls are type errors', async () => {
    mkdirSync(path.join(dir, 'node_modules'), { recursive: true });
    symlinkSync(ROOT, path.join(dir, 'node_modules', 'vidembed'));
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module', private: true }));
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', noEmit: true, types: ['node'], typeRoots: [path.join(ROOT, 'node_modules/@types')] },
        files: ['readme.ts', 'requests.ts'],
      }),
    );
    writeFileSync(path.join(dir, 'readme.ts'), readmeExample());
    writeFileSync(path.join(dir, 'requests.ts'), REQUESTS);
    const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
    const out = await run(process.execPath, [tsc, '-p', dir], { cwd: dir }).then(
      () => '',
      (err: { stdout?: string; stderr?: string }) => `${err.stdout ?? ''}${err.stderr ?? ''}` || 'tsc failed',
    );
    expect(out).toBe('');
  }, 300_000);
});

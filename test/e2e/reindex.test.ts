/**
 * Only what changed runs again, as a user does it with the CLI and the real models: clips ingested
 * without the ImageNet classifier; `models pull imagenet-mobilenet-v2`; `collection reindex
 * --wait` runs ImageNet on each video's stored keyframes, and the vectors and keywords from the
 * facts — no decode, perception and speech untouched — and the segments come out as a fresh ingest
 * with the model makes them (facts equal, vectors within 1e-5). Needs ../shared (the classifier's
 * files and eval clips): skipped loudly without it, failed under CI.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/index.js';
import { runCli } from '../helpers/cli.js';
import { evalVideo, isCI, removeDir, requireSharedData, sharedModelsDir, tempDir } from '../helpers/clips.js';

const SHARED = path.join(sharedModelsDir, 'imagenet-mobilenet-v2');
const CLIPS = ['node-opencv__motion.mov', 'pd-extendedview__diver.mov'];
const have = isCI || requireSharedData([path.join(SHARED, 'mobilenet_v2_1.0_224_quant.tflite'), ...CLIPS.map((c) => evalVideo(c))], 'the ImageNet model and eval clips in ../shared');

describe.skipIf(!have)('reindex after a model pull', () => {
  let dir: string;
  let env: Record<string, string>;

  beforeAll(() => {
    dir = tempDir('vidembed-e2e-reindex-');
    const models = path.join(dir, 'models');
    mkdirSync(models, { recursive: true });
    env = { VIDEMBED_HOME: path.join(dir, 'home'), VIDEMBED_MODELS_DIR: models, VIDEMBED_WORKER_IDLE_MS: '3000' };
  });

  afterAll(() => removeDir(dir));

  it('runs only ImageNet and what derives from it, on the stored keyframes, and gives what a fresh ingest gives', async () => {
    const ok = async (args: string[]) => {
      const r = await runCli(args, env, 600_000);
      expect(r.code, `${args.join(' ')}\n${r.stderr}`).toBe(0);
      return r;
    };
    await ok(['collection', 'create', 'before']);
    const files = CLIPS.map((c) => evalVideo(c));
    const first = await ok(['upload', ...files, '--collection', 'before', '--wait', '--json']);
    const ids = (first.json as Array<{ video_id: string }>).map((x) => x.video_id);
    const shown = await ok(['video', 'show', ids[0], '--json']);
    expect(shown.json.analysis.imagenet).toMatchObject({ status: 'skipped', reason: expect.stringMatching(/not installed/) });

    await ok(['models', 'pull', 'imagenet-mobilenet-v2', '--from', SHARED]);
    const list = await ok(['collection', 'list', '--json']);
    expect(list.json.find((c: { name: string }) => c.name === 'before').needs_reindex).toBe(true);

    const re = await ok(['collection', 'reindex', 'before', '--wait', '--json']);
    expect(re.json).toMatchObject({ queued: 2, decodes: 0, failed: 0, capabilities: { imagenet: 2, embedding: 2, keywords: 2 } });
    expect(Object.keys(re.json.capabilities).sort()).toEqual(['embedding', 'imagenet', 'keywords']);
    for (const id of ids) {
      const d = (await ok(['video', 'show', id, '--json'])).json;
      expect(d.status).toBe('processed');
      expect(d.analysis.imagenet).toMatchObject({ status: 'done' });
      expect(d.segments.some((s: { facts: Record<string, unknown> }) => 'imagenet' in s.facts)).toBe(true);
    }
    expect((await ok(['collection', 'list', '--json'])).json.find((c: { name: string }) => c.name === 'before').needs_reindex).toBe(false);

    // A fresh ingest of the same clips with the model installed.
    await ok(['collection', 'create', 'fresh']);
    const second = await ok(['upload', ...files, '--collection', 'fresh', '--wait', '--json']);
    const freshIds = (second.json as Array<{ video_id: string }>).map((x) => x.video_id);

    const store = Store.open(path.join(env.VIDEMBED_HOME, 'vidembed.db'));
    try {
      for (const [k, id] of ids.entries()) {
        const a = store.segments.listForVideo(id);
        const b = store.segments.listForVideo(freshIds[k]);
        expect(a.map((s) => [s.idx, s.start, s.end])).toEqual(b.map((s) => [s.idx, s.start, s.end]));
        const va = store.segments.vectors(512, a.map((s) => s.id));
        const vb = store.segments.vectors(512, b.map((s) => s.id));
        for (const [i, s] of a.entries()) {
          const facts = (j: string | null) => {
            const all = JSON.parse(j ?? '{}') as Record<string, { facts: unknown }>;
            return Object.fromEntries(Object.entries(all).map(([n, o]) => [n, o.facts]));
          };
          expect(facts(s.facts_json), `${CLIPS[k]} segment ${i}`).toEqual(facts(b[i].facts_json));
          expect(s.description).toBe(b[i].description);
          expect(s.tags_json).toBe(b[i].tags_json);
          const x = va.get(s.id)!;
          const y = vb.get(b[i].id)!;
          let most = 0;
          for (let d = 0; d < x.length; d++) most = Math.max(most, Math.abs(x[d] - y[d]));
          expect(most, `${CLIPS[k]} segment ${i}: largest difference of a vector's component`).toBeLessThan(1e-5);
        }
      }
    } finally {
      store.close();
    }
  }, 1_200_000);
});

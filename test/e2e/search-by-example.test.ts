import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalEngine } from '../../src/runtime/engine.js';
import { ClipEmbedder } from '../../src/embedders/clip.js';
import { getEmbedder } from '../../src/embedders/registry.js';
import { loadCatalog } from '../../eval/catalog.js';
import { CROP_SHIFT_CHANGE, evaluateImageQueries, evaluateLike } from '../../eval/example-queries.js';
import { ensureLibrary } from '../../eval/search-quality.js';
import { inHalf } from '../../eval/split.js';
import { evalDir, removeDir, requireSharedData, tempDir } from '../helpers/clips.js';
import { writeTinyClip } from '../helpers/tiny-clip.js';

/**
 * Pictures and moments as queries through the CLIP path: the query picture goes through the vision
 * tower, as keyframes do at ingest. Real CLIP weights cannot be downloaded here, so the model is the
 * generated CLIP-shaped one (test/helpers/tiny-clip.ts), whose vector is the picture's three mean
 * colour channels: it cannot tell a dog from a cat, only colour casts apart. The gate is therefore
 * far below the perception tier's (test/e2e/search-quality.test.ts) but far above chance; it shows
 * the plumbing ranks by the picture's own pixels. Check half of ../shared/eval only.
 *
 * The geometric check of a picture query (src/search/picture-check.ts: keypoints of the query and
 * of the top candidates' stored keyframes) does not depend on the embedder: measured here against
 * the embedding alone (`pictureCheck: false`) on the same queries, the milder change and issue 29's
 * 70 % crop with its colours shifted.
 */
describe('search by example with a CLIP-shaped model (check half)', () => {
  const dir = tempDir('vidembed-e2e-example-clip-');
  afterAll(() => removeDir(dir));

  it('ranks an item first by a changed picture of it for many queries, and like finds re-encoded originals', async () => {
    requireSharedData([evalDir], 'the shared evaluation set');
    const rows = inHalf(loadCatalog(evalDir), 'check');
    const models = path.join(dir, 'models');
    const tiny = writeTinyClip(path.join(models, 'clip-tiny-test'));
    for (const f of ['vision_model_quantized.onnx', 'text_model_quantized.onnx']) copyFileSync(path.join(tiny.dir, 'onnx', f), path.join(models, 'clip-tiny-test', f));
    const clip = new ClipEmbedder({ manifest: tiny.manifest, modelsDir: models });
    const home = path.join(dir, 'home');
    mkdirSync(home, { recursive: true });
    const engine = new LocalEngine({ home, embedderFor: (id) => (id === clip.id ? clip : getEmbedder(id)) });
    try {
      const id = await ensureLibrary(engine, rows, 'check', { home, model: clip.id });
      const queries = path.join(home, 'queries');
      const pictures = await evaluateImageQueries(engine, id, rows, queries);
      const embeddingAlone = await evaluateImageQueries(engine, id, rows, queries, { pictureCheck: false });
      // Issue 29: a 70 % crop, colour-shifted, of photos — the embedding alone, then with the geometric check.
      const photos = rows.filter((r) => r.kind === 'photo');
      const cropBefore = await evaluateImageQueries(engine, id, photos, queries, { change: CROP_SHIFT_CHANGE, pictureCheck: false });
      const cropAfter = await evaluateImageQueries(engine, id, photos, queries, { change: CROP_SHIFT_CHANGE });
      const likes = await evaluateLike(engine, id, rows.filter((r) => r.kind === 'photo').slice(0, 3), path.join(home, 'copies'));
      const hits = (q: { ranks: Array<{ rank: number }> }) => q.ranks.filter((r) => r.rank === 1).length;
      console.log(
        `tiny CLIP, pictures as queries, check half: R@1 ${pictures.recallAt1} (embedding alone ${embeddingAlone.recallAt1}, chance ${pictures.chanceAt1}); ` +
          `photos cropped 70 % + colour shift: R@1 ${hits(cropBefore)}/${photos.length} → ${hits(cropAfter)}/${photos.length} (seen on ${cropAfter.seenFirst}); like ranks ${likes.map((l) => l.rank).join(', ')}`,
      );
      expect(pictures.n).toBe(rows.length);
      expect(pictures.recallAt1).toBeGreaterThanOrEqual(TINY_CLIP_PICTURE_R1);
      // The geometric check beats the embedding alone on the same queries (it can fail: a check
      // that found nothing, or found wrong copies, leaves these equal or lower).
      expect(pictures.recallAt1).toBeGreaterThan(embeddingAlone.recallAt1);
      expect(hits(cropAfter)).toBeGreaterThan(hits(cropBefore));
      // Every first result found this way says what kind of evidence found it.
      expect(cropAfter.seenFirst).toBe(hits(cropAfter));
      for (const l of likes) {
        expect(l.rank, l.item).toBe(1);
        expect(l.selfReturned, l.item).toBe(false);
      }
    } finally {
      await engine.close();
      await clip.dispose();
    }
    // Four passes of queries (two with the check) after the ingest.
  }, 600_000);
});

// Set from the tuning half (R@1 8/34 = 0.235 with this model; chance 1/34) before the check half
// was measured: at least four times chance (1/27 = 0.037).
const TINY_CLIP_PICTURE_R1 = 0.15;

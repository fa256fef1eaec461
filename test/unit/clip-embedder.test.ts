import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelError, ValidationError } from '../../src/api/errors.js';
import type { Frame } from '../../src/media/types.js';
import { ClipEmbedder, pickEmbedsOutput, registerClipModels } from '../../src/embedders/clip.js';
import type { Embedder } from '../../src/embedders/types.js';
import { ModelManager } from '../../src/models/manager.js';
import { loadManifests } from '../../src/models/manifest.js';
import { OTHER_TOKEN_WEIGHT, writeTinyClip, type TinyClip } from '../helpers/tiny-clip.js';

let tmp: string;
let modelsDir: string;
let tiny: TinyClip;
let clip: ClipEmbedder;

const solid = (rgb: [number, number, number], t = 0, w = 400, h = 224): Frame => {
  const data = new Uint8Array(w * h * 3);
  for (let i = 0; i < data.length; i += 3) data.set(rgb, i);
  return { t, width: w, height: h, data };
};
const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i], 0);
const norm = (a: Float32Array) => Math.sqrt(dot(a, a));
const COLOURS = { red: [255, 0, 0], green: [0, 255, 0], blue: [0, 0, 255] } as const;

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'vidembed-clip-emb-'));
  modelsDir = path.join(tmp, 'models');
  tiny = writeTinyClip(path.join(tmp, 'src'));
  const m = new ModelManager({ dir: modelsDir, manifests: [tiny.manifest] });
  await m.pull(tiny.manifest.id, { from: tiny.dir });
  await m.close();
  clip = new ClipEmbedder({ manifest: tiny.manifest, modelsDir, batchSize: 4 });
  await clip.load();
});
afterAll(async () => {
  await clip?.dispose();
  rmSync(tmp, { recursive: true, force: true });
});

describe('ClipEmbedder on a generated CLIP-shaped model', () => {
  it('identity from the manifest', () => {
    expect(clip.id).toBe('clip-tiny-test');
    expect(clip.dim).toBe(512);
    expect(clip.frameMaxSide).toBe(400);
  });

  it('loading a model that is not pulled fails with the pull hint', async () => {
    const e = new ClipEmbedder({ manifest: { ...tiny.manifest, id: 'clip-vit-b32' }, modelsDir: path.join(tmp, 'empty') });
    await expect(e.load()).rejects.toThrow(ModelError);
    await expect(e.load()).rejects.toThrow('model clip-vit-b32 is not installed: run `vidembed models pull clip-vit-b32`');
  });

  it('solid colour frames match their colour word best', async () => {
    const words = await Promise.all((['red', 'green', 'blue'] as const).map(async (w) => [w, (await clip.embedText(w)).vector] as const));
    for (const [name, rgb] of Object.entries(COLOURS)) {
      const seg = await clip.embedSegment([solid([...rgb] as [number, number, number], 0), solid([...rgb] as [number, number, number], 1)], { start: 0, end: 2 });
      expect(norm(seg.vector)).toBeCloseTo(1, 5);
      const scores = words.map(([w, v]) => [w, dot(seg.vector, v)] as const).sort((a, b) => b[1] - a[1]);
      expect(scores[0][0]).toBe(name);
      expect(scores[0][1]).toBeGreaterThan(0.5);
      expect(scores[1][1]).toBeLessThan(0);
      expect(seg.description).toBe('clip embedding of 2 frames');
      expect(seg.details).toMatchObject({ model: 'clip-tiny-test', frames: 2, frame_times: [0, 1] });
    }
    const car = (await clip.embedText('A photo of a RED car')).vector;
    const redFrame = (await clip.embedFrames([solid([220, 20, 30])]))[0];
    const blueFrame = (await clip.embedFrames([solid([20, 30, 220])]))[0];
    expect(dot(redFrame, car)).toBeGreaterThan(dot(blueFrame, car));
  });

  it('image vector = the normalised CLIP channel means, read from the image_embeds output', async () => {
    const [v] = await clip.embedFrames([solid([255, 0, 0], 0, 1280, 720)]);
    const m = [(1 - 0.48145466) / 0.26862954, (0 - 0.4578275) / 0.26130258, (0 - 0.40821073) / 0.27577711];
    const n = Math.hypot(...m);
    // (4 places: ReduceMean sums 50,176 float32 values)
    expect(v[0]).toBeCloseTo(m[0] / n, 4);
    expect(v[1]).toBeCloseTo(m[1] / n, 4);
    expect(v[2]).toBeCloseTo(m[2] / n, 4);
    expect(v.slice(3).every((x) => x === 0)).toBe(true);
  });

  it('text vector uses input_ids + attention_mask (padding masked out)', async () => {
    const r = await clip.embedText('red');
    expect(r.truncated).toBe(false);
    expect(r.vector).toHaveLength(512);
    // BOS + EOS contribute OTHER_TOKEN_WEIGHT each on axis 3; the 74 pads are masked.
    const n = Math.hypot(1, 2 * OTHER_TOKEN_WEIGHT);
    expect(r.vector[0]).toBeCloseTo(1 / n, 5);
    expect(r.vector[3]).toBeCloseTo((2 * OTHER_TOKEN_WEIGHT) / n, 5);
  });

  it('a text model without attention_mask is fed input_ids only', async () => {
    const dir = path.join(tmp, 'nomask');
    const t2 = writeTinyClip(path.join(dir, 'src'), { id: 'clip-nomask', attentionMask: false });
    const m = new ModelManager({ dir: path.join(dir, 'models'), manifests: [t2.manifest] });
    await m.pull(t2.manifest.id, { from: t2.dir });
    await m.close();
    const e = new ClipEmbedder({ manifest: t2.manifest, modelsDir: path.join(dir, 'models') });
    const r = await e.embedText('red');
    // Unmasked: BOS, EOS and 74 pads (id 0) all add OTHER_TOKEN_WEIGHT on axis 3.
    const other = 76 * OTHER_TOKEN_WEIGHT;
    expect(r.vector[3]).toBeCloseTo(other / Math.hypot(1, other), 5);
    await e.dispose();
  });

  it('over-long text is truncated and flagged; empty text is a validation error', async () => {
    const long = await clip.embedText('red '.repeat(200));
    expect(long.truncated).toBe(true);
    expect(long.vector[0]).toBeGreaterThan(0.99);
    await expect(clip.embedText('   ')).rejects.toBeInstanceOf(ValidationError);
  });

  it('batches frames and averages them into a re-normalised segment vector', async () => {
    const frames = [...Array(5)].map((_, i) => solid([255, 0, 0], i)).concat([...Array(5)].map((_, i) => solid([0, 0, 255], 5 + i)));
    const each = await clip.embedFrames(frames); // batch size 4: 3 runs
    expect(each).toHaveLength(10);
    expect(dot(each[0], each[4])).toBeCloseTo(1, 6);
    expect(dot(each[0], each[9])).toBeLessThan(0);
    const seg = await clip.embedSegment(frames, { start: 0, end: 10 });
    const mean = new Float32Array(512);
    for (const v of each) for (let i = 0; i < 512; i++) mean[i] += v[i] / each.length;
    const expected = mean.map((x) => x / norm(mean));
    for (let i = 0; i < 4; i++) expect(seg.vector[i]).toBeCloseTo(expected[i], 5);
    expect(seg.details?.frame_agreement).toBeLessThan(0.9);
    await expect(clip.embedSegment([], { start: 0, end: 1 })).rejects.toBeInstanceOf(ModelError);
  });

  it('a manifest whose dimension disagrees with the model is refused at load', async () => {
    const e = new ClipEmbedder({ manifest: { ...tiny.manifest, dimension: 256 }, modelsDir });
    await expect(e.load()).rejects.toThrow(/dimension 512, but manifest clip-tiny-test says 256/);
  });

  it('dispose, then load again', async () => {
    const e = new ClipEmbedder({ manifest: tiny.manifest, modelsDir });
    const a = (await e.embedText('blue')).vector;
    await e.dispose();
    const b = (await e.embedText('blue')).vector;
    expect(dot(a, b)).toBeCloseTo(1, 6);
    await e.dispose();
  });
});

describe('output picking and registry hook', () => {
  it('picks *_embeds by name', () => {
    expect(pickEmbedsOutput(['last_hidden_state', 'image_embeds'], 'image', 'f')).toBe('image_embeds');
    expect(pickEmbedsOutput(['text_embeds', 'last_hidden_state', 'pooler_output'], 'text', 'f')).toBe('text_embeds');
    expect(pickEmbedsOutput(['embeds'], 'text', 'f')).toBe('embeds');
    expect(pickEmbedsOutput(['output'], 'text', 'f')).toBe('output');
    expect(() => pickEmbedsOutput(['a', 'b'], 'image', 'f')).toThrow(/cannot tell which output/);
  });

  it('registerClipModels registers one lazy factory per clip manifest', async () => {
    const seen: { id: string; create: () => Embedder; info: { dim: number; description: string } }[] = [];
    const ids = registerClipModels((id, create, info) => seen.push({ id, create, info }), { manifests: [tiny.manifest], modelsDir });
    expect(ids).toEqual(['clip-tiny-test']);
    expect(seen[0].info).toMatchObject({ id: 'clip-tiny-test', dim: 512 });
    const e = seen[0].create();
    expect(e).toBeInstanceOf(ClipEmbedder);
    expect((await e.embedText('green')).vector[1]).toBeGreaterThan(0.9);
    await e.dispose();
    // The shipped manifests register clip-vit-b32 only (the perception tier is not a CLIP model).
    expect(registerClipModels(() => undefined, { manifests: loadManifests() })).toEqual(['clip-vit-b32']);
  });
});

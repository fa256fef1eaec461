/**
 * The ImageNet classifier (kind "classifier", `vidembed models pull imagenet-mobilenet-v2`): the
 * manifest and the models commands, the TFLite reader and TFLite → ONNX conversion, and real
 * classification of evaluation photos with the real weights from ../shared/models (installed with the
 * same `pull --from` path a user takes; never copied into the repository).
 *
 * The shared directory is required under CI (CI=true): missing, these tests fail rather than skip;
 * elsewhere they are skipped with a loud line (test/helpers/clips.ts `requireSharedData`).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BadRequestError, ModelError } from '../../src/api/errors.js';
import { describeError, exitCodeFor } from '../../src/cli/errors.js';
import { registerModels } from '../../src/cli/commands/models.js';
import type { CliContext, GlobalOptions, Run } from '../../src/cli/context.js';
import { pathsFor, readUserConfig } from '../../src/config.js';
import { decodeImage } from '../../src/media/frames.js';
import { ClipPreprocessor } from '../../src/models/clip/preprocess.js';
import { convertedPath, findImagenetModel, IMAGENET_MODEL_ID, ImagenetClassifier, isImagenetInstalled, parseLabels } from '../../src/models/imagenet/classifier.js';
import { tfliteToOnnx, tfPadding } from '../../src/models/imagenet/convert.js';
import { BuiltinOp, readTflite, TensorType } from '../../src/models/imagenet/tflite.js';
import { checkUsable, ModelManager } from '../../src/models/manager.js';
import { loadManifests, validateManifest } from '../../src/models/manifest.js';
import { hasEmbedder, listEmbedders } from '../../src/embedders/registry.js';
import { evalPhoto, evalPhotosDir, isCI, removeDir, requireSharedData, sharedModelsDir, tempDir } from '../helpers/clips.js';
import { runQuantisedReference } from '../helpers/tflite-reference.js';

const SHARED = path.join(sharedModelsDir, 'imagenet-mobilenet-v2');
const TFLITE = 'mobilenet_v2_1.0_224_quant.tflite';
const LABELS = 'imagenet_labels.txt';
const TFLITE_SHA = '7aad0c74c5e3c06e5eb3c827e13304fdd68a83da6087d92ee169c24ff9fd4776';
const SHARED_FILES = [path.join(SHARED, TFLITE), path.join(SHARED, LABELS), evalPhotosDir];
const WHAT = 'ImageNet weights (../shared/models) and eval photos';
/** Without the shared files: skipped (loudly) on a developer machine; run, and failed by beforeAll, under CI. */
const haveShared = isCI || requireSharedData(SHARED_FILES, WHAT);
const itShared = haveShared ? it : it.skip;

/**
 * Photos whose subject is unambiguous, and the ImageNet classes (common names) any of which must be
 * in the top 5. Checked by hand against catalog.tsv captions and the model's answers.
 */
const PHOTOS: [string, string[]][] = [
  ['python3-skimage__coffee.jpg', ['espresso', 'cup', 'coffee mug']],
  ['python3-skimage__rocket.jpg', ['missile', 'projectile', 'space shuttle']],
  ['opencv-doc__chicky_512.jpg', ['Pekinese', 'Shih-Tzu', 'Maltese dog', 'Lhasa']],
  ['labelme-examples__0001.jpg', ['tabby', 'tiger cat', 'Egyptian cat']],
  ['opencv-doc__fruits.jpg', ['lemon', 'orange']],
  ['mate-backgrounds__LadyBird.jpg', ['ladybug']],
  ['kphotoalbum__pool_2__rotated270.jpg', ['pool table']],
  ['opencv-doc__messi5.jpg', ['soccer ball']],
];

let tmp: string;
let modelsDir: string;
const saved = { ...process.env };
const opened: ImagenetClassifier[] = [];

beforeAll(() => {
  tmp = tempDir('vidembed-imagenet-');
  modelsDir = path.join(tmp, 'models');
  process.env.VIDEMBED_MODELS_DIR = modelsDir;
  delete process.env.VIDEMBED_MANIFESTS_DIR;
  delete process.env.VIDEMBED_MODELS_MIRROR;
});
afterAll(async () => {
  for (const c of opened) await c.dispose();
  process.env = saved;
  removeDir(tmp);
});

/** Runs `vidembed <args>` with the models commands in-process (as src/cli/main.ts does). */
async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  let code = 0;
  vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => ((out += String(s)), true));
  const run: Run = async (cmd, fn) => {
    const globals = cmd.optsWithGlobals() as GlobalOptions;
    try {
      code = (await fn({ paths: pathsFor(path.join(tmp, 'home')) } as CliContext, globals)) ?? 0;
    } catch (e) {
      err += `vidembed: error: ${describeError(e)}\n`;
      code = exitCodeFor(e);
    }
  };
  const program = new Command('vidembed').option('--json').exitOverride();
  registerModels(program, run);
  try {
    await program.parseAsync(['node', 'vidembed', ...args]);
  } finally {
    vi.restoreAllMocks();
  }
  return { code, out, err };
}

describe('imagenet manifest and the models commands (no weights needed)', () => {
  it('ships a valid classifier manifest pinned to the Coral test_data commit', () => {
    const m = loadManifests().find((x) => x.id === IMAGENET_MODEL_ID)!;
    expect(m).toMatchObject({ kind: 'classifier', dimension: 1001, licence: expect.stringMatching(/^Apache-2\.0/) });
    expect(m.files.map((f) => [f.role, f.path, f.bytes, f.sha256])).toEqual([
      ['model', TFLITE, 3610798, TFLITE_SHA],
      ['labels', LABELS, 21686, 'b8aaeb5630c62626a7d124a05c0e14230a7ffdd2136a31d0190a4fb71c1d82f1'],
    ]);
    for (const f of m.files) expect(f.url).toBe(`https://raw.githubusercontent.com/google-coral/test_data/104342d2d3480b3e66203073dac24f4e2dbb4c41/${f.path}`);
    expect(m.classifier).toMatchObject({ format: 'tflite', classes: 1001, background_index: 0, preprocessing: { image_size: 224, resize: 'shortest_edge', crop: 'center' } });
  });

  it('validation: a classifier needs model + labels files and a classifier section', () => {
    const m = loadManifests().find((x) => x.id === IMAGENET_MODEL_ID)!;
    expect(() => validateManifest({ ...m, files: m.files.filter((f) => f.role !== 'labels') }, 'x.json')).toThrow(/x\.json: a classifier needs a "labels" file/);
    expect(() => validateManifest({ ...m, classifier: undefined }, 'x.json')).toThrow(/needs a "classifier" section/);
    expect(() => validateManifest({ ...m, dimension: 1000 }, 'x.json')).toThrow(/classifier\.classes \(1001\) must equal dimension \(1000\)/);
    expect(() => validateManifest({ ...m, kind: 'detector' }, 'x.json')).toThrow(/kind must be one of "clip", "builtin", "classifier"/);
  });

  it('is not an embedder: not in the registry, `models use` refuses it in one line', async () => {
    expect(hasEmbedder(IMAGENET_MODEL_ID)).toBe(false);
    expect(listEmbedders().map((e) => e.id)).not.toContain(IMAGENET_MODEL_ID);
    const manager = new ModelManager({ dir: modelsDir });
    try {
      expect(() => checkUsable(manager, IMAGENET_MODEL_ID)).toThrow(BadRequestError);
    } finally {
      await manager.close();
    }
    const r = await cli('models', 'use', IMAGENET_MODEL_ID);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `vidembed: error: model ${IMAGENET_MODEL_ID} is an image classifier, not an embedding model: it cannot be a collection's model (once installed it labels keyframes)\n`,
    );
    expect(readUserConfig(pathsFor(path.join(tmp, 'home'))).default_model).toBeUndefined();
  });

  it('not installed: open() gives null, list says no', async () => {
    const empty = path.join(tmp, 'empty-models');
    expect(await ImagenetClassifier.open({ modelsDir: empty })).toBeNull();
    expect(isImagenetInstalled({ modelsDir: empty })).toBe(false);
    const r = await cli('models', 'list', '--json');
    const row = JSON.parse(r.out).find((m: { id: string }) => m.id === IMAGENET_MODEL_ID);
    expect(row).toMatchObject({ kind: 'classifier', dim: 1001, installed: false, size_bytes: 3610798 + 21686 });
  });

  it('TFLite SAME padding: the odd pixel goes at the end', () => {
    expect(tfPadding(0, 224, 3, 2)).toEqual([0, 1]);
    expect(tfPadding(0, 112, 3, 1)).toEqual([1, 1]);
    expect(tfPadding(0, 7, 7, 1)).toEqual([3, 3]);
    expect(tfPadding(0, 8, 4, 2)).toEqual([1, 1]);
    expect(tfPadding(1, 224, 3, 2)).toEqual([0, 0]);
  });

  it('readTflite refuses what is not a TFLite flatbuffer', () => {
    expect(() => readTflite(new Uint8Array(16))).toThrow(ModelError);
    expect(() => readTflite(new TextEncoder().encode('garbage garbage garbage'))).toThrow(/not a TFLite model/);
  });

  it('parseLabels: synonyms, first is the common name, trailing newline ignored', () => {
    expect(parseLabels('background\ntench, Tinca tinca\r\ncrane\n\n')).toEqual([
      { label: 'background', synonyms: ['background'] },
      { label: 'tench', synonyms: ['tench', 'Tinca tinca'] },
      { label: 'crane', synonyms: ['crane'] },
    ]);
  });
});

describe('imagenet-mobilenet-v2 with the real weights', () => {
  let installed: string;
  let clf: ImagenetClassifier;
  let classes: Map<string, string[]>;

  beforeAll(async () => {
    if (!haveShared) return; // the tests below are skipped
    requireSharedData(SHARED_FILES, WHAT); // throws under CI when missing
    const manager = new ModelManager({ dir: modelsDir });
    try {
      const res = await manager.pull(IMAGENET_MODEL_ID, { from: SHARED });
      expect(res.files.map((f) => [f.path, f.source])).toEqual([
        [TFLITE, 'local'],
        [LABELS, 'local'],
      ]);
      installed = res.dir;
    } finally {
      await manager.close();
    }
  }, 120_000);

  itShared(
    'pull --from installed it; list, verify and the finder see it',
    async () => {
      expect(installed).toBe(path.join(modelsDir, IMAGENET_MODEL_ID));
      expect(statSync(path.join(installed, TFLITE)).size).toBe(3610798);
      expect(findImagenetModel()?.dir).toBe(installed);
      expect(isImagenetInstalled()).toBe(true);
      const list = await cli('models', 'list');
      expect(list.out).toMatch(/imagenet-mobilenet-v2[\s│|]+classifier[\s│|]+1001 classes[\s│|]+yes[\s│|]+3\.5 MiB/);
      const verify = await cli('models', 'verify', IMAGENET_MODEL_ID, '--json');
      expect(verify.code).toBe(0);
      expect(JSON.parse(verify.out)[0]).toMatchObject({ id: IMAGENET_MODEL_ID, ok: true });
      // Pulling again is a no-op; `use` still refuses it now that it is installed.
      const again = await cli('models', 'pull', IMAGENET_MODEL_ID, '--from', SHARED);
      expect(again.code).toBe(0);
      expect(again.out).toMatch(/already-installed.*\n.*image classifier.*not an embedding model/);
      expect((await cli('models', 'use', IMAGENET_MODEL_ID)).code).toBe(2);
    },
  );

  itShared(
    'pull refuses a corrupted copy (same size, wrong sha256) and installs nothing',
    async () => {
      const bad = path.join(tmp, 'corrupt');
      mkdirSync(bad);
      copyFileSync(path.join(SHARED, LABELS), path.join(bad, LABELS));
      const bytes = readFileSync(path.join(SHARED, TFLITE));
      bytes[bytes.length >> 1] ^= 0xff;
      writeFileSync(path.join(bad, TFLITE), bytes);
      const dir = path.join(tmp, 'models-corrupt');
      const manager = new ModelManager({ dir });
      try {
        await expect(manager.pull(IMAGENET_MODEL_ID, { from: bad })).rejects.toThrow(
          new RegExp(`sha256 mismatch for ${IMAGENET_MODEL_ID}/${TFLITE.replace(/\./g, '\\.')} .*expected ${TFLITE_SHA}, got [0-9a-f]{64}; the file was deleted and nothing was installed`),
        );
        expect(manager.isInstalled(IMAGENET_MODEL_ID)).toBe(false);
      } finally {
        await manager.close();
      }
      expect(existsSync(path.join(dir, IMAGENET_MODEL_ID, TFLITE))).toBe(false);
      expect(existsSync(path.join(dir, IMAGENET_MODEL_ID, `${TFLITE}.part`))).toBe(false);
      // And the CLI says so in one line, with a non-zero exit.
      process.env.VIDEMBED_MODELS_DIR = dir;
      try {
        const r = await cli('models', 'pull', IMAGENET_MODEL_ID, '--from', bad);
        expect(r.code).not.toBe(0);
        expect(r.err).toMatch(/^vidembed: error: sha256 mismatch for imagenet-mobilenet-v2\/mobilenet_v2_1\.0_224_quant\.tflite/);
        expect(r.err.trim().split('\n')).toHaveLength(1);
      } finally {
        process.env.VIDEMBED_MODELS_DIR = modelsDir;
      }
    },
  );

  itShared(
    'the TFLite graph reads as MobileNetV2: uint8 in, uint8 softmax out',
    () => {
      const model = readTflite(readFileSync(path.join(installed, TFLITE)));
      const sg = model.subgraphs[0];
      const input = sg.tensors[sg.inputs[0]];
      const output = sg.tensors[sg.outputs[0]];
      expect(input).toMatchObject({ shape: [1, 224, 224, 3], type: TensorType.UINT8 });
      expect(input.quantization?.zeroPoint).toEqual([128]);
      expect(input.quantization?.scale[0]).toBeCloseTo(1 / 128, 9);
      expect(output).toMatchObject({ shape: [1, 1001], type: TensorType.UINT8 });
      const count = (op: number) => sg.operators.filter((o) => o.builtin === op).length;
      expect([count(BuiltinOp.CONV_2D), count(BuiltinOp.DEPTHWISE_CONV_2D), count(BuiltinOp.ADD), count(BuiltinOp.SOFTMAX)]).toEqual([36, 17, 10, 1]);
    },
  );

  itShared(
    'open(): converts once, caches the ONNX next to the .tflite keyed by its sha256, then reuses it',
    async () => {
      const c1 = await ImagenetClassifier.open();
      expect(c1).not.toBeNull();
      opened.push(c1!);
      expect(c1!.version).toBe(`imagenet-mnv2-${TFLITE_SHA.slice(0, 8)}`);
      expect(c1!.labels).toHaveLength(1001);
      expect(c1!.labels[0].label).toBe('background');
      const file = convertedPath({ dir: installed });
      expect(file).toBe(path.join(installed, 'mobilenet_v2.onnx'));
      const sidecar = JSON.parse(readFileSync(`${file}.json`, 'utf8'));
      expect(sidecar).toMatchObject({ source_sha256: TFLITE_SHA, mode: 'qdq', bytes: statSync(file).size });
      const mtime = statSync(file).mtimeMs;
      const c2 = await ImagenetClassifier.open(installed);
      opened.push(c2!);
      expect(statSync(file).mtimeMs).toBe(mtime); // read from the cache, not rewritten
      clf = c1!;
      classes = new Map(c1!.labels.map((l) => [l.label, l.synonyms]));
      // A stale cache (another .tflite) is rebuilt.
      writeFileSync(`${file}.json`, JSON.stringify({ ...sidecar, source_sha256: '0'.repeat(64) }));
      const c3 = await ImagenetClassifier.open(installed);
      opened.push(c3!);
      expect(JSON.parse(readFileSync(`${file}.json`, 'utf8')).source_sha256).toBe(TFLITE_SHA);
      // Files present but not the manifest's bytes: refused, not silently used.
      const fake = path.join(tmp, 'fake-install');
      mkdirSync(fake);
      copyFileSync(path.join(installed, LABELS), path.join(fake, LABELS));
      const bytes = readFileSync(path.join(installed, TFLITE));
      bytes[100] ^= 1;
      writeFileSync(path.join(fake, TFLITE), bytes);
      await expect(ImagenetClassifier.open(fake)).rejects.toThrow(/sha256 [0-9a-f]{64}, the manifest expects 7aad0c74.*models pull imagenet-mobilenet-v2/);
    },
    120_000,
  );

  itShared(
    'classifies real photos: the obvious ImageNet class is in the top 5; probabilities sum to 1',
    async () => {
      expect(clf, 'the classifier is opened by the open() test above (run the file, not this test alone)').toBeDefined();
      for (const [name, expected] of PHOTOS) {
        for (const e of expected) expect(classes.has(e), `label ${e}`).toBe(true);
        const frame = await decodeImage(evalPhoto(name), 512);
        const probs = await clf.probabilities(frame);
        expect(probs).toHaveLength(1001);
        const sum = probs.reduce((a, b) => a + b, 0);
        expect(Math.abs(sum - 1)).toBeLessThan(1e-3);
        expect(Math.min(...probs)).toBeGreaterThanOrEqual(0);
        const top = await clf.classify(frame, 5);
        expect(top).toHaveLength(5);
        for (let i = 1; i < top.length; i++) expect(top[i].p).toBeLessThanOrEqual(top[i - 1].p);
        expect(top.every((s) => s.index !== 0 && s.label === s.synonyms[0] && s.p === probs[s.index])).toBe(true);
        const labels = top.map((s) => s.label);
        expect(labels.some((l) => expected.includes(l)), `${name}: top 5 ${labels.join(', ')}; expected one of ${expected.join(', ')}`).toBe(true);
      }
    },
    120_000,
  );

  itShared(
    'frames of any shape: portrait, tiny, and a bad buffer',
    async () => {
      const frame = await decodeImage(evalPhoto('python3-skimage__coffee.jpg'), 320);
      // Portrait: the coffee photo transposed.
      const { width: w, height: h, data } = frame;
      const t = new Uint8Array(data.length);
      for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) for (let c = 0; c < 3; c++) t[(x * h + y) * 3 + c] = data[(y * w + x) * 3 + c];
      const top = await clf.classify({ width: h, height: w, data: t }, 3);
      expect(top).toHaveLength(3);
      expect(await clf.classify({ width: 8, height: 6, data: new Uint8Array(8 * 6 * 3).fill(90) }, 1)).toHaveLength(1);
      await expect(clf.classify({ width: 10, height: 10, data: new Uint8Array(10) })).rejects.toThrow(RangeError);
    },
  );

  itShared(
    'the conversion is faithful to the uint8 graph (pure-TS quantised reference interpreter)',
    async () => {
      const model = readTflite(readFileSync(path.join(installed, TFLITE)));
      const files = findImagenetModel()!;
      const float = await ImagenetClassifier.open({ dir: files.dir, mode: 'float' });
      opened.push(float!);
      expect(float!.version).toBe(`imagenet-mnv2-${TFLITE_SHA.slice(0, 8)}-float`);
      const pre = new ClipPreprocessor({ size: 224, mean: [0, 0, 0], std: [1, 1, 1] });
      const order = (p: ArrayLike<number>) => Array.from(p, (_, i) => i).sort((a, b) => p[b] - p[a]);
      // Coffee, rocket (a close call between missile and drilling platform), kitten, ladybird.
      for (const name of ['python3-skimage__coffee.jpg', 'python3-skimage__rocket.jpg', 'labelme-examples__0001.jpg', 'mate-backgrounds__LadyBird.jpg']) {
        const frame = await decodeImage(evalPhoto(name), 512);
        const ref = runQuantisedReference(model, pre.resizeCrop(frame).slice());
        const maxLogit = Math.max(...ref.logitsQ);
        const refTop5 = order(ref.probabilities).slice(0, 5);
        // qdq (the default): same top 1 (up to uint8 ties), same top-5 set, probabilities close.
        const q = await clf.probabilities(frame);
        const qTop5 = order(q).slice(0, 5);
        expect(ref.logitsQ[qTop5[0]], `${name} qdq top-1`).toBe(maxLogit);
        expect(new Set(qTop5), `${name} qdq top-5`).toEqual(new Set(refTop5));
        let diff = 0;
        for (let i = 0; i < q.length; i++) diff = Math.max(diff, Math.abs(q[i] - ref.probabilities[i]));
        expect(diff, `${name} qdq max |Δp|`).toBeLessThan(0.1);
        // TFLite's own uint8 output agrees with the reference's probabilities.
        expect(Math.abs(ref.outputQ[refTop5[0]] * ref.outputScale - ref.probabilities[refTop5[0]])).toBeLessThan(0.01);
        // float activations: the same classes, the order may move on close calls (on the rocket the
        // float graph puts "drilling platform", the reference's third, first).
        const f = await float!.probabilities(frame);
        const fTop5 = order(f).slice(0, 5);
        expect(refTop5.slice(0, 3), `${name} float top-1 in the reference's top 3`).toContain(fTop5[0]);
        expect(fTop5.filter((i) => refTop5.includes(i)).length, `${name} float top-5 overlap`).toBeGreaterThanOrEqual(4);
        expect(Math.abs(f.reduce((a, b) => a + b, 0) - 1)).toBeLessThan(1e-3);
      }
    },
    180_000,
  );

  itShared(
    'tfliteToOnnx reports what it converted',
    () => {
      const r = tfliteToOnnx(readFileSync(path.join(installed, TFLITE)), { mode: 'float' });
      expect(r).toMatchObject({ inputName: 'pixels', inputShape: [1, 3, 224, 224], outputName: 'probabilities', outputShape: [1, 1001] });
      expect(r.ops).toEqual({ CONV_2D: 36, DEPTHWISE_CONV_2D: 17, ADD: 10, AVERAGE_POOL_2D: 1, RESHAPE: 1, SOFTMAX: 1 });
    },
  );
});

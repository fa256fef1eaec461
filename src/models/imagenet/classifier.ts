/**
 * ImageNet-1k classification of keyframes with MobileNetV2 (uint8 TFLite from Google's Coral test
 * data, `vidembed models pull imagenet-mobilenet-v2`), run on onnxruntime-node.
 *
 * The .tflite is converted to ONNX once (src/models/imagenet/convert.ts) and cached next to it as
 * `mobilenet_v2.onnx` with a `mobilenet_v2.onnx.json` sidecar that records the sha256 of the .tflite
 * it came from and the converter version; a different .tflite or converter rebuilds it. The default
 * conversion mode is `qdq` (uint8 weights behind DequantizeLinear, every activation rounded to its
 * uint8 grid as in TFLite): it reproduces the quantised model's scores, where the pure float graph
 * (`mode: 'float'`) drifts a little (top-1 differed on 5 of 52 evaluation photos).
 *
 * Preprocessing: shortest side → 224 with Pillow's antialiased bicubic (the CLIP tier's exact
 * kernels, src/models/clip/preprocess.ts), centre crop 224 × 224, RGB 0..255, which the graph
 * dequantises itself ((x − 128) / 128 for this model).
 */
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type * as OrtTypes from 'onnxruntime-node';
import { ModelError } from '../../api/errors.js';
import type { Frame } from '../../media/types.js';
import { ClipPreprocessor } from '../clip/preprocess.js';
import { findManifest, loadAllManifests, loadManifests, modelsDir, type ModelManifest } from '../manifest.js';
import { tfliteToOnnx, type ConvertOptions } from './convert.js';

import { loadOrt, onnxThreads, sessionOptions, type Ort } from '../onnx/runtime.js';
type Session = OrtTypes.InferenceSession;

export const IMAGENET_MODEL_ID = 'imagenet-mobilenet-v2';
/** Bumped whenever convert.ts changes what it emits: cached conversions are rebuilt. */
export const CONVERTER_VERSION = 1;

export interface ClassScore {
  /** Output index (0 = `background` for this model). */
  index: number;
  /** Common name: the first synonym of the label line. */
  label: string;
  synonyms: string[];
  /** Probability (softmax output). */
  p: number;
}

export interface ImagenetFiles {
  id: string;
  /** The model's directory: `<models dir>/imagenet-mobilenet-v2`. */
  dir: string;
  model: string;
  labels: string;
  manifest: ModelManifest;
}

export interface FindOptions {
  /** The model's own directory (holding the .tflite and the labels). Default: `<models dir>/<id>`. */
  dir?: string;
  /** Default: VIDEMBED_MODELS_DIR or ~/.cache/vidembed/models. */
  modelsDir?: string;
  env?: NodeJS.ProcessEnv;
  /** Default: the shipped manifest (or one in VIDEMBED_MANIFESTS_DIR with the same id). */
  manifest?: ModelManifest;
}

function classifierManifest(env: NodeJS.ProcessEnv): ModelManifest {
  let all: ModelManifest[];
  try {
    all = loadAllManifests(env);
  } catch {
    all = loadManifests(); // a broken VIDEMBED_MANIFESTS_DIR must not hide the shipped model
  }
  return findManifest(all, IMAGENET_MODEL_ID);
}

const sizeOf = (p: string): number | null => {
  try {
    return statSync(p).size;
  } catch {
    return null;
  }
};

/**
 * The installed classifier's files, or null when it is not installed (same cheap check as `models
 * list`: every manifest file present with its size; `models verify` re-hashes them).
 */
export function findImagenetModel(opts: FindOptions = {}): ImagenetFiles | null {
  const env = opts.env ?? process.env;
  const manifest = opts.manifest ?? classifierManifest(env);
  if (manifest.kind !== 'classifier') throw new ModelError(`model ${manifest.id} is not a classifier`);
  const dir = path.resolve(opts.dir ?? path.join(opts.modelsDir ?? modelsDir(env), manifest.id));
  const fileOf = (role: string) => {
    const f = manifest.files.find((x) => x.role === role);
    if (!f) throw new ModelError(`model ${manifest.id}: manifest has no ${role} file`);
    return f;
  };
  const model = fileOf('model');
  const labels = fileOf('labels');
  for (const f of [model, labels]) if (sizeOf(path.join(dir, f.path)) !== f.bytes) return null;
  return { id: manifest.id, dir, model: path.join(dir, model.path), labels: path.join(dir, labels.path), manifest };
}

/** Directory of the installed classifier (`<models dir>/imagenet-mobilenet-v2`), or null if not installed. */
export function imagenetModelDir(opts: Omit<FindOptions, 'dir'> = {}): string | null {
  return findImagenetModel(opts)?.dir ?? null;
}

/** Whether `vidembed models pull imagenet-mobilenet-v2` has been done (cheap: sizes only). */
export function isImagenetInstalled(opts: Omit<FindOptions, 'dir'> = {}): boolean {
  return findImagenetModel(opts) !== null;
}

export interface Label {
  label: string;
  synonyms: string[];
}

/** One class per line, synonyms comma-separated (the first is the common name). */
export function parseLabels(text: string): Label[] {
  const lines = text.replace(/\r/g, '').split('\n');
  while (lines.length && lines[lines.length - 1].trim() === '') lines.pop();
  return lines.map((line) => {
    const synonyms = line
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    return { label: synonyms[0] ?? '', synonyms };
  });
}


interface CacheInfo {
  source_sha256: string;
  converter: number;
  mode: string;
  bytes: number;
  onnx_sha256: string;
}

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/**
 * The ONNX conversion of `tflite` (bytes), from the cache next to it when it matches, else converted
 * now and cached (atomically; a read-only models dir just means converting in memory each time).
 */
export function convertedModel(files: ImagenetFiles, tfliteSha: string, mode: NonNullable<ConvertOptions['mode']>, tflite?: Uint8Array): { onnx: Uint8Array; cached: boolean; file: string } {
  const file = convertedPath(files, mode);
  const sidecar = `${file}.json`;
  try {
    const info = JSON.parse(readFileSync(sidecar, 'utf8')) as CacheInfo;
    if (info.source_sha256 === tfliteSha && info.converter === CONVERTER_VERSION && info.mode === mode && sizeOf(file) === info.bytes) {
      const onnx = new Uint8Array(readFileSync(file));
      if (sha256(onnx) === info.onnx_sha256) return { onnx, cached: true, file };
    }
  } catch {
    // no cache yet, or an unreadable one: convert
  }
  const bytes = tflite ?? new Uint8Array(readFileSync(files.model));
  const { onnx } = tfliteToOnnx(bytes, { mode, metadata: { 'vidembed.source': path.basename(files.model), 'vidembed.source_sha256': tfliteSha } });
  const info: CacheInfo = { source_sha256: tfliteSha, converter: CONVERTER_VERSION, mode, bytes: onnx.length, onnx_sha256: sha256(onnx) };
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, onnx);
    renameSync(tmp, file);
    writeFileSync(`${sidecar}.${process.pid}.tmp`, JSON.stringify(info, null, 2) + '\n');
    renameSync(`${sidecar}.${process.pid}.tmp`, sidecar);
  } catch {
    rmSync(tmp, { force: true });
    rmSync(`${sidecar}.${process.pid}.tmp`, { force: true });
  }
  return { onnx, cached: false, file };
}

export interface ImagenetClassifierOptions extends FindOptions {
  /** `qdq` (default, reproduces the uint8 model) or `float` (float32 activations). */
  mode?: NonNullable<ConvertOptions['mode']>;
  /** ONNX Runtime intra-op threads. Default: VIDEMBED_ONNX_THREADS, else 1. */
  threads?: number;
}

export class ImagenetClassifier {
  /** `imagenet-mnv2-<first 8 hex of the .tflite sha256>` (plus `-float` in float mode). */
  readonly version: string;
  readonly labels: readonly Label[];
  readonly size: number;
  /** Index of the background class (left out of classify() results), or -1. */
  readonly backgroundIndex: number;
  private readonly preprocessor: ClipPreprocessor;
  private disposed = false;

  private constructor(
    private readonly ort: Ort,
    private readonly session: Session,
    readonly files: ImagenetFiles,
    labels: Label[],
    version: string,
    private readonly inputName: string,
    private readonly outputName: string,
  ) {
    this.labels = labels;
    this.version = version;
    this.size = files.manifest.classifier?.preprocessing.image_size ?? 224;
    this.backgroundIndex = files.manifest.classifier?.background_index ?? -1;
    // mean 0, std 1/255 would give float pixels; we only use its uint8 resize + crop (exact integers).
    this.preprocessor = new ClipPreprocessor({ size: this.size, mean: [0, 0, 0], std: [1, 1, 1] });
  }

  /**
   * Loads the installed classifier; null when it is not installed. `opts` may be the model's
   * directory. Throws ModelError when the files are there but wrong (sha256) or unusable.
   */
  static async open(opts: string | ImagenetClassifierOptions = {}): Promise<ImagenetClassifier | null> {
    const o: ImagenetClassifierOptions = typeof opts === 'string' ? { dir: opts } : opts;
    const files = findImagenetModel(o);
    if (!files) return null;
    const mode = o.mode ?? 'qdq';
    const tflite = new Uint8Array(readFileSync(files.model));
    const sha = sha256(tflite);
    const expected = files.manifest.files.find((f) => f.role === 'model')!.sha256;
    if (sha !== expected) {
      throw new ModelError(`model ${files.id}: ${path.basename(files.model)} has sha256 ${sha}, the manifest expects ${expected}: run \`vidembed models pull ${files.id}\``);
    }
    const labels = parseLabels(readFileSync(files.labels, 'utf8'));
    const { onnx } = convertedModel(files, sha, mode, tflite);
    const ort = await loadOrt();
    let session: Session;
    try {
      // One thread by default: the engine runs the classifier beside ffmpeg.
      session = await ort.InferenceSession.create(onnx, sessionOptions(o.threads ?? onnxThreads(1, o.env)));
    } catch (err) {
      throw new ModelError(`model ${files.id}: onnxruntime could not load the converted model (${(err as Error).message})`, { cause: err });
    }
    const out = session.outputMetadata?.find((m) => m.name === session.outputNames[0]);
    const classes = out && out.isTensor ? out.shape[out.shape.length - 1] : undefined;
    if (typeof classes === 'number' && classes !== labels.length) {
      await session.release();
      throw new ModelError(`model ${files.id}: ${labels.length} labels for ${classes} outputs`);
    }
    const version = `imagenet-mnv2-${sha.slice(0, 8)}${mode === 'qdq' ? '' : `-${mode}`}`;
    return new ImagenetClassifier(ort, session, files, labels, version, session.inputNames[0], session.outputNames[0]);
  }

  /** The softmax over all classes (background included) for one packed-RGB frame. */
  async probabilities(frame: Pick<Frame, 'width' | 'height' | 'data'>): Promise<Float32Array> {
    if (this.disposed) throw new ModelError('the ImageNet classifier was disposed');
    const { width, height, data } = frame;
    if (!(width >= 1 && height >= 1) || data.length < width * height * 3) {
      throw new RangeError(`frame ${width}x${height} has ${data.length} bytes, expected ${width * height * 3}`);
    }
    const px = this.preprocessor.resizeCrop({ t: 0, width, height, data });
    const S = this.size;
    const plane = S * S;
    const x = new Float32Array(3 * plane); // a fresh buffer: runs may overlap
    for (let p = 0, s = 0; p < plane; p++, s += 3) {
      x[p] = px[s];
      x[plane + p] = px[s + 1];
      x[2 * plane + p] = px[s + 2];
    }
    const feeds = { [this.inputName]: new this.ort.Tensor('float32', x, [1, 3, S, S]) };
    const out = await this.session.run(feeds);
    const t = out[this.outputName];
    return Float32Array.from(t.data as Float32Array);
  }

  /** The `topK` most probable classes, most probable first (the background class is left out). */
  async classify(frame: Pick<Frame, 'width' | 'height' | 'data'>, topK = 5): Promise<ClassScore[]> {
    return this.top(await this.probabilities(frame), topK);
  }

  /** The `k` best classes of a probability vector (background left out). */
  top(probs: Float32Array, k = 5): ClassScore[] {
    if (!(k > 0)) return [];
    const best: number[] = [];
    for (let i = 0; i < probs.length; i++) {
      if (i === this.backgroundIndex) continue;
      if (best.length < k || probs[i] > probs[best[best.length - 1]]) {
        let at = best.length < k ? best.length : best.length - 1;
        best[at] = i;
        while (at > 0 && probs[best[at]] > probs[best[at - 1]]) {
          [best[at], best[at - 1]] = [best[at - 1], best[at]];
          at--;
        }
      }
    }
    return best.map((index) => ({ index, label: this.labels[index]?.label ?? String(index), synonyms: this.labels[index]?.synonyms.slice() ?? [], p: probs[index] }));
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await this.session.release();
  }
}

/** Where the ONNX conversion is cached: `<model dir>/mobilenet_v2.onnx` (`mobilenet_v2.float.onnx` in float mode). */
export function convertedPath(files: Pick<ImagenetFiles, 'dir'>, mode: NonNullable<ConvertOptions['mode']> = 'qdq'): string {
  return path.join(files.dir, mode === 'qdq' ? 'mobilenet_v2.onnx' : `mobilenet_v2.${mode}.onnx`);
}

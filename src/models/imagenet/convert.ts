/**
 * TFLite → ONNX: turns a (quantised) convolutional TFLite classifier into an ONNX graph that
 * onnxruntime-node runs.
 *
 * - Weights and biases are dequantised to float32: real = (q - zero_point) × scale, per channel
 *   where the tensor has several scales (along `quantized_dimension`). An int32 bias without its own
 *   quantisation gets scale = input scale × weight scale (the TFLite convention).
 * - Activations stay float32 (mode `float`, the default); mode `qdq` instead keeps the uint8 weights
 *   behind DequantizeLinear and puts QuantizeLinear → DequantizeLinear after every quantised
 *   activation, which reproduces the uint8 rounding of the TFLite graph (onnxruntime may fuse the
 *   pattern into its integer kernels).
 * - TFLite is NHWC, ONNX convolutions are NCHW: every 4-D activation is kept NCHW; Conv weights
 *   [O, kh, kw, I] become [O, I, kh, kw], depthwise [1, kh, kw, C×M] become [C×M, 1, kh, kw] with
 *   group = C. Reshape and friends transpose back to NHWC where the memory order matters.
 * - SAME padding becomes explicit pads with TensorFlow's rule: total = max((out - 1) × stride +
 *   (k - 1) × dilation + 1 - in, 0), begin = ⌊total / 2⌋, the odd pixel at the end.
 * - Fused activations: RELU → Relu, RELU6 → Clip(0, 6), RELU_N1_TO_1 → Clip(-1, 1), TANH → Tanh.
 *
 * The ONNX graph takes `pixels`: float32 [1, 3, H, W], RGB values 0..255 (the uint8 input of the
 * TFLite model, channels first). The input dequantisation (pixels - zero_point) × scale is the first
 * node of the graph. For a float TFLite input the values are passed through unchanged. The output is
 * the TFLite output (for a classifier: the softmax probabilities, float, [1, classes]).
 */
import { ModelError } from '../../api/errors.js';
import { encodeModel, type Initializer, type NodeSpec, type AttributeValue } from '../onnx/onnx.js';
import {
  Activation,
  BUILTIN_OP_NAMES,
  BuiltinOp,
  convOptions,
  fusedActivation,
  Padding,
  poolOptions,
  readTflite,
  softmaxBeta,
  tensorData,
  TensorType,
  type TfliteModel,
  type TfliteOperator,
  type TfliteTensor,
} from './tflite.js';

export interface ConvertOptions {
  /** `float` (default): float32 activations. `qdq`: emulate the uint8 activations with Q/DQ pairs. */
  mode?: 'float' | 'qdq';
  /** Written into the ONNX metadata (e.g. the sha256 of the source .tflite). */
  metadata?: Record<string, string>;
}

export interface ConvertedModel {
  onnx: Uint8Array;
  inputName: string;
  /** NCHW: [1, 3, H, W]. */
  inputShape: number[];
  outputName: string;
  outputShape: number[];
  /** TFLite operators converted, by name (e.g. { CONV_2D: 36, … }). */
  ops: Record<string, number>;
}

export const ONNX_INPUT = 'pixels';
export const ONNX_OUTPUT = 'probabilities';

/** Where an ONNX value is: its name, and whether it is a 4-D tensor kept NCHW (TFLite says NHWC). */
interface Value {
  name: string;
  /** TFLite (NHWC) shape. */
  shape: number[];
  nchw: boolean;
}

const prod = (a: readonly number[]) => a.reduce((x, y) => x * y, 1);
/** NHWC axis → NCHW axis. */
const NCHW_AXIS = [0, 2, 3, 1];

function opName(op: TfliteOperator): string {
  return BUILTIN_OP_NAMES[op.builtin] ?? op.customCode ?? `builtin ${op.builtin}`;
}

/** The real values of a constant tensor, float32, in the tensor's own (TFLite) layout. */
export function dequantize(model: TfliteModel, t: TfliteTensor, fallbackScale?: Float32Array | number[]): Float32Array {
  const data = tensorData(model, t);
  const n = prod(t.shape);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const width = t.type === TensorType.FLOAT32 || t.type === TensorType.INT32 ? 4 : t.type === TensorType.UINT8 || t.type === TensorType.INT8 ? 1 : t.type === TensorType.INT64 ? 8 : 0;
  if (!width) throw new ModelError(`tensor ${t.name}: unsupported constant type ${t.type}`);
  if (data.length < n * width) throw new ModelError(`tensor ${t.name}: buffer has ${data.length} bytes, shape [${t.shape.join(',')}] needs ${n * width}`);
  const out = new Float32Array(n);
  const read = (i: number): number => {
    switch (t.type) {
      case TensorType.FLOAT32:
        return view.getFloat32(4 * i, true);
      case TensorType.INT32:
        return view.getInt32(4 * i, true);
      case TensorType.UINT8:
        return view.getUint8(i);
      case TensorType.INT8:
        return view.getInt8(i);
      default:
        return Number(view.getBigInt64(8 * i, true));
    }
  };
  if (t.type === TensorType.FLOAT32) {
    for (let i = 0; i < n; i++) out[i] = read(i);
    return out;
  }
  const q = t.quantization;
  const scale = q?.scale.length ? q.scale : fallbackScale;
  if (!scale || !scale.length) {
    if (t.type === TensorType.INT32 || t.type === TensorType.INT64) {
      for (let i = 0; i < n; i++) out[i] = read(i);
      return out;
    }
    throw new ModelError(`tensor ${t.name}: quantised type without quantisation parameters`);
  }
  const zps = q?.zeroPoint.length ? q.zeroPoint : [0];
  if (scale.length === 1) {
    const s = scale[0];
    const z = zps[0] ?? 0;
    for (let i = 0; i < n; i++) out[i] = (read(i) - z) * s;
    return out;
  }
  // Per-channel (or a per-channel fallback scale for a bias): along quantized_dimension.
  const axis = q?.scale.length ? q.quantizedDimension : t.shape.length - 1;
  const dim = t.shape[axis];
  if (dim !== scale.length) throw new ModelError(`tensor ${t.name}: ${scale.length} scales for dimension ${axis} of size ${dim}`);
  const inner = prod(t.shape.slice(axis + 1));
  for (let i = 0; i < n; i++) {
    const c = Math.floor(i / inner) % dim;
    out[i] = (read(i) - (zps.length > 1 ? zps[c] : zps[0] ?? 0)) * scale[c];
  }
  return out;
}

/** Explicit TensorFlow SAME/VALID padding for one spatial axis: [begin, end]. */
export function tfPadding(padding: number, inSize: number, kernel: number, stride: number, dilation = 1): [number, number] {
  if (padding === Padding.VALID) return [0, 0];
  const out = Math.ceil(inSize / stride);
  const effective = (kernel - 1) * dilation + 1;
  const total = Math.max((out - 1) * stride + effective - inSize, 0);
  const begin = Math.floor(total / 2);
  return [begin, total - begin];
}

class GraphBuilder {
  readonly nodes: NodeSpec[] = [];
  readonly inits: Initializer[] = [];
  private used = new Set<string>();

  unique(base: string): string {
    const clean = base.replace(/[^A-Za-z0-9_./:-]+/g, '_').slice(0, 80) || 't';
    let name = clean;
    for (let i = 1; this.used.has(name); i++) name = `${clean}_${i}`;
    this.used.add(name);
    return name;
  }

  init(base: string, dataType: Initializer['dataType'], dims: number[], data: Initializer['data']): string {
    const name = this.unique(base);
    this.inits.push({ name, dataType, dims, data });
    return name;
  }

  float(base: string, dims: number[], data: Float32Array | number[]): string {
    return this.init(base, 'FLOAT', dims, data instanceof Float32Array ? data : Float32Array.from(data));
  }

  int64(base: string, values: number[]): string {
    return this.init(base, 'INT64', [values.length], BigInt64Array.from(values.map((v) => BigInt(v))));
  }

  node(opType: string, inputs: string[], outBase: string, attributes?: Record<string, AttributeValue>): string {
    const out = this.unique(outBase);
    this.nodes.push({ opType, inputs, outputs: [out], name: this.unique(`${opType}:${outBase}`), ...(attributes ? { attributes } : {}) });
    return out;
  }
}

const ints = (value: number[]): AttributeValue => ({ type: 'ints', value });
const int = (value: number): AttributeValue => ({ type: 'int', value });

/** Converts a TFLite model (bytes or parsed) to ONNX. Throws ModelError for what it cannot convert. */
export function tfliteToOnnx(source: Uint8Array | TfliteModel, opts: ConvertOptions = {}): ConvertedModel {
  const model = source instanceof Uint8Array ? readTflite(source) : source;
  const qdq = opts.mode === 'qdq';
  if (model.subgraphs.length !== 1) throw new ModelError(`TFLite model has ${model.subgraphs.length} subgraphs; only single-graph models are supported`);
  const sg = model.subgraphs[0];
  if (sg.inputs.length !== 1) throw new ModelError(`TFLite model has ${sg.inputs.length} inputs; expected one image input`);
  if (sg.outputs.length < 1) throw new ModelError('TFLite model has no outputs');
  const g = new GraphBuilder();
  const values = new Map<number, Value>();
  const ops: Record<string, number> = {};

  const tensor = (i: number): TfliteTensor => {
    const t = sg.tensors[i];
    if (!t) throw new ModelError(`operator refers to missing tensor ${i}`);
    return t;
  };
  const isConst = (t: TfliteTensor) => t.buffer > 0 && tensorData(model, t).length > 0;
  const short = (t: TfliteTensor) => (t.name.split(';')[0] || `t${t.index}`).replace(/^MobilenetV2\//, '');

  /** A quantised activation: its (per-tensor) scale and zero point, when it has them. */
  const actQuant = (t: TfliteTensor): { scale: number; zp: number; signed: boolean } | null => {
    if (t.type !== TensorType.UINT8 && t.type !== TensorType.INT8) return null;
    const q = t.quantization;
    if (!q || q.scale.length !== 1) return null;
    return { scale: q.scale[0], zp: q.zeroPoint[0] ?? 0, signed: t.type === TensorType.INT8 };
  };

  /** In qdq mode: QuantizeLinear → DequantizeLinear with the tensor's quantisation. */
  const requantize = (name: string, t: TfliteTensor): string => {
    const q = qdq ? actQuant(t) : null;
    if (!q) return name;
    const s = g.float(`${short(t)}/scale`, [], [q.scale]);
    const z = q.signed ? g.init(`${short(t)}/zp`, 'INT8', [], Int8Array.from([q.zp])) : g.init(`${short(t)}/zp`, 'UINT8', [], Uint8Array.from([q.zp]));
    const qn = g.node('QuantizeLinear', [name, s, z], `${short(t)}/q`);
    return g.node('DequantizeLinear', [qn, s, z], `${short(t)}/dq`);
  };

  const activation = (x: string, code: number, base: string): string => {
    switch (code) {
      case Activation.NONE:
        return x;
      case Activation.RELU:
        return g.node('Relu', [x], `${base}/relu`);
      case Activation.RELU6:
        return g.node('Clip', [x, g.float(`${base}/zero`, [], [0]), g.float(`${base}/six`, [], [6])], `${base}/relu6`);
      case Activation.RELU_N1_TO_1:
        return g.node('Clip', [x, g.float(`${base}/m1`, [], [-1]), g.float(`${base}/p1`, [], [1])], `${base}/relu_n1_to_1`);
      case Activation.TANH:
        return g.node('Tanh', [x], `${base}/tanh`);
      default:
        throw new ModelError(`unsupported fused activation ${code} in ${base}`);
    }
  };

  /** Records an op's output (after its fused activation and, in qdq mode, requantisation). */
  const define = (t: TfliteTensor, name: string, nchw: boolean) => {
    values.set(t.index, { name: requantize(name, t), shape: t.shape, nchw });
  };

  /** The ONNX value of a tensor: an earlier op's output, or a constant (NCHW when `asNchw` and 4-D). */
  const value = (i: number, asNchw = false): Value => {
    const v = values.get(i);
    if (v) return v;
    const t = tensor(i);
    if (!isConst(t)) throw new ModelError(`tensor ${t.name} is used before it is computed`);
    let data = dequantize(model, t);
    let dims = t.shape.slice();
    let nchw = false;
    if (asNchw && dims.length === 4) {
      const [n, h, w, c] = dims;
      const out = new Float32Array(data.length);
      for (let b = 0; b < n; b++) for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) for (let k = 0; k < c; k++) out[((b * c + k) * h + y) * w + x] = data[((b * h + y) * w + x) * c + k];
      data = out;
      dims = [n, c, h, w];
      nchw = true;
    } else if (asNchw && dims.length === 1) {
      dims = [dims[0], 1, 1]; // per-channel constant broadcast against N, C, H, W
    }
    const cv = { name: g.float(short(t), dims, data), shape: t.shape, nchw };
    values.set(i, cv);
    return cv;
  };

  /** The value in TFLite's (NHWC) memory order. */
  const plain = (v: Value): string => {
    if (!v.nchw) return v.name;
    const [n, h, w, c] = v.shape;
    if (h === 1 && w === 1) return g.node('Reshape', [v.name, g.int64('shape', [n, 1, 1, c])], `${v.name}/nhwc`);
    return g.node('Transpose', [v.name], `${v.name}/nhwc`, { perm: ints([0, 2, 3, 1]) });
  };

  /** A plain 4-D (NHWC-ordered) value as NCHW. */
  const toNchw = (name: string, shape: number[]): string => {
    const [n, h, w, c] = shape;
    if (h === 1 && w === 1) return g.node('Reshape', [name, g.int64('shape', [n, c, 1, 1])], `${name}/nchw`);
    return g.node('Transpose', [name], `${name}/nchw`, { perm: ints([0, 3, 1, 2]) });
  };

  // The input: float pixels 0..255, NCHW → the TFLite input's real values.
  const inT = tensor(sg.inputs[0]);
  if (inT.shape.length !== 4 || inT.shape[0] !== 1) throw new ModelError(`input ${inT.name} has shape [${inT.shape.join(',')}]; expected [1, H, W, C]`);
  const [, inH, inW, inC] = inT.shape;
  {
    let x = ONNX_INPUT;
    const q = actQuant(inT);
    if (q) {
      const offset = (q.signed ? 128 : 0) + q.zp; // int8 inputs take pixel - 128
      x = g.node('Sub', [x, g.float('input/zero_point', [], [offset])], 'input/centred');
      x = g.node('Mul', [x, g.float('input/scale', [], [q.scale])], 'input/real');
    } else if (inT.type !== TensorType.FLOAT32) {
      throw new ModelError(`input ${inT.name}: unsupported type ${inT.type}`);
    }
    values.set(inT.index, { name: requantize(x, inT), shape: inT.shape, nchw: true });
  }

  for (const op of sg.operators) {
    const name = opName(op);
    ops[name] = (ops[name] ?? 0) + 1;
    const outT = tensor(op.outputs[0]);
    const base = short(outT);
    switch (op.builtin) {
      case BuiltinOp.CONV_2D:
      case BuiltinOp.DEPTHWISE_CONV_2D: {
        const depthwise = op.builtin === BuiltinOp.DEPTHWISE_CONV_2D;
        const x = value(op.inputs[0]);
        if (!x.nchw) throw new ModelError(`${name} ${base}: input is not a 4-D image tensor`);
        const wT = tensor(op.inputs[1]);
        if (!isConst(wT)) throw new ModelError(`${name} ${base}: weights are not constant`);
        const o = convOptions(op);
        const [, H, W, C] = x.shape;
        const [wo, kh, kw, wi] = wT.shape;
        const wReal = dequantize(model, wT);
        let weights: Float32Array;
        let dims: number[];
        let group = 1;
        if (depthwise) {
          // [1, kh, kw, C×M] → [C×M, 1, kh, kw]
          const cm = wi;
          if (wo !== 1 || cm !== C * o.depthMultiplier) throw new ModelError(`${name} ${base}: weights [${wT.shape.join(',')}] do not match ${C} channels × ${o.depthMultiplier}`);
          weights = new Float32Array(wReal.length);
          for (let c = 0; c < cm; c++) for (let y = 0; y < kh; y++) for (let xx = 0; xx < kw; xx++) weights[(c * kh + y) * kw + xx] = wReal[(y * kw + xx) * cm + c];
          dims = [cm, 1, kh, kw];
          group = C;
        } else {
          // [O, kh, kw, I] → [O, I, kh, kw]
          if (wi !== C) throw new ModelError(`${name} ${base}: weights expect ${wi} input channels, the input has ${C}`);
          weights = new Float32Array(wReal.length);
          for (let oc = 0; oc < wo; oc++)
            for (let y = 0; y < kh; y++) for (let xx = 0; xx < kw; xx++) for (let ic = 0; ic < wi; ic++) weights[((oc * wi + ic) * kh + y) * kw + xx] = wReal[((oc * kh + y) * kw + xx) * wi + ic];
          dims = [wo, wi, kh, kw];
        }
        const inputs = [x.name];
        if (qdq && wT.quantization && (wT.type === TensorType.UINT8 || wT.type === TensorType.INT8)) {
          inputs.push(quantisedWeights(g, wT, weights, dims, base));
        } else {
          inputs.push(g.float(`${base}/W`, dims, weights));
        }
        const outC = dims[0];
        if (op.inputs.length > 2 && op.inputs[2] >= 0) {
          const bT = tensor(op.inputs[2]);
          const inQ = tensor(op.inputs[0]).quantization;
          const wQ = wT.quantization;
          const fallback = inQ && wQ ? Array.from(wQ.scale, (s) => s * inQ.scale[0]) : undefined;
          const b = dequantize(model, bT, fallback);
          if (b.length !== outC) throw new ModelError(`${name} ${base}: bias has ${b.length} values for ${outC} channels`);
          inputs.push(g.float(`${base}/B`, [outC], b));
        }
        const [pt, pb] = tfPadding(o.padding, H, kh, o.strideH, o.dilationH);
        const [pl, pr] = tfPadding(o.padding, W, kw, o.strideW, o.dilationW);
        const y = g.node('Conv', inputs, `${base}/conv`, {
          kernel_shape: ints([kh, kw]),
          strides: ints([o.strideH, o.strideW]),
          dilations: ints([o.dilationH, o.dilationW]),
          pads: ints([pt, pl, pb, pr]),
          group: int(group),
        });
        define(outT, activation(y, o.activation, base), true);
        break;
      }
      case BuiltinOp.AVERAGE_POOL_2D:
      case BuiltinOp.MAX_POOL_2D: {
        const x = value(op.inputs[0]);
        if (!x.nchw) throw new ModelError(`${name} ${base}: input is not a 4-D image tensor`);
        const o = poolOptions(op);
        const [, H, W] = x.shape;
        const avg = op.builtin === BuiltinOp.AVERAGE_POOL_2D;
        let y: string;
        if (o.filterH === H && o.filterW === W && (o.padding === Padding.VALID || (o.strideH >= H && o.strideW >= W))) {
          y = g.node(avg ? 'GlobalAveragePool' : 'GlobalMaxPool', [x.name], `${base}/pool`);
        } else {
          const [pt, pb] = tfPadding(o.padding, H, o.filterH, o.strideH);
          const [pl, pr] = tfPadding(o.padding, W, o.filterW, o.strideW);
          y = g.node(avg ? 'AveragePool' : 'MaxPool', [x.name], `${base}/pool`, {
            kernel_shape: ints([o.filterH, o.filterW]),
            strides: ints([o.strideH, o.strideW]),
            pads: ints([pt, pl, pb, pr]),
            ...(avg ? { count_include_pad: int(0) } : {}),
          });
        }
        define(outT, activation(y, o.activation, base), true);
        break;
      }
      case BuiltinOp.ADD:
      case BuiltinOp.MUL: {
        const a = values.get(op.inputs[0]) ?? values.get(op.inputs[1]);
        const nchw = Boolean(a?.nchw) && outT.shape.length === 4;
        const x = value(op.inputs[0], nchw);
        const z = value(op.inputs[1], nchw);
        const xn = nchw || !x.nchw ? x.name : plain(x);
        const zn = nchw || !z.nchw ? z.name : plain(z);
        const y = g.node(op.builtin === BuiltinOp.ADD ? 'Add' : 'Mul', [xn, zn], `${base}/${op.builtin === BuiltinOp.ADD ? 'add' : 'mul'}`);
        define(outT, activation(y, fusedActivation(op), base), nchw);
        break;
      }
      case BuiltinOp.RELU:
      case BuiltinOp.RELU6:
      case BuiltinOp.LOGISTIC: {
        const x = value(op.inputs[0]);
        const y =
          op.builtin === BuiltinOp.LOGISTIC
            ? g.node('Sigmoid', [x.name], `${base}/sigmoid`)
            : activation(x.name, op.builtin === BuiltinOp.RELU ? Activation.RELU : Activation.RELU6, base);
        define(outT, y, x.nchw);
        break;
      }
      case BuiltinOp.RESHAPE:
      case BuiltinOp.SQUEEZE: {
        const x = value(op.inputs[0]);
        const target = outT.shape;
        if (prod(target) !== prod(x.shape)) throw new ModelError(`${name} ${base}: cannot reshape [${x.shape.join(',')}] to [${target.join(',')}]`);
        const y = g.node('Reshape', [plain(x), g.int64(`${base}/shape`, target)], `${base}/reshape`);
        if (target.length === 4) define(outT, toNchw(y, target), true);
        else define(outT, y, false);
        break;
      }
      case BuiltinOp.SOFTMAX: {
        const x = value(op.inputs[0]);
        let xn = x.name;
        const beta = softmaxBeta(op);
        if (beta !== 1) xn = g.node('Mul', [xn, g.float(`${base}/beta`, [], [beta])], `${base}/scaled`);
        const axis = x.nchw ? 1 : x.shape.length - 1;
        // In qdq mode the softmax output keeps its float precision: it is the result.
        values.set(outT.index, { name: g.node('Softmax', [xn], `${base}/softmax`, { axis: int(axis) }), shape: outT.shape, nchw: x.nchw });
        break;
      }
      case BuiltinOp.FULLY_CONNECTED: {
        const x = value(op.inputs[0]);
        const wT = tensor(op.inputs[1]);
        if (!isConst(wT) || wT.shape.length !== 2) throw new ModelError(`${name} ${base}: weights must be a constant [out, in] matrix`);
        const [O, I] = wT.shape;
        const flat = g.node('Reshape', [plain(x), g.int64(`${base}/rows`, [-1, I])], `${base}/rows`);
        const inputs = [flat, g.float(`${base}/W`, [O, I], dequantize(model, wT))];
        if (op.inputs.length > 2 && op.inputs[2] >= 0) {
          const inQ = tensor(op.inputs[0]).quantization;
          const fallback = inQ && wT.quantization ? Array.from(wT.quantization.scale, (s) => s * inQ.scale[0]) : undefined;
          inputs.push(g.float(`${base}/B`, [O], dequantize(model, tensor(op.inputs[2]), fallback)));
        }
        let y = g.node('Gemm', inputs, `${base}/fc`, { transB: int(1) });
        y = activation(y, fusedActivation(op), base);
        if (outT.shape.length !== 2) y = g.node('Reshape', [y, g.int64(`${base}/shape`, outT.shape)], `${base}/reshape`);
        if (outT.shape.length === 4) define(outT, toNchw(y, outT.shape), true);
        else define(outT, y, false);
        break;
      }
      case BuiltinOp.MEAN: {
        const x = value(op.inputs[0]);
        const axesT = tensor(op.inputs[1]);
        const axes = Array.from(dequantize(model, axesT)).map((a) => (a < 0 ? a + x.shape.length : a));
        const keep = op.options?.uint8(0) ?? 0;
        if (!x.nchw) {
          define(outT, g.node('ReduceMean', [x.name], `${base}/mean`, { axes: ints(axes), keepdims: int(keep ? 1 : 0) }), false);
          break;
        }
        const mapped = axes.map((a) => NCHW_AXIS[a]);
        const y = g.node('ReduceMean', [x.name], `${base}/mean`, { axes: ints(mapped), keepdims: int(keep ? 1 : 0) });
        if (keep) define(outT, y, true);
        else if (axes.includes(1) && axes.includes(2) && !axes.includes(3)) define(outT, y, false); // [N, C] (or [C]) keeps its order
        else throw new ModelError(`${name} ${base}: reducing axes [${axes.join(',')}] without keep_dims is not supported`);
        break;
      }
      case BuiltinOp.PAD: {
        const x = value(op.inputs[0]);
        const pads = Array.from(dequantize(model, tensor(op.inputs[1])));
        const r = x.shape.length;
        const begin: number[] = new Array(r).fill(0);
        const end: number[] = new Array(r).fill(0);
        for (let a = 0; a < r; a++) {
          const to = x.nchw ? NCHW_AXIS[a] : a;
          begin[to] = pads[2 * a];
          end[to] = pads[2 * a + 1];
        }
        define(outT, g.node('Pad', [x.name, g.int64(`${base}/pads`, [...begin, ...end])], `${base}/pad`), x.nchw);
        break;
      }
      case BuiltinOp.CONCATENATION: {
        const parts = op.inputs.map((i) => value(i));
        const allNchw = parts.every((p) => p.nchw);
        let axis = op.options?.int32(0) ?? 0;
        if (axis < 0) axis += outT.shape.length;
        const y = g.node('Concat', parts.map((p) => (allNchw ? p.name : plain(p))), `${base}/concat`, { axis: int(allNchw ? NCHW_AXIS[axis] : axis) });
        define(outT, activation(y, op.options?.int8(1) ?? 0, base), allNchw);
        break;
      }
      case BuiltinOp.QUANTIZE:
      case BuiltinOp.DEQUANTIZE: {
        // Float activations need neither; in qdq mode a QUANTIZE output is requantised by define().
        const x = value(op.inputs[0]);
        if (op.builtin === BuiltinOp.QUANTIZE) define(outT, x.name, x.nchw);
        else values.set(outT.index, x);
        break;
      }
      default:
        throw new ModelError(`unsupported TFLite operator ${name} (output ${outT.name}); supported: CONV_2D, DEPTHWISE_CONV_2D, ADD, MUL, AVERAGE_POOL_2D, MAX_POOL_2D, RESHAPE, SQUEEZE, SOFTMAX, FULLY_CONNECTED, MEAN, PAD, CONCATENATION, RELU, RELU6, LOGISTIC, QUANTIZE, DEQUANTIZE`);
    }
  }

  const outT = tensor(sg.outputs[0]);
  const out = values.get(outT.index);
  if (!out) throw new ModelError(`output ${outT.name} is never computed`);
  let final = out.nchw ? plain(out) : out.name;
  // In qdq mode the output is the float softmax, not its uint8 rounding; elsewhere dequantised.
  g.nodes.push({ opType: 'Identity', inputs: [final], outputs: [ONNX_OUTPUT], name: 'output' });
  final = ONNX_OUTPUT;
  const inputShape = [1, inC, inH, inW];
  const onnx = encodeModel({
    graphName: 'tflite_converted',
    docString: 'converted from TFLite by vidembed (src/models/imagenet/convert.ts)',
    producerName: 'vidembed-tflite2onnx',
    opset: 17,
    inputs: [{ name: ONNX_INPUT, elemType: 'FLOAT', shape: inputShape }],
    outputs: [{ name: final, elemType: 'FLOAT', shape: outT.shape }],
    nodes: g.nodes,
    initializers: g.inits,
    metadata: {
      'vidembed.converter': 'tflite2onnx/1',
      'vidembed.mode': qdq ? 'qdq' : 'float',
      'vidembed.input': 'RGB 0..255, NCHW float32',
      ...opts.metadata,
    },
  });
  return { onnx, inputName: ONNX_INPUT, inputShape, outputName: final, outputShape: outT.shape, ops };
}

/** qdq mode: uint8/int8 weights (already in ONNX layout) behind a DequantizeLinear (per-channel on axis 0). */
function quantisedWeights(g: GraphBuilder, wT: TfliteTensor, real: Float32Array, dims: number[], base: string): string {
  const q = wT.quantization!;
  const signed = wT.type === TensorType.INT8;
  const channels = dims[0];
  const perChannel = q.scale.length > 1;
  const scale = perChannel ? Float32Array.from(q.scale) : Float32Array.from([q.scale[0]]);
  const zp = perChannel ? q.zeroPoint.slice(0, channels) : [q.zeroPoint[0] ?? 0];
  // Requantise the (transposed) real values back to integers: exact, they came from integers.
  const per = real.length / channels;
  const data = signed ? new Int8Array(real.length) : new Uint8Array(real.length);
  for (let i = 0; i < real.length; i++) {
    const c = perChannel ? Math.floor(i / per) : 0;
    data[i] = Math.round(real[i] / scale[c]) + (zp[c] ?? zp[0]);
  }
  const w = g.init(`${base}/Wq`, signed ? 'INT8' : 'UINT8', dims, data);
  const s = g.float(`${base}/Ws`, perChannel ? [channels] : [], scale);
  const z = g.init(`${base}/Wz`, signed ? 'INT8' : 'UINT8', perChannel ? [channels] : [], signed ? Int8Array.from(zp) : Uint8Array.from(zp));
  return g.node('DequantizeLinear', [w, s, z], `${base}/W`, perChannel ? { axis: int(0) } : undefined);
}

/**
 * A hand-written reader for the few tables of the TFLite flatbuffer schema (tensorflow/lite/schema/
 * schema.fbs) needed to convert a convolutional classifier: Model → operator_codes, subgraphs
 * (tensors, inputs, outputs, operators with their builtin options), buffers.
 *
 * Flatbuffers in brief: a table starts with an int32 offset back to its vtable; the vtable is uint16
 * [vtable bytes, table bytes, field offsets…]; a field offset of 0 (or past the vtable's end) means
 * "absent, use the default". Strings, vectors and sub-tables are stored as uint32 offsets relative to
 * the position of the offset itself. Everything is little-endian.
 */
import { ModelError } from '../../api/errors.js';

/** TensorType (schema.fbs). */
export const TensorType = {
  FLOAT32: 0,
  FLOAT16: 1,
  INT32: 2,
  UINT8: 3,
  INT64: 4,
  STRING: 5,
  BOOL: 6,
  INT16: 7,
  COMPLEX64: 8,
  INT8: 9,
} as const;

/** The BuiltinOperator codes this project handles (schema.fbs numbering). */
export const BuiltinOp = {
  ADD: 0,
  AVERAGE_POOL_2D: 1,
  CONCATENATION: 2,
  CONV_2D: 3,
  DEPTHWISE_CONV_2D: 4,
  DEQUANTIZE: 6,
  FULLY_CONNECTED: 9,
  LOGISTIC: 14,
  MAX_POOL_2D: 17,
  MUL: 18,
  RELU: 19,
  RELU6: 21,
  RESHAPE: 22,
  SOFTMAX: 25,
  PAD: 34,
  MEAN: 40,
  SQUEEZE: 43,
  QUANTIZE: 114,
} as const;

export const BUILTIN_OP_NAMES: Record<number, string> = Object.fromEntries(Object.entries(BuiltinOp).map(([k, v]) => [v, k]));

/** ActivationFunctionType. */
export const Activation = { NONE: 0, RELU: 1, RELU_N1_TO_1: 2, RELU6: 3, TANH: 4, SIGN_BIT: 5 } as const;
/** Padding. */
export const Padding = { SAME: 0, VALID: 1 } as const;

export interface Quantization {
  scale: Float32Array;
  zeroPoint: number[];
  /** Axis the per-channel scales run along (0 when per-tensor). */
  quantizedDimension: number;
}

export interface TfliteTensor {
  index: number;
  name: string;
  shape: number[];
  type: number;
  /** Index into Model.buffers (0 = the empty sentinel buffer: not a constant). */
  buffer: number;
  quantization?: Quantization;
}

export interface TfliteOperator {
  opcode: number;
  /** Builtin op code (BuiltinOperator), or -1 for a custom op. */
  builtin: number;
  customCode?: string;
  /** Tensor indices; -1 = optional input left out. */
  inputs: number[];
  outputs: number[];
  /** The builtin options table (read lazily with the helpers below), or null. */
  options: FbTable | null;
}

export interface TfliteSubgraph {
  name: string;
  tensors: TfliteTensor[];
  inputs: number[];
  outputs: number[];
  operators: TfliteOperator[];
}

export interface TfliteModel {
  version: number;
  description: string;
  subgraphs: TfliteSubgraph[];
  /** Contents of each buffer (empty for buffer 0 and for activations). */
  buffers: Uint8Array[];
}

/** A position inside a flatbuffer where a table starts. */
export class FbTable {
  constructor(
    readonly bytes: Uint8Array,
    readonly view: DataView,
    readonly pos: number,
  ) {}

  /** Byte position of field `i`, or 0 when absent. */
  field(i: number): number {
    const vt = this.pos - this.view.getInt32(this.pos, true);
    const vtSize = this.view.getUint16(vt, true);
    const at = 4 + 2 * i;
    if (at + 2 > vtSize) return 0;
    const off = this.view.getUint16(vt + at, true);
    return off ? this.pos + off : 0;
  }

  int8(i: number, def = 0): number {
    const p = this.field(i);
    return p ? this.view.getInt8(p) : def;
  }

  uint8(i: number, def = 0): number {
    const p = this.field(i);
    return p ? this.view.getUint8(p) : def;
  }

  int32(i: number, def = 0): number {
    const p = this.field(i);
    return p ? this.view.getInt32(p, true) : def;
  }

  uint32(i: number, def = 0): number {
    const p = this.field(i);
    return p ? this.view.getUint32(p, true) : def;
  }

  uint64(i: number, def = 0): number {
    const p = this.field(i);
    return p ? Number(this.view.getBigUint64(p, true)) : def;
  }

  float32(i: number, def = 0): number {
    const p = this.field(i);
    return p ? this.view.getFloat32(p, true) : def;
  }

  private deref(p: number): number {
    return p + this.view.getUint32(p, true);
  }

  table(i: number): FbTable | null {
    const p = this.field(i);
    return p ? new FbTable(this.bytes, this.view, this.deref(p)) : null;
  }

  string(i: number): string {
    const p = this.field(i);
    if (!p) return '';
    const s = this.deref(p);
    const n = this.view.getUint32(s, true);
    return new TextDecoder().decode(this.bytes.subarray(s + 4, s + 4 + n));
  }

  /** [start of the first element, element count] of a vector field, or null. */
  private vector(i: number): [number, number] | null {
    const p = this.field(i);
    if (!p) return null;
    const v = this.deref(p);
    return [v + 4, this.view.getUint32(v, true)];
  }

  int32s(i: number): number[] {
    const v = this.vector(i);
    if (!v) return [];
    const out: number[] = new Array(v[1]);
    for (let k = 0; k < v[1]; k++) out[k] = this.view.getInt32(v[0] + 4 * k, true);
    return out;
  }

  float32s(i: number): Float32Array {
    const v = this.vector(i);
    const out = new Float32Array(v ? v[1] : 0);
    for (let k = 0; k < out.length; k++) out[k] = this.view.getFloat32(v![0] + 4 * k, true);
    return out;
  }

  int64s(i: number): number[] {
    const v = this.vector(i);
    if (!v) return [];
    const out: number[] = new Array(v[1]);
    for (let k = 0; k < v[1]; k++) out[k] = Number(this.view.getBigInt64(v[0] + 8 * k, true));
    return out;
  }

  /** A [ubyte] vector as a view (no copy). */
  ubytes(i: number): Uint8Array {
    const v = this.vector(i);
    return v ? this.bytes.subarray(v[0], v[0] + v[1]) : new Uint8Array(0);
  }

  tables(i: number): FbTable[] {
    const v = this.vector(i);
    if (!v) return [];
    const out: FbTable[] = new Array(v[1]);
    for (let k = 0; k < v[1]; k++) out[k] = new FbTable(this.bytes, this.view, this.deref(v[0] + 4 * k));
    return out;
  }
}

/** Builtin options tables, field by field (schema.fbs). */
export interface ConvOptions {
  padding: number;
  strideW: number;
  strideH: number;
  activation: number;
  dilationW: number;
  dilationH: number;
  /** Depthwise only. */
  depthMultiplier: number;
}

export function convOptions(op: TfliteOperator): ConvOptions {
  const t = op.options;
  if (op.builtin === BuiltinOp.DEPTHWISE_CONV_2D) {
    // DepthwiseConv2DOptions: padding, stride_w, stride_h, depth_multiplier, fused_activation_function, dilation_w, dilation_h
    return {
      padding: t?.int8(0) ?? 0,
      strideW: t?.int32(1, 1) ?? 1,
      strideH: t?.int32(2, 1) ?? 1,
      depthMultiplier: t?.int32(3, 1) ?? 1,
      activation: t?.int8(4) ?? 0,
      dilationW: t?.int32(5, 1) ?? 1,
      dilationH: t?.int32(6, 1) ?? 1,
    };
  }
  // Conv2DOptions: padding, stride_w, stride_h, fused_activation_function, dilation_w, dilation_h
  return {
    padding: t?.int8(0) ?? 0,
    strideW: t?.int32(1, 1) ?? 1,
    strideH: t?.int32(2, 1) ?? 1,
    activation: t?.int8(3) ?? 0,
    dilationW: t?.int32(4, 1) ?? 1,
    dilationH: t?.int32(5, 1) ?? 1,
    depthMultiplier: 1,
  };
}

export interface PoolOptions {
  padding: number;
  strideW: number;
  strideH: number;
  filterW: number;
  filterH: number;
  activation: number;
}

/** Pool2DOptions: padding, stride_w, stride_h, filter_width, filter_height, fused_activation_function. */
export function poolOptions(op: TfliteOperator): PoolOptions {
  const t = op.options;
  return {
    padding: t?.int8(0) ?? 0,
    strideW: t?.int32(1, 1) ?? 1,
    strideH: t?.int32(2, 1) ?? 1,
    filterW: t?.int32(3, 1) ?? 1,
    filterH: t?.int32(4, 1) ?? 1,
    activation: t?.int8(5) ?? 0,
  };
}

/** The fused activation of ADD / MUL / FULLY_CONNECTED (field 0 of their options). */
export function fusedActivation(op: TfliteOperator): number {
  return op.options?.int8(0) ?? 0;
}

/** ReshapeOptions.new_shape (may be absent: the shape is then the second input). */
export function reshapeNewShape(op: TfliteOperator): number[] | null {
  const s = op.options?.int32s(0);
  return s && s.length ? s : null;
}

/** SoftmaxOptions.beta (default 1). */
export function softmaxBeta(op: TfliteOperator): number {
  return op.options?.float32(0, 1) ?? 1;
}

/** Parses a `.tflite` file. Throws ModelError when it is not one. */
export function readTflite(bytes: Uint8Array): TfliteModel {
  if (bytes.length < 8) throw new ModelError('not a TFLite model: file too short');
  const ident = String.fromCharCode(bytes[4], bytes[5], bytes[6], bytes[7]);
  if (ident !== 'TFL3') throw new ModelError(`not a TFLite model: file identifier ${JSON.stringify(ident)}, expected "TFL3"`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  try {
    const root = new FbTable(bytes, view, view.getUint32(0, true));
    // Model: version 0, operator_codes 1, subgraphs 2, description 3, buffers 4
    const codes = root.tables(1).map((c) => {
      // OperatorCode: deprecated_builtin_code (byte) 0, custom_code 1, version 2, builtin_code (int) 3
      const deprecated = c.int8(0);
      const builtin = Math.max(deprecated, c.int32(3));
      const custom = c.string(1);
      return { builtin: custom ? -1 : builtin, custom };
    });
    const buffers = root.tables(4).map((b) => {
      // Buffer: data 0, offset 1, size 2 (offset/size: data stored after the flatbuffer, > 2 GB models)
      const offset = b.uint64(1);
      const size = b.uint64(2);
      if (offset > 1) return bytes.subarray(offset, offset + size);
      return b.ubytes(0);
    });
    const subgraphs = root.tables(2).map((sg): TfliteSubgraph => {
      // SubGraph: tensors 0, inputs 1, outputs 2, operators 3, name 4
      const tensors = sg.tables(0).map((t, index): TfliteTensor => {
        // Tensor: shape 0, type 1, buffer 2, name 3, quantization 4
        const q = t.table(4);
        let quantization: Quantization | undefined;
        if (q) {
          // QuantizationParameters: min 0, max 1, scale 2, zero_point 3, details_type 4, details 5, quantized_dimension 6
          const scale = q.float32s(2);
          if (scale.length) quantization = { scale, zeroPoint: q.int64s(3), quantizedDimension: q.int32(6) };
        }
        return { index, name: t.string(3), shape: t.int32s(0), type: t.int8(1), buffer: t.uint32(2), ...(quantization ? { quantization } : {}) };
      });
      const operators = sg.tables(3).map((o): TfliteOperator => {
        // Operator: opcode_index 0, inputs 1, outputs 2, builtin_options_type 3, builtin_options 4
        const opcode = o.uint32(0);
        const code = codes[opcode];
        if (!code) throw new ModelError(`operator refers to missing operator code ${opcode}`);
        return { opcode, builtin: code.builtin, ...(code.custom ? { customCode: code.custom } : {}), inputs: o.int32s(1), outputs: o.int32s(2), options: o.table(4) };
      });
      return { name: sg.string(4), tensors, inputs: sg.int32s(1), outputs: sg.int32s(2), operators };
    });
    return { version: root.uint32(0), description: root.string(3), subgraphs, buffers };
  } catch (err) {
    if (err instanceof ModelError) throw err;
    throw new ModelError(`corrupt TFLite model (${(err as Error).message})`, { cause: err });
  }
}

/** The constant data of a tensor (empty when it is an activation). */
export function tensorData(model: TfliteModel, t: TfliteTensor): Uint8Array {
  return model.buffers[t.buffer] ?? new Uint8Array(0);
}

/** Human-readable summary of the graph (debugging, error messages). */
export function describeTflite(model: TfliteModel): string {
  const sg = model.subgraphs[0];
  const lines = [`subgraphs ${model.subgraphs.length}, tensors ${sg.tensors.length}, operators ${sg.operators.length}`];
  const fmt = (i: number) => {
    if (i < 0) return '-';
    const t = sg.tensors[i];
    const q = t.quantization ? ` q(${t.quantization.scale.length > 1 ? `${t.quantization.scale.length} scales` : `${t.quantization.scale[0]},${t.quantization.zeroPoint[0]}`})` : '';
    return `#${i} ${t.name} [${t.shape.join(',')}] t${t.type}${t.buffer && model.buffers[t.buffer]?.length ? ' const' : ''}${q}`;
  };
  for (const op of sg.operators) lines.push(`${BUILTIN_OP_NAMES[op.builtin] ?? op.customCode ?? op.builtin}: ${op.inputs.map(fmt).join(' ; ')} -> ${op.outputs.map(fmt).join(' ; ')}`);
  return lines.join('\n');
}

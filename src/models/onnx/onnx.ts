/**
 * Writes ONNX models (ModelProto, onnx.proto3) from a small typed description. Enough of the format
 * for graphs of standard operators with float/int initialisers and symbolic (dynamic) axes; used to
 * generate CLIP-shaped test models where the real weights cannot be downloaded.
 *
 * Field numbers are from onnx/onnx.proto (IR version 8).
 */
import { ProtoWriter } from './proto.js';

export const TensorDataType = {
  FLOAT: 1,
  UINT8: 2,
  INT8: 3,
  INT32: 6,
  INT64: 7,
  BOOL: 9,
} as const;
export type TensorDataTypeName = keyof typeof TensorDataType;

/** A dimension: a fixed size, or a symbolic name (a dynamic axis such as `batch_size`). */
export type Dim = number | string;

export interface ValueInfo {
  name: string;
  elemType: TensorDataTypeName;
  shape: Dim[];
}

export interface Initializer {
  name: string;
  dataType: 'FLOAT' | 'INT64' | 'INT32' | 'UINT8' | 'INT8';
  dims: number[];
  /**
   * Float32Array for FLOAT, BigInt64Array for INT64, Int32Array for INT32, Uint8Array for UINT8,
   * Int8Array for INT8: written as raw_data.
   */
  data: Float32Array | BigInt64Array | Int32Array | Uint8Array | Int8Array;
}

export type AttributeValue =
  | { type: 'int'; value: number }
  | { type: 'float'; value: number }
  | { type: 'string'; value: string }
  | { type: 'ints'; value: number[] }
  | { type: 'floats'; value: number[] };

export interface NodeSpec {
  opType: string;
  inputs: string[];
  outputs: string[];
  name?: string;
  domain?: string;
  attributes?: Record<string, AttributeValue>;
}

export interface ModelSpec {
  graphName: string;
  inputs: ValueInfo[];
  outputs: ValueInfo[];
  nodes: NodeSpec[];
  initializers?: Initializer[];
  /** Default-domain opset; 17 keeps ReduceMean's `axes` as an attribute. */
  opset?: number;
  irVersion?: number;
  producerName?: string;
  producerVersion?: string;
  docString?: string;
  metadata?: Record<string, string>;
}

const ATTR_TYPE = { float: 1, int: 2, string: 3, floats: 6, ints: 7 } as const;

function writeValueInfo(w: ProtoWriter, v: ValueInfo): void {
  w.string(1, v.name); // ValueInfoProto.name
  w.message(2, (type) =>
    // TypeProto.tensor_type
    type.message(1, (tensor) => {
      tensor.int(1, TensorDataType[v.elemType]); // elem_type
      tensor.message(2, (shape) => {
        for (const d of v.shape) {
          // TensorShapeProto.dim: dim_value = 1, dim_param = 2
          shape.message(1, (dim) => (typeof d === 'number' ? dim.int(1, d) : dim.string(2, d)));
        }
      });
    }),
  );
}

function writeTensor(w: ProtoWriter, t: Initializer): void {
  w.packedInts(1, t.dims); // dims
  w.int(2, TensorDataType[t.dataType]); // data_type
  w.string(8, t.name); // name
  // A view, not a copy (little-endian hosts): the bytes are copied once, when the model is finished.
  w.bytes(9, new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength)); // raw_data
}

function writeAttribute(w: ProtoWriter, name: string, a: AttributeValue): void {
  w.string(1, name);
  switch (a.type) {
    case 'float':
      w.float(2, a.value);
      break;
    case 'int':
      w.int(3, a.value);
      break;
    case 'string':
      w.string(4, a.value);
      break;
    case 'floats':
      w.packedFloats(7, a.value);
      break;
    case 'ints':
      w.packedInts(8, a.value);
      break;
  }
  w.int(20, ATTR_TYPE[a.type]); // AttributeProto.type
}

function writeNode(w: ProtoWriter, n: NodeSpec, index: number): void {
  for (const i of n.inputs) w.string(1, i);
  for (const o of n.outputs) w.string(2, o);
  w.string(3, n.name ?? `${n.opType}_${index}`);
  w.string(4, n.opType);
  for (const [k, v] of Object.entries(n.attributes ?? {})) w.message(5, (a) => writeAttribute(a, k, v));
  if (n.domain) w.string(7, n.domain);
}

/** Serialises a model to the bytes of a `.onnx` file. */
export function encodeModel(spec: ModelSpec): Uint8Array {
  const w = new ProtoWriter();
  w.int(1, spec.irVersion ?? 8); // ir_version
  w.string(2, spec.producerName ?? 'vidembed'); // producer_name
  w.string(3, spec.producerVersion ?? '1'); // producer_version
  if (spec.docString) w.string(6, spec.docString);
  w.message(7, (g) => {
    // GraphProto
    spec.nodes.forEach((n, i) => g.message(1, (nw) => writeNode(nw, n, i)));
    g.string(2, spec.graphName);
    for (const t of spec.initializers ?? []) g.message(5, (tw) => writeTensor(tw, t));
    for (const v of spec.inputs) g.message(11, (vw) => writeValueInfo(vw, v));
    for (const v of spec.outputs) g.message(12, (vw) => writeValueInfo(vw, v));
  });
  w.message(8, (op) => {
    // OperatorSetIdProto: domain "" (default), version
    op.string(1, '');
    op.int(2, spec.opset ?? 17);
  });
  for (const [key, value] of Object.entries(spec.metadata ?? {})) {
    w.message(14, (m) => m.string(1, key).string(2, value)); // metadata_props
  }
  return w.finish();
}

/**
 * A small pure-TypeScript interpreter of *quantised* (uint8) TFLite graphs: the reference the ONNX
 * conversion (src/models/imagenet/convert.ts) is checked against. It computes what the TFLite
 * uint8 kernels compute — integer accumulation of (q - zero_point) products plus the int32 bias,
 * then requantisation to the output's scale and zero point, clamped to the fused activation's range
 * — except that the requantisation multiply is done in double precision instead of TFLite's 32-bit
 * fixed point (the two can differ by one step on exact rounding ties, nothing more).
 *
 * Supports what MobileNet-style classifiers use: CONV_2D, DEPTHWISE_CONV_2D, ADD, AVERAGE_POOL_2D,
 * RESHAPE, SOFTMAX (computed in float from the uint8 logits). Slow (≈ 1 s per 224×224 image) but
 * independent of the converter: it never builds ONNX and reads the flatbuffer only through
 * src/models/imagenet/tflite.ts.
 */
import {
  Activation,
  BUILTIN_OP_NAMES,
  BuiltinOp,
  convOptions,
  fusedActivation,
  poolOptions,
  tensorData,
  TensorType,
  type TfliteModel,
  type TfliteTensor,
} from '../../src/models/imagenet/tflite.js';
import { tfPadding } from '../../src/models/imagenet/convert.js';

export interface ReferenceResult {
  /** The uint8 values of the tensor feeding SOFTMAX (the quantised logits). */
  logitsQ: Uint8Array;
  /** softmax of the dequantised logits (before the output's own uint8 rounding). */
  probabilities: Float64Array;
  /** The uint8 output of the graph, as TFLite would return it (softmax rounded to its scale). */
  outputQ: Uint8Array;
  outputScale: number;
}

const roundHalfAway = (v: number) => (v >= 0 ? Math.floor(v + 0.5) : Math.ceil(v - 0.5));

function quant(t: TfliteTensor): { s: number; z: number } {
  const q = t.quantization;
  if (!q || q.scale.length !== 1) throw new Error(`reference: tensor ${t.name} is not per-tensor quantised`);
  return { s: q.scale[0], z: q.zeroPoint[0] ?? 0 };
}

function actRange(code: number, s: number, z: number): [number, number] {
  const q = (r: number) => z + roundHalfAway(r / s);
  switch (code) {
    case Activation.NONE:
      return [0, 255];
    case Activation.RELU:
      return [Math.max(0, q(0)), 255];
    case Activation.RELU6:
      return [Math.max(0, q(0)), Math.min(255, q(6))];
    case Activation.RELU_N1_TO_1:
      return [Math.max(0, q(-1)), Math.min(255, q(1))];
    default:
      throw new Error(`reference: activation ${code}`);
  }
}

/** Runs the graph on one uint8 NHWC image (length H × W × C). */
export function runQuantisedReference(model: TfliteModel, image: Uint8Array): ReferenceResult {
  const sg = model.subgraphs[0];
  const mem = new Map<number, Uint8Array>();
  const inT = sg.tensors[sg.inputs[0]];
  if (inT.type !== TensorType.UINT8) throw new Error('reference: uint8 input only');
  if (image.length !== inT.shape.reduce((a, b) => a * b, 1)) throw new Error('reference: wrong image size');
  mem.set(inT.index, image);
  let logitsQ: Uint8Array | undefined;
  let logitsT: TfliteTensor | undefined;
  let probabilities: Float64Array | undefined;
  for (const op of sg.operators) {
    const inT0 = sg.tensors[op.inputs[0]];
    const outT = sg.tensors[op.outputs[0]];
    const x = mem.get(inT0.index);
    if (!x) throw new Error(`reference: ${inT0.name} not computed`);
    const oq = quant(outT);
    const out = new Uint8Array(outT.shape.reduce((a, b) => a * b, 1));
    switch (op.builtin) {
      case BuiltinOp.CONV_2D:
      case BuiltinOp.DEPTHWISE_CONV_2D: {
        const depthwise = op.builtin === BuiltinOp.DEPTHWISE_CONV_2D;
        const o = convOptions(op);
        const wT = sg.tensors[op.inputs[1]];
        const bT = op.inputs[2] >= 0 ? sg.tensors[op.inputs[2]] : undefined;
        const iq = quant(inT0);
        const wq = wT.quantization!;
        const [, H, W, C] = inT0.shape;
        const [, OH, OW, OC] = outT.shape;
        const [, kh, kw] = wT.shape;
        const wRaw = tensorData(model, wT);
        const wc = new Int16Array(wRaw.length);
        const perCh = wq.scale.length > 1;
        const wAxisInner = depthwise ? 1 : kh * kw * wT.shape[3];
        for (let i = 0; i < wRaw.length; i++) {
          const c = perCh ? (depthwise ? i % OC : Math.floor(i / wAxisInner)) : 0;
          wc[i] = wRaw[i] - (wq.zeroPoint[perCh ? c : 0] ?? 0);
        }
        const bias = new Int32Array(OC);
        if (bT) {
          const b = tensorData(model, bT);
          const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
          for (let c = 0; c < OC; c++) bias[c] = dv.getInt32(4 * c, true);
        }
        const mult = new Float64Array(OC);
        for (let c = 0; c < OC; c++) mult[c] = (iq.s * wq.scale[perCh ? c : 0]) / oq.s;
        const xc = new Int16Array(x.length);
        for (let i = 0; i < x.length; i++) xc[i] = x[i] - iq.z;
        const [lo, hi] = actRange(o.activation, oq.s, oq.z);
        const [pt] = tfPadding(o.padding, H, kh, o.strideH, o.dilationH);
        const [pl] = tfPadding(o.padding, W, kw, o.strideW, o.dilationW);
        const mDepth = depthwise ? OC / C : 1;
        for (let oy = 0; oy < OH; oy++) {
          for (let ox = 0; ox < OW; ox++) {
            const obase = (oy * OW + ox) * OC;
            for (let oc = 0; oc < OC; oc++) {
              let acc = bias[oc];
              for (let ky = 0; ky < kh; ky++) {
                const iy = oy * o.strideH - pt + ky * o.dilationH;
                if (iy < 0 || iy >= H) continue;
                for (let kx = 0; kx < kw; kx++) {
                  const ix = ox * o.strideW - pl + kx * o.dilationW;
                  if (ix < 0 || ix >= W) continue;
                  const ibase = (iy * W + ix) * C;
                  if (depthwise) {
                    acc += xc[ibase + Math.floor(oc / mDepth)] * wc[(ky * kw + kx) * OC + oc];
                  } else {
                    const wbase = ((oc * kh + ky) * kw + kx) * C;
                    for (let ic = 0; ic < C; ic++) acc += xc[ibase + ic] * wc[wbase + ic];
                  }
                }
              }
              const v = roundHalfAway(acc * mult[oc]) + oq.z;
              out[obase + oc] = v < lo ? lo : v > hi ? hi : v;
            }
          }
        }
        break;
      }
      case BuiltinOp.ADD: {
        const t1 = sg.tensors[op.inputs[1]];
        const y = mem.get(t1.index);
        if (!y) throw new Error(`reference: ${t1.name} not computed`);
        const a = quant(inT0);
        const b = quant(t1);
        const [lo, hi] = actRange(fusedActivation(op), oq.s, oq.z);
        for (let i = 0; i < out.length; i++) {
          const v = roundHalfAway(((x[i] - a.z) * a.s + (y[i] - b.z) * b.s) / oq.s) + oq.z;
          out[i] = v < lo ? lo : v > hi ? hi : v;
        }
        break;
      }
      case BuiltinOp.AVERAGE_POOL_2D: {
        const o = poolOptions(op);
        const iq = quant(inT0);
        const [, H, W, C] = inT0.shape;
        const [, OH, OW] = outT.shape;
        const [pt] = tfPadding(o.padding, H, o.filterH, o.strideH);
        const [pl] = tfPadding(o.padding, W, o.filterW, o.strideW);
        const [lo, hi] = actRange(o.activation, oq.s, oq.z);
        const same = iq.s === oq.s && iq.z === oq.z;
        for (let oy = 0; oy < OH; oy++)
          for (let ox = 0; ox < OW; ox++)
            for (let c = 0; c < C; c++) {
              let acc = 0;
              let n = 0;
              for (let ky = 0; ky < o.filterH; ky++) {
                const iy = oy * o.strideH - pt + ky;
                if (iy < 0 || iy >= H) continue;
                for (let kx = 0; kx < o.filterW; kx++) {
                  const ix = ox * o.strideW - pl + kx;
                  if (ix < 0 || ix >= W) continue;
                  acc += x[(iy * W + ix) * C + c];
                  n++;
                }
              }
              // TFLite: (sum + count / 2) / count in integers when input and output share quantisation.
              const v = same ? Math.floor((acc + Math.floor(n / 2)) / n) : roundHalfAway(((acc / n - iq.z) * iq.s) / oq.s) + oq.z;
              out[(oy * OW + ox) * C + c] = v < lo ? lo : v > hi ? hi : v;
            }
        break;
      }
      case BuiltinOp.RESHAPE:
        out.set(x);
        break;
      case BuiltinOp.SOFTMAX: {
        const iq = quant(inT0);
        const beta = op.options?.float32(0, 1) ?? 1;
        logitsQ = x;
        logitsT = inT0;
        let max = -Infinity;
        for (let i = 0; i < x.length; i++) max = Math.max(max, x[i]);
        const p = new Float64Array(x.length);
        let sum = 0;
        for (let i = 0; i < x.length; i++) sum += p[i] = Math.exp(beta * iq.s * (x[i] - max));
        for (let i = 0; i < x.length; i++) {
          p[i] /= sum;
          const v = roundHalfAway(p[i] / oq.s) + oq.z;
          out[i] = v < 0 ? 0 : v > 255 ? 255 : v;
        }
        probabilities = p;
        break;
      }
      default:
        throw new Error(`reference: unsupported operator ${BUILTIN_OP_NAMES[op.builtin] ?? op.builtin}`);
    }
    mem.set(outT.index, out);
  }
  const outT = sg.tensors[sg.outputs[0]];
  if (!logitsQ || !probabilities || !logitsT) throw new Error('reference: the graph has no SOFTMAX');
  return { logitsQ, probabilities, outputQ: mem.get(outT.index)!, outputScale: quant(outT).s };
}

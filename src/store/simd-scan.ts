/**
 * Brute-force dot products with WebAssembly SIMD: `scanI8`, the approximate scan of the in-memory
 * vector index (int8 rows times an int16 query, i32x4.dot_i16x8_s, each sum scaled by its row's
 * f32 scale), `quantiseI8`, which makes its rows, and `scan`, the exact f32 scan (f32x4, four
 * accumulators) that benchmarks measure it against. Built from simd-scan.wat beside this file with `wat2wasm simd-scan.wat` (npm package
 * wabt); the bytes are inlined so nothing is read at run time.
 */
const WASM_BASE64 = 'AGFzbQEAAAABGQNgBX9/f39/AGAGf39/f39/AGAEf39/fwADBAMAAQIFAwEAAQcmBANtZW0CAARzY2FuAAAHc2Nhbl9pOAABC3F1YW50aXNlX2k4AAIKsAYDtgIDBH8EewJ/IANBAnQhCCABIQcCQANAIAUgAk8NAf0MAAAAAAAAAAAAAAAAAAAAACEJ/QwAAAAAAAAAAAAAAAAAAAAAIQr9DAAAAAAAAAAAAAAAAAAAAAAhC/0MAAAAAAAAAAAAAAAAAAAAACEMQQAhBgJAA0AgBiAITw0BIAAgBmohDSAHIAZqIQ4gCSAO/QAEACAN/QAEAP3mAf3kASEJIAogDv0ABBAgDf0ABBD95gH95AEhCiALIA79AAQgIA39AAQg/eYB/eQBIQsgDCAO/QAEMCAN/QAEMP3mAf3kASEMIAZBwABqIQYMAAsLIAkgCv3kASALIAz95AH95AEhCSAEIAVBAnRqIAn9HwAgCf0fAZIgCf0fAiAJ/R8DkpI4AgAgByAIaiEHIAVBAWohBQwACwsL4AEDA38CewJ/IAEhCAJAA0AgBiACTw0B/QwAAAAAAAAAAAAAAAAAAAAAIQn9DAAAAAAAAAAAAAAAAAAAAAAhCkEAIQcCQANAIAcgA08NASAIIAdqIQwgACAHQQF0aiELIAkgDP0BAwAgC/0ABAD9ugH9rgEhCSAKIAz9AQMIIAv9AAQQ/boB/a4BIQogB0EQaiEHDAALCyAJIAr9rgEhCSAFIAZBAnRqIAQgBkECdGoqAgAgCf0bACAJ/RsBaiAJ/RsCIAn9GwNqarKUOAIAIAggA2ohCCAGQQFqIQYMAAsLC5MCBAJ/A3sBfQF7IAAgAUECdGohBSAAIQQCQANAIAQgBU8NASAE/QAEACEIIAYgCP3gAf3pASEGIAcgCCAI/eYB/eQBIQcgBEEQaiEEDAALCyAG/R8AIAb9HwGXIAb9HwIgBv0fA5eXIQkgAyAJOAIAIAMgB/0fACAH/R8BkiAH/R8CIAf9HwOSkjgCBCAJQwAAAABeBEBDAAD+QiAJlf0TIQoLIAAhBAJAA0AgBCAFTw0BIAIgBP0ABAAgCv3mAf1q/fgBIAT9AAQQIAr95gH9av34Af2FASAE/QAEICAK/eYB/Wr9+AEgBP0ABDAgCv3mAf1q/fgB/YUB/WX9CwQAIAJBEGohAiAEQcAAaiEEDAALCws=';

export interface SimdScan {
  memory: WebAssembly.Memory;
  /** out[i] = dot(q, M[i]) for i < n; q, m, out are byte offsets (f32); dim % 16 == 0. */
  scan(q: number, m: number, n: number, dim: number, out: number): void;
  /**
   * out[i] = scale[i] * dot(q, M[i]) for i < n. Byte offsets: q (int16 x stride), m (int8 rows,
   * `stride` bytes apart), scale and out (f32 x n); stride % 16 == 0.
   */
  scanI8(q: number, m: number, n: number, stride: number, scale: number, out: number): void;
  /**
   * One row for scanI8: dst[j] = round(x[j] * 127 / max|x|) for j < stride (x: f32, zero-padded to
   * stride, stride % 16 == 0); writes max|x| and |x|^2 as f32 at `info`.
   */
  quantiseI8(x: number, stride: number, dst: number, info: number): void;
}

let compiled: WebAssembly.Module | null | undefined;

/** A fresh instance (own memory), or null where WebAssembly SIMD is unavailable. */
export function createSimdScan(): SimdScan | null {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(Buffer.from(WASM_BASE64, 'base64'));
    } catch {
      compiled = null;
    }
  }
  if (!compiled) return null;
  const instance = new WebAssembly.Instance(compiled, {});
  const exports = instance.exports as unknown as {
    mem: WebAssembly.Memory;
    scan: SimdScan['scan'];
    scan_i8: SimdScan['scanI8'];
    quantise_i8: SimdScan['quantiseI8'];
  };
  return { memory: exports.mem, scan: exports.scan, scanI8: exports.scan_i8, quantiseI8: exports.quantise_i8 };
}

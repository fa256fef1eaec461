/**
 * Brute-force dot products with WebAssembly SIMD (f32x4, four accumulators): the exact scan of
 * an in-memory vector index. Built from simd-scan.wat beside this file with
 * `wat2wasm simd-scan.wat` (npm package wabt); the bytes are inlined so nothing is read at run time.
 */
const WASM_BASE64 = 'AGFzbQEAAAABCQFgBX9/f39/AAMCAQAFAwEAAQcOAgNtZW0CAARzY2FuAAAKuQIBtgIDBH8EewJ/IANBAnQhCCABIQcCQANAIAUgAk8NAf0MAAAAAAAAAAAAAAAAAAAAACEJ/QwAAAAAAAAAAAAAAAAAAAAAIQr9DAAAAAAAAAAAAAAAAAAAAAAhC/0MAAAAAAAAAAAAAAAAAAAAACEMQQAhBgJAA0AgBiAITw0BIAAgBmohDSAHIAZqIQ4gCSAO/QAEACAN/QAEAP3mAf3kASEJIAogDv0ABBAgDf0ABBD95gH95AEhCiALIA79AAQgIA39AAQg/eYB/eQBIQsgDCAO/QAEMCAN/QAEMP3mAf3kASEMIAZBwABqIQYMAAsLIAkgCv3kASALIAz95AH95AEhCSAEIAVBAnRqIAn9HwAgCf0fAZIgCf0fAiAJ/R8DkpI4AgAgByAIaiEHIAVBAWohBQwACwsL';

export interface SimdScan {
  memory: WebAssembly.Memory;
  /** out[i] = dot(q, M[i]) for i < n; q, m, out are byte offsets; dim % 16 == 0. */
  scan(q: number, m: number, n: number, dim: number, out: number): void;
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
  const exports = instance.exports as unknown as { mem: WebAssembly.Memory; scan: SimdScan['scan'] };
  return { memory: exports.mem, scan: exports.scan };
}

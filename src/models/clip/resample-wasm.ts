import { wasmEnabled } from '../../env.js';
/**
 * The WebAssembly SIMD build of resample.wat (1.3 KB): Pillow's fixed-point bicubic passes and the
 * float32 normalisation, several times faster than the JavaScript reference in preprocess.ts and
 * bit-identical to it (both are tested against Pillow goldens). Regenerate with the commands at the
 * top of resample.wat.
 */
const WASM_BASE64 =
  'AGFzbQEAAAABHwNgCX9/f39/f39/fwBgCH9/f39/f39/AGAEf39/fwADBQQAAAECBQMBAAEHLgUGbWVtb3J5AgAFaG9yaXoAAAZob3JpejQAAQR2ZXJ0AAIJbm9ybWFsaXplAAMKgwkE6QECB38Be0EAIQkCQANAIAkgAk8NASAAIAkgAWxqIQ1BACEKAkADQCAKIANPDQEgBSAKQQJ0aigCACEMIA0gBCAKQQJ0aigCAEEDbGohDiAGIAogB2xBAnRqIQ9BgICAAf0RIRBBACELAkADQCALIAxPDQEgECAO/VwCAP2JAf2pASAPKAIA/RH9tQH9rgEhECAOQQNqIQ4gD0EEaiEPIAtBAWohCwwACwsgEEEW/awBIRAgECAQ/YYBIRAgECAQ/WYhECAIIBD9WgIAACAIQQNqIQggCkEBaiEKDAALCyAJQQFqIQkMAAsLC8oDAgl/BXsgA0EDbCEQQQAhCQJAA0AgCSACTw0BIAAgCSABbGohDSAIIAkgEGxqIRFBACEKAkADQCAKIANPDQEgBSAKQQJ0aigCACEMIA0gBCAKQQJ0aigCAEEDbGohDiAGIAogB2xBAnRqIQ9BgICAAf0RIRMgEyEUIBMhFSATIRZBACELAkADQCALIAxPDQEgDygCAP0RIRIgEyASIA79XAIA/YkB/akB/bUB/a4BIRMgFCASIA4gAWr9XAIA/YkB/akB/bUB/a4BIRQgFSASIA4gAUEBdGr9XAIA/YkB/akB/bUB/a4BIRUgFiASIA4gAUEDbGr9XAIA/YkB/akB/bUB/a4BIRYgDkEDaiEOIA9BBGohDyALQQFqIQsMAAsLIBNBFv2sASAUQRb9rAH9hgEgFUEW/awBIBZBFv2sAf2GAf1mIRMgESAT/VkBAAAgESAT/VgAAgIgESAQaiAT/VkBAAIgESAQaiAT/VgAAgYgESAQQQF0aiAT/VkBAAQgESAQQQF0aiAT/VgAAgogESAQQQNsaiAT/VkBAAYgESAQQQNsaiAT/VgAAg4gEUEDaiERIApBAWohCgwACwsgCUEEaiEJDAALCwvJAgIJfwh7QQAhCAJAA0AgCCACTw0BIAQgCEECdGooAgAhCyAAIAMgCEECdGooAgAgAWxqIQwgBSAIIAZsQQJ0aiENIAcgCCABbGohEEEAIQkCQANAIAkgAU8NAUGAgIAB/REhESARIRIgESETIBEhFCAMIAlqIQ4gDSEPQQAhCgJAA0AgCiALTw0BIA79AAQAIRUgDygCAP0RIRYgFf2JASEXIBX9igEhGCARIBf9qQEgFv21Af2uASERIBIgF/2qASAW/bUB/a4BIRIgEyAY/akBIBb9tQH9rgEhEyAUIBj9qgEgFv21Af2uASEUIA4gAWohDiAPQQRqIQ8gCkEBaiEKDAALCyAQIAlqIBFBFv2sASASQRb9rAH9hgEgE0EW/awBIBRBFv2sAf2GAf1m/QsEACAJQRBqIQkMAAsLIAhBAWohCAwACwsLfwEEfyADQQJ0IQdBACEEIAAhBSACIQYCQANAIAQgA08NASAGIAEgBS0AAEECdGoqAgA4AgAgBiAHaiABIAUtAAFBAnRqKgKACDgCACAGIAdBAXRqIAEgBS0AAkECdGoqAoAQOAIAIAVBA2ohBSAGQQRqIQYgBEEBaiEEDAALCws=';

export interface WasmKernels {
  memory: WebAssembly.Memory;
  horiz(src: number, rowStride: number, rows: number, outW: number, starts: number, counts: number, weights: number, ksize: number, dst: number): void;
  /** horiz on 4 rows at a time; `rows` a multiple of 4. */
  horiz4(src: number, rowStride: number, rows: number, outW: number, starts: number, counts: number, weights: number, ksize: number, dst: number): void;
  vert(tmp: number, stride: number, outH: number, starts: number, counts: number, weights: number, ksize: number, dst: number): void;
  normalize(px: number, lut: number, out: number, plane: number): void;
}

let cached: WasmKernels | null | undefined;

/** The kernels, or null where WebAssembly SIMD is unavailable (callers fall back to JavaScript). */
export function wasmKernels(): WasmKernels | null {
  if (cached !== undefined) return cached;
  try {
    if (!wasmEnabled()) throw new Error('disabled');
    const mod = new WebAssembly.Module(Buffer.from(WASM_BASE64, 'base64'));
    cached = new WebAssembly.Instance(mod, {}).exports as unknown as WasmKernels;
  } catch {
    cached = null;
  }
  return cached;
}

/**
 * CLIP image preprocessing, bit-exact with the reference `CLIPImageProcessor` (Hugging Face, PIL):
 *
 *   1. resize so the shortest side is `size` (long side = int(size * long / short)), PIL BICUBIC
 *      (Keys a = -0.5, antialiased when shrinking, 22-bit fixed-point coefficients, horizontal pass
 *      then vertical pass, each rounded and clamped to uint8 — exactly Pillow's Resample.c);
 *   2. centre crop `size` × `size` (top = (h - size) // 2, left = (w - size) // 2);
 *   3. x / 255, (x - mean) / std in float32, channels first (NCHW).
 *
 * Only the pixels that survive the crop are computed (each output pixel depends on its own filter
 * taps only, so the values are the same as resizing everything and cropping afterwards).
 *
 * Two backends with identical integer arithmetic: WebAssembly SIMD (resample.wat, the default) and
 * plain JavaScript (the reference; used where WebAssembly is unavailable or VIDEMBED_NO_WASM is set).
 */
import type { Frame } from '../../media/types.js';
import { wasmKernels, type WasmKernels } from './resample-wasm.js';

export interface ClipPreprocessConfig {
  /** Output side (224 for ViT-B/32). */
  size: number;
  mean: readonly [number, number, number];
  std: readonly [number, number, number];
}

export const CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073] as const;
export const CLIP_STD = [0.26862954, 0.26130258, 0.27577711] as const;
export const CLIP_PREPROCESS: ClipPreprocessConfig = { size: 224, mean: CLIP_MEAN, std: CLIP_STD };

const PRECISION_BITS = 32 - 8 - 2;
const ONE = 1 << PRECISION_BITS;
const HALF = 1 << (PRECISION_BITS - 1);
const MAX_ACC = ONE * 256;

function bicubic(x: number): number {
  const a = -0.5;
  if (x < 0) x = -x;
  if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return (((x - 5) * x + 8) * x - 4) * a;
  return 0;
}

/** Fixed-point filter taps of a 1-D resample, restricted to output positions [from, from + count). */
export interface Taps {
  /** First source index of each output position. */
  start: Int32Array;
  /** Number of taps of each output position. */
  count: Int32Array;
  /** `ksize` coefficients per output position (22-bit fixed point). */
  weights: Int32Array;
  ksize: number;
}

/** Pillow's `precompute_coeffs` + `normalize_coeffs_8bpc` for BICUBIC, zero taps at the ends trimmed. */
export function computeTaps(inSize: number, outSize: number, from: number, count: number): Taps {
  const scale = inSize / outSize;
  const filterscale = Math.max(scale, 1);
  const support = 2 * filterscale;
  const ksize = Math.ceil(support) * 2 + 1;
  const start = new Int32Array(count);
  const n = new Int32Array(count);
  const weights = new Int32Array(count * ksize);
  const tmp = new Float64Array(ksize);
  const ss = 1 / filterscale;
  for (let o = 0; o < count; o++) {
    const xx = from + o;
    const center = (xx + 0.5) * scale;
    let xmin = Math.trunc(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    let xmax = Math.trunc(center + support + 0.5);
    if (xmax > inSize) xmax = inSize;
    xmax -= xmin;
    let ww = 0;
    for (let x = 0; x < xmax; x++) {
      const w = bicubic((x + xmin - center + 0.5) * ss);
      tmp[x] = w;
      ww += w;
    }
    const fixed: number[] = [];
    for (let x = 0; x < xmax; x++) {
      const k = ww !== 0 ? tmp[x] / ww : tmp[x];
      fixed.push(k < 0 ? Math.trunc(-0.5 + k * ONE) : Math.trunc(0.5 + k * ONE));
    }
    // Zero taps contribute nothing to Pillow's sums: drop them (identity resamples become 1 tap).
    let lo = 0;
    let hi = fixed.length;
    while (lo < hi && fixed[lo] === 0) lo++;
    while (hi > lo && fixed[hi - 1] === 0) hi--;
    start[o] = xmin + lo;
    n[o] = hi - lo;
    for (let i = lo; i < hi; i++) weights[o * ksize + i - lo] = fixed[i];
  }
  return { start, count: n, weights, ksize };
}

/** HF `get_resize_output_image_size` for `{"shortest_edge": size}`. */
export function resizedSize(width: number, height: number, size: number): { width: number; height: number } {
  if (width <= height) return { width: size, height: Math.trunc((size * height) / width) };
  return { width: Math.trunc((size * width) / height), height: size };
}

/** float32((float32(v * (1/255)) - mean) / std) for v in 0..255, per channel: HF's rescale + normalize. */
function buildLut(cfg: ClipPreprocessConfig): Float32Array[] {
  const scale = 1 / 255;
  return [0, 1, 2].map((c) => {
    const lut = new Float32Array(256);
    const m = Math.fround(cfg.mean[c]);
    const s = Math.fround(cfg.std[c]);
    for (let v = 0; v < 256; v++) lut[v] = Math.fround(Math.fround(Math.fround(v * scale) - m) / s);
    return lut;
  });
}

interface Plan {
  width: number;
  height: number;
  horiz: Taps;
  vert: Taps;
  /** Source rows the vertical pass reads: [rowFirst, rowFirst + rowCount). */
  rowFirst: number;
  rowCount: number;
}

const align16 = (n: number) => (n + 15) & ~15;

/** Reusable preprocessor: caches filter taps per input size and keeps its scratch buffers. */
export class ClipPreprocessor {
  readonly size: number;
  readonly backend: 'wasm' | 'js';
  private readonly lut: Float32Array[];
  private readonly lutFlat: Float32Array;
  private readonly wasm: WasmKernels | null;
  private plans = new Map<string, Plan>();
  private scratch = new Uint8Array(0);
  private pixels = new Uint8Array(0);

  constructor(
    readonly config: ClipPreprocessConfig = CLIP_PREPROCESS,
    opts: { backend?: 'auto' | 'wasm' | 'js' } = {},
  ) {
    this.size = config.size;
    this.lut = buildLut(config);
    this.lutFlat = new Float32Array(768);
    this.lut.forEach((l, c) => this.lutFlat.set(l, c * 256));
    const want = opts.backend ?? 'auto';
    this.wasm = want === 'js' ? null : wasmKernels();
    if (want === 'wasm' && !this.wasm) throw new Error('WebAssembly SIMD is not available');
    this.backend = this.wasm ? 'wasm' : 'js';
  }

  /**
   * Runs the whole pipeline in WebAssembly memory. Layout (16-byte aligned): LUT, taps, the source
   * rows needed, the horizontal result, the cropped pixels, the float planes. Returns the offsets of
   * the pixels and the planes. WebAssembly calls are synchronous, so one shared instance is safe.
   */
  private runWasm(frame: Frame): { px: number; out: number; memory: WebAssembly.Memory } {
    const k = this.wasm!;
    const { width, data } = frame;
    const S = this.size;
    const { horiz, vert, rowFirst, rowCount } = this.plan(frame.width, frame.height);
    const outW = horiz.count.length;
    const outH = vert.count.length;
    let off = 0;
    const take = (bytes: number) => {
      const at = off;
      off = align16(off + bytes);
      return at;
    };
    const lut = take(768 * 4);
    const hStarts = take(outW * 4);
    const hCounts = take(outW * 4);
    const hWeights = take(horiz.weights.byteLength);
    const vStarts = take(outH * 4);
    const vCounts = take(outH * 4);
    const vWeights = take(vert.weights.byteLength);
    const srcBytes = rowCount * width * 3;
    const src = take(srcBytes + 16);
    const tmp = take(rowCount * outW * 3 + 32);
    const px = take(S * S * 3 + 32);
    const out = take(S * S * 3 * 4);
    const need = off - k.memory.buffer.byteLength;
    if (need > 0) k.memory.grow(Math.ceil(need / 65536));
    const buf = k.memory.buffer;
    new Float32Array(buf, lut, 768).set(this.lutFlat);
    new Int32Array(buf, hStarts, outW).set(horiz.start);
    new Int32Array(buf, hCounts, outW).set(horiz.count);
    new Int32Array(buf, hWeights, horiz.weights.length).set(horiz.weights);
    const vs = new Int32Array(buf, vStarts, outH);
    for (let i = 0; i < outH; i++) vs[i] = vert.start[i] - rowFirst;
    new Int32Array(buf, vCounts, outH).set(vert.count);
    new Int32Array(buf, vWeights, vert.weights.length).set(vert.weights);
    new Uint8Array(buf, src, srcBytes).set(data.subarray(rowFirst * width * 3, rowFirst * width * 3 + srcBytes));
    const rows4 = rowCount & ~3;
    if (rows4 > 0) k.horiz4(src, width * 3, rows4, outW, hStarts, hCounts, hWeights, horiz.ksize, tmp);
    if (rows4 < rowCount) {
      k.horiz(src + rows4 * width * 3, width * 3, rowCount - rows4, outW, hStarts, hCounts, hWeights, horiz.ksize, tmp + rows4 * outW * 3);
    }
    k.vert(tmp, outW * 3, outH, vStarts, vCounts, vWeights, vert.ksize, px);
    k.normalize(px, lut, out, S * S);
    return { px, out, memory: k.memory };
  }

  private checkFrame(frame: Frame): void {
    const { width, height, data } = frame;
    if (width < 1 || height < 1 || data.length < width * height * 3) {
      throw new RangeError(`frame ${width}x${height} has ${data.length} bytes, expected ${width * height * 3}`);
    }
  }

  private plan(width: number, height: number): Plan {
    const key = `${width}x${height}`;
    let p = this.plans.get(key);
    if (p) return p;
    const S = this.size;
    const r = resizedSize(width, height, S);
    const left = (r.width - S) >> 1;
    const top = (r.height - S) >> 1;
    const horiz = computeTaps(width, r.width, left, Math.min(S, r.width));
    const vert = computeTaps(height, r.height, top, Math.min(S, r.height));
    const rowFirst = vert.start[0];
    let rowLast = 0;
    for (let i = 0; i < vert.start.length; i++) rowLast = Math.max(rowLast, vert.start[i] + vert.count[i]);
    p = { width, height, horiz, vert, rowFirst, rowCount: rowLast - rowFirst };
    if (this.plans.size > 16) this.plans.clear();
    this.plans.set(key, p);
    return p;
  }

  /**
   * The resized-and-cropped RGB24 pixels (size × size × 3, uint8), i.e. what PIL would hold before
   * rescaling. Exposed for tests; the returned buffer is reused by the next call.
   */
  resizeCrop(frame: Frame): Uint8Array {
    this.checkFrame(frame);
    const S = this.size;
    if (this.wasm) {
      const r = this.runWasm(frame);
      if (this.pixels.length < S * S * 3) this.pixels = new Uint8Array(S * S * 3);
      this.pixels.set(new Uint8Array(r.memory.buffer, r.px, S * S * 3));
      return this.pixels.subarray(0, S * S * 3);
    }
    const { width, data } = frame;
    const p = this.plan(width, frame.height);
    const { horiz, vert, rowFirst, rowCount } = p;
    const outW = horiz.count.length;
    const outH = vert.count.length;

    // Horizontal pass over the source rows the vertical pass needs → scratch (rowCount × outW × 3).
    const tmpLen = rowCount * outW * 3;
    if (this.scratch.length < tmpLen) this.scratch = new Uint8Array(tmpLen);
    const tmp = this.scratch;
    const hk = horiz.ksize;
    const hw = horiz.weights;
    for (let y = 0; y < rowCount; y++) {
      const rowBase = (rowFirst + y) * width * 3;
      let o = y * outW * 3;
      for (let j = 0; j < outW; j++) {
        const n = horiz.count[j];
        let si = rowBase + horiz.start[j] * 3;
        let wi = j * hk;
        let a0 = HALF;
        let a1 = HALF;
        let a2 = HALF;
        for (let t = 0; t < n; t++) {
          const w = hw[wi++];
          a0 += data[si] * w;
          a1 += data[si + 1] * w;
          a2 += data[si + 2] * w;
          si += 3;
        }
        tmp[o++] = a0 <= 0 ? 0 : a0 >= MAX_ACC ? 255 : a0 >> PRECISION_BITS;
        tmp[o++] = a1 <= 0 ? 0 : a1 >= MAX_ACC ? 255 : a1 >> PRECISION_BITS;
        tmp[o++] = a2 <= 0 ? 0 : a2 >= MAX_ACC ? 255 : a2 >> PRECISION_BITS;
      }
    }

    // Vertical pass → pixels (S × S × 3). A source narrower than S after resize cannot happen
    // (resize makes the short side S), so outW === outH === S.
    const outLen = S * S * 3;
    if (this.pixels.length < outLen) this.pixels = new Uint8Array(outLen);
    const px = this.pixels;
    const vk = vert.ksize;
    const vw = vert.weights;
    const stride = outW * 3;
    for (let i = 0; i < outH; i++) {
      const n = vert.count[i];
      const first = (vert.start[i] - rowFirst) * stride;
      const wBase = i * vk;
      let o = i * stride;
      for (let j = 0; j < stride; j++) {
        let acc = HALF;
        let si = first + j;
        for (let t = 0; t < n; t++) {
          acc += tmp[si] * vw[wBase + t];
          si += stride;
        }
        px[o++] = acc <= 0 ? 0 : acc >= MAX_ACC ? 255 : acc >> PRECISION_BITS;
      }
    }
    return px.subarray(0, outLen);
  }

  /** Writes one frame as 3 × size × size float32 (CHW) into `out` at `offset`. */
  preprocessInto(frame: Frame, out: Float32Array, offset: number): void {
    const plane = this.size * this.size;
    if (this.wasm) {
      this.checkFrame(frame);
      const r = this.runWasm(frame);
      out.set(new Float32Array(r.memory.buffer, r.out, 3 * plane), offset);
      return;
    }
    const px = this.resizeCrop(frame);
    const [l0, l1, l2] = this.lut;
    for (let p = 0, s = 0; p < plane; p++, s += 3) {
      out[offset + p] = l0[px[s]];
      out[offset + plane + p] = l1[px[s + 1]];
      out[offset + 2 * plane + p] = l2[px[s + 2]];
    }
  }

  /** A batch as one NCHW float32 buffer: frames.length × 3 × size × size. */
  batch(frames: readonly Frame[]): Float32Array {
    const per = 3 * this.size * this.size;
    const out = new Float32Array(frames.length * per);
    frames.forEach((f, i) => this.preprocessInto(f, out, i * per));
    return out;
  }
}

/**
 * CLIP preprocessing cost: a 1280×720 RGB frame → 224×224 NCHW float32 (bicubic resize of the
 * cropped region, centre crop, normalise) and the batch tensor buffer. Target: ≤ 5 ms per frame.
 * Also reported: the 400×224 frames the CLIP embedder asks the decoder for (its frameMaxSide), and
 * the pure-JavaScript fallback. Figures are the best of several rounds (the machine may be shared).
 */
import { performance } from 'node:perf_hooks';
import type { Frame } from '../src/media/types.js';
import { ClipPreprocessor } from '../src/models/clip/preprocess.js';

function syntheticFrame(width: number, height: number, seed: number): Frame {
  const data = new Uint8Array(width * height * 3);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < data.length; i++) {
    // xorshift noise plus a gradient: no branch- or cache-friendly shortcut for the resampler.
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    data[i] = ((i / 3) % width) * 0.2 + (s & 63);
  }
  return { t: 0, width, height, data };
}

function msPerFrame(p: ClipPreprocessor, frames: Frame[], batch: number, rounds: number): number {
  let best = Infinity;
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    for (let i = 0; i < frames.length; i += batch) p.batch(frames.slice(i, i + batch));
    best = Math.min(best, (performance.now() - t0) / frames.length);
  }
  return best;
}

export async function benchClipPreprocess(): Promise<Record<string, number>> {
  const p = new ClipPreprocessor();
  const hd = Array.from({ length: 16 }, (_, i) => syntheticFrame(1280, 720, i + 1));
  const small = Array.from({ length: 16 }, (_, i) => syntheticFrame(400, 224, i + 1));
  msPerFrame(p, hd, 8, 2); // warm-up (JIT, filter taps)
  msPerFrame(p, small, 8, 2);
  const hdMs = msPerFrame(p, hd, 8, 5);
  const smallMs = msPerFrame(p, small, 8, 5);
  // The pure-JavaScript fallback (no WebAssembly), for comparison.
  const js = new ClipPreprocessor(undefined, { backend: 'js' });
  msPerFrame(js, hd.slice(0, 4), 4, 1);
  const jsMs = msPerFrame(js, hd.slice(0, 8), 8, 3);
  return {
    clip_preprocess_1280x720_ms_per_frame: Number(hdMs.toFixed(3)),
    clip_preprocess_400x224_ms_per_frame: Number(smallMs.toFixed(3)),
    clip_preprocess_1280x720_js_fallback_ms_per_frame: Number(jsMs.toFixed(3)),
    clip_preprocess_wasm: p.backend === 'wasm' ? 1 : 0,
    clip_preprocess_target_ms: 5,
  };
}

// `node dist/bench/clip.js` runs it alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  benchClipPreprocess().then((r) => console.log(JSON.stringify(r, null, 2)));
}

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Frame } from '../../src/media/types.js';
import { ClipPreprocessor, CLIP_MEAN, CLIP_STD, computeTaps, resizedSize } from '../../src/models/clip/preprocess.js';

const S = 224;
const plane = S * S;

function frame(width: number, height: number, px: (x: number, y: number) => [number, number, number]): Frame {
  const data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const [r, g, b] = px(x, y);
      const i = (y * width + x) * 3;
      data[i] = r;
      data[i + 1] = g;
      data[i + 2] = b;
    }
  return { t: 0, width, height, data };
}

/** HF: float32(float32(v * (1/255)) - mean) / std, in float32. */
const norm = (v: number, c: number) => Math.fround(Math.fround(Math.fround(v * (1 / 255)) - Math.fround(CLIP_MEAN[c])) / Math.fround(CLIP_STD[c]));

/** The synthetic image the Pillow goldens below were made from (see the comment there). */
const synth = (w: number, h: number) => frame(w, h, (x, y) => [(x * 7 + y * 13) % 256, (x * x + 3 * y) % 256, ((x ^ y) * 5) % 256]);

describe.each(['wasm', 'js'] as const)('CLIP preprocessing (%s backend)', (backend) => {
  const make = () => new ClipPreprocessor(undefined, { backend });
  it('uses the requested backend', () => expect(make().backend).toBe(backend));

  it('resizes the shortest side to 224 like HF (long side truncated)', () => {
    expect(resizedSize(1280, 720, 224)).toEqual({ width: 398, height: 224 });
    expect(resizedSize(720, 1280, 224)).toEqual({ width: 224, height: 398 });
    expect(resizedSize(224, 224, 224)).toEqual({ width: 224, height: 224 });
    expect(resizedSize(97, 61, 224)).toEqual({ width: 356, height: 224 });
  });

  it('uniform colour → exactly (v/255 - mean)/std everywhere', () => {
    const p = make();
    const out = p.batch([frame(1280, 720, () => [200, 100, 50])]);
    expect(out.length).toBe(3 * plane);
    for (const pos of [0, 1, 223, 224 * 112 + 57, plane - 1]) {
      expect(out[pos]).toBe(norm(200, 0));
      expect(out[plane + pos]).toBe(norm(100, 1));
      expect(out[2 * plane + pos]).toBe(norm(50, 2));
    }
    // A pure red pixel, the documented way: R = (1 - 0.48145466) / 0.26862954.
    const red = p.batch([frame(64, 64, () => [255, 0, 0])]);
    expect(red[0]).toBeCloseTo((1 - 0.48145466) / 0.26862954, 6);
    expect(red[plane]).toBeCloseTo((0 - 0.4578275) / 0.26130258, 6);
    expect(red[2 * plane]).toBeCloseTo((0 - 0.40821073) / 0.27577711, 6);
  });

  it('no resize needed: centre crop offset and channel order (CHW)', () => {
    // 256×224 → short side already 224, long side int(224*256/224) = 256: crop left = 16.
    const f = frame(256, 224, (x, y) => [x, 255 - x, y]);
    const out = make().batch([f]);
    for (const [y, x] of [[0, 0], [10, 5], [223, 223], [100, 150]]) {
      expect(out[y * S + x]).toBe(norm(x + 16, 0));
      expect(out[plane + y * S + x]).toBe(norm(255 - (x + 16), 1));
      expect(out[2 * plane + y * S + x]).toBe(norm(y, 2));
    }
  });

  it('bicubic 2× upscale of a linear ramp is exact in the interior', () => {
    // f(x) = x + 10 on 112 px → 224 px. Keys' cubic (a = -0.5) reproduces linear functions, so output
    // column xx sits at source position (xx + 0.5)/2 - 0.5 and has value 0.5·xx + 9.75, rounded.
    const f = frame(112, 112, (x) => [x + 10, x + 10, x + 10]);
    const px = make().resizeCrop(f);
    for (const xx of [4, 5, 10, 11, 100, 101, 218, 219]) {
      const expected = Math.round(0.5 * xx + 9.75);
      for (const y of [0, 77, 223]) for (let c = 0; c < 3; c++) expect(px[(y * S + xx) * 3 + c]).toBe(expected);
    }
    const out = make().batch([f]);
    expect(out[50 * S + 10]).toBe(norm(15, 0)); // 0.5·10 + 9.75 = 14.75 → 15
    expect(out[plane + 50 * S + 11]).toBe(norm(15, 1)); // 15.25 → 15
    expect(out[2 * plane + 50 * S + 101]).toBe(norm(60, 2)); // 60.25 → 60
  });

  it('filter taps: identity when sizes match, antialiased support when shrinking', () => {
    const id = computeTaps(10, 10, 0, 10);
    expect(Array.from(id.count)).toEqual(new Array(10).fill(1));
    expect(Array.from(id.start)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const down = computeTaps(720, 224, 0, 224);
    expect(Math.max(...down.count)).toBeGreaterThan(8); // support 2 × 3.2 on each side
    for (let o = 0; o < 224; o++) {
      let s = 0;
      for (let t = 0; t < down.count[o]; t++) s += down.weights[o * down.ksize + t];
      expect(Math.abs(s - (1 << 22))).toBeLessThan(down.count[o]);
    }
  });

  // Goldens from Pillow 9.4 (`Image.resize((w, h), BICUBIC, reducing_gap=None)`, then HF's centre
  // crop and float32 rescale/normalise) on the synthetic image above. Regenerate with:
  //   y, x = np.mgrid[0:h, 0:w]; r = (x*7 + y*13) % 256; g = (x*x + 3*y) % 256; b = ((x ^ y)*5) % 256
  // sha256 is over the cropped 224×224×3 uint8 buffer; samples are (channel, y, x).
  const samples: [number, number, number][] = [
    [0, 0, 0],
    [1, 100, 50],
    [2, 223, 223],
    [0, 111, 7],
  ];
  const goldens: { w: number; h: number; sha: string; floats: number[]; bytes: number[] }[] = [
    { w: 1280, h: 720, sha: '6920cad1e9c5d8f5b749b99ed044bf20cae89004dcd4a1c9861ac0e6d1dc8653', floats: [1.0106353759765625, 0.3339827358722687, 1.4206737279891968, -0.02585294470191002], bytes: [192, 139, 204, 121] },
    { w: 320, h: 180, sha: 'c7fcc66b849d13ea806c6e0d38a9d2c5d1878c644e51f89dff2e3a9d0af384bf', floats: [1.5945723056793213, -0.9867009520530701, 0.1266476958990097, 0.39750149846076965], bytes: [232, 51, 113, 150] },
    { w: 300, h: 500, sha: '204dc564d1bec94310b44df4bf29d0a7cdd70fc81440e771ebd0f196f000eb8a', floats: [-1.6754751205444336, -0.01119600422680378, -0.7976565957069397, 1.4339896440505981], bytes: [8, 116, 48, 221] },
    { w: 224, h: 224, sha: '8d3a66db4c996397a043ec05f5dec7bcedcfa1e4971fd3bea76b33bad046e912', floats: [-1.7922625541687012, 1.8497672080993652, -1.480219841003418, 1.302603840827942], bytes: [0, 240, 0, 212] },
    { w: 97, h: 61, sha: '1712ec61be58e593df31ef009eae7a6cd969462f1604786f9d92429c0fa7b2ef', floats: [-0.011254520155489445, -1.5269806385040283, -0.6127957701683044, -1.4564987421035767], bytes: [122, 15, 61, 23] },
  ];
  for (const g of goldens) {
    it(`bit-exact with Pillow + HF CLIPImageProcessor on a ${g.w}×${g.h} frame`, () => {
      const p = make();
      const f = synth(g.w, g.h);
      const px = p.resizeCrop(f);
      expect(createHash('sha256').update(px).digest('hex')).toBe(g.sha);
      const out = p.batch([f]);
      samples.forEach(([c, y, x], i) => {
        expect(px[(y * S + x) * 3 + c]).toBe(g.bytes[i]);
        expect(out[c * plane + y * S + x]).toBe(Math.fround(g.floats[i]));
      });
    });
  }

  it('batches frames of different sizes into one NCHW buffer', () => {
    const p = make();
    const out = p.batch([frame(400, 224, () => [255, 0, 0]), frame(224, 400, () => [0, 0, 255])]);
    expect(out.length).toBe(2 * 3 * plane);
    expect(out[0]).toBe(norm(255, 0));
    expect(out[3 * plane + 2 * plane + 5]).toBe(norm(255, 2));
    expect(out[3 * plane]).toBe(norm(0, 0));
  });

  it('rejects a frame whose buffer is too short', () => {
    expect(() => make().batch([{ t: 0, width: 10, height: 10, data: new Uint8Array(10) }])).toThrow(/expected 300/);
  });
});

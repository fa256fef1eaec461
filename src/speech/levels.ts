/**
 * Cheap measurements of a soundtrack, 10 per second, taken from the PCM on its way to the
 * recognizer: loudness (RMS in dBFS) and spectral flatness (0 for a pure tone, 1 for white noise).
 * They say where there is silence, and tell steady tonal sound (music) from broadband noise; what
 * is speech is said by the recognizer's words.
 */
import { round } from '../media/kernels/index.js';

export const LEVEL_HZ = 10;
const RATE = 16000;
const WINDOW = RATE / LEVEL_HZ; // 1600 samples
const FFT_N = 512;

export interface Level {
  /** RMS of the 100 ms window, dBFS (−100 for digital silence). */
  db: number;
  /** Spectral flatness of the window's middle 32 ms, in [0, 1]. */
  flatness: number;
  /** Share of that power above 4.2 kHz (≈0 for telephone-band audio, whatever its sample rate). */
  hf: number;
}

/** Accumulates 16 kHz mono s16le chunks into one Level per 100 ms. */
export class LevelMeter {
  readonly levels: Level[] = [];
  private readonly win = new Float32Array(WINDOW);
  private fill = 0;
  private odd: number | undefined;

  push(chunk: Buffer): void {
    let i = 0;
    if (this.odd !== undefined) {
      this.add(((chunk[0] << 8) | this.odd) << 16 >> 16);
      this.odd = undefined;
      i = 1;
    }
    for (; i + 1 < chunk.length; i += 2) this.add(chunk.readInt16LE(i));
    if (i < chunk.length) this.odd = chunk[i];
  }

  private add(sample: number): void {
    this.win[this.fill++] = sample / 32768;
    if (this.fill === WINDOW) {
      this.levels.push(measure(this.win));
      this.fill = 0;
    }
  }

  /** Seconds of audio measured so far. */
  get seconds(): number {
    return (this.levels.length * WINDOW + this.fill) / RATE;
  }
}

const re = new Float64Array(FFT_N);
const im = new Float64Array(FFT_N);
const hann = Float64Array.from({ length: FFT_N }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (FFT_N - 1)));

function measure(win: Float32Array): Level {
  let sum = 0;
  for (let i = 0; i < win.length; i++) sum += win[i] * win[i];
  const rms = Math.sqrt(sum / win.length);
  const db = rms > 1e-5 ? 20 * Math.log10(rms) : -100;
  if (db < -60) return { db: round(db, 3), flatness: 1, hf: 0 };
  const off = (win.length - FFT_N) >> 1;
  for (let i = 0; i < FFT_N; i++) {
    re[i] = win[off + i] * hann[i];
    im[i] = 0;
  }
  fft(re, im);
  // Flatness over 100 Hz – 7 kHz (bins 4..224 at 31.25 Hz per bin).
  let logSum = 0;
  let linSum = 0;
  let high = 0;
  let n = 0;
  for (let k = 4; k < 224; k++) {
    const p = re[k] * re[k] + im[k] * im[k] + 1e-12;
    logSum += Math.log(p);
    linSum += p;
    if (k >= 134) high += p;
    n++;
  }
  const flatness = Math.exp(logSum / n) / (linSum / n);
  return { db: round(db, 3), flatness: round(flatness, 3), hf: Math.round((high / linSum) * 1e5) / 1e5 };
}

/** In-place iterative radix-2 FFT (length a power of two). */
function fft(xr: Float64Array, xi: Float64Array): void {
  const n = xr.length;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      [xr[i], xr[j]] = [xr[j], xr[i]];
      [xi[i], xi[j]] = [xi[j], xi[i]];
    }
  }
  for (let len = 2; len <= n; len <<= 1) {
    const ang = (-2 * Math.PI) / len;
    const wr = Math.cos(ang);
    const wi = Math.sin(ang);
    for (let i = 0; i < n; i += len) {
      let cr = 1;
      let ci = 0;
      for (let j = 0; j < len / 2; j++) {
        const ar = xr[i + j + len / 2] * cr - xi[i + j + len / 2] * ci;
        const ai = xr[i + j + len / 2] * ci + xi[i + j + len / 2] * cr;
        xr[i + j + len / 2] = xr[i + j] - ar;
        xi[i + j + len / 2] = xi[i + j] - ai;
        xr[i + j] += ar;
        xi[i + j] += ai;
        const t = cr * wr - ci * wi;
        ci = cr * wi + ci * wr;
        cr = t;
      }
    }
  }
}


/** The levels of the window [start, end) seconds. */
export function levelsIn(levels: Level[], start: number, end: number): Level[] {
  return levels.slice(Math.max(0, Math.floor(start * LEVEL_HZ)), Math.max(0, Math.ceil(end * LEVEL_HZ)));
}

/** True when the sound so far carries nothing above ~4 kHz (telephone band, 8 kHz recordings). */
export function isNarrowband(levels: Level[], soundDb: number): boolean {
  const loud = levels.filter((l) => l.db > soundDb).map((l) => l.hf).sort((a, b) => a - b);
  return loud.length > 0 && loud[loud.length >> 1] < 0.002;
}

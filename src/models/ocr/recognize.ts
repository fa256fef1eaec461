/**
 * PP-OCR text recognition (SVTR-LCNet, CTC head) pre- and post-processing.
 *
 * Pre: each detected line is cropped from the full-resolution frame, resampled to the model's
 * height (48) keeping its aspect ratio, normalised to (x/255 - 0.5)/0.5 in BGR order and padded
 * on the right with zeros (mid-grey after normalisation) to the batch's width.
 *
 * Post: greedy CTC. At each time step the arg-max class is taken; blanks (class 0) and repeats of
 * the previous class are dropped; class k ≥ 1 is dictionary line k-1, and the class after the
 * last dictionary line is the space PaddleOCR appends (`use_space_char`). A line is split into
 * words at spaces; a word's confidence is the mean arg-max probability of its characters, and
 * its box is the line box cut at the time steps of its first and last character (each step
 * covers `stride` pixels of the resampled crop).
 */
import type { PixelBox } from './image.js';

export const REC_MEAN = [0.5, 0.5, 0.5] as const;
export const REC_STD = [0.5, 0.5, 0.5] as const;

/** Dictionary lines → class labels: index 0 is the CTC blank, then the lines, then ' '. */
export function ctcLabels(dictText: string, appendSpace = true): string[] {
  const lines = dictText.split(/\r?\n/);
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  return ['', ...lines, ...(appendSpace ? [' '] : [])];
}

export interface CtcChar {
  text: string;
  /** Time step of the character's (first) peak. */
  step: number;
  prob: number;
}

/** Greedy CTC decode of one sequence: `probs` is [steps, classes] row-major. */
export function ctcGreedy(probs: Float32Array, steps: number, classes: number, labels: readonly string[], offset = 0): CtcChar[] {
  const out: CtcChar[] = [];
  let prev = -1;
  for (let t = 0; t < steps; t++) {
    const row = offset + t * classes;
    let best = 0;
    let bp = probs[row];
    for (let c = 1; c < classes; c++) {
      const v = probs[row + c];
      if (v > bp) {
        bp = v;
        best = c;
      }
    }
    if (best !== 0 && best !== prev) out.push({ text: labels[best] ?? '', step: t, prob: bp });
    prev = best;
  }
  return out;
}

export interface RecWord {
  text: string;
  confidence: number;
  /** In the same pixels as the line box given to `splitWords`. */
  box: PixelBox;
}

/**
 * Words of a decoded line. `line` is the crop's box in frame pixels, `pxPerStep` how many of
 * those pixels one time step covers (stride / scale).
 */
export function splitWords(chars: readonly CtcChar[], line: PixelBox, pxPerStep: number): RecWord[] {
  const words: RecWord[] = [];
  let cur: CtcChar[] = [];
  const flush = () => {
    if (cur.length === 0) return;
    const first = cur[0].step;
    const last = cur[cur.length - 1].step;
    const x0 = Math.max(line.x, line.x + (first - 0.5) * pxPerStep);
    const x1 = Math.min(line.x + line.w, line.x + (last + 1.5) * pxPerStep);
    words.push({
      text: cur.map((c) => c.text).join(''),
      confidence: cur.reduce((s, c) => s + c.prob, 0) / cur.length,
      box: { x: x0, y: line.y, w: Math.max(1, x1 - x0), h: line.h },
    });
    cur = [];
  };
  for (const c of chars) {
    if (c.text.trim() === '') flush();
    else cur.push(c);
  }
  flush();
  return words;
}

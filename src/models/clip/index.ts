/**
 * Tier 2 — CLIP's image preprocessing and tokenizer. The embedder itself, and the registration of
 * one per CLIP manifest, are in src/embedders/clip.ts.
 */
export { ClipPreprocessor, CLIP_MEAN, CLIP_PREPROCESS, CLIP_STD, computeTaps, resizedSize, type ClipPreprocessConfig } from './preprocess.js';
export { ClipTokenizer, cleanText, CLIP_BOS, CLIP_CONTEXT, CLIP_EOS, CLIP_PAD, type ClipTokens } from './tokenizer.js';


/**
 * Tier 2 — CLIP models described by manifests in models/ (kind "clip").
 *
 * Hook for the embedder registry:
 *
 *   // src/models/registry.ts
 *   import { registerClipModels } from './clip/index.js';
 *   registerClipModels((_id, create, info) => registerEmbedder(info, create));
 *
 * Each factory builds a ClipEmbedder on the models dir (VIDEMBED_MODELS_DIR or
 * ~/.cache/vidembed/models); load() fails with "model <id> is not installed: run `vidembed models
 * pull <id>`" when the files are missing.
 */
import type { Embedder } from '../embedder.js';
import { loadAllManifests, loadManifests, modelsDir, type ModelManifest } from '../manifest.js';
import { ClipEmbedder, type ClipEmbedderOptions } from './embedder.js';

export { ClipEmbedder, l2normalize, pickEmbedsOutput, type ClipEmbedderOptions } from './embedder.js';
export { ClipPreprocessor, CLIP_MEAN, CLIP_PREPROCESS, CLIP_STD, computeTaps, resizedSize, type ClipPreprocessConfig } from './preprocess.js';
export { ClipTokenizer, cleanText, CLIP_BOS, CLIP_CONTEXT, CLIP_EOS, CLIP_PAD, type ClipTokens } from './tokenizer.js';

/** Shaped to pass straight to the registry's `registerEmbedder(info, create)`. */
export interface ClipModelInfo {
  id: string;
  dim: number;
  description: string;
  kind: 'clip';
  name: string;
  frameMaxSide: number;
}

export type RegisterEmbedder = (id: string, factory: () => Embedder, info: ClipModelInfo) => void;

/**
 * Registers one factory per CLIP manifest. The models dir is read when a factory runs, so a
 * VIDEMBED_MODELS_DIR set after registration still applies.
 */
export function registerClipModels(
  register: RegisterEmbedder,
  opts: { manifests?: ModelManifest[]; modelsDir?: string; embedder?: Partial<Omit<ClipEmbedderOptions, 'manifest'>> } = {},
): string[] {
  let all = opts.manifests;
  if (!all) {
    try {
      all = loadAllManifests();
    } catch {
      // A broken VIDEMBED_MANIFESTS_DIR must not take the shipped models down at import time;
      // `vidembed models list` reports the error.
      all = loadManifests();
    }
  }
  const manifests = all.filter((m) => m.kind === 'clip');
  for (const manifest of manifests) {
    const frameMaxSide = opts.embedder?.frameMaxSide ?? 400;
    register(
      manifest.id,
      () => new ClipEmbedder({ ...opts.embedder, manifest, modelsDir: opts.modelsDir ?? modelsDir() }),
      {
        id: manifest.id,
        dim: manifest.dimension,
        description: `${manifest.name} (pull with \`vidembed models pull ${manifest.id}\`)`,
        kind: 'clip',
        name: manifest.name,
        frameMaxSide,
      },
    );
  }
  return manifests.map((m) => m.id);
}

/**
 * Embedders by id. A collection records the id (and dim) of the embedder that made its vectors;
 * the engine asks this registry for that embedder. Instances are created lazily and shared per
 * process (weights load once). CLIP tiers register here later through `registerEmbedder`.
 */
import type { Embedder } from './types.js';
import { LazyEmbedder } from './lazy.js';
import { PERCEPTION_EMBEDDER_ID } from '../models/perception/id.js';
import { registerClipModels } from './clip.js';

/** The offline default (SPEC §2 tier 1). Its code loads on first use: see LazyEmbedder. */
export const DEFAULT_EMBEDDER_ID = PERCEPTION_EMBEDDER_ID;
const PERCEPTION_FRAME_MAX_SIDE = 512;
/** The analyzers whose facts the perception tier pools (see src/analysis). */
const PERCEPTION_CONSUMES = ['perception', 'imagenet', 'ocr'] as const;

export interface EmbedderInfo {
  id: string;
  dim: number;
  description: string;
}

type Factory = () => Embedder;

const factories = new Map<string, { info: EmbedderInfo; create: Factory }>();
const instances = new Map<string, Embedder>();

/** Adds (or replaces) an embedder factory; an existing instance for that id is dropped. */
export function registerEmbedder(info: EmbedderInfo, create: Factory): void {
  factories.set(info.id, { info, create });
  instances.delete(info.id);
}

registerEmbedder(
  {
    id: PERCEPTION_EMBEDDER_ID,
    dim: 512,
    description: 'Offline default: object/face/pose/colour perception described in English, embedded with Universal Sentence Encoder lite',
  },
  () =>
    new LazyEmbedder(
      PERCEPTION_EMBEDDER_ID,
      512,
      PERCEPTION_FRAME_MAX_SIDE,
      async () => {
        // The analyzer (tfjs, the perception models) is imported when segments or pictures are
        // first analysed: a search by text loads the text model alone.
        const { PerceptionEmbedder } = await import('./perception.js');
        return new PerceptionEmbedder({ frameMaxSide: PERCEPTION_FRAME_MAX_SIDE }, undefined, async () => (await import('../analysis/index.js')).sharedPerceptionAnalyzer());
      },
      PERCEPTION_CONSUMES,
      ['text', 'image'],
    ),
);

// The CLIP tier (SPEC §2 tier 2): usable once `vidembed models pull clip-vit-b32` has installed it.
registerClipModels((_id, create, info) => registerEmbedder(info, create));

export function listEmbedders(): EmbedderInfo[] {
  return [...factories.values()].map((f) => ({ ...f.info }));
}

export function hasEmbedder(id: string): boolean {
  return factories.has(id);
}

/** The shared instance for `id` (not yet loaded: call `load()`); throws for unknown ids. */
export function getEmbedder(id: string = DEFAULT_EMBEDDER_ID): Embedder {
  let e = instances.get(id);
  if (!e) {
    const f = factories.get(id);
    if (!f) throw new Error(`unknown embedder "${id}" (known: ${[...factories.keys()].join(', ')})`);
    e = f.create();
    instances.set(id, e);
  }
  return e;
}

export function createDefaultEmbedder(): Embedder {
  return getEmbedder(DEFAULT_EMBEDDER_ID);
}

/** Disposes and forgets every instance (tests, shutdown). */
export async function disposeEmbedders(): Promise<void> {
  const all = [...instances.values()];
  instances.clear();
  for (const e of all) await e.dispose();
}

import { createHash } from 'node:crypto';
import type { Embedder, SegmentContext, SegmentEmbedding, TextEmbedding } from '../../src/embedders/types.js';
import type { Frame } from '../../src/media/types.js';

/**
 * A deterministic embedder for engine and server logic tests (no model, no weights): a text's
 * vector comes from a hash of its words, a segment's from its mean colour. It records every text
 * it was asked to embed, so tests can check what reached "the model".
 */
export class FakeEmbedder implements Embedder {
  readonly id: string;
  readonly dim = 16;
  readonly frameMaxSide = 64;
  /** Pictures embed like a keyframe (their mean colour). */
  readonly queryKinds: readonly string[] = ['text', 'image'];
  readonly texts: string[] = [];

  constructor(id = 'fake-16') {
    this.id = id;
  }

  async load(): Promise<void> {}

  async embedText(text: string): Promise<TextEmbedding> {
    this.texts.push(text);
    const v = new Float32Array(this.dim);
    for (const word of text.toLowerCase().split(/\W+/).filter(Boolean).slice(0, 256)) {
      const h = createHash('sha256').update(word).digest();
      for (let i = 0; i < this.dim; i++) v[i] += (h[i] - 127.5) / 127.5;
    }
    return { vector: normalise(v), truncated: false };
  }

  async embedSegment(frames: Frame[], _ctx: SegmentContext): Promise<SegmentEmbedding> {
    const v = new Float32Array(this.dim);
    for (const f of frames) for (let i = 0; i < f.data.length; i += 3) v[i % this.dim] += f.data[i] / 255;
    return { vector: normalise(v), description: 'a fake segment' };
  }

  async dispose(): Promise<void> {}
}

function normalise(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n) || 1;
  if (n === 1 && v.every((x) => x === 0)) v[0] = 1;
  else for (let i = 0; i < v.length; i++) v[i] /= n;
  return v;
}

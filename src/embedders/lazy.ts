import type { Frame } from '../media/types.js';
import type { Embedder, SegmentContext, SegmentEmbedding, TextEmbedding } from './types.js';

/**
 * An embedder whose code (tfjs, onnxruntime) is imported only when it is first loaded, so that
 * commands that never touch a model (`collection list`, `video status`) start in a blink.
 */
export class LazyEmbedder implements Embedder {
  private inner: Embedder | undefined;
  private importing: Promise<Embedder> | undefined;

  constructor(
    readonly id: string,
    readonly dim: number,
    readonly frameMaxSide: number,
    private readonly create: () => Promise<Embedder>,
    /** Declared at registration, so the pipeline knows them before the code loads. */
    readonly consumes: readonly string[] = [],
    readonly queryKinds: readonly string[] = ['text'],
  ) {}

  private async real(): Promise<Embedder> {
    if (this.inner) return this.inner;
    this.importing ??= this.create().then((e) => {
      if (e.id !== this.id || e.dim !== this.dim) throw new Error(`embedder ${e.id}/${e.dim} does not match its registration ${this.id}/${this.dim}`);
      this.inner = e;
      return e;
    });
    return this.importing;
  }

  async load(): Promise<void> {
    await (await this.real()).load();
  }

  async embedText(text: string): Promise<TextEmbedding> {
    return (await this.real()).embedText(text);
  }

  async embedSegment(frames: Frame[], ctx: SegmentContext): Promise<SegmentEmbedding> {
    return (await this.real()).embedSegment(frames, ctx);
  }

  async dispose(): Promise<void> {
    await this.inner?.dispose();
  }
}

/**
 * Tier 1 embedder (`perception-use-v1`): a segment's vector is the Universal Sentence Encoder
 * embedding of what analysis found in it, pooled: the perception description's parts, one part per
 * ImageNet class and one per line of on-screen text, each weighted by its kind (weights.ts) and by
 * how sure the analyzer was. A query's vector is USE on the query; both live in USE's 512-d space.
 *
 * The embedder reads facts; it does not look at pixels itself. The pipeline runs the analyzers
 * (every collection gets their tags whatever its embedder) and hands their output over in
 * `ctx.analysis`; a caller without analysis (tests, eval) gets the perception analyzer run here.
 */
import type { Frame } from '../media/types.js';
// Type-only: the analyzer's module loads tfjs and the perception models (~180 ms to import), which a
// search by text never needs; it is imported when segments or pictures are first analysed.
import type { PerceptionAnalyzer, PerceptionOptions } from '../analysis/perception.js';
import { analysisDescription, analysisParts, type WeightedPart } from '../analysis/describe.js';
import type { Embedder, SegmentContext, SegmentEmbedding, TextEmbedding } from './types.js';
import { UseTextEncoder, getUseTextEncoder, l2normalize } from '../models/use/text-encoder.js';
import { PERCEPTION_EMBEDDER_ID } from '../models/perception/id.js';

export { PERCEPTION_EMBEDDER_ID };
export type { PerceptionOptions };

export class PerceptionEmbedder implements Embedder {
  readonly id = PERCEPTION_EMBEDDER_ID;
  readonly dim = 512;
  readonly frameMaxSide: number;
  readonly queryKinds = ['text', 'image'] as const; // an image: analysed like a keyframe → facts → vector
  /** The analyzers whose facts make this embedder's vectors (their versions are its recipe). */
  readonly consumes = ['perception', 'imagenet', 'ocr'] as const;
  private readonly text: UseTextEncoder;
  private readonly analyzerSource: () => Promise<PerceptionAnalyzer>;
  private analyzerReady: PerceptionAnalyzer | undefined;
  private analyzerLoading: Promise<PerceptionAnalyzer> | undefined;

  /** `analyzer`: the one to use, or how to get it (default: a new PerceptionAnalyzer with `opts`, imported on first need). */
  constructor(opts: PerceptionOptions = {}, text: UseTextEncoder = getUseTextEncoder(), analyzer?: PerceptionAnalyzer | (() => Promise<PerceptionAnalyzer>)) {
    this.frameMaxSide = opts.frameMaxSide ?? 512;
    this.text = text;
    if (analyzer && typeof analyzer !== 'function') this.analyzerReady = analyzer;
    this.analyzerSource = typeof analyzer === 'function' ? analyzer : async () => new (await import('../analysis/perception.js')).PerceptionAnalyzer(opts);
  }

  /** The perception analyzer (its module and models load here, not for text). */
  analyzer(): Promise<PerceptionAnalyzer> {
    if (this.analyzerReady) return Promise.resolve(this.analyzerReady);
    this.analyzerLoading ??= this.analyzerSource().then((a) => (this.analyzerReady = a));
    this.analyzerLoading.catch(() => (this.analyzerLoading = undefined));
    return this.analyzerLoading;
  }

  async load(): Promise<void> {
    await Promise.all([this.text.load(), this.analyzer().then((a) => a.load())]);
  }

  /** Text encoding, timed into the analyzer's `text` timing when the analyzer is loaded (ingest), else just run (a search). */
  private timedText<T>(f: () => Promise<T>): Promise<T> {
    return this.analyzerReady ? this.analyzerReady.timed('text', f) : f();
  }

  async embedText(text: string): Promise<TextEmbedding> {
    if (!text || !text.trim()) throw new Error('embedText: text is empty');
    await this.text.load();
    const [e] = await this.timedText(() => this.text.embedDetailed([text]));
    return { vector: e.vector, truncated: e.truncated };
  }

  async embedSegment(frames: Frame[], ctx: SegmentContext): Promise<SegmentEmbedding> {
    const t0 = performance.now();
    const analyzer = await this.analyzer();
    let analysis = ctx.analysis;
    if (!analysis?.perception) {
      if (frames.length === 0) throw new Error('embedSegment: no frames');
      analysis = { ...analysis, perception: await analyzer.analyzeSegment(frames, ctx) };
    }
    const vector = await this.embedParts(analysisParts(analysis));
    analyzer.timings.segment.calls++;
    analyzer.timings.segment.ms += performance.now() - t0;
    const perception = analysis.perception;
    return { vector, description: analysisDescription(analysis), details: perception.details };
  }

  /** Weighted mean of the parts' USE embeddings, L2-normalised. */
  async embedParts(parts: WeightedPart[]): Promise<Float32Array> {
    const use = parts.length ? parts : [{ kind: 'subject', text: 'an empty scene', weight: 1 }];
    const vecs = await this.timedText(() => this.text.embed(use.map((p) => p.text)));
    const out = new Float32Array(this.dim);
    use.forEach((p, i) => {
      const v = vecs[i];
      for (let d = 0; d < out.length; d++) out[d] += p.weight * v[d];
    });
    return l2normalize(out);
  }

  async dispose(): Promise<void> {
    await this.analyzerReady?.dispose();
  }
}

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
import { PerceptionAnalyzer, type PerceptionOptions } from '../analysis/perception.js';
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
  readonly analyzer: PerceptionAnalyzer;
  private readonly text: UseTextEncoder;

  constructor(opts: PerceptionOptions = {}, text: UseTextEncoder = getUseTextEncoder(), analyzer?: PerceptionAnalyzer) {
    this.frameMaxSide = opts.frameMaxSide ?? 512;
    this.text = text;
    this.analyzer = analyzer ?? new PerceptionAnalyzer(opts);
  }

  async load(): Promise<void> {
    await Promise.all([this.text.load(), this.analyzer.load()]);
  }

  /** Cumulative wall-clock time per model (the analyzer's, plus text encoding). */
  getTimings() {
    return { ...JSON.parse(JSON.stringify(this.analyzer.timings)), reusedKeyframes: this.analyzer.reused };
  }

  resetTimings(): void {
    this.analyzer.resetTimings();
  }

  async embedText(text: string): Promise<TextEmbedding> {
    if (!text || !text.trim()) throw new Error('embedText: text is empty');
    await this.text.load();
    const [e] = await this.analyzer.timed('text', () => this.text.embedDetailed([text]));
    return { vector: e.vector, truncated: e.truncated };
  }

  async embedSegment(frames: Frame[], ctx: SegmentContext): Promise<SegmentEmbedding> {
    const t0 = performance.now();
    let analysis = ctx.analysis;
    if (!analysis?.perception) {
      if (frames.length === 0) throw new Error('embedSegment: no frames');
      analysis = { ...analysis, perception: await this.analyzer.analyzeSegment(frames, ctx) };
    }
    const vector = await this.embedParts(analysisParts(analysis));
    this.analyzer.timings.segment.calls++;
    this.analyzer.timings.segment.ms += performance.now() - t0;
    const perception = analysis.perception;
    return { vector, description: analysisDescription(analysis), details: perception.details };
  }

  /** Weighted mean of the parts' USE embeddings, L2-normalised. */
  async embedParts(parts: WeightedPart[]): Promise<Float32Array> {
    const use = parts.length ? parts : [{ kind: 'subject', text: 'an empty scene', weight: 1 }];
    const vecs = await this.analyzer.timed('text', () => this.text.embed(use.map((p) => p.text)));
    const out = new Float32Array(this.dim);
    use.forEach((p, i) => {
      const v = vecs[i];
      for (let d = 0; d < out.length; d++) out[d] += p.weight * v[d];
    });
    return l2normalize(out);
  }

  async dispose(): Promise<void> {
    await this.analyzer.dispose();
  }
}

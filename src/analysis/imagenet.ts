/**
 * The ImageNet analyzer: the top classes of a MobileNetV2 ImageNet-1k classifier on each
 * segment's keyframe, with their probabilities — a thousand things COCO's 80 classes cannot name
 * (a fox squirrel, a fig, a pier, an alp, a tabby cat). A model the user pulls
 * (`vidembed models pull imagenet-mobilenet-v2`); without it the other analyzers still run.
 */
import { round3 } from '../media/kernels/index.js';
import type { Frame } from '../media/types.js';
import type { ClassScore, ImagenetClassifier } from '../models/imagenet/classifier.js';
import type { Analyzer, AnalyzerContext, AnalyzerOutput, Fact } from './types.js';

/** Classes kept per keyframe, and the least probability that still counts as soft evidence. */
const TOP_K = 5;
const MIN_P = 0.03;

/** Words for a class: its common name, plus its first synonym when that says more ("tabby, tabby cat"). */
export function classWords(c: Pick<ClassScore, 'label' | 'synonyms'>): string {
  const name = c.label.trim();
  const alt = c.synonyms.find((s) => s.toLowerCase() !== name.toLowerCase() && !/^[A-Z][a-z]+ [a-z]+$/.test(s));
  return alt && alt.toLowerCase().includes(name.toLowerCase()) ? alt : name;
}

export class ImagenetAnalyzer implements Analyzer {
  readonly name = 'imagenet';
  readonly frameMaxSide = 512;

  constructor(private readonly classifier: ImagenetClassifier) {}

  get version(): string {
    return this.classifier.version;
  }

  async load(): Promise<void> {}

  async analyzeSegment(frames: Frame[], ctx: AnalyzerContext): Promise<AnalyzerOutput> {
    if (frames.length === 0) throw new Error('analyzeSegment: no frames');
    // The keyframe is nearly identical to one already classified (src/engine/keyframe-reuse.ts).
    const prev = ctx.reuse?.analysis[this.name];
    if (ctx.reuse && prev && prev.details?.reused_from === undefined) {
      return { facts: prev.facts.map((f) => ({ ...f })), details: { ...prev.details, reused_from: ctx.reuse.from } };
    }
    const keyframe = frames[frames.length >> 1];
    const classes = (await this.classifier.classify(keyframe, TOP_K)).filter((c) => c.p >= MIN_P);
    const facts: Fact[] = classes.map((c) => ({ kind: 'thing', label: classWords(c), confidence: round3(c.p) }));
    return { facts, details: { classes: classes.map((c) => ({ label: c.label, p: round3(c.p) })) } };
  }

  async dispose(): Promise<void> {
    await this.classifier.dispose();
  }
}

/** The installed classifier as an analyzer, or null when it is not installed. */
export async function openImagenetAnalyzer(): Promise<ImagenetAnalyzer | null> {
  const { ImagenetClassifier } = await import('../models/imagenet/classifier.js');
  const classifier = await ImagenetClassifier.open();
  return classifier ? new ImagenetAnalyzer(classifier) : null;
}

/**
 * The ImageNet analyzer: the top classes of a MobileNetV2 ImageNet-1k classifier on each
 * segment's keyframe, with their probabilities — a thousand things COCO's 80 classes cannot name
 * (a fox squirrel, a fig, a pier, an alp, a tabby cat). A model the user pulls
 * (`vidembed models pull imagenet-mobilenet-v2`); without it the other analyzers still run.
 */
import { round3 } from '../media/kernels/index.js';
import type { Frame } from '../media/types.js';
import type { ClassScore, ImagenetClassifier } from '../models/imagenet/classifier.js';
import { IMAGENET_HYPERNYMS } from '../models/imagenet/hypernyms.js';
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

/**
 * Bump when the ImageNet facts for the same classes can change (part of the analyzer's version, so
 * collections made before say `needs_reindex`). wn2: broader names from WordNet as alternatives,
 * as sure as the surest class they cover (wn1, never released, summed them).
 */
export const IMAGENET_FACTS_VERSION = 'wn2';

/** The analyzer's version for a classifier version (src/analysis/versions.ts says the same). */
export const imagenetAnalyzerVersion = (classifierVersion: string): string => `${classifierVersion}+${IMAGENET_FACTS_VERSION}`;

/**
 * The ImageNet facts of a keyframe's kept classes. Each class also carries its broader names
 * (src/models/imagenet/hypernyms.ts: a Pekinese is a dog, a macaw a parrot and a bird, espresso is
 * coffee) as alternatives, each as sure as the surest kept class it covers (Pekinese 0.5 and pug 0.3
 * make "dog" 0.5): people type "a dog", the classifier names the breed. Not their sum: three weak
 * guesses of terriers (0.24, 0.15, 0.03) for a photo of rabbits would make "dog" 0.42, a word the
 * confidence curve counts as seen, and a wrong answer high. They are keyword words and confidence
 * evidence, never part of the description's vector.
 */
export function imagenetFacts(classes: Array<Pick<ClassScore, 'index' | 'label' | 'synonyms' | 'p'>>): Fact[] {
  const broader = new Map<string, number>();
  for (const c of classes) for (const name of IMAGENET_HYPERNYMS[c.index] ?? []) broader.set(name, Math.max(broader.get(name) ?? 0, c.p));
  return classes.map((c) => {
    const names = IMAGENET_HYPERNYMS[c.index] ?? [];
    const fact: Fact = { kind: 'thing', label: classWords(c), confidence: round3(c.p) };
    if (names.length) fact.alternatives = names.map((label) => ({ label, confidence: round3(broader.get(label)!) }));
    return fact;
  });
}

export class ImagenetAnalyzer implements Analyzer {
  readonly name = 'imagenet';
  readonly frameMaxSide = 512;

  constructor(private readonly classifier: ImagenetClassifier) {}

  get version(): string {
    return imagenetAnalyzerVersion(this.classifier.version);
  }

  async load(): Promise<void> {}

  async analyzeSegment(frames: Frame[], ctx: AnalyzerContext): Promise<AnalyzerOutput> {
    if (frames.length === 0) throw new Error('analyzeSegment: no frames');
    // The keyframe is nearly identical to one already classified (src/pipeline/keyframe-reuse.ts).
    const prev = ctx.reuse?.analysis[this.name];
    if (ctx.reuse && prev && prev.details?.reused_from === undefined) {
      return { facts: prev.facts.map((f) => ({ ...f })), details: { ...prev.details, reused_from: ctx.reuse.from } };
    }
    const keyframe = frames[frames.length >> 1];
    const classes = (await this.classifier.classify(keyframe, TOP_K)).filter((c) => c.p >= MIN_P);
    return { facts: imagenetFacts(classes), details: { classes: classes.map((c) => ({ index: c.index, label: c.label, p: round3(c.p) })) } };
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

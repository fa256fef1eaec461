/**
 * Every tuned number of the perception tier's vectors, in one place, with the figures they were
 * tuned for. Tuned only on the tuning half of `../shared/eval` (`npm run eval -- tune`, see
 * eval/split.ts); the check half is never used to choose them.
 *
 * A segment's vector is the weighted mean of the USE embeddings of its parts: the perception
 * description's parts (subject, people, setting, colour, camera, weak detections), one part per
 * ImageNet class, one per line of on-screen text. Weights of soft evidence are multiplied by the
 * evidence's confidence (raised to `confidencePower`).
 */
/*
 * Tuned 2026-11-22 by `node dist/eval/tune.js HOME` (coordinate search, 3 rounds, objective
 * MRR + R@1/4 + R@5/10 averaged over the libraries with and without the ImageNet analyzer) on the
 * tuning half (34 items: 30 photos as 6 s clips, 4 videos). Tuning half, search through the engine:
 *   without ImageNet: R@1 0.265 → 0.471, R@5 0.647 → 0.735, MRR 0.451 → 0.571
 *   with ImageNet:    R@1 0.471 → 0.618, R@5 0.735 → 0.794, MRR 0.604 → 0.703
 * Re-tuned the same way when the `who` part arrived (perception-3: gender and smiles of faces),
 * starting from the weights above with `who` 1: it chose who 3, people 0, keyword 0.8 and refitted
 * the confidence curve. Tuning half:
 *   without ImageNet: R@1 0.471, R@5 0.794, MRR 0.593 → 0.594
 *   with ImageNet:    R@1 0.559 → 0.588, R@5 0.794 → 0.824, MRR 0.674 → 0.700
 * Check-half figures (never used here): docs/models.md, `npm run eval -- search`.
 * `text` was not tuned (the tuning half has no on-screen text to read).
 */
export const PERCEPTION_WEIGHTS = {
  /** Perception description parts. */
  subject: 1.5,
  /** A weak detection ("Probably a dog."), times its score^confidencePower. */
  maybe: 3,
  people: 0,
  /** Who the people are: "A smiling woman.", "Two men." (gender and expression of counted faces). */
  who: 3,
  setting: 0,
  colour: 0.4,
  camera: 0.3,
  /** One ImageNet class ("A photo of a tabby cat."), times its probability^confidencePower. */
  thing: 2,
  /** On-screen text ("The words EXIT on screen."), times the reader's confidence. */
  text: 0.8,
  confidencePower: 1.0,
} as const;

export type PerceptionWeights = { -readonly [K in keyof typeof PERCEPTION_WEIGHTS]: number };

/**
 * Search scoring (src/search/hybrid.ts), tuned on the tuning half with the weights above.
 * `keyword`: the pre-rank = cosine + keyword × (IDF-weighted share of query words found in the
 * segment's analysis words). The confidence curves (seen, said, written) and their combination are
 * in src/search/evidence-weights.ts (issue 29); `highConfidence` / `mediumConfidence` are where the
 * labels fall. (Until 2026-11-27 the confidence was one logistic curve here, fitted on the first
 * results of the 123-item set's tuning half; its figures are in docs/eval.md.)
 */
export const SEARCH_WEIGHTS = {
  keyword: 0.8,
  highConfidence: 0.7,
  mediumConfidence: 0.4,
};

/**
 * Vote pooling for the framing classifiers: each cue votes with a likelihood over the classes and
 * a weight; votes are pooled log-linearly with a prior (p ∝ prior · Π (q_i + ε)^(w_i)).
 */
import type { TagValue } from '../api/types.js';
import { clamp01, round4 } from '../media/kernels/index.js';
import { aggregateTags } from '../tags/aggregate.js';

export type Vec = number[];
const EPS = 0.02;

const erf = (x: number): number => {
  // Abramowitz–Stegun 7.1.26 (|error| < 1.5e-7).
  const s = Math.sign(x);
  const t = 1 / (1 + 0.3275911 * Math.abs(x));
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return s * y;
};
const Phi = (x: number): number => 0.5 * (1 + erf(x / Math.SQRT2));

export function normalise(v: Vec): Vec {
  const s = v.reduce((a, b) => a + b, 0);
  return s > 0 ? v.map((x) => x / s) : v.map(() => 1 / v.length);
}

/** Class probabilities of a log-normal estimate `value` (σ in ln units) over bins split at `bounds`. */
export function binned(value: number, sigma: number, bounds: number[]): Vec {
  const mu = Math.log(value);
  const out: Vec = [];
  let prev = 0;
  for (const b of bounds) {
    const c = Phi((Math.log(b) - mu) / sigma);
    out.push(c - prev);
    prev = c;
  }
  out.push(1 - prev);
  return out;
}

/** One cue's vote: a likelihood over the classes and how much it is trusted. */
export interface Vote {
  cue: string;
  q: Vec;
  w: number;
  /** The measurement behind the vote (for explanations). */
  value?: number;
}

/** Log-linear pooling: p ∝ prior · Π (q_i + ε)^(w_i). */
export function pool(prior: Vec, votes: Vote[]): Vec {
  const logp = prior.map((p) => Math.log(p));
  for (const v of votes) {
    if (!(v.w > 0)) continue;
    const q = normalise(v.q);
    for (let k = 0; k < logp.length; k++) logp[k] += v.w * Math.log(q[k] + EPS);
  }
  const m = Math.max(...logp);
  return normalise(logp.map((x) => Math.exp(x - m)));
}

export function toTag<L extends string>(labels: readonly L[], p: Vec, confidence: number, extra: Record<string, unknown>): TagValue & { label: L; scores: Record<L, number> } {
  let best = 0;
  for (let k = 1; k < p.length; k++) if (p[k] > p[best]) best = k;
  const scores = {} as Record<L, number>;
  labels.forEach((l, k) => (scores[l] = round4(p[k])));
  return { label: labels[best], confidence: round4(clamp01(confidence)), scores, ...extra };
}

/** A segment's tag from its keyframes' tags, each counting the same: the one aggregation rule (src/tags/aggregate.ts). */
export function combine<L extends string>(labels: readonly L[], tags: Array<TagValue & { label: L; scores: Record<L, number> }>): TagValue & { label: L; scores: Record<L, number> } {
  return aggregateTags(tags.map((tag) => ({ weight: 1, tag })), labels) as TagValue & { label: L; scores: Record<L, number> };
}

/** The votes as a classifier's `details.cues`: cue, weight, the label it favoured most, measurement. */
export function explainVotes<L extends string>(labels: readonly L[], votes: Vote[]): Array<{ cue: string; weight: number; top: L; value?: number }> {
  return votes.map((v) => ({ cue: v.cue, weight: round4(v.w), top: labels[normalise(v.q).indexOf(Math.max(...normalise(v.q)))], value: v.value === undefined ? undefined : round4(v.value) }));
}

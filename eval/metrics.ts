/** Classification metrics for the eval: confusion matrices, accuracy, reliability bins. */

export interface Prediction<L extends string = string> {
  id: string;
  truth: L;
  label: L;
  confidence: number;
}

export interface ConfusionReport<L extends string = string> {
  labels: readonly L[];
  /** matrix[truth][predicted] = count. */
  matrix: Record<L, Record<L, number>>;
  n: number;
  correct: number;
  accuracy: number;
  /** For ordinal label sets: predictions at most one step from the truth. */
  withinOne?: number;
  withinOneAccuracy?: number;
  /** Accuracy of always answering the most frequent true label (what "accuracy" must beat). */
  majorityBaseline: { label: L; accuracy: number };
}

const r3 = (x: number): number => Math.round(x * 1000) / 1000;

export function confusion<L extends string>(labels: readonly L[], preds: Array<Prediction<L>>, ordinal = false): ConfusionReport<L> {
  const matrix = {} as Record<L, Record<L, number>>;
  for (const t of labels) {
    matrix[t] = {} as Record<L, number>;
    for (const p of labels) matrix[t][p] = 0;
  }
  let correct = 0;
  let within = 0;
  const truthCounts = new Map<L, number>();
  for (const p of preds) {
    matrix[p.truth][p.label]++;
    if (p.truth === p.label) correct++;
    if (Math.abs(labels.indexOf(p.truth) - labels.indexOf(p.label)) <= 1) within++;
    truthCounts.set(p.truth, (truthCounts.get(p.truth) ?? 0) + 1);
  }
  const n = preds.length;
  let major = labels[0];
  for (const l of labels) if ((truthCounts.get(l) ?? 0) > (truthCounts.get(major) ?? 0)) major = l;
  const out: ConfusionReport<L> = {
    labels,
    matrix,
    n,
    correct,
    accuracy: n ? r3(correct / n) : 0,
    majorityBaseline: { label: major, accuracy: n ? r3((truthCounts.get(major) ?? 0) / n) : 0 },
  };
  if (ordinal) {
    out.withinOne = within;
    out.withinOneAccuracy = n ? r3(within / n) : 0;
  }
  return out;
}

export interface ReliabilityBin {
  /** Confidence range [lo, hi). */
  lo: number;
  hi: number;
  n: number;
  meanConfidence: number;
  accuracy: number;
}

export interface ReliabilityReport {
  bins: ReliabilityBin[];
  /** Expected calibration error: Σ n_b/N · |accuracy_b − confidence_b|. */
  ece: number;
  /** Spearman-free check: accuracy of the upper half of confidences minus the lower half. */
  upperMinusLowerAccuracy: number;
  n: number;
}

/** Confidence bins (edges) vs accuracy. Empty bins are kept with n = 0. */
export function reliability(preds: Array<{ confidence: number; correct: boolean }>, edges = [0, 0.2, 0.4, 0.6, 0.8, 1.0001]): ReliabilityReport {
  const bins: ReliabilityBin[] = [];
  let ece = 0;
  for (let i = 0; i + 1 < edges.length; i++) {
    const lo = edges[i];
    const hi = edges[i + 1];
    const inBin = preds.filter((p) => p.confidence >= lo && p.confidence < hi);
    const n = inBin.length;
    const meanConfidence = n ? inBin.reduce((s, p) => s + p.confidence, 0) / n : 0;
    const accuracy = n ? inBin.filter((p) => p.correct).length / n : 0;
    if (n) ece += (n / preds.length) * Math.abs(accuracy - meanConfidence);
    bins.push({ lo, hi: Math.min(1, hi), n, meanConfidence: r3(meanConfidence), accuracy: r3(accuracy) });
  }
  const sorted = [...preds].sort((a, b) => a.confidence - b.confidence);
  const half = Math.floor(sorted.length / 2);
  const acc = (xs: typeof preds): number => (xs.length ? xs.filter((p) => p.correct).length / xs.length : 0);
  return {
    bins,
    ece: r3(ece),
    upperMinusLowerAccuracy: r3(acc(sorted.slice(sorted.length - half)) - acc(sorted.slice(0, half))),
    n: preds.length,
  };
}

/** Compact text table of a confusion matrix (rows = truth, columns = prediction). */
export function formatConfusion<L extends string>(rep: ConfusionReport<L>, abbrev: (l: L) => string = (l) => l.slice(0, 6)): string {
  const cols = rep.labels.map(abbrev);
  const w = Math.max(6, ...cols.map((c) => c.length));
  const lines = [`${'truth\\pred'.padEnd(12)}${cols.map((c) => c.padStart(w + 1)).join('')}`];
  for (const t of rep.labels) {
    const rowN = rep.labels.reduce((s, p) => s + rep.matrix[t][p], 0);
    if (rowN === 0) continue;
    lines.push(`${abbrev(t).padEnd(12)}${rep.labels.map((p) => String(rep.matrix[t][p] || '.').padStart(w + 1)).join('')}`);
  }
  return lines.join('\n');
}

export function formatReliability(name: string, rep: ReliabilityReport): string {
  const rows = rep.bins.map((b) => `  [${b.lo.toFixed(1)}, ${b.hi.toFixed(1)})  n=${String(b.n).padStart(3)}  conf=${b.meanConfidence.toFixed(2)}  acc=${b.n ? b.accuracy.toFixed(2) : '  - '}`);
  return `${name}: ECE ${rep.ece}, upper-half minus lower-half accuracy ${rep.upperMinusLowerAccuracy}\n${rows.join('\n')}`;
}

/** A small fixed-seed generator (mulberry32): the same resamples on every run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The eval's bootstrap: 1000 resamples of the queries, seed 23, a 95 % percentile interval. */
export const BOOTSTRAP = { resamples: 1000, seed: 23, level: 0.95 } as const;

/**
 * Percentile bootstrap interval of `stat` over `items` (resampled with replacement, fixed seed):
 * [lo, hi] at `level`. The sets are small: an R@1 of 0.5 on 60 queries is roughly 0.37–0.63.
 */
export function bootstrapInterval<T>(items: T[], stat: (xs: T[]) => number, opts: { resamples?: number; seed?: number; level?: number } = {}): [number, number] {
  const { resamples, seed, level } = { ...BOOTSTRAP, ...opts };
  if (!items.length) return [0, 0];
  const rnd = seededRandom(seed);
  const values: number[] = [];
  const sample = new Array<T>(items.length);
  for (let b = 0; b < resamples; b++) {
    for (let i = 0; i < items.length; i++) sample[i] = items[Math.floor(rnd() * items.length)];
    values.push(stat(sample));
  }
  values.sort((x, y) => x - y);
  const at = (q: number) => values[Math.min(values.length - 1, Math.max(0, Math.round(q * (values.length - 1))))];
  return [r3(at((1 - level) / 2)), r3(at(1 - (1 - level) / 2))];
}

export interface LabelBin {
  label: string;
  n: number;
  right: number;
  /** right / n (0 when empty). */
  rate: number;
  meanConfidence: number;
}

/** Share right per confidence label (high / medium / low), in the order given. */
export function labelReliability(preds: Array<{ label: string; confidence: number; correct: boolean }>, labels: readonly string[]): LabelBin[] {
  return labels.map((label) => {
    const xs = preds.filter((p) => p.label === label);
    const right = xs.filter((p) => p.correct).length;
    return { label, n: xs.length, right, rate: xs.length ? r3(right / xs.length) : 0, meanConfidence: xs.length ? r3(xs.reduce((s, p) => s + p.confidence, 0) / xs.length) : 0 };
  });
}

export function formatLabelReliability(name: string, bins: LabelBin[]): string {
  return `${name}\n${bins.map((b) => `    ${b.label.padEnd(7)} n=${String(b.n).padStart(3)}  right ${String(b.right).padStart(3)} (${b.n ? (100 * b.rate).toFixed(0).padStart(3) : '  -'} %)  mean confidence ${b.n ? b.meanConfidence.toFixed(2) : '-'}`).join('\n')}`;
}

/** The logistic function. */
export const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z));
/** A linear model's score: weights `w` (the intercept last) dotted with features `x`. */
export const dot = (w: number[], x: number[]): number => x.reduce((s, v, i) => s + v * w[i], w[w.length - 1]);
/** The log-loss of probability `p` for outcome `y` (1 or 0), clipped away from 0. */
export const logLoss = (p: number, y: number): number => -(y ? Math.log(Math.max(1e-9, p)) : Math.log(Math.max(1e-9, 1 - p)));

/** Logistic fit by Newton's method (IRLS, a little ridge); returns coefficients (last = intercept). */
export function fitLogistic(samples: { x: number[]; y: number }[], iters = 30, ridge = 1e-3): number[] {
  const d = samples[0].x.length + 1;
  const w = new Array<number>(d).fill(0);
  const xs = samples.map((s) => [...s.x, 1]);
  for (let it = 0; it < iters; it++) {
    const g = new Array<number>(d).fill(0);
    const H = Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j && i < d - 1 ? ridge : 0)));
    xs.forEach((x, k) => {
      const p = 1 / (1 + Math.exp(-x.reduce((s, v, i) => s + v * w[i], 0)));
      const e = p - samples[k].y;
      const r = Math.max(1e-9, p * (1 - p));
      for (let i = 0; i < d; i++) {
        g[i] += e * x[i];
        for (let j = 0; j < d; j++) H[i][j] += r * x[i] * x[j];
      }
    });
    for (let i = 0; i < d - 1; i++) g[i] += ridge * w[i];
    // Solve H · step = g (Gaussian elimination).
    const A = H.map((row, i) => [...row, g[i]]);
    for (let c = 0; c < d; c++) {
      let piv = c;
      for (let r = c + 1; r < d; r++) if (Math.abs(A[r][c]) > Math.abs(A[piv][c])) piv = r;
      [A[c], A[piv]] = [A[piv], A[c]];
      for (let r = 0; r < d; r++) {
        if (r === c || A[c][c] === 0) continue;
        const f = A[r][c] / A[c][c];
        for (let k = c; k <= d; k++) A[r][k] -= f * A[c][k];
      }
    }
    for (let i = 0; i < d; i++) w[i] -= A[i][d] / (A[i][i] || 1);
  }
  return w;
}

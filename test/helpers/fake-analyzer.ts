import type { TagValue } from '../../src/api/types.js';
import type { Analyzer, AnalyzerContext, AnalyzerOutput } from '../../src/analysis/types.js';
import type { Frame } from '../../src/media/types.js';

/**
 * A deterministic analyzer for engine and service logic tests (no model), the partner of
 * FakeEmbedder: what it finds follows from the mean colour of the segment's frames, so a test that
 * paints its frames knows the answer.
 *
 * - a `colour` fact: the strongest channel ("red", "green", "blue") when the channels differ by more
 *   than 0.1 (of 1), else "grey"; its confidence is that spread (at least 0.5 for grey);
 * - a `setting` fact: "daylight" when the mean brightness is at least 0.5, else "night";
 * - tags: `shot_size` (scores wide = brightness, close_up = 1 − brightness) and `shooting_angle`
 *   (high_angle / eye_level / low_angle in proportion to red / green / blue), each labelled by its
 *   best score (ties: the first named).
 *
 * It records every segment it was asked about (`seen`), with the context the pipeline gave.
 */
export class FakeAnalyzer implements Analyzer {
  readonly name: string;
  readonly version = 'fake-analyzer-1';
  readonly frameMaxSide = 32;
  readonly seen: Array<{ frames: number; ctx: AnalyzerContext }> = [];

  constructor(name = 'fake') {
    this.name = name;
  }

  async load(): Promise<void> {}

  async analyzeSegment(frames: Frame[], ctx: AnalyzerContext): Promise<AnalyzerOutput> {
    this.seen.push({ frames: frames.length, ctx });
    return fakeAnalysis(meanColour(frames));
  }

  async dispose(): Promise<void> {}
}

/** Mean red, green and blue of packed RGB frames, each in [0, 1]. */
export function meanColour(frames: Frame[]): [number, number, number] {
  const sum = [0, 0, 0];
  let n = 0;
  for (const f of frames) {
    for (let i = 0; i + 2 < f.data.length; i += 3) {
      sum[0] += f.data[i];
      sum[1] += f.data[i + 1];
      sum[2] += f.data[i + 2];
      n++;
    }
  }
  return n ? [sum[0] / n / 255, sum[1] / n / 255, sum[2] / n / 255] : [0, 0, 0];
}

const r4 = (x: number) => Math.round(x * 1e4) / 1e4;

function tag(scores: Record<string, number>): TagValue {
  const [label, best] = Object.entries(scores).reduce((a, b) => (b[1] > a[1] ? b : a));
  return { label, confidence: r4(best), scores: Object.fromEntries(Object.entries(scores).map(([k, v]) => [k, r4(v)])) };
}

/** What FakeAnalyzer finds in frames of this mean colour. */
export function fakeAnalysis([r, g, b]: [number, number, number]): AnalyzerOutput {
  const spread = Math.max(r, g, b) - Math.min(r, g, b);
  const colour = spread > 0.1 ? (['red', 'green', 'blue'] as const)[[r, g, b].indexOf(Math.max(r, g, b))] : 'grey';
  const brightness = (r + g + b) / 3;
  const sum = r + g + b || 1;
  return {
    facts: [
      { kind: 'colour', label: colour, confidence: r4(colour === 'grey' ? Math.max(0.5, 1 - spread) : spread) },
      { kind: 'setting', label: brightness >= 0.5 ? 'daylight' : 'night', confidence: r4(Math.abs(brightness - 0.5) * 2) },
    ],
    tags: {
      shot_size: tag({ wide: brightness, close_up: 1 - brightness }),
      shooting_angle: tag({ high_angle: r / sum, eye_level: g / sum, low_angle: b / sum }),
    },
    details: { mean_rgb: [r4(r), r4(g), r4(b)] },
  };
}

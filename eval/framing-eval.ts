/**
 * Shot size and shooting angle on the catalog photos: real detectors → FramingEvidence →
 * tagFraming, compared with the person's judgement (ambiguous rows excluded). Reported on all
 * photos and per half of the held-out split (eval/split.ts): the framing weights
 * (src/tagging/framing-weights.ts) may be chosen on the `tuning` half only; the `check` half is
 * what targets and tests are measured on.
 */
import { decodeImage } from '../src/media/frames.js';
import type { Frame } from '../src/media/types.js';
import { SHOOTING_ANGLE_LABELS, SHOT_SIZE_LABELS, tagFraming, type FramingEvidence, type ShootingAngleLabel, type ShotSizeLabel } from '../src/tagging/framing.js';
import type { CatalogRow } from './catalog.js';
import { FramingEvidenceBuilder } from './evidence.js';
import { confusion, reliability, type ConfusionReport, type Prediction, type ReliabilityReport } from './metrics.js';
import { HALVES, halfOf, type Half } from './split.js';

/** Frames the way the perception embedder sees them (longest side 512). */
export const EVAL_FRAME_SIDE = 512;

export interface FramingReport {
  shot_size: ConfusionReport<ShotSizeLabel> & { reliability: ReliabilityReport };
  shooting_angle: ConfusionReport<ShootingAngleLabel> & { reliability: ReliabilityReport };
}

export interface FramingEvalResult extends FramingReport {
  /** The same reports restricted to each half of the held-out split. */
  byHalf: Record<Half, FramingReport>;
  predictions: Array<{
    photo: string;
    half: Half;
    shot: { truth: string | null; label: ShotSizeLabel; confidence: number };
    angle: { truth: string | null; label: ShootingAngleLabel; confidence: number };
  }>;
  ms: { total: number; perPhoto: number; models: Record<string, number> };
}

export async function evaluateFraming(
  photos: CatalogRow[],
  frameOf: (row: CatalogRow) => Promise<Frame> = (r) => decodeImage(r.file, EVAL_FRAME_SIDE),
  log: (s: string) => void = () => {},
): Promise<FramingEvalResult> {
  const t0 = performance.now();
  const builder = new FramingEvidenceBuilder();
  await builder.load();
  const shotPreds: Array<Prediction<ShotSizeLabel>> = [];
  const anglePreds: Array<Prediction<ShootingAngleLabel>> = [];
  const predictions: FramingEvalResult['predictions'] = [];
  for (const row of photos) {
    const frame = await frameOf(row);
    const ev: FramingEvidence = await builder.build(frame);
    const tags = tagFraming(ev);
    if (row.shot) shotPreds.push({ id: row.name, truth: row.shot, label: tags.shot_size.label, confidence: tags.shot_size.confidence });
    if (row.angle) anglePreds.push({ id: row.name, truth: row.angle, label: tags.shooting_angle.label, confidence: tags.shooting_angle.confidence });
    predictions.push({
      photo: row.name,
      half: halfOf(row.name),
      shot: { truth: row.shot, label: tags.shot_size.label, confidence: tags.shot_size.confidence },
      angle: { truth: row.angle, label: tags.shooting_angle.label, confidence: tags.shooting_angle.confidence },
    });
    log(`  ${row.name}: ${tags.shot_size.label} (${tags.shot_size.confidence}) / ${tags.shooting_angle.label} (${tags.shooting_angle.confidence})`);
  }
  const total = performance.now() - t0;
  return {
    ...framingReport(shotPreds, anglePreds),
    byHalf: Object.fromEntries(HALVES.map((h) => [h, framingReport(shotPreds, anglePreds, h)])) as Record<Half, FramingReport>,
    predictions,
    ms: {
      total: Math.round(total),
      perPhoto: Math.round(total / Math.max(1, photos.length)),
      models: Object.fromEntries(Object.entries(builder.ms).map(([k, v]) => [k, Math.round(v)])),
    },
  };
}

/**
 * Confusion and reliability of shot size and angle predictions (ids are photo file names),
 * optionally restricted to one half of the held-out split.
 */
export function framingReport(shotPreds: Array<Prediction<ShotSizeLabel>>, anglePreds: Array<Prediction<ShootingAngleLabel>>, half?: Half): FramingReport {
  const keep = <L extends string>(ps: Array<Prediction<L>>): Array<Prediction<L>> => (half ? ps.filter((p) => halfOf(p.id) === half) : ps);
  const rel = <L extends string>(ps: Array<Prediction<L>>): ReliabilityReport =>
    reliability(ps.map((p) => ({ confidence: p.confidence, correct: p.label === p.truth })));
  const shots = keep(shotPreds);
  const angles = keep(anglePreds);
  return {
    shot_size: { ...confusion(SHOT_SIZE_LABELS, shots, true), reliability: rel(shots) },
    shooting_angle: { ...confusion(SHOOTING_ANGLE_LABELS, angles), reliability: rel(angles) },
  };
}

/**
 * Shot size and shooting angle on the catalog photos: real detectors → FramingEvidence →
 * tagFraming, compared with the person's judgement (ambiguous rows excluded).
 */
import { decodeImage } from '../src/media/frames.js';
import type { Frame } from '../src/media/types.js';
import { SHOOTING_ANGLE_LABELS, SHOT_SIZE_LABELS, tagFraming, type FramingEvidence, type ShootingAngleLabel, type ShotSizeLabel } from '../src/tagging/framing.js';
import type { CatalogRow } from './catalog.js';
import { FramingEvidenceBuilder } from './evidence.js';
import { confusion, reliability, type ConfusionReport, type Prediction, type ReliabilityReport } from './metrics.js';

/** Frames the way the perception embedder sees them (longest side 512). */
export const EVAL_FRAME_SIDE = 512;

export interface FramingEvalResult {
  shot_size: ConfusionReport<ShotSizeLabel> & { reliability: ReliabilityReport };
  shooting_angle: ConfusionReport<ShootingAngleLabel> & { reliability: ReliabilityReport };
  predictions: Array<{
    photo: string;
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
      shot: { truth: row.shot, label: tags.shot_size.label, confidence: tags.shot_size.confidence },
      angle: { truth: row.angle, label: tags.shooting_angle.label, confidence: tags.shooting_angle.confidence },
    });
    log(`  ${row.name}: ${tags.shot_size.label} (${tags.shot_size.confidence}) / ${tags.shooting_angle.label} (${tags.shooting_angle.confidence})`);
  }
  const total = performance.now() - t0;
  const rel = <L extends string>(ps: Array<Prediction<L>>): ReliabilityReport =>
    reliability(ps.map((p) => ({ confidence: p.confidence, correct: p.label === p.truth })));
  return {
    shot_size: { ...confusion(SHOT_SIZE_LABELS, shotPreds, true), reliability: rel(shotPreds) },
    shooting_angle: { ...confusion(SHOOTING_ANGLE_LABELS, anglePreds), reliability: rel(anglePreds) },
    predictions,
    ms: {
      total: Math.round(total),
      perPhoto: Math.round(total / Math.max(1, photos.length)),
      models: Object.fromEntries(Object.entries(builder.ms).map(([k, v]) => [k, Math.round(v)])),
    },
  };
}

/**
 * For eval/tune.ts `--expected`: the ImageNet classifier's whole distribution (all 1000 classes)
 * for each segment of an eval library, and each class's sentence embedding, so a segment's
 * "expected label embedding" Σ p(class) · USE("A photo of a <class>.") can be measured as evidence
 * without changing the engine. The keyframe is re-decoded from the library's clip at the middle of
 * the segment at the analyzer's size (512), so the top classes match the stored facts closely but
 * not always exactly (video keyframes are the middle sampled frame, here the middle instant).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { thingSentence } from '../src/analysis/describe.js';
import { classWords } from '../src/analysis/imagenet.js';
import { decodeImage } from '../src/media/frames.js';
import { runFfmpeg } from '../src/media/ffmpeg.js';
import { ImagenetClassifier } from '../src/models/imagenet/classifier.js';

export interface SegmentSource {
  id: number;
  path: string;
  start: number;
  end: number;
}

/** Per segment id: the probabilities of the 1000 classes (background left out, renormalised). */
export async function segmentDistributions(modelsDir: string, segs: SegmentSource[]): Promise<{ dist: Map<number, Float32Array>; labels: string[]; words: string[] }> {
  const classifier = await ImagenetClassifier.open({ modelsDir });
  if (!classifier) throw new Error(`no ImageNet classifier under ${modelsDir}`);
  const keep = classifier.labels.map((_, i) => i).filter((i) => i !== classifier.backgroundIndex);
  const words = keep.map((i) => classWords(classifier.labels[i]));
  const labels = words.map(thingSentence);
  const tmp = mkdtempSync(join(tmpdir(), 'vidembed-keyframes-'));
  const dist = new Map<number, Float32Array>();
  try {
    for (const s of segs) {
      const png = join(tmp, `${s.id}.png`);
      await runFfmpeg(['-v', 'error', '-y', '-ss', String((s.start + s.end) / 2), '-i', s.path, '-frames:v', '1', png]);
      const frame = await decodeImage(png, 512);
      const probs = await classifier.probabilities(frame);
      const p = Float32Array.from(keep, (i) => probs[i]);
      const sum = p.reduce((a, b) => a + b, 0) || 1;
      for (let i = 0; i < p.length; i++) p[i] /= sum;
      dist.set(s.id, p);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    await classifier.dispose();
  }
  return { dist, labels, words };
}

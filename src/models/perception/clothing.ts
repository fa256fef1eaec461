/**
 * Clothing colours: what a person would type about what people wear ("a man in a red tunic",
 * "white robes"), read off what perception already measures — the colour of the middle of each
 * detected person's box (`boxColour` on the torso part, src/analysis/perception.ts), which the
 * description already says as "a person wearing red". They are facts (`clothing`), so the
 * keyword index holds them; the description and the vector are unchanged.
 *
 * A box counts when it is at least as sure as the people the description counts (0.3), covers at
 * least 2 % of the frame (smaller, the middle of the box is a few pixels of anything) and at most
 * half of it: in a close-up the middle of the box is the face (both close-ups of the tuning
 * images read *orange*, one a man in a black T-shirt). Grey is not said, as in the description.
 * Measured on the tuning half with `node dist/eval/tune.js HOME --people-words
 * --people-only=clothing` (docs/eval.md).
 */
import type { ColourName } from './colour.js';

/** Person boxes whose torso colour is read as clothing. */
export const CLOTHED_PERSON = { minScore: 0.3, minArea: 0.02, maxArea: 0.5 };

/** The detections clothing colours are read from (a keyframe's objects, as stored in the details). */
export interface ClothingInput {
  label: string;
  score: number;
  box: { w: number; h: number };
  colour?: ColourName;
}

/** Each clothing colour of a segment's keyframes once (first seen first), as sure as the surest person wearing it. */
export function clothingColours(keyframes: Array<{ objects: ClothingInput[] }>): Array<{ colour: ColourName; confidence: number }> {
  const best = new Map<ColourName, number>();
  for (const o of keyframes.flatMap((k) => k.objects)) {
    const area = o.box.w * o.box.h;
    if (o.label !== 'person' || !o.colour || o.colour === 'grey') continue;
    if (o.score < CLOTHED_PERSON.minScore || area < CLOTHED_PERSON.minArea || area > CLOTHED_PERSON.maxArea) continue;
    best.set(o.colour, Math.max(best.get(o.colour) ?? 0, o.score));
  }
  return [...best].map(([colour, confidence]) => ({ colour, confidence }));
}

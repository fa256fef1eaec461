/**
 * Scene words: what a person would type about a picture's light and colour ("black and white",
 * "grayscale", "night", "dark", "low light", "daylight", "colourful"), read off what perception
 * already measured from the pixels (`analyseSetting` and the colour statistics of describe.ts:
 * mean saturation, mean luma, the share of very bright pixels, colourfulness). No threshold of its
 * own: each word is the plain name of a measurement made there, so the words and the description
 * never disagree. They are facts (perception.ts), so the keyword index holds them.
 *
 * Words from the layout cues (sky, clouds, grass, forest, water...) were measured too and left out:
 * most pictures share them, so they reshuffle look-alikes more than they find anything
 * (docs/eval.md, `node dist/eval/tune.js HOME --scene-words`).
 */
import type { SceneFacts } from './describe.js';

/** The measurements scene words are read from (all stored in perception's details). */
export type SceneWordInput = { setting: Pick<SceneFacts['setting'], 'indoor' | 'lighting' | 'daylight' | 'grayscale'>; colourfulness: number };

/** Colourfulness (Hasler–Süsstrunk, scaled) at which describe.ts says "vivid and colourful". */
export const COLOURFUL = 0.6;

/** Scene words of a segment, each once. */
export function sceneWords(f: SceneWordInput): string[] {
  const s = f.setting;
  const words: string[] = [];
  // Saturation about zero (`grayscale`: mean HSV saturation under 0.05).
  if (s.grayscale) words.push('black and white', 'monochrome', 'grayscale');
  // Light: mean luma (night = dark with a few very bright pixels: lamps, windows, street lights).
  if (s.lighting === 'night') words.push(...(s.indoor ? ['dark', 'low light'] : ['night', 'dark', 'low light']));
  else if (s.lighting === 'dark') words.push('dark', 'low light');
  else if (s.lighting === 'dim') words.push('dim', 'low light');
  else if (s.lighting === 'bright') words.push('bright');
  if (s.daylight) words.push('daylight');
  if (!s.grayscale && f.colourfulness >= COLOURFUL) words.push('colourful', 'colorful');
  return [...new Set(words)];
}

import { describe, expect, it } from 'vitest';
import { colourStats } from '../../src/models/perception/colour.js';
import { describeSegment } from '../../src/models/perception/describe.js';
import { sceneWords } from '../../src/models/perception/scene-words.js';
import type { Frame } from '../../src/media/types.js';

const W = 96;
const H = 54;

/** A synthetic RGB frame: `at(x, y)` gives each pixel. */
function frame(at: (x: number, y: number) => [number, number, number]): Frame {
  const data = new Uint8Array(W * H * 3);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) data.set(at(x, y), (y * W + x) * 3);
  return { t: 0, width: W, height: H, data };
}

/** The scene words perception reads off one frame with nothing detected in it (light and colour only). */
function wordsOf(f: Frame): string[] {
  const d = describeSegment({ start: 0, end: 1, frameCount: 1, colour: colourStats(f), keyframes: [{ t: 0, objects: [], faces: [] }], change: 0 });
  return sceneWords(d.facts);
}

/** Grass: two greens in a fine checker (texture). */
const grass = (x: number, y: number): [number, number, number] => ((x + y) % 2 ? [40, 140, 40] : [70, 170, 60]);

describe('scene words from the pixels', () => {
  it('a grey picture (saturation zero) is black and white, and no colour word is said of it', () => {
    const w = wordsOf(frame((x) => {
      const v = Math.round(30 + (200 * x) / W);
      return [v, v, v];
    }));
    expect(w).toEqual(expect.arrayContaining(['black and white', 'monochrome', 'grayscale']));
    expect(w).not.toContain('colourful');
  });

  it('a sunlit landscape is daylight; a white frame is bright; neither gets a word of low light', () => {
    const land = wordsOf(frame((x, y) => (y < H / 3 ? [110, 165, 235] : grass(x, y))));
    expect(land).toContain('daylight');
    expect(land).not.toContain('black and white');
    expect(land).not.toContain('low light');
    expect(land).not.toContain('night');
    const white = wordsOf(frame((x) => [235 + (x % 2) * 10, 235 + (x % 2) * 10, 235 + (x % 2) * 10]));
    expect(white).toContain('bright');
    expect(white).not.toContain('dark');
  });

  it('a dark picture with a few bright lights is night; without the lights it is only dark', () => {
    const lamps = (x: number, y: number) => x >= 40 && x < 46 && y >= 20 && y < 26;
    const night = wordsOf(frame((x, y) => (lamps(x, y) ? [255, 240, 200] : [12, 12, 22])));
    expect(night).toEqual(expect.arrayContaining(['night', 'dark', 'low light']));
    const dark = wordsOf(frame(() => [12, 12, 22]));
    expect(dark).toEqual(expect.arrayContaining(['dark', 'low light']));
    expect(dark).not.toContain('night');
    expect(dark).not.toContain('sky');
  });

  it('saturated stripes of many hues are colourful, not black and white', () => {
    const hues: Array<[number, number, number]> = [[230, 30, 30], [30, 200, 40], [40, 60, 230], [240, 220, 20]];
    const w = wordsOf(frame((x) => hues[Math.floor(x / 8) % hues.length]));
    expect(w).toEqual(expect.arrayContaining(['colourful', 'colorful']));
    expect(w).not.toContain('black and white');
  });

  it('a dimly lit picture is dim and low light, not dark', () => {
    const w = wordsOf(frame((x) => [60 + (x % 3) * 4, 62, 66]));
    expect(w).toEqual(expect.arrayContaining(['dim', 'low light']));
    expect(w).not.toContain('dark');
  });

  it('a lit room at night is dark, not night; each word is said once', () => {
    const setting = { indoor: true, lighting: 'night' as const, daylight: false, grayscale: true };
    expect(sceneWords({ setting, colourfulness: 0.9 })).toEqual(['black and white', 'monochrome', 'grayscale', 'dark', 'low light']);
    expect(sceneWords({ setting: { ...setting, indoor: false, grayscale: false }, colourfulness: 0.9 })).toEqual(['night', 'dark', 'low light', 'colourful', 'colorful']);
    expect(sceneWords({ setting: { indoor: false, lighting: 'normal', daylight: false, grayscale: false }, colourfulness: 0.59 })).toEqual([]);
  });
});

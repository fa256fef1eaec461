import { describe, expect, it } from 'vitest';
import { pictureProbability } from '../../src/search/evidence.js';
import { hitEvidence } from '../../src/search/hit-evidence.js';
import { pictureVerifier } from '../../src/search/picture-check.js';
import type { Frame } from '../../src/media/types.js';
import { forEachRect } from '../helpers/synthetic-scene.js';

/** A deterministic RGB picture with corners: coloured rectangles on a gradient. */
function scene(width: number, height: number, seed: number): Frame {
  const data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data.set([40 + (100 * x) / width, 90, 140], (y * width + x) * 3);
  forEachRect(width, height, seed, 90, (x0, y0, w, h, rand) => {
    const c = [rand() * 255, rand() * 255, rand() * 255];
    for (let y = y0; y < y0 + h; y++) for (let x = x0; x < x0 + w; x++) data.set(c, (y * width + x) * 3);
  });
  return { t: 0, width, height, data };
}

/** The central 70 % of a frame, its colours shifted (a warm cast: each channel its own gain, lifted). */
function cropShift(f: Frame): Frame {
  const w = Math.round(f.width * 0.7);
  const h = Math.round(f.height * 0.7);
  const x0 = Math.round((f.width - w) / 2);
  const y0 = Math.round((f.height - h) / 2);
  const data = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = ((y0 + y) * f.width + x0 + x) * 3;
      const [r, g, b] = [f.data[i], f.data[i + 1], f.data[i + 2]];
      data.set([Math.min(255, r * 1.1 + 15), Math.min(255, g * 0.95 + 15), Math.min(255, b * 0.75 + 15)], (y * w + x) * 3);
    }
  }
  return { t: 0, width: w, height: h, data };
}

describe('the picture check of a search by picture', () => {
  it("finds the query's source among candidate keyframes; a keyframe that is missing or unreadable is no match", async () => {
    const frames = new Map([
      ['vid_a', scene(240, 180, 21)],
      ['vid_b', scene(240, 180, 22)],
    ]);
    const read: string[] = [];
    const verify = pictureVerifier(cropShift(frames.get('vid_a')!), async (videoId, idx) => {
      read.push(`${videoId}@${idx}`);
      if (videoId === 'vid_bad') throw new Error('no such blob');
      return idx === 0 ? frames.get(videoId) : undefined;
    });
    const got = await verify([
      { videoId: 'vid_b', segments: [{ id: 20, idx: 0 }] },
      { videoId: 'vid_a', segments: [{ id: 10, idx: 0 }, { id: 11, idx: 1 }] },
      { videoId: 'vid_bad', segments: [{ id: 30, idx: 0 }] },
    ]);
    expect(read).toEqual(['vid_b@0', 'vid_a@0', 'vid_a@1', 'vid_bad@0']);
    expect([...got.keys()].sort()).toEqual([10, 20]);
    expect(got.get(10)!).toBeGreaterThanOrEqual(20);
    expect(got.get(20)!).toBeLessThan(got.get(10)! / 4);
  });

  it('a checked copy is likely and says seen with its inliers; an unchecked moment of the same similarity is not', () => {
    expect(pictureProbability(0.85, 60)).toBeGreaterThan(0.7);
    expect(pictureProbability(0.95, 4)).toBeLessThan(0.4);
    expect(pictureProbability(0.85, 10)).toBeGreaterThan(pictureProbability(0.85, 5));
    const checked = hitEvidence({ similarity: 0.85, facts: [], matched: [], idf: new Map(), inliers: 60 }, { example: true, seenOnly: false, pictureChecked: true });
    expect(checked.kinds).toEqual(['seen']);
    expect(checked.parts.seen).toEqual({ similarity: 0.85, inliers: 60 });
    expect(checked.reason).toContain('60 keypoints agree');
    const unchecked = hitEvidence({ similarity: 0.85, facts: [], matched: [], idf: new Map() }, { example: true, seenOnly: false, pictureChecked: true });
    expect(unchecked.confidence).toBeLessThan(checked.confidence);
    expect(unchecked.parts.seen).toEqual({ similarity: 0.85, inliers: 0 });
  });
});

/**
 * Shot boundaries (hard cuts) on generated clips (real ffmpeg, eval photos), plus degenerate input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { makeClip, makeConcat, makeSolid, readFrames, photo, tempDir, pool } from './tagging-fixtures.js';
import { PIXEL_TAGGING_SAMPLING, detectShots, tagFrames, type PixelTags } from '../../src/tagging/index.js';
import type { Frame } from '../../src/media/types.js';

const { fps: FPS, maxSide: MAX_SIDE } = PIXEL_TAGGING_SAMPLING;

describe('shot boundaries', () => {
  const tmp = tempDir();
  let concat: Frame[] = [];
  let concatPan: Frame[] = [];
  let pans: Frame[][] = [];
  let black: Frame[] = [];

  beforeAll(async () => {
    const jobs: Array<() => Promise<string>> = [
      () => makeConcat(join(tmp.dir, 'cut3.mp4'), [photo('opencv-doc__building.jpg'), photo('kphotoalbum__skagen.jpg'), photo('opencv-doc__fruits.jpg')], 2),
      // Same kind of scenery on both sides of the cut, with a slow pan through all three shots.
      () => makeConcat(join(tmp.dir, 'cut3pan.mp4'), [photo('kphotoalbum__grand_canyon_3.jpg'), photo('kphotoalbum__grand_canyon_1__rotated180.jpg'), photo('psychtoolbox-3-common__town.jpg')], 2.5, 0.08),
      () => makeClip(join(tmp.dir, 'pan1.mp4'), photo('psychtoolbox-3-common__town.jpg'), { kind: 'pan', speed: 0.3 }),
      () => makeClip(join(tmp.dir, 'pan2.mp4'), photo('opencv-doc__fruits.jpg'), { kind: 'pan', speed: -0.3 }),
      () => makeClip(join(tmp.dir, 'pan3.mp4'), photo('python3-scipy__face_raccoon.jpg'), { kind: 'tilt', speed: 0.25 }),
      () => makeClip(join(tmp.dir, 'shaky.mp4'), photo('plasma-workspace-wallpapers__Path_1920x1080.jpg'), { kind: 'shaky', amp: 0.02, seed: 3 }),
      () => makeSolid(join(tmp.dir, 'black.mp4'), 'black', 2),
    ];
    const files = await pool(jobs, 2, (j) => j());
    const frames = await pool(files, 2, (f) => readFrames(f, FPS, MAX_SIDE));
    [concat, concatPan] = frames;
    pans = frames.slice(2, 6);
    black = frames[6];
  }, 120_000);
  afterAll(() => tmp.cleanup());

  it('finds the 2 cuts of a 3-shot concatenation at the right times (±0.5 s)', () => {
    const d = detectShots(concat, { end: 6 });
    console.log('cuts', JSON.stringify(d.cuts.map((c) => [c.t, +c.score.toFixed(3), +c.confidence.toFixed(3)])), 'shots', JSON.stringify(d.shots));
    expect(d.cuts).toHaveLength(2);
    expect(Math.abs(d.cuts[0].t - 2)).toBeLessThanOrEqual(0.5);
    expect(Math.abs(d.cuts[1].t - 4)).toBeLessThanOrEqual(0.5);
    expect(d.shots).toHaveLength(3);
    expect(d.shots[0].start).toBe(0);
    expect(d.shots[2].end).toBe(6);
    for (const c of d.cuts) expect(c.confidence).toBeGreaterThan(0.9);
  });

  it('finds cuts between similar scenery while the camera pans', () => {
    const d = detectShots(concatPan, { end: 7.5 });
    console.log('cuts (pan)', JSON.stringify(d.cuts.map((c) => [c.t, +c.score.toFixed(3)])), 'distances', d.distances.map((x) => x.toFixed(2)).join(' '));
    expect(d.cuts).toHaveLength(2);
    expect(Math.abs(d.cuts[0].t - 2.5)).toBeLessThanOrEqual(0.5);
    expect(Math.abs(d.cuts[1].t - 5)).toBeLessThanOrEqual(0.5);
  });

  it('finds no cut in continuous pans, tilts or shaky shots', () => {
    for (const fr of pans) {
      const d = detectShots(fr);
      expect(d.cuts).toEqual([]);
      expect(d.shots).toHaveLength(1);
    }
  });

  it('tags each shot separately in the streaming tagger', () => {
    const tags: PixelTags = tagFrames(concatPan, { duration: 7.5 });
    console.log(JSON.stringify(tags.segments.map((s) => [s.start, s.end, s.camera_movement.label, s.camera_movement.confidence])));
    expect(tags.shots).toHaveLength(3);
    for (const s of tags.segments) expect(s.camera_movement.label).toBe('pan_right');
    expect(tags.camera_movement.label).toBe('pan_right');
    // Requested segments that straddle a cut: the pair across the cut is left out.
    const seg = tagFrames(concatPan, { duration: 7.5, segments: [{ start: 0, end: 3.75 }, { start: 3.75, end: 7.5 }] });
    expect(seg.segments.map((s) => s.camera_movement.label)).toEqual(['pan_right', 'pan_right']);
  });

  it('handles degenerate input: no frames, 1 frame, 2 frames, black frames', () => {
    expect(detectShots([])).toEqual({ shots: [], cuts: [], distances: [] });
    expect(detectShots([], { end: 3 }).shots).toEqual([{ start: 0, end: 3 }]);
    const one = detectShots(concat.slice(0, 1), { end: 1 });
    expect(one.cuts).toEqual([]);
    expect(one.shots).toEqual([{ start: 0, end: 1 }]);
    // Two frames of the same shot: no cut; two frames of different shots: a cut between them.
    expect(detectShots(concat.slice(0, 2)).cuts).toEqual([]);
    const across = detectShots([concat[0], concat[concat.length - 1]], { minShot: 0 });
    expect(across.cuts).toHaveLength(1);
    // Black frames: one shot, nothing to measure, no crash anywhere.
    expect(black.length).toBeGreaterThanOrEqual(7);
    const b = detectShots(black, { end: 2 });
    expect(b.cuts).toEqual([]);
    const tb = tagFrames(black, { duration: 2 });
    expect(tb.camera_movement.label).toBe('static');
    expect(tb.camera_movement.confidence).toBe(0);
    expect(tb.lighting.label).toBe('low_key');
    expect(tb.horizon.confidence).toBe(0);
    expect(tagFrames([]).segments).toEqual([]);
    const t1 = tagFrames(concat.slice(0, 1));
    expect(t1.segments).toHaveLength(1);
    expect(t1.camera_movement.confidence).toBe(0);
    // Cut to black is a cut.
    const toBlack = detectShots([...concat.slice(0, 8), ...black.map((f, i) => ({ ...f, t: 2 + i / FPS }))]);
    expect(toBlack.cuts.map((c) => c.t)).toEqual([1.875]);
  });

  it('rejects malformed frames', () => {
    expect(() => detectShots([{ t: 0, width: 10, height: 10, data: new Uint8Array(5) }])).toThrow(RangeError);
  });
});

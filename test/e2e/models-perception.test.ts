/**
 * Real models on real photos (shared/eval): USE text encoder, CenterNet objects, BlazeFace faces,
 * MoveNet pose, colour statistics, and text -> photo retrieval through the perception embedder.
 *
 * The shared eval set (../shared/eval beside the repository) is required under CI; elsewhere its
 * absence skips these tests with a loud line.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadSearchCatalog, queryText } from '../../eval/catalog.js';
import { inHalf } from '../../eval/split.js';
import { decodeImage } from '../../src/media/frames.js';
import type { Frame } from '../../src/media/types.js';
import { colourStats } from '../../src/models/perception/colour.js';
import { ObjectDetector } from '../../src/models/perception/detector.js';
import { PerceptionEmbedder } from '../../src/embedders/perception.js';
import { FaceDetector } from '../../src/models/perception/faces.js';
import { PoseEstimator, visibleParts } from '../../src/models/perception/pose.js';
import { PersonSegmenter } from '../../src/models/perception/segmentation.js';
import { createDefaultEmbedder, getEmbedder, listEmbedders } from '../../src/embedders/registry.js';
import { tf } from '../../src/models/tfjs.js';
import { dot, getUseTextEncoder } from '../../src/models/use/text-encoder.js';
import { evalDir, evalPhotosDir, isCI, requireSharedData } from '../helpers/clips.js';

const PHOTOS = evalPhotosDir;
const EVAL_DATA = [join(evalDir, 'catalog.tsv'), PHOTOS];
/** Under CI the suite always runs (its beforeAll fails when the data is missing). */
const haveData = isCI || requireSharedData(EVAL_DATA);
const MAX_SIDE = 512;

const frames = new Map<string, Frame>();
async function photo(name: string): Promise<Frame> {
  let f = frames.get(name);
  if (!f) {
    f = await decodeImage(join(PHOTOS, name), MAX_SIDE);
    frames.set(name, f);
  }
  return f;
}

function norm(v: Float32Array): number {
  return Math.sqrt(dot(v, v));
}

describe.skipIf(!haveData)('perception models on real photos', () => {
  const embedder = new PerceptionEmbedder();
  const detector = new ObjectDetector();
  const faces = new FaceDetector();
  const pose = new PoseEstimator();

  beforeAll(async () => {
    requireSharedData(EVAL_DATA); // throws under CI when missing
    await embedder.load();
    await Promise.all([detector.load(), faces.load(), pose.load()]);
  });

  describe('USE text encoder', () => {
    it('gives 512-d unit vectors; similar sentences are closer than unrelated ones', async () => {
      const use = getUseTextEncoder();
      const [dog, puppy, car, auto, night] = await use.embed([
        'a dog on the grass',
        'a puppy running in a field',
        'a red car on a street',
        'an automobile parked on the road',
        'night city lights',
      ]);
      for (const v of [dog, puppy, car, auto, night]) {
        expect(v.length).toBe(512);
        expect(norm(v)).toBeCloseTo(1, 4);
      }
      expect(dot(dog, puppy)).toBeGreaterThan(dot(dog, car));
      expect(dot(dog, puppy)).toBeGreaterThan(dot(dog, night));
      expect(dot(car, auto)).toBeGreaterThan(dot(car, dog));
      expect(dot(car, auto)).toBeGreaterThan(dot(auto, puppy));
    });

    it('is batch-independent, truncates long texts and rejects empty text', async () => {
      const use = getUseTextEncoder();
      const [alone] = await use.embed(['a kite in the blue sky']);
      const batch = await use.embed(['something else entirely', 'a kite in the blue sky']);
      expect(dot(alone, batch[1])).toBeCloseTo(1, 4);

      const long = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
      const e = await embedder.embedText(long);
      expect(e.truncated).toBe(true);
      expect(e.vector.length).toBe(512);
      expect((await embedder.embedText('a dog')).truncated).toBe(false);
      await expect(embedder.embedText('   ')).rejects.toThrow(/empty/);
    });
  });

  describe('detectors', () => {
    it('finds the astronaut: one person, one face inside it, a plausible pose', async () => {
      const f = await photo('python3-skimage__astronaut.jpg');
      const dets = await detector.detect(f);
      const person = dets.find((d) => d.label === 'person' && d.score >= 0.4);
      expect(person, JSON.stringify(dets)).toBeDefined();
      expect(person!.box.w * person!.box.h).toBeGreaterThan(0.4); // she fills most of the frame

      const fs = (await faces.detect(f, 0.6)).filter((x) => x.score >= 0.75);
      expect(fs).toHaveLength(1);
      const face = fs[0];
      // The face is in the upper half, inside the person box, about a fifth of the frame high.
      expect(face.box.y + face.box.h).toBeLessThan(0.5);
      expect(face.box.h).toBeGreaterThan(0.12);
      expect(face.box.h).toBeLessThan(0.35);
      expect(face.box.x).toBeGreaterThan(person!.box.x);
      // Eyes above the mouth keypoint, inside the face box.
      const [re, le, , mouth] = face.keypoints;
      expect(re[1]).toBeLessThan(mouth[1]);
      expect(le[1]).toBeLessThan(mouth[1]);
      for (const [x, y] of face.keypoints.slice(0, 4)) {
        expect(x).toBeGreaterThan(face.box.x - 0.02);
        expect(x).toBeLessThan(face.box.x + face.box.w + 0.02);
        expect(y).toBeGreaterThan(face.box.y - 0.02);
        expect(y).toBeLessThan(face.box.y + face.box.h + 0.02);
      }

      const p = await pose.estimate(f, person!.box);
      const nose = p.keypoints.find((k) => k.name === 'nose')!;
      expect(nose.score).toBeGreaterThan(0.4);
      expect(nose.x).toBeGreaterThan(face.box.x);
      expect(nose.x).toBeLessThan(face.box.x + face.box.w);
      expect(nose.y).toBeGreaterThan(face.box.y);
      expect(nose.y).toBeLessThan(face.box.y + face.box.h);
      expect(visibleParts(p, 0.4).has('left_shoulder')).toBe(true);
    });

    it('finds sensible objects on other catalog photos', async () => {
      const expectations: Array<[string, string, (b: { x: number; y: number; w: number; h: number }) => boolean]> = [
        ['opencv-doc__messi5.jpg', 'person', (b) => b.h > 0.5], // the player, full height
        ['opencv-doc__messi5.jpg', 'sports ball', (b) => b.y > 0.6 && b.w < 0.2], // ball at his feet
        ['psychtoolbox-3-common__town.jpg', 'car', (b) => b.y > 0.7], // parked cars at the bottom
        ['kphotoalbum__snow.jpg', 'airplane', () => true],
        ['labelme-examples__0001.jpg', 'cat', (b) => b.w * b.h > 0.4], // kitten filling the frame
        ['plasma-workspace-wallpapers__Kite_1920x1080.jpg', 'kite', (b) => b.w < 0.2],
      ];
      for (const [name, label, boxOk] of expectations) {
        const dets = await detector.detect(await photo(name));
        const hit = dets.find((d) => d.label === label && d.score >= 0.4 && boxOk(d.box));
        expect(hit, `${name}: ${label} in ${JSON.stringify(dets.slice(0, 5))}`).toBeDefined();
      }
      // The black dog in the forest: an animal box in the middle; at the default 416 input the
      // detector hesitates between sheep (~0.40) and dog (~0.28) for it (at 512: dog 0.46), which
      // the description keeps as "a black sheep or a bear or a dog".
      const donna = (await detector.detect(await photo('kphotoalbum__donna.jpg'))).filter((d) => d.box.x > 0.3 && d.box.x + d.box.w < 0.7);
      expect(donna.find((d) => d.label === 'dog' && d.score >= 0.25), JSON.stringify(donna)).toBeDefined();
      expect(donna[0].score).toBeGreaterThanOrEqual(0.35);
      const r = await embedder.embedSegment([await photo('kphotoalbum__donna.jpg')], { start: 0, end: 1 });
      expect(r.description).toMatch(/\bdog\b/);
      // Nothing confident on a landscape without COCO objects.
      const canyon = await detector.detect(await photo('kphotoalbum__grand_canyon_3.jpg'));
      expect(canyon.filter((d) => d.score >= 0.4)).toEqual([]);
      // Two faces at the Grand Canyon rim, none on the coffee cup (at the confident threshold).
      expect((await faces.detect(await photo('kphotoalbum__grand_canyon_1__rotated180.jpg'), 0.75)).length).toBe(2);
      expect((await faces.detect(await photo('python3-skimage__coffee.jpg'), 0.75)).length).toBe(0);
    });

    it('segments people (selfie model) without leaking tensors', async () => {
      const seg = new PersonSegmenter();
      const portrait = await seg.segment(await photo('kphotoalbum__jesper_2.jpg')); // loads the model
      const before = tf.memory().numTensors;
      const player = await seg.segment(await photo('opencv-doc__messi5.jpg'));
      const canyon = await seg.segment(await photo('kphotoalbum__grand_canyon_3.jpg'));
      expect(tf.memory().numTensors).toBe(before);
      expect(portrait.area).toBeGreaterThan(0.3);
      expect(player.area).toBeGreaterThan(0.1);
      expect(player.area).toBeLessThan(portrait.area);
      expect(canyon.area).toBeLessThan(0.05);
    });

    it('measures colour and layout from pixels', async () => {
      const coins = colourStats(await photo('python3-skimage__coins.jpg'));
      expect(coins.saturation).toBeLessThan(0.05); // grayscale
      const kite = colourStats(await photo('plasma-workspace-wallpapers__Kite_1920x1080.jpg'));
      expect(kite.colours.blue).toBeGreaterThan(0.6);
      const meadow = colourStats(await photo('lomiri-wallpapers-16.04__aitzgorri_by_Aitzol_Berasategi.jpg'));
      expect(meadow.bottom.colours.green).toBeGreaterThan(0.5);
      expect(meadow.top.brightness).toBeGreaterThan(meadow.bottom.brightness);
      const path = colourStats(await photo('plasma-workspace-wallpapers__Path_1920x1080.jpg'));
      expect(path.brightness).toBeLessThan(0.25);
    });
  });

  describe('PerceptionEmbedder', () => {
    it('is reachable through the registry', () => {
      expect(listEmbedders().map((e) => e.id)).toContain('perception-use-v1');
      const e = createDefaultEmbedder();
      expect(e.id).toBe('perception-use-v1');
      expect(e.dim).toBe(512);
      expect(getEmbedder('perception-use-v1')).toBe(e);
      expect(() => getEmbedder('nope')).toThrow(/unknown embedder/);
    });

    it('describes a multi-frame segment, with tags, JSON-able details, and flat tensor memory', async () => {
      const messi = await photo('opencv-doc__messi5.jpg');
      const town = await photo('psychtoolbox-3-common__town.jpg');
      const seg = [messi, messi, messi, town].map((f, i) => ({ ...f, t: 10 + i }));
      const ctx = {
        start: 10,
        end: 14,
        tags: {
          shot_size: { label: 'wide', confidence: 0.8 },
          camera_movement: { label: 'static', confidence: 0.9 },
          shooting_angle: { label: 'eye_level', confidence: 0.7 },
        },
      };
      const before = tf.memory().numTensors;
      const r = await embedder.embedSegment(seg, ctx);
      expect(r.vector.length).toBe(512);
      expect(norm(r.vector)).toBeCloseTo(1, 4);
      const d = r.description.toLowerCase();
      expect(d).toContain('ball');
      expect(d).toMatch(/people|person/);
      expect(d).toContain('car'); // the cut to the town frame got its own keyframe
      expect(d).toContain('wide shot');
      expect(d).toContain('static camera');
      expect(d).toContain('eye-level');
      const details = JSON.parse(JSON.stringify(r.details)) as { keyframes: unknown[]; objects: Array<{ label: string }> };
      expect(details.keyframes).toHaveLength(2);
      expect(details.objects.map((o) => o.label)).toEqual(expect.arrayContaining(['person', 'sports ball', 'car']));
      for (let i = 0; i < 3; i++) await embedder.embedSegment(seg, ctx);
      expect(tf.memory().numTensors).toBe(before);
    });

    it('copes with tiny, blank and odd-sized frames', async () => {
      const make = (w: number, h: number, fill: (i: number) => number): Frame => {
        const data = new Uint8Array(w * h * 3);
        for (let i = 0; i < data.length; i++) data[i] = fill(i);
        return { t: 0, width: w, height: h, data };
      };
      const fresh = new PerceptionEmbedder();
      const black = await fresh.embedSegment([make(64, 36, () => 0)], { start: 0, end: 1 });
      expect(norm(black.vector)).toBeCloseTo(1, 4);
      expect(black.description).toMatch(/dark/i);
      const noise = await fresh.embedSegment([make(161, 97, (i) => (i * 7919) % 251), make(161, 97, () => 128)], { start: 0, end: 2 });
      expect(norm(noise.vector)).toBeCloseTo(1, 4);
      await expect(fresh.embedSegment([], { start: 0, end: 1 })).rejects.toThrow(/no frames/);
      await expect(fresh.embedSegment([{ t: 0, width: 10, height: 10, data: new Uint8Array(5) }], { start: 0, end: 1 })).rejects.toThrow();
    });

    it('retrieves check-half photos from what a person would type well above chance (1-frame segments)', async () => {
      // Held-out photos only (eval/split.ts check half of the judged catalog and more/), each queried
      // with its `query` (what a person would type; the caption where none was written) against the
      // other check-half photos. Not a quality gate (that is eval/search-quality.ts and its tests):
      // a sanity check that text and picture meet, with thresholds far above chance.
      const rows = inHalf(loadSearchCatalog(evalDir).filter((r) => r.kind === 'photo' && queryText(r, 'query').trim()), 'check');
      expect(rows.length).toBeGreaterThanOrEqual(50);
      const fresh = new PerceptionEmbedder(); // no keyframe reuse across tests
      const segs: Array<{ name: string; vector: Float32Array }> = [];
      for (const r of rows) segs.push({ name: r.name, vector: (await fresh.embedSegment([await decodeImage(r.file, MAX_SIDE)], { start: 0, end: 1 })).vector });
      const ranks: number[] = [];
      const lines: string[] = [];
      for (const r of rows) {
        const text = queryText(r, 'query');
        const q = (await fresh.embedText(text)).vector;
        const order = segs.map((s) => ({ name: s.name, sim: dot(q, s.vector) })).sort((a, b) => b.sim - a.sim);
        const rank = order.findIndex((o) => o.name === r.name) + 1;
        ranks.push(rank);
        lines.push(`${rank}  "${text.slice(0, 70)}" -> top: ${order[0].name}`);
      }
      const n = rows.length;
      const top1 = ranks.filter((k) => k === 1).length;
      const top5 = ranks.filter((k) => k <= 5).length;
      console.log(`retrieval ranks (check half, ${n} photos):\n${lines.join('\n')}\ntop1 ${top1}/${n}, top5 ${top5}/${n} (chance ${(1 / n).toFixed(3)} / ${(5 / n).toFixed(3)})`);
      // Chance with n photos: recall@1 = 1/n, recall@5 = 5/n (56 photos: 0.018 / 0.089).
      expect(top1).toBeGreaterThanOrEqual(RETRIEVAL_TOP1);
      expect(top5).toBeGreaterThanOrEqual(RETRIEVAL_TOP5);
    });
  });
});

// Check half of the 123-item set (56 photos, column query), measured 2026-11-25 (commit f93ce13's
// embedder): 12 first, 22 in the top five. The gates leave four and six photos of margin and stay
// far above chance (1 and 5 photos).
const RETRIEVAL_TOP1 = 8;
const RETRIEVAL_TOP5 = 16;

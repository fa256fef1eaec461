/**
 * Who the people are: the one face rule, the grouping into words, and the real FaceRes and
 * expression models on real photos of the CHECK half (GENDER_MIN and EXPRESSION_MIN were chosen
 * on tuning-half faces: the surest wrong-side gender there was 0, the least sure right one 0.54).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keywordsOf } from '../../src/analysis/keywords.js';
import { PerceptionAnalyzer } from '../../src/analysis/perception.js';
import { decodeImage } from '../../src/media/frames.js';
import type { Frame } from '../../src/media/types.js';
import { whoGroups, whoPhrase, type FaceSighting } from '../../src/models/perception/describe.js';
import { carryGender, FaceAttributeReader } from '../../src/models/perception/face-attributes.js';
import { FaceDetector } from '../../src/models/perception/faces.js';
import { DESCRIBED_FACE, faceCounts } from '../../src/tagging/face-rule.js';
import { halfOf } from '../../eval/split.js';
import { evalPhotosDir, isCI, requireSharedData } from '../helpers/clips.js';

const box = { x: 0.4, y: 0.2, w: 0.1, h: 0.15 };
const face = (female: number, expression: 'smiling' | 'neutral' = 'neutral', p = 0.9): FaceSighting => ({ score: 0.9, box, attributes: { female, expression, expressionP: p } });

describe('the face rule (one place: people.ts)', () => {
  const person = [{ x: 0.3, y: 0.1, w: 0.3, h: 0.8 }];
  it('counts a confident face anywhere, a plausible one only inside a person', () => {
    expect(faceCounts({ score: 0.9, box }, [], DESCRIBED_FACE)).toBe(true);
    expect(faceCounts({ score: 0.7, box }, [], DESCRIBED_FACE)).toBe(false);
    expect(faceCounts({ score: 0.7, box }, person, DESCRIBED_FACE)).toBe(true);
    expect(faceCounts({ score: 0.7, box: { ...box, x: 0.9 } }, person, DESCRIBED_FACE)).toBe(false);
    expect(faceCounts({ score: 0.5, box }, person, DESCRIBED_FACE)).toBe(false);
  });
});

describe('who the faces are, in words', () => {
  it('groups by gender, says smiling when at least half of a group smiles, and "person" when unsure', () => {
    expect(whoPhrase(whoGroups([face(0.95, 'smiling')]))).toBe('a smiling woman');
    expect(whoPhrase(whoGroups([face(0.9, 'smiling'), face(0.8, 'smiling'), face(0.85)]))).toBe('three smiling women');
    expect(whoPhrase(whoGroups([face(0.1), face(0.2), face(0.9)]))).toBe('two men and a woman');
    const unsure = whoGroups([face(0.55)]);
    expect(unsure).toEqual([{ label: 'person', count: 1, confidence: 0, smiling: 0, smilingConfidence: 0 }]);
    // A weak smile is not said.
    expect(whoGroups([face(0.05, 'smiling', 0.4)])[0]).toMatchObject({ label: 'man', smiling: 0, confidence: 0.9 });
    // Faces without attributes (not read) say nothing.
    expect(whoGroups([{ score: 0.9, box }])).toEqual([]);
  });
});

describe('the same person a moment later keeps the gender read before (carryGender)', () => {
  const attrs = (female: number) => ({ female, expression: 'neutral' as const, expressionP: 0.9 });
  it('matches a face in nearly the same place at nearly the same size, each earlier face once', () => {
    const a = { x: 0.2, y: 0.2, w: 0.1, h: 0.1 };
    const b = { x: 0.6, y: 0.2, w: 0.1, h: 0.1 };
    const earlier = [
      { box: a, attributes: attrs(0.9) },
      { box: b, attributes: attrs(0.1) },
    ];
    // Moved a little: same people, in the other order.
    expect(carryGender([{ ...b, x: 0.62 }, { ...a, y: 0.23 }], earlier)).toEqual([0.1, 0.9]);
    // Moved by more than half a face, or twice the size: read again.
    expect(carryGender([{ ...a, x: 0.27 }], earlier)).toEqual([undefined]);
    expect(carryGender([{ ...a, w: 0.2, h: 0.2 }], earlier)).toEqual([undefined]);
    // Two faces where one was: only one takes it.
    expect(carryGender([a, { ...a, x: 0.21 }], [earlier[0]])).toEqual([0.9, undefined]);
    // Earlier faces without attributes were never read.
    expect(carryGender([a], [{ box: a }])).toEqual([undefined]);
  });
});

const PHOTOS = {
  astronaut: 'python3-skimage__astronaut.jpg',
  women: 'labelme-examples__2011_000006.jpg',
  speaker: 'kphotoalbum__jesper_2.jpg',
};
const haveData = isCI || requireSharedData(Object.values(PHOTOS).map((p) => join(evalPhotosDir, p)));

describe.skipIf(!haveData)('the real models on check-half photos', () => {
  const frames = new Map<string, Frame>();
  const analyzer = new PerceptionAnalyzer();
  beforeAll(async () => {
    for (const [k, p] of Object.entries(PHOTOS)) {
      expect(halfOf(p), p).toBe('check');
      frames.set(k, await decodeImage(join(evalPhotosDir, p), 512));
    }
  });
  afterAll(async () => {
    await analyzer.dispose();
  });

  it('reads gender and expression of detected faces in one batch', async () => {
    const detector = new FaceDetector();
    const reader = new FaceAttributeReader();
    const f = frames.get('women')!;
    const faces = (await detector.detect(f, 0.85)).sort((a, b) => a.box.x - b.box.x);
    expect(faces).toHaveLength(3);
    const attrs = await reader.read(f, faces.map((x) => x.box));
    expect(attrs).toHaveLength(3);
    for (const a of attrs) {
      expect(a.female).toBeGreaterThan(0.65);
      expect(a.expression).toBe('smiling');
    }
    // The batch gives what one face at a time gives.
    const one = await reader.read(f, [faces[1].box]);
    expect(one[0].female).toBeCloseTo(attrs[1].female, 2);
    // Genders already known: FaceRes skips those faces; the expression is read again.
    const carried = await reader.read(f, faces.map((x) => x.box), [0.5, undefined, 0.25]);
    expect(carried.map((a) => a.female)).toEqual([0.5, attrs[1].female, 0.25]);
    expect(carried.map((a) => a.expression)).toEqual(attrs.map((a) => a.expression));
    const speaker = frames.get('speaker')!;
    const [man] = await reader.read(speaker, (await detector.detect(speaker, 0.85)).map((x) => x.box));
    expect(man.female).toBeLessThan(0.35);
    expect(man.expression).not.toBe('smiling');
  });

  it('the perception analyzer says who: facts, keywords and the description', async () => {
    const out = await analyzer.analyzeSegment([frames.get('astronaut')!], { start: 0, end: 3 });
    expect(out.facts).toContainEqual(expect.objectContaining({ kind: 'person', label: 'woman', count: 1 }));
    expect(out.facts).toContainEqual(expect.objectContaining({ kind: 'expression', label: 'smiling' }));
    const text = (out.details as { description: { text: string } }).description.text;
    expect(text).toContain('A smiling woman.');
    expect(keywordsOf({ perception: out })).toMatch(/\bsmiling\b/);
    const women = await analyzer.analyzeSegment([frames.get('women')!], { start: 0, end: 3 });
    expect(women.facts).toContainEqual(expect.objectContaining({ kind: 'person', label: 'women', count: 3 }));
    expect(analyzer.timings.face_attributes.calls).toBe(2);
  });
});

import { describe, expect, it } from 'vitest';
import { peopleWords, poseWords } from '../../eval/people-words.js';
import { KEYPOINT_NAMES, type Keypoint, type KeypointName } from '../../src/models/perception/pose.js';

/** MoveNet keypoints of a 100 × 100 keyframe: the given joints sure (0.8) at (x, y) in pixels, the rest unsure. */
function pose(at: Partial<Record<KeypointName, [number, number]>>): Keypoint[] {
  return KEYPOINT_NAMES.map((name) => {
    const p = at[name];
    return p ? { name, x: p[0] / 100, y: p[1] / 100, score: 0.8 } : { name, x: 0.5, y: 0.5, score: 0.1 };
  });
}

const head = { nose: [50, 10], left_eye: [52, 8], right_eye: [48, 8] } as const;
const torso = { left_shoulder: [58, 20], right_shoulder: [42, 20], left_hip: [56, 45], right_hip: [44, 45] } as const;
const armsDown = { left_elbow: [60, 33], right_elbow: [40, 33], left_wrist: [60, 45], right_wrist: [40, 45] } as const;
const legsStraight = { left_knee: [56, 68], right_knee: [44, 68], left_ankle: [56, 92], right_ankle: [44, 92] } as const;

describe('people words measured with tune.ts --people-words (eval/people-words.ts)', () => {
  it('an upright torso over straight legs is standing, and nothing else', () => {
    expect(poseWords(pose({ ...head, ...torso, ...armsDown, ...legsStraight }), 100, 100)).toEqual(['standing']);
  });

  it('an upright torso with the knees level with the hips is sitting', () => {
    const w = poseWords(pose({ ...head, ...torso, ...armsDown, left_knee: [70, 48], right_knee: [30, 48], left_ankle: [70, 75], right_ankle: [30, 75] }), 100, 100);
    expect(w).toEqual(['sitting', 'seated']);
  });

  it('a horizontal torso is lying, not standing or sitting', () => {
    const w = poseWords(pose({ left_shoulder: [20, 50], right_shoulder: [20, 56], left_hip: [50, 51], right_hip: [50, 57], left_knee: [70, 52], left_ankle: [90, 52] }), 100, 100);
    expect(w).toEqual(['lying', 'lying down']);
  });

  it('wrists above the shoulders are raised arms; one wrist is a raised arm; unsure joints say nothing', () => {
    const up = { left_elbow: [62, 10], right_elbow: [38, 10], left_wrist: [64, 0], right_wrist: [36, 0] } as const;
    expect(poseWords(pose({ ...head, ...torso, ...up }), 100, 100)).toEqual(['arms raised', 'raised arms']);
    expect(poseWords(pose({ ...head, ...torso, left_elbow: up.left_elbow, left_wrist: up.left_wrist, right_elbow: [40, 33], right_wrist: [40, 45] }), 100, 100)).toEqual(['raised arm', 'arm raised']);
    expect(poseWords(pose({ ...head }), 100, 100)).toEqual([]);
  });

  it('angles are read in pixels: a leaning torso in a tall frame is not lying, though it would be in frame shares', () => {
    // Shoulders at (0.35, 0.30), hips at (0.65, 0.45): 63° from vertical in shares of the frame,
    // 48° in the pixels of a 90 × 160 keyframe.
    const kps = pose({ left_shoulder: [35, 30], right_shoulder: [35, 30], left_hip: [65, 45], right_hip: [65, 45] });
    expect(poseWords(kps, 90, 160)).toEqual([]);
    expect(poseWords(kps, 100, 100)).toEqual(['lying', 'lying down']);
  });

  it('counts and faces: three people are a group, six a crowd; one large face a portrait, larger a close-up', () => {
    const face = (h: number) => ({ score: 0.9, box: { x: 0.3, y: 0.2, w: h * 0.75, h } });
    expect(peopleWords({ people: 3, faces: [], largestFaceHeight: 0 })).toEqual(['group', 'group of people']);
    expect(peopleWords({ people: 6, faces: [], largestFaceHeight: 0 })).toEqual(['group', 'group of people', 'crowd']);
    expect(peopleWords({ people: 2, faces: [face(0.2), face(0.3)], largestFaceHeight: 0.3 })).toEqual([]);
    expect(peopleWords({ people: 1, faces: [face(0.3)], largestFaceHeight: 0.3 })).toEqual(['portrait', 'headshot']);
    expect(peopleWords({ people: 1, faces: [face(0.5)], largestFaceHeight: 0.5 })).toEqual(['portrait', 'headshot', 'close-up', 'closeup']);
  });

  it('reads the sources asked for only, clothing by the engine rule', () => {
    const d = {
      people: 4,
      faces: [],
      largestFaceHeight: 0,
      keyframes: [{ width: 100, height: 100, poseKeypoints: pose({ ...head, ...torso, ...armsDown, ...legsStraight }), objects: [{ label: 'person', score: 0.6, box: { w: 0.2, h: 0.6 }, colour: 'red' as const }] }],
    };
    expect(peopleWords(d)).toEqual(['group', 'group of people', 'standing', 'red']);
    expect(peopleWords(d, ['clothing'])).toEqual(['red']);
    expect(peopleWords(d, ['pose'])).toEqual(['standing']);
  });
});

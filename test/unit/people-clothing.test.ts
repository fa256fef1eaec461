import { describe, expect, it } from 'vitest';
import { clothingColours, type ClothingInput } from '../../eval/people-words.js';

/** A detection of `label` with a box of `w` × `h` (share of the frame) whose middle reads `colour`. */
const det = (label: string, score: number, w: number, h: number, colour?: ClothingInput['colour']): ClothingInput => ({ label, score, box: { w, h }, colour });

describe('clothing colours of the detected people (measured with tune.ts --people-words)', () => {
  it('says the torso colour of each person the description would count, each colour once, as sure as the surest wearer', () => {
    const kfs = [
      { objects: [det('person', 0.56, 0.16, 0.68, 'red'), det('person', 0.44, 0.12, 0.66, 'white'), det('person', 0.4, 0.15, 0.7, 'white')] },
      { objects: [det('person', 0.7, 0.2, 0.5, 'white')] },
    ];
    expect(clothingColours(kfs)).toEqual([
      { colour: 'red', confidence: 0.56 },
      { colour: 'white', confidence: 0.7 },
    ]);
  });

  it('says nothing of a close-up (the middle of the box is the face), a tiny person, a weak detection, grey or no colour', () => {
    const kfs = [
      {
        objects: [
          det('person', 0.69, 0.94, 0.97, 'orange'), // webcam close-up: more than half the frame
          det('person', 0.5, 0.05, 0.2, 'blue'), // 1 % of the frame
          det('person', 0.29, 0.3, 0.5, 'green'), // under the description's person threshold
          det('person', 0.8, 0.3, 0.5, 'grey'),
          det('person', 0.8, 0.3, 0.5),
        ],
      },
    ];
    expect(clothingColours(kfs)).toEqual([]);
  });

  it('reads people only: a red car is not clothing', () => {
    expect(clothingColours([{ objects: [det('car', 0.9, 0.3, 0.3, 'red')] }])).toEqual([]);
  });

  it('keeps the bounds: exactly 2 % and exactly half of the frame count', () => {
    const kfs = [{ objects: [det('person', 0.3, 0.1, 0.2, 'black'), det('person', 0.5, 0.5, 1, 'yellow')] }];
    expect(clothingColours(kfs).map((c) => c.colour)).toEqual(['black', 'yellow']);
  });
});

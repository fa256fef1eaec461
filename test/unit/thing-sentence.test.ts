import { describe, expect, it } from 'vitest';
import { analysisParts, thingSentence } from '../../src/analysis/describe.js';

describe('thingSentence', () => {
  it('puts an ImageNet class in the sentence the encoder reads, with its article', () => {
    expect(thingSentence('tabby cat')).toBe('A photo of a tabby cat.');
    expect(thingSentence('alp')).toBe('A photo of an alp.');
    expect(thingSentence('Egyptian cat')).toBe('A photo of an Egyptian cat.');
  });

  it('is the text of the thing parts a segment vector pools', () => {
    const parts = analysisParts({ imagenet: { facts: [{ kind: 'thing', label: 'ice bear', confidence: 0.5 }] } });
    expect(parts.map((p) => p.text)).toEqual(['A photo of an ice bear.']);
  });
});

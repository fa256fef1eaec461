import { describe, expect, it } from 'vitest';
import { imagenetAnalyzerVersion, imagenetFacts, IMAGENET_FACTS_VERSION } from '../../src/analysis/imagenet.js';
import { keywordsOf } from '../../src/analysis/keywords.js';
import { sureWordShare, wordEvidence, WEAK_GUESS } from '../../src/search/confidence.js';
import { hitEvidence } from '../../src/search/hit-evidence.js';
import { IMAGENET_HYPERNYMS } from '../../src/models/imagenet/hypernyms.js';
import { cocoBroaderNames } from '../../src/models/perception/labels.js';

/**
 * ImageNet facts carry the classes' broader names (WordNet hypernyms): people type "a dog", the
 * classifier names the breed. Indexes are the classifier's outputs (0 = background).
 */
const PEKINESE = { index: 155, label: 'Pekinese', synonyms: ['Pekinese', 'Pekingese', 'Peke'] };
const PUG = { index: 255, label: 'pug', synonyms: ['pug', 'pug-dog'] };
const TABBY = { index: 282, label: 'tabby', synonyms: ['tabby', 'tabby cat'] };
const KITE_BIRD = { index: 22, label: 'kite', synonyms: ['kite'] };
const CLIFF = { index: 973, label: 'cliff', synonyms: ['cliff', 'drop', 'drop-off'] };

describe('broader names of ImageNet classes', () => {
  it('the table: one row per output, background empty, plain lower-case words, at most six', () => {
    expect(IMAGENET_HYPERNYMS).toHaveLength(1001);
    expect(IMAGENET_HYPERNYMS[0]).toEqual([]);
    for (const row of IMAGENET_HYPERNYMS) {
      expect(row.length).toBeLessThanOrEqual(6);
      for (const w of row) expect(w).toMatch(/^[a-z][a-z' -]*$/);
    }
    expect(IMAGENET_HYPERNYMS[PEKINESE.index]).toContain('dog');
    expect(IMAGENET_HYPERNYMS[TABBY.index]).toContain('cat');
    // The bird among the birds, not the toy or the bad cheque.
    expect(IMAGENET_HYPERNYMS[KITE_BIRD.index]).toContain('bird');
    expect(IMAGENET_HYPERNYMS.filter((r) => r.length > 0).length).toBeGreaterThan(900);
  });

  it('a broader name is as sure as the surest kept class it covers', () => {
    const facts = imagenetFacts([
      { ...PEKINESE, p: 0.5 },
      { ...PUG, p: 0.3 },
      { ...TABBY, p: 0.1 },
    ]);
    expect(facts.map((f) => [f.label, f.confidence])).toEqual([
      ['Pekinese', 0.5],
      ['pug-dog', 0.3],
      ['tabby cat', 0.1],
    ]);
    const dog = facts[0].alternatives!.find((a) => a.label === 'dog');
    expect(dog?.confidence).toBe(0.5);
    expect(facts[1].alternatives!.find((a) => a.label === 'dog')?.confidence).toBe(0.5);
    // "mammal" covers all three, "cat" only the tabby.
    expect(facts[2].alternatives!.find((a) => a.label === 'mammal')?.confidence).toBe(0.5);
    expect(facts[2].alternatives!.find((a) => a.label === 'cat')?.confidence).toBe(0.1);
  });

  it('a class without broader names has no alternatives', () => {
    const [cliff] = imagenetFacts([{ ...CLIFF, p: 0.7 }]);
    expect(cliff).toEqual({ kind: 'thing', label: 'cliff', confidence: 0.7 });
  });

  it('the broader names are keywords, and count as evidence only as sure as the classifier was', () => {
    const sure = { imagenet: { facts: imagenetFacts([{ ...PEKINESE, p: 0.5 }, { ...PUG, p: 0.3 }]) } };
    expect(keywordsOf(sure).split(' \n ')).toEqual(expect.arrayContaining(['Pekinese', 'pug-dog', 'dog', 'toy dog']));
    const idf = new Map([['dog', 1]]);
    const strong = wordEvidence(['dog'], sure.imagenet.facts);
    expect(strong.get('dog')?.strength).toBe(0.5);
    expect(sureWordShare(idf, strong)).toBeCloseTo(0.5);
    // Weak guesses of breeds cannot make "a dog" sure, one or several (their sum would be 0.42).
    for (const guesses of [[{ ...PEKINESE, p: 0.07 }], [{ ...PEKINESE, p: 0.24 }, { ...PUG, p: 0.15 }, { ...TABBY, p: 0.03 }]]) {
      const weak = wordEvidence(['dog'], imagenetFacts(guesses));
      expect(weak.get('dog')!.strength).toBeLessThan(WEAK_GUESS);
      expect(sureWordShare(idf, weak)).toBe(0);
    }
  });

  it('collections analysed before the broader names say needs_reindex (the version names them)', () => {
    expect(imagenetAnalyzerVersion('imagenet-mnv2-7aad0c74')).toBe(`imagenet-mnv2-7aad0c74+${IMAGENET_FACTS_VERSION}`);
  });
});

describe('other names of COCO classes (perception objects)', () => {
  it("the description's noun, the synonyms and the group's word", () => {
    expect(cocoBroaderNames('dog')).toEqual(['puppy', 'animal']);
    expect(cocoBroaderNames('tv')).toEqual(['television', 'screen', 'monitor']);
    expect(cocoBroaderNames('banana')).toEqual(['fruit', 'food']);
    expect(cocoBroaderNames('car')).toEqual(['vehicle']);
    expect(cocoBroaderNames('person')).toEqual([]);
    expect(cocoBroaderNames('not a class')).toEqual([]);
  });

  it('are keywords of a segment with the object', () => {
    const words = keywordsOf({ perception: { facts: [{ kind: 'object', label: 'dog', confidence: 0.8, alternatives: cocoBroaderNames('dog').map((label) => ({ label, confidence: 0.8 })) }] } });
    expect(words.split(' \n ')).toEqual(['dog', 'puppy', 'animal']);
  });
});

describe('--explain names the fact a broader name came from', () => {
  it('"dog" (dog, from Pekinese, 50%)', () => {
    const found = wordEvidence(['dog'], imagenetFacts([{ ...PEKINESE, p: 0.5 }, { ...PUG, p: 0.3 }]));
    expect(found.get('dog')).toEqual({ strength: 0.5, label: 'dog', via: 'Pekinese' });
    const reasonOf = (word: string, facts: ReturnType<typeof imagenetFacts>) =>
      hitEvidence({ similarity: 0.41, facts, matched: [word], idf: new Map([[word, 1]]) }, { example: false, seenOnly: false }).reason;
    expect(reasonOf('dog', imagenetFacts([{ ...PEKINESE, p: 0.5 }, { ...PUG, p: 0.3 }]))).toContain('"dog" (dog, from Pekinese, 50%)');
    // A fact's own label says no "from".
    expect(reasonOf('pekinese', imagenetFacts([{ ...PEKINESE, p: 0.5 }]))).toContain('"pekinese" (Pekinese, 50%)');
  });
});

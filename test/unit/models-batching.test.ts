import { describe, expect, it } from 'vitest';
import { lengthGroups, UseTextEncoder } from '../../src/models/use/text-encoder.js';

describe('USE query coalescing', () => {
  it('gives concurrent single texts the same vectors as one-at-a-time calls', async () => {
    const enc = new UseTextEncoder();
    await enc.load();
    const texts = Array.from({ length: 40 }, (_, i) => `query number ${i}: ${i % 2 ? 'a dog on the grass' : 'boats at sunset'}`);
    const alone: Float32Array[] = [];
    for (const t of texts.slice(0, 5)) alone.push((await enc.embedDetailed([t]))[0].vector);
    const together = await Promise.all(texts.map((t) => enc.embedDetailed([t]).then((r) => r[0])));
    expect(together).toHaveLength(40);
    alone.forEach((v, i) => {
      const cos = v.reduce((a, x, j) => a + x * together[i].vector[j], 0);
      expect(cos).toBeGreaterThan(0.99999);
    });
    // Different texts stay different: no result was handed to the wrong caller.
    const cos01 = together[0].vector.reduce((a, x, j) => a + x * together[1].vector[j], 0);
    expect(cos01).toBeLessThan(0.99);
  });

  it('groups texts of similar length (fewer padded tokens), every text once', () => {
    const lists = [[1], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [1, 2], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], [1, 2, 3]];
    const groups = lengthGroups(lists);
    expect(groups.flat().sort()).toEqual([0, 1, 2, 3, 4]);
    expect(groups).toEqual([[0, 2, 4], [1, 3]]);
  });
});

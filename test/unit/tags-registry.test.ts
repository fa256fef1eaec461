/**
 * The tag registry (src/tags/registry.ts) and its one aggregation rule (src/tags/aggregate.ts):
 * whole-video tags, keyframe combination and camera movement all aggregate the same way, and the
 * search schema, the web page's menus and the CLI's options are the registry's filterable kinds.
 */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { schemas } from '../../src/api/schemas.js';
import { registerSearch } from '../../src/cli/commands/search.js';
import { aggregateCameraMovement, classifyCameraMovement } from '../../src/tagging/index.js';
import { aggregateOverTime, aggregateTags, type TagValue } from '../../src/tags/aggregate.js';
import { FILTERABLE_KINDS, FILTER_NAMES, filterVocabulary, labelWords, TAG_KINDS, tagFilterOf, wholeVideoTags } from '../../src/tags/registry.js';

const tag = (label: string, confidence: number, scores: Record<string, number>): TagValue => ({ label, confidence, scores });

describe('the aggregation rule', () => {
  it('weights scores by duration, picks the top label and takes the confidence of the parts that carry it', () => {
    const out = aggregateOverTime([
      { start: 0, end: 3, tag: tag('wide', 0.9, { wide: 0.8, close_up: 0.2 }) },
      { start: 3, end: 4, tag: tag('close_up', 0.6, { wide: 0.1, close_up: 0.9 }) },
    ]);
    // wide: 0.75·0.8 + 0.25·0.1 = 0.625; close_up: 0.75·0.2 + 0.25·0.9 = 0.375
    expect(out).toEqual({ label: 'wide', confidence: 0.675, scores: { wide: 0.625, close_up: 0.375 } });
  });

  it('counts a part without scores as all its weight on its label, skips empty parts, and breaks ties by label order', () => {
    expect(aggregateTags([{ weight: 1, tag: tag('a', 1, {}) }, { weight: 0, tag: tag('b', 1, {}) }, { weight: 2 }])).toEqual({ label: 'a', confidence: 1, scores: { a: 1 } });
    const tie = aggregateTags([{ weight: 1, tag: tag('y', 0.5, { x: 0.5, y: 0.5 }) }], ['x', 'y', 'z']);
    expect(tie).toEqual({ label: 'x', confidence: 0, scores: { x: 0.5, y: 0.5, z: 0 } });
    expect(aggregateTags([])).toBeUndefined();
  });

  it('is the rule camera movement aggregates with (plus its rates)', () => {
    const a = { ...classifyCameraMovement([]), label: 'pan_left' as const, confidence: 0.8 };
    a.scores = { ...a.scores, static: 0.2, pan_left: 0.8 };
    const b = classifyCameraMovement([]);
    const segments = [
      { start: 0, end: 2, camera_movement: a },
      { start: 2, end: 3, camera_movement: b },
    ];
    const got = aggregateCameraMovement(segments);
    const rule = aggregateOverTime(segments.map((s) => ({ start: s.start, end: s.end, tag: s.camera_movement })), Object.keys(a.scores))!;
    expect({ label: got.label, confidence: got.confidence, scores: got.scores }).toEqual(rule);
    expect(got.pairs).toBe(a.pairs + b.pairs);
  });
});

describe('the registry', () => {
  it('declares each kind once, with labels and a producer', () => {
    const names = TAG_KINDS.map((k) => k.name);
    expect(new Set(names).size).toBe(names.length);
    for (const k of TAG_KINDS) {
      expect(k.labels.length, k.name).toBeGreaterThan(1);
      expect(k.producer, k.name).toBeTruthy();
      if (k.filterable) expect(k.option, k.name).toMatch(/^[a-z]+$/);
    }
    expect(FILTER_NAMES).toEqual(['shot_size', 'camera_movement', 'shooting_angle', 'audio']);
    expect(labelWords('shot_size', 'close_up')).toBe('close-up shot');
    expect(labelWords('lighting', 'low_key')).toBe('low key');
  });

  it('gives the search schema, the page menus and the CLI options one entry per filterable kind', () => {
    const props = schemas.search.body.properties as Record<string, { enum?: readonly string[] }>;
    for (const k of FILTERABLE_KINDS) expect(props[k.name].enum).toEqual([...k.labels]);
    expect(filterVocabulary()).toEqual(Object.fromEntries(FILTERABLE_KINDS.map((k) => [k.name, [...k.labels]])));
    const program = new Command();
    registerSearch(program, (async () => {}) as never);
    const flags = program.commands.find((c) => c.name() === 'search')!.options.map((o) => o.long);
    for (const k of FILTERABLE_KINDS) expect(flags).toContain(`--${k.option}`);
    expect(tagFilterOf({ shot_size: 'wide', camera_movement: '', lighting: 'bright', text: 'x' })).toEqual({ shot_size: 'wide' });
  });

  it('makes whole-video tags by each kind\'s rule: aggregated segments, or the producer\'s own measure', () => {
    const seg = (start: number, end: number, shot: string) => ({ start, end, tags: { shot_size: tag(shot, 1, { [shot]: 1 }), lighting: tag('normal', 1, { normal: 1 }) } });
    const whole = wholeVideoTags([seg(0, 1, 'wide'), seg(1, 4, 'close_up')], { lighting: tag('bright', 0.7, { bright: 0.7 }), camera_movement: undefined });
    expect(whole.shot_size).toMatchObject({ label: 'close_up', confidence: 0.75 });
    expect(whole.lighting).toMatchObject({ label: 'bright' }); // the pixel tagger measures the whole video itself
    expect(Object.keys(whole)).toEqual(['shot_size', 'lighting']);
  });
});

/**
 * The capability registry (src/capabilities/registry.ts) and the reindex planner (planner.ts):
 * declared inputs resolve, a missing capability, a lane nobody runs and a cycle fail when the
 * registry is checked (at start-up), a collection runs what it wants and what that needs, and a
 * change re-runs exactly what depends on it.
 */
import { describe, expect, it } from 'vitest';
import {
  builtinCapabilities,
  capabilityContext,
  CapabilityError,
  CapabilityRegistry,
  LANE_NAMES,
  replan,
  type CapabilityDecl,
  type CapabilityState,
  type PlannedCapability,
} from '../../src/capabilities/index.js';
import { Library } from '../../src/services/library.js';
import { MemoryBlobStore } from '../../src/store/memory/blobs.js';
import { MemoryCatalog } from '../../src/store/memory/catalog.js';
import { FakeAnalyzer } from '../helpers/fake-analyzer.js';
import { FakeMedia } from '../helpers/fake-media.js';

const decl = (name: string, more: Partial<CapabilityDecl> = {}): CapabilityDecl => ({
  name,
  kind: 'derived',
  lane: 'pictures',
  outputs: ['facts'],
  wanted: 'always',
  media: () => [],
  inputs: () => [],
  version: () => `${name}-1`,
  availability: () => ({ available: true }),
  ...more,
});

const ctx = capabilityContext({ id: 'e', consumes: ['a', 'b'] });
const facts = capabilityContext({ id: 'perception-use-v1', consumes: ['perception', 'imagenet', 'ocr'] });
const clip = capabilityContext({ id: 'clip-vit-b32', consumes: [] });

describe('the registry', () => {
  it('checks at start-up: an input that names nothing, a lane nobody runs, a cycle, a name twice, a frame capability without an analyzer', () => {
    const ok = new CapabilityRegistry([decl('a'), decl('b', { inputs: () => ['a'] })]);
    expect(() => ok.validate(LANE_NAMES, [ctx])).not.toThrow();
    expect(() => new CapabilityRegistry([decl('b', { inputs: () => ['missing'] })]).validate(LANE_NAMES, [ctx])).toThrow(/"b" reads "missing", which is not registered/);
    expect(() => new CapabilityRegistry([decl('a', { lane: 'audio' as never })]).validate(LANE_NAMES, [ctx])).toThrow(/lane "audio", which no job runs/);
    expect(() => new CapabilityRegistry([decl('a', { inputs: () => ['c'] }), decl('b', { inputs: () => ['a'] }), decl('c', { reads: () => ['b'] })]).validate(LANE_NAMES, [ctx])).toThrow(
      /cycle: a → c → b → a/,
    );
    expect(() => new CapabilityRegistry([decl('a'), decl('a')])).toThrow(/registered twice/);
    expect(() => new CapabilityRegistry([decl('A b')])).toThrow(/not a lower-case word/);
    expect(() => new CapabilityRegistry([decl('a', { kind: 'frame' })]).validate(LANE_NAMES, [ctx])).toThrow(/gives no analyzer/);
    expect(() => new CapabilityRegistry([decl('a', { kind: 'track' })]).validate(LANE_NAMES, [ctx])).toThrow(/gives no hearer/);
    expect(() => ok.get('zzz')).toThrow(CapabilityError);
  });

  it('a library whose registry does not add up is refused when it is built, not when a job comes', () => {
    const broken = builtinCapabilities({ analyzers: [new FakeAnalyzer()] }).with([decl('summary', { inputs: () => ['transcript-words'] })]);
    const build = () =>
      new Library({
        paths: { home: '/nowhere' } as never,
        catalog: new MemoryCatalog(),
        blobs: new MemoryBlobStore(),
        embedderFor: () => ({ id: 'x', dim: 2, frameMaxSide: 8, load: async () => {}, embedText: async () => ({ vector: new Float32Array(2), truncated: false }), embedSegment: async () => ({ vector: new Float32Array(2), description: '' }), dispose: async () => {} }),
        capabilities: broken,
        media: new FakeMedia(),
        speechFor: () => {
          throw new Error('unused');
        },
        textEncoder: { embedText: async () => ({ vector: new Float32Array(2), truncated: false }), close: async () => {} },
        fetchPolicy: {} as never,
        maxUploadBytes: 1,
        maxTensorBytes: 1,
        onWorkQueued: () => {},
        checkVideo: async () => {},
      });
    expect(build).toThrow(/"summary" reads "transcript-words", which is not registered/);
  });

  it('the engine\'s own: every collection runs perception, text, speech, levels; ImageNet only where the embedder pools it', async () => {
    const r = builtinCapabilities();
    expect(() => r.validate(LANE_NAMES, [facts, clip])).not.toThrow();
    const namesOf = (plan: PlannedCapability[]) => plan.map((p) => p.name);
    const withFacts = namesOf(await r.plan(facts));
    const withClip = namesOf(await r.plan(clip));
    for (const n of ['pixels', 'perception', 'ocr', 'embedding', 'keywords', 'signature', 'speech', 'levels']) {
      expect(withFacts).toContain(n);
      expect(withClip).toContain(n);
    }
    expect(withFacts).toContain('imagenet');
    expect(withClip).not.toContain('imagenet');
    // Dependency order: what a capability reads comes before it.
    expect(withFacts.indexOf('imagenet')).toBeLessThan(withFacts.indexOf('embedding'));
    expect(withFacts.indexOf('speech')).toBeLessThan(withFacts.indexOf('keywords'));
    expect(withFacts.indexOf('speech')).toBeLessThan(withFacts.indexOf('levels'));
    // Lanes: the track capabilities listen on the speech lane, the rest on the picture lane.
    for (const p of await r.plan(facts)) expect(p.lane).toBe(p.kind === 'track' ? 'speech' : 'pictures');
    // What an embedder that reads pixels needs: frames; one that pools facts: no media of its own.
    expect(r.get('embedding').media(clip)).toEqual(['frames']);
    expect(r.get('embedding').media(facts)).toEqual([]);
    expect(r.get('imagenet').media(facts)).toEqual(['keyframe']);
  });

  it('a capability that cannot run here is planned as skipped, with why; one whose input cannot run cannot either', async () => {
    const r = new CapabilityRegistry([
      decl('model', { kind: 'frame', analyzer: async () => null, availability: () => ({ available: false, reason: 'not installed' }) }),
      decl('uses', { kind: 'frame', analyzer: async () => null, inputs: () => ['model'] }),
      decl('pools', { inputs: () => ['model'] }),
    ]);
    const plan = await r.plan(ctx);
    expect(plan.map((p) => [p.name, p.available, p.reason])).toEqual([
      ['model', false, 'not installed'],
      ['uses', false, 'needs model: not installed'],
      ['pools', true, undefined], // derived: made without what it cannot have
    ]);
  });

  it('dependents: what re-runs when a capability changes, through inputs and reads, in order', () => {
    const r = builtinCapabilities();
    expect(r.dependents(['imagenet'], facts)).toEqual(['imagenet', 'embedding', 'keywords']);
    expect(r.dependents(['speech'], facts)).toEqual(['speech', 'keywords', 'levels']);
    expect(r.dependents(['imagenet'], clip)).toEqual(['imagenet', 'keywords']);
    expect(r.dependents(['pixels'], facts).slice(0, 2)).toEqual(['pixels', 'perception']);
  });
});

describe('the reindex planner', () => {
  const r = builtinCapabilities();
  const done = (plan: PlannedCapability[], over: Partial<Record<string, Partial<CapabilityState>>> = {}): CapabilityState[] =>
    plan.map((p) => ({ capability: p.name, status: p.available ? 'done' : 'skipped', version: p.version, message: p.reason ?? null, ...over[p.name] }));
  const available = (plan: PlannedCapability[], name: string, version = 'imagenet-mnv2-abcd1234+wn2'): PlannedCapability[] =>
    plan.map((p) => (p.name === name ? { ...p, available: true, version, reason: undefined } : p));

  it('nothing changed: nothing runs; a video that recorded nothing (an earlier release) runs everything', async () => {
    const plan = await r.plan(facts);
    expect(replan(r, facts, plan, done(plan)).rerun).toEqual([]);
    expect(replan(r, facts, plan, []).rerun).toEqual(plan.map((p) => p.name));
  });

  it('a model pulled (skipped → can run): it, the vectors and the keywords — not perception, not speech', async () => {
    const before = (await r.plan(facts)).map((p) => (p.name === 'imagenet' ? { ...p, available: false, reason: 'not installed' } : p));
    const states = done(before);
    const after = available(before, 'imagenet');
    const { rerun, why } = replan(r, facts, after, states);
    expect(rerun).toEqual(['imagenet', 'embedding', 'keywords']);
    expect(why.get('imagenet')).toBe('can run now');
    // A CLIP collection does not run ImageNet at all: nothing to do.
    const clipPlan = await r.plan(clip);
    expect(replan(r, clip, clipPlan, done(clipPlan)).rerun).toEqual([]);
  });

  it("an analyzer's version changed: it and what derives from it; the speech setting changed: the speech lane only (keywords join there)", async () => {
    const plan = await r.plan(facts);
    const states = done(plan, { ocr: { version: 'pp-ocrv4@old/1' } });
    expect(replan(r, facts, plan, states).rerun).toEqual(['ocr', 'embedding', 'keywords']);
    const speechOff = plan.map((p) => (p.name === 'speech' ? { ...p, available: false, reason: 'speech off for this collection', version: 'soundtrack-2' } : p));
    const heard = done(plan, { speech: { status: 'done', version: 'pocketsphinx/x+soundtrack-2' } });
    expect(replan(r, facts, speechOff, heard).rerun).toEqual(['speech', 'levels']);
  });

  it('a failed or unfinished capability runs again; one that can no longer run runs again to drop its output', async () => {
    const plan = await r.plan(facts);
    expect(replan(r, facts, plan, done(plan, { levels: { status: 'failed', message: 'x' } })).rerun).toEqual(['levels']);
    expect(replan(r, facts, plan, done(plan, { signature: { status: 'running' } })).rerun).toEqual(['signature']);
    const gone = plan.map((p) => (p.name === 'ocr' ? { ...p, available: false, reason: 'off (VIDEMBED_OCR=0)' } : p));
    const { rerun, why } = replan(r, facts, gone, done(plan));
    expect(rerun).toEqual(['ocr', 'embedding', 'keywords']);
    expect(why.get('ocr')).toBe('can no longer run: off (VIDEMBED_OCR=0)');
  });
});

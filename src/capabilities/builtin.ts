/**
 * The engine's capabilities, registered once:
 *
 * | name | kind | lane | reads | writes |
 * | --- | --- | --- | --- | --- |
 * | pixels | frame | pictures | frames | segments (cuts), camera movement, lighting, horizon |
 * | perception | frame | pictures | frames, pixels | objects, faces, people… facts; shot size, angle; description |
 * | imagenet | frame | pictures | keyframe | thing facts (when the embedder pools them and the model is pulled) |
 * | ocr | frame | pictures | keyframe | text facts |
 * | embedding | derived | pictures | what the embedder consumes (or frames) | the vector, the description |
 * | keywords | derived | pictures | every fact | the keyword index |
 * | signature | derived | pictures | frames | the near-duplicate signature |
 * | speech | track | speech | audio | speech facts, sound keys, the transcript |
 * | levels | track | speech | audio, speech | the `audio` tag |
 *
 * Tests and embedding programs swap the frame analyzers or the speech engine through
 * `builtinCapabilities({ analyzers, speechFor })`.
 */
import type { SpeechSetting } from '../api/defaults.js';
import { imagenetEnabled, ocrEnabled } from '../env.js';
import type { Analyzer } from '../analysis/types.js';
import { sharedImagenetAnalyzer, sharedOcrAnalyzer, sharedPerceptionAnalyzer } from '../analysis/index.js';
import { imagenetAnalyzerVersion } from '../analysis/imagenet.js';
import { PERCEPTION_ANALYZER_VERSION } from '../analysis/versions.js';
import { SIGNATURE_VERSION } from '../duplicates/duplicates.js';
import { audioTag, soundtrackSegment, SOUNDTRACK_VERSION, type HeardSoundtrack, type SpeechAnalyzer } from '../speech/analyzer.js';
import { DEFAULT_SPEECH_LANGUAGE, expectedSpeechVersion, resolveSpeech, speechAnalyzerFor } from '../speech/engines.js';
import { LevelMeter } from '../speech/levels.js';
import { PIXEL_TAGGING_VERSION } from '../tagging/index.js';
import { CapabilityRegistry } from './registry.js';
import type { Availability, CapabilityContext, CapabilityDecl, Hearer } from './types.js';

/** Bump when the keyword index's rule for the same facts changes (src/analysis/keywords.ts keywordsOf). */
export const KEYWORDS_VERSION = 'keywords-1';

const always: Availability = { available: true };
const none = () => [] as const;

export interface BuiltinOptions {
  /** The frame analyzers to run instead of perception, ImageNet and OCR (tests; programs that bring their own). */
  analyzers?: Analyzer[];
  /** The speech analyzer for a collection's setting and language (default: src/speech/engines.ts). */
  speechFor?: (setting: SpeechSetting, language?: string) => SpeechAnalyzer;
}

/** A frame capability from an analyzer instance (its name, version, every collection). */
export function analyzerCapability(a: Analyzer, media: 'frames' | 'keyframe' = 'frames'): CapabilityDecl {
  return {
    name: a.name,
    kind: 'frame',
    lane: 'pictures',
    outputs: ['facts', 'tags', 'description'],
    wanted: 'always',
    media: () => [media],
    inputs: () => ['pixels'],
    version: () => a.version,
    availability: () => always,
    analyzer: async () => {
      await a.load();
      return a;
    },
  };
}

const pixels: CapabilityDecl = {
  name: 'pixels',
  kind: 'frame',
  lane: 'pictures',
  outputs: ['segments', 'tags'],
  wanted: 'always',
  media: () => ['frames'],
  inputs: none,
  version: () => PIXEL_TAGGING_VERSION,
  availability: () => always,
};

const perception: CapabilityDecl = {
  name: 'perception',
  kind: 'frame',
  lane: 'pictures',
  outputs: ['facts', 'tags', 'description'],
  wanted: 'always',
  media: () => ['frames'],
  inputs: () => ['pixels'],
  version: () => PERCEPTION_ANALYZER_VERSION,
  availability: () => always,
  analyzer: async () => {
    const a = await sharedPerceptionAnalyzer();
    await a.load();
    return a;
  },
};

/** The installed classifier's version (from its manifest, without loading it), or why there is none. */
async function imagenetState(): Promise<{ version?: string; reason?: string }> {
  if (!imagenetEnabled()) return { reason: 'off (VIDEMBED_NO_IMAGENET=1)' };
  const { findImagenetModel } = await import('../models/imagenet/classifier.js');
  const sha = findImagenetModel()?.manifest.files.find((f) => f.role === 'model')?.sha256;
  return sha ? { version: imagenetAnalyzerVersion(`imagenet-mnv2-${sha.slice(0, 8)}`) } : { reason: 'not installed: vidembed models pull imagenet-mobilenet-v2' };
}

const imagenet: CapabilityDecl = {
  name: 'imagenet',
  kind: 'frame',
  lane: 'pictures',
  outputs: ['facts'],
  wanted: 'when-read',
  media: () => ['keyframe'],
  inputs: () => ['pixels'],
  version: async () => (await imagenetState()).version ?? imagenetAnalyzerVersion('none'),
  availability: async () => {
    const s = await imagenetState();
    return s.version ? always : { available: false, reason: s.reason ?? 'not installed' };
  },
  analyzer: () => sharedImagenetAnalyzer(),
};

const ocr: CapabilityDecl = {
  name: 'ocr',
  kind: 'frame',
  lane: 'pictures',
  outputs: ['facts'],
  wanted: 'always',
  media: () => ['keyframe'],
  inputs: () => ['pixels'],
  version: async () => {
    const { TextReader } = await import('../models/ocr/reader.js');
    return TextReader.shared().version;
  },
  availability: () => (ocrEnabled() ? always : { available: false, reason: 'off (VIDEMBED_NO_OCR=1)' }),
  analyzer: () => sharedOcrAnalyzer(),
};

const embedding: CapabilityDecl = {
  name: 'embedding',
  kind: 'derived',
  lane: 'pictures',
  outputs: ['vector', 'description'],
  wanted: 'always',
  // An embedder that pools facts reads no pixels; one that reads pixels (CLIP) needs the frames.
  media: (ctx) => (ctx.embedder.consumes?.length ? [] : ['frames']),
  inputs: (ctx) => ['pixels', ...(ctx.embedder.consumes ?? [])],
  version: (ctx) => ctx.embedder.id,
  availability: () => always,
};

/** Every capability that writes facts or index terms: what the keyword index holds. */
const factWriters = (_ctx: CapabilityContext, registry: { all(): readonly CapabilityDecl[] }) =>
  registry
    .all()
    .filter((d) => d.outputs.includes('facts') || d.outputs.includes('terms'))
    .map((d) => d.name);

const keywords: CapabilityDecl = {
  name: 'keywords',
  kind: 'derived',
  lane: 'pictures',
  outputs: ['keywords'],
  wanted: 'always',
  media: () => [],
  inputs: () => ['pixels'],
  reads: factWriters,
  version: () => KEYWORDS_VERSION,
  availability: () => always,
};

const signature: CapabilityDecl = {
  name: 'signature',
  kind: 'derived',
  lane: 'pictures',
  outputs: ['signature'],
  wanted: 'always',
  media: () => ['frames'],
  inputs: () => ['pixels'],
  version: () => `signature-${SIGNATURE_VERSION}`,
  availability: () => always,
};

/** The soundtrack as the speech analyzer hears it (JSON: words and levels; see speech/analyzer.ts). */
export function heardSoundtrack(heard: Record<string, unknown> | undefined): HeardSoundtrack {
  const h = (heard ?? {}) as Partial<HeardSoundtrack>;
  return { hasAudio: h.hasAudio ?? false, levels: h.levels ?? [], ...(h.transcript ? { transcript: h.transcript } : {}), ...(h.reason ? { reason: h.reason } : {}) };
}

function speechCapability(speechFor: (setting: SpeechSetting, language?: string) => SpeechAnalyzer, injected: boolean): CapabilityDecl {
  const analyzer = (ctx: CapabilityContext) => speechFor(ctx.speech.setting, ctx.speech.language);
  return {
    name: 'speech',
    kind: 'track',
    lane: 'speech',
    outputs: ['facts', 'terms', 'transcript'],
    wanted: 'always',
    media: () => ['audio'],
    inputs: none,
    version: (ctx) => (injected ? analyzer(ctx).version : expectedSpeechVersion(ctx.speech.setting, ctx.env, ctx.speech.language)),
    availability: (ctx) => {
      if (injected) {
        const a = analyzer(ctx);
        return a.engine ? always : { available: false, reason: 'no speech engine' };
      }
      const { engine, reason } = resolveSpeech(ctx.speech.setting, ctx.env, ctx.speech.language);
      return engine ? always : { available: false, reason: reason ?? 'no speech engine' };
    },
    hearer: (ctx): Hearer => {
      const a = analyzer(ctx);
      return {
        hear: async (pcm, opts) => {
          const h = await a.listen(pcm, opts);
          // The levels are the levels capability's to keep.
          return { hasAudio: h.hasAudio, ...(h.transcript ? { transcript: h.transcript } : {}), ...(h.reason ? { reason: h.reason } : {}) };
        },
        segment: (heard, start, end) => {
          const out = soundtrackSegment(heardSoundtrack(heard.speech), start, end);
          return { facts: out.facts, ...(out.terms ? { terms: out.terms } : {}), ...(out.details ? { details: out.details } : {}) };
        },
      };
    },
  };
}

const levels: CapabilityDecl = {
  name: 'levels',
  kind: 'track',
  lane: 'speech',
  outputs: ['tags'],
  wanted: 'always',
  media: () => ['audio'],
  inputs: none,
  reads: () => ['speech'],
  version: () => SOUNDTRACK_VERSION,
  availability: () => always,
  hearer: (): Hearer => ({
    hear: async (pcm) => {
      if (!pcm) return { hasAudio: false, levels: [] };
      const meter = new LevelMeter();
      for await (const chunk of pcm) meter.push(chunk);
      return { hasAudio: meter.seconds > 0, levels: meter.levels };
    },
    segment: (heard, start, end) => {
      const own = heardSoundtrack(heard.levels);
      const words = heardSoundtrack(heard.speech).transcript;
      return { facts: [], tags: { audio: audioTag({ ...own, ...(words ? { transcript: words } : {}) }, start, end) } };
    },
  }),
};

/** The registry of the engine's capabilities (or, with `analyzers`, of those frame analyzers instead of the built-in ones). */
export function builtinCapabilities(opts: BuiltinOptions = {}): CapabilityRegistry {
  const frames = opts.analyzers ? opts.analyzers.map((a) => analyzerCapability(a)) : [perception, imagenet, ocr];
  const speechFor = opts.speechFor ?? ((setting: SpeechSetting, language?: string) => speechAnalyzerFor(setting, process.env, language));
  return new CapabilityRegistry([pixels, ...frames, embedding, keywords, signature, speechCapability(speechFor, Boolean(opts.speechFor)), levels]);
}

/** A context for checks and plans: the collection's embedder and speech setting. */
export function capabilityContext(embedder: CapabilityContext['embedder'], speech: Partial<CapabilityContext['speech']> = {}, env: NodeJS.ProcessEnv = process.env): CapabilityContext {
  return { embedder, speech: { setting: speech.setting ?? 'auto', language: speech.language ?? DEFAULT_SPEECH_LANGUAGE }, env };
}

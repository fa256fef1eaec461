/**
 * The speech analyzer: listens to a video's whole soundtrack while the picture is analysed (it
 * runs in its own processes — ffmpeg and the recognizer — beside the frame pipeline), then says
 * for each segment what was said in it (a `speech` fact, spoken words and their sound keys for
 * the keyword index) and what the soundtrack is (the `audio` tag: speech, music, silence, other).
 * A recognizer that fails or hangs costs the video its transcript, never its visual results: the
 * reason is kept as a fact.
 */
import type { TagValue } from '../api/types.js';
import type { AnalyzerOutput, Fact } from '../analysis/types.js';
import { clamp01, median, round3 } from '../media/kernels/index.js';
import { isNarrowband, LevelMeter, levelsIn, type Level } from './levels.js';
import { soundGrams, soundKey, spokenTerm } from './phonetic.js';
import { labelsOf } from '../tags/registry.js';
import { transcribeInParts } from './in-parts.js';
import type { PartsOptions, PcmChunks, SpeechEngine, SpokenWord, Transcript } from './types.js';

/** Declared in the tag registry (src/tags/registry.ts). */
export const AUDIO_LABELS = labelsOf('audio');
export type AudioLabel = (typeof AUDIO_LABELS)[number];

/**
 * Bump when levels, the audio tag's rule, the index terms or what speech does to a segment change
 * (the engine's version covers the words). soundtrack-3: the transcript's sentence embedding is no
 * longer fused into segment vectors (vectors are the picture's alone).
 */
export const SOUNDTRACK_VERSION = 'soundtrack-3';

/** Thresholds of the audio tag (chosen on generated and tuning-half recordings, docs/speech.md). */
export const AUDIO_RULE = {
  /** A window louder than this (dBFS) has sound in it. */
  soundDb: -45,
  /** Share of a segment's windows with sound below which it is silence. */
  silentShare: 0.2,
  /** Share of a segment's duration covered by recognized words from which it is speech. */
  speechCover: 0.3,
  /** Median spectral flatness of the windows with sound below which sound is tonal (music). */
  tonalFlatness: 0.2,
  /**
   * Music is steady: the loudness of its windows varies less than this (dB, standard deviation);
   * speech rises and falls with its syllables and pauses.
   */
  steadyDb: 6,
} as const;

/** What is read ahead to tell telephone-band audio: 3 s with sound, or 30 s of audio. */
const HEAD_SOUND_WINDOWS = 30;
const HEAD_MAX_S = 30;

export interface HeardSoundtrack {
  /** The words, when an engine listened and the track has sound. */
  transcript?: Transcript;
  /** Why there is no transcript, when there is none. */
  reason?: string;
  hasAudio: boolean;
  levels: Level[];
}

export class SpeechAnalyzer {
  readonly name = 'speech';
  readonly version: string;

  /** `engine` undefined: levels and the audio tag only, with `reason` saying why no words. */
  constructor(
    readonly engine: SpeechEngine | undefined,
    private readonly noEngineReason = 'no speech engine installed',
  ) {
    this.version = engine ? `${engine.version}+${SOUNDTRACK_VERSION}` : SOUNDTRACK_VERSION;
  }

  /** Hears the soundtrack (`undefined`: the video has no audio track). */
  async listen(pcm: PcmChunks | undefined, opts: { signal?: AbortSignal; nice?: number; parts?: PartsOptions } = {}): Promise<HeardSoundtrack> {
    if (!pcm) return { hasAudio: false, levels: [], reason: 'no audio track' };
    const meter = new LevelMeter();
    const source = pcm[Symbol.asyncIterator]();
    // The first seconds of sound say whether the audio is telephone band; they are kept (at most
    // ~1 MB) and replayed to the engine.
    const head: Buffer[] = [];
    let ended = false;
    try {
      while (meter.seconds < HEAD_MAX_S && meter.levels.filter((l) => l.db > AUDIO_RULE.soundDb).length < HEAD_SOUND_WINDOWS) {
        const r = await source.next();
        if (r.done) {
          ended = true;
          break;
        }
        meter.push(r.value);
        head.push(r.value);
      }
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      return { hasAudio: meter.seconds > 0, levels: meter.levels, reason: `the audio could not be decoded: ${(err as Error).message}` };
    }
    const narrowband = isNarrowband(meter.levels, AUDIO_RULE.soundDb);
    const rest = async function* () {
      yield* head.splice(0);
      while (!ended) {
        const r = await source.next();
        if (r.done) break;
        meter.push(r.value);
        yield r.value;
      }
    };
    if (!this.engine) {
      try {
        for await (const _ of rest());
      } catch (err) {
        if (opts.signal?.aborted) throw err;
      }
      return { hasAudio: meter.seconds > 0, levels: meter.levels, reason: this.noEngineReason };
    }
    const words: SpokenWord[] = [];
    try {
      await transcribeInParts(this.engine, rest(), (w) => words.push(w), { signal: opts.signal, narrowband, nice: opts.nice }, opts.parts);
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      return { hasAudio: true, levels: meter.levels, reason: `speech recognition failed: ${(err as Error).message}` };
    }
    const levels = meter.levels;
    if (!levels.some((l) => l.db > AUDIO_RULE.soundDb)) return { hasAudio: true, levels, reason: 'silent' };
    return { hasAudio: true, levels, transcript: { engine: this.engine.version, language: this.engine.language, words, duration: meter.seconds } };
  }
}

/** The words whose middle falls in [start, end). */
export function wordsIn(words: SpokenWord[], start: number, end: number): SpokenWord[] {
  return words.filter((w) => (w.start + w.end) / 2 >= start && (w.start + w.end) / 2 < end);
}

/** The `audio` tag of a stretch of soundtrack. */
export function audioTag(heard: HeardSoundtrack, start: number, end: number): TagValue {
  if (!heard.hasAudio) return { label: 'silence', confidence: 1, scores: { speech: 0, music: 0, silence: 1, other: 0 } };
  const levels = levelsIn(heard.levels, start, end);
  const loud = levels.filter((l) => l.db > AUDIO_RULE.soundDb);
  const soundShare = levels.length ? loud.length / levels.length : 0;
  const words = heard.transcript ? wordsIn(heard.transcript.words, start, end) : [];
  const span = Math.max(0.1, end - start);
  // Words over the time that has sound: a segment that is half silence and half talk is speech.
  const spoken = words.reduce((a, w) => a + (Math.min(end, w.end) - Math.max(start, w.start)), 0);
  const cover = Math.min(1, spoken / Math.max(0.1, span * Math.max(soundShare, 0.25)));
  const flat = loud.length ? median(loud.map((l) => l.flatness)) : 1;
  const steady = loud.length > 1 && std(loud.map((l) => l.db)) < AUDIO_RULE.steadyDb;
  // Soft scores: each label's evidence in [0, 1], normalised.
  const silence = clamp01(1 - soundShare / AUDIO_RULE.silentShare);
  const speech = (1 - silence) * clamp01(cover / AUDIO_RULE.speechCover);
  const tonal = steady ? clamp01((AUDIO_RULE.tonalFlatness * 1.5 - flat) / AUDIO_RULE.tonalFlatness) : 0;
  const music = (1 - silence) * (1 - speech) * tonal;
  const other = (1 - silence) * (1 - speech) * (1 - tonal);
  const raw: Record<AudioLabel, number> = { speech, music, silence, other };
  const sum = Object.values(raw).reduce((a, b) => a + b, 0) || 1;
  const scores = Object.fromEntries(AUDIO_LABELS.map((k) => [k, round3(raw[k] / sum)])) as Record<AudioLabel, number>;
  const label = soundShare < AUDIO_RULE.silentShare ? 'silence' : cover >= AUDIO_RULE.speechCover ? 'speech' : steady && flat < AUDIO_RULE.tonalFlatness ? 'music' : 'other';
  return { label, confidence: scores[label], scores };
}

/**
 * What a segment holds of the soundtrack, as an analyzer's output: the spoken words as a `speech`
 * fact (its label is what was said), and as index terms of their own — each word as a spoken term
 * (`zw…`, never the plain word: what is said is not what is seen), its sound key and the runs of
 * sounds (misheard and misspelt words still meet) — and the `audio` tag.
 */
export function soundtrackSegment(heard: HeardSoundtrack, start: number, end: number): AnalyzerOutput {
  const facts: Fact[] = [];
  const words = heard.transcript ? wordsIn(heard.transcript.words, start, end) : [];
  const terms: string[] = [];
  if (words.length) {
    const conf = words.reduce((a, w) => a + w.conf, 0) / words.length;
    facts.push({ kind: 'speech', label: words.map((w) => w.w).join(' '), confidence: round3(conf) });
    const spelt = words.map((w) => (w.variant ? `${w.w}(${w.variant})` : w.w));
    for (const w of spelt) {
      for (const t of [spokenTerm(w), soundKey(w)]) if (t && !terms.includes(t)) terms.push(t);
    }
    terms.push(...soundGrams(spelt));
  }
  const out: AnalyzerOutput = { facts, tags: { audio: audioTag(heard, start, end) } };
  if (terms.length) out.terms = terms;
  if (!heard.transcript && heard.reason) out.details = { no_transcript: heard.reason };
  return out;
}

function std(xs: number[]): number {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  return Math.sqrt(xs.reduce((a, b) => a + (b - m) * (b - m), 0) / xs.length);
}

/**
 * What speech recognition leaves behind: words with their times, and the engines that hear them.
 */

/** One recognized word: `w` as the engine spelled it (lower case), seconds from the video's start. */
export interface SpokenWord {
  w: string;
  start: number;
  end: number;
  /** In [0, 1], the engine's own posterior where it gives one. */
  conf: number;
  /** The pronunciation the engine heard, where it names one (pocketsphinx's `was(2)` → 2). */
  variant?: number;
}

/** A video's whole transcript, kept per video (blob `transcripts/<video id>.json`). */
export interface Transcript {
  /** Engine and model that made it (`pocketsphinx/en-us-ptm-5.0`, `whisper/base.en`). */
  engine: string;
  language: string;
  words: SpokenWord[];
  /** Seconds of audio the engine heard. */
  duration: number;
  /** Why there are no words (then `engine` is empty). */
  reason?: string;
}

/** Why a video has no transcript (stored as a fact, shown by `video show`). */
export type NoTranscriptReason = 'no audio track' | 'silent' | 'speech off' | 'no speech engine installed' | string;

/** Mono 16-bit PCM at 16 kHz, chunk by chunk: what every engine listens to. */
export type PcmChunks = AsyncIterable<Buffer>;

export interface SpeechEngine {
  /** `pocketsphinx` or `whisper`. */
  readonly name: string;
  /** Changes whenever its words for the same audio can change: part of a collection's recipe. */
  readonly version: string;
  /** BCP 47 language of its model (`en`). */
  readonly language: string;
  /**
   * Hears a stream of 16 kHz mono s16le PCM and calls `onWord` for each word as it is recognized
   * (times from the start of the stream). Resolves when the stream ended and every word is out;
   * rejects when the engine fails, stalls, or the signal aborts.
   */
  transcribe(pcm: PcmChunks, onWord: (w: SpokenWord) => void, opts: TranscribeOptions): Promise<void>;
  /**
   * One stream is heard on one core (pocketsphinx: one process): a long soundtrack is heard
   * faster in pieces at once (src/speech/parts.ts). Engines that use every core themselves (whisper) leave it unset.
   */
  readonly splits?: boolean;
}

/** How a soundtrack may be heard in parts (src/speech/parts.ts has the rule). */
export interface PartsOptions {
  /** Seconds of soundtrack expected (the probe's duration): the pieces are sized from it. */
  durationS?: number;
  /** Recognizers that could run at once here (VIDEMBED_SPEECH_PARTS, default the cores). */
  cores: number;
  /** How many pieces may be heard at once now, asked before each piece starts (0: wait); `waitedMs`: how long this piece has waited. */
  slots(waitedMs: number): number;
  /** The shortest piece, in place of the rule's (VIDEMBED_SPEECH_MIN_PIECE_S: the eval's stress runs). */
  minPieceS?: number;
}

export interface TranscribeOptions {
  signal?: AbortSignal;
  /** The audio carries nothing above ~4 kHz (telephone band): engines that can adapt to it do. */
  narrowband?: boolean;
  /** Run the recognizer's processes at this lower priority (the speech lane's; in-process engines ignore it). */
  nice?: number;
}

/** Words engines print that are not words (fillers, noise markers). */
export function isFiller(w: string): boolean {
  return /^(<.*>|\[.*\]|\+\+.*\+\+)$/.test(w);
}

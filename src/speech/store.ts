/**
 * Where a video's transcript is kept: one JSON blob per video (`transcripts/<video id>.json`) in
 * the library's blob store, on every backend alike; its words also live, per segment, in the
 * segments' facts and keyword index. And where a collection's speech setting is kept: its recipe.
 */
import type { BlobStore } from '../store/blobs.js';
import { DEFAULT_SPEECH_LANGUAGE, isSpeechSetting, type SpeechSetting } from './engines.js';
import type { Transcript } from './types.js';

export function transcriptKey(videoId: string): string {
  return `transcripts/${videoId}.json`;
}

/** Stores a video's transcript (one without words says why in `reason`). */
export async function storeTranscript(blobs: BlobStore, videoId: string, transcript: Transcript): Promise<void> {
  await blobs.put(transcriptKey(videoId), Buffer.from(JSON.stringify(transcript)));
}

/** A video's transcript, or undefined when it has none. */
export async function loadTranscript(blobs: BlobStore, videoId: string): Promise<Transcript | undefined> {
  const key = transcriptKey(videoId);
  if (!(await blobs.has(key))) return undefined;
  try {
    return JSON.parse((await blobs.get(key)).toString('utf8')) as Transcript;
  } catch {
    return undefined; // deleted meanwhile, or unreadable: as if none
  }
}

/** The language a collection's recipe says its videos are spoken in (`en` when it says none). */
export function speechLanguageOf(recipeJson: string | null | undefined): string {
  if (!recipeJson) return DEFAULT_SPEECH_LANGUAGE;
  try {
    const l = (JSON.parse(recipeJson) as Record<string, unknown>).speech_language;
    return typeof l === 'string' && l ? l : DEFAULT_SPEECH_LANGUAGE;
  } catch {
    return DEFAULT_SPEECH_LANGUAGE;
  }
}

/** The speech setting a collection's recipe records (`auto` when it records none). */
export function speechSettingOf(recipeJson: string | null | undefined): SpeechSetting {
  if (!recipeJson) return 'auto';
  try {
    const s = (JSON.parse(recipeJson) as Record<string, unknown>).speech_setting;
    return isSpeechSetting(s) ? s : 'auto';
  } catch {
    return 'auto';
  }
}

/**
 * A transcript as people and players read it: plain text, SubRip (`.srt`), WebVTT (`.vtt`) or
 * JSON (every word with its times and confidence). Cues are lines of at most ~7 s or 12 words,
 * broken at pauses.
 */
import type { SpokenWord, Transcript } from './types.js';

export const TRANSCRIPT_FORMATS = ['txt', 'srt', 'vtt', 'json'] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

export function isTranscriptFormat(x: string): x is TranscriptFormat {
  return (TRANSCRIPT_FORMATS as readonly string[]).includes(x);
}

export const TRANSCRIPT_MEDIA_TYPES: Record<TranscriptFormat, string> = {
  txt: 'text/plain; charset=utf-8',
  srt: 'application/x-subrip; charset=utf-8',
  vtt: 'text/vtt; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

export interface Cue {
  start: number;
  end: number;
  text: string;
}

/** Words grouped into cues: a new cue after a pause of 0.8 s, 12 words, or 7 s. */
export function cuesOf(words: SpokenWord[]): Cue[] {
  const cues: Cue[] = [];
  let cur: SpokenWord[] = [];
  const close = () => {
    if (cur.length) cues.push({ start: cur[0].start, end: cur[cur.length - 1].end, text: cur.map((w) => w.w).join(' ') });
    cur = [];
  };
  for (const w of words) {
    const last = cur[cur.length - 1];
    if (last && (w.start - last.end > 0.8 || cur.length >= 12 || w.end - cur[0].start > 7)) close();
    cur.push(w);
  }
  close();
  return cues;
}

function stamp(t: number, sep: ',' | '.'): string {
  const ms = Math.max(0, Math.round(t * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}${sep}${pad(ms % 1000, 3)}`;
}

export function formatTranscript(t: Transcript, format: TranscriptFormat, videoId?: string): string {
  const cues = cuesOf(t.words);
  switch (format) {
    case 'txt':
      return cues.map((c) => c.text).join('\n') + (cues.length ? '\n' : '');
    case 'srt':
      return cues.map((c, i) => `${i + 1}\n${stamp(c.start, ',')} --> ${stamp(c.end, ',')}\n${c.text}\n`).join('\n');
    case 'vtt':
      return `WEBVTT\n\n${cues.map((c) => `${stamp(c.start, '.')} --> ${stamp(c.end, '.')}\n${c.text}\n`).join('\n')}`;
    case 'json':
      return JSON.stringify({ ...(videoId ? { video_id: videoId } : {}), engine: t.engine, language: t.language, duration: t.duration, words: t.words, cues }) + '\n';
  }
}

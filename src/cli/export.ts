/**
 * Search results as files editors use: CSV and JSON lists of moments, an SRT that lists them, and
 * a CMX 3600 EDL whose events cut each moment out of its source file onto one timeline. Every
 * export cuts selects, not bare matches (`selects`): each moment gets handles (1 s each side by
 * default), no event is shorter than the minimum length (2 s by default), and moments of the same
 * file that then touch or overlap become one event.
 */
import type { SearchResult } from '../api/types.js';

export const EXPORT_FORMATS = ['csv', 'json', 'edl', 'srt'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** One moment with what an export needs besides the search result: its file's frame rate. */
export interface ExportMoment extends SearchResult {
  rank: number;
  /** Frames per second of the source file (from its details), when known. */
  fps?: number;
  /** Seconds the source file lasts (events never run past it), when known. */
  duration?: number;
  /** The ranks an event holds when adjacent moments of one file were merged into it (selects). */
  ranks?: number[];
  /** The match itself, before handles (selects). */
  match?: { start: number; end: number };
  /** The user's own file when the video is indexed in place (exports name it instead of the file name). */
  path?: string;
}

/** The file a moment is in, as its user knows it: the path of a video in place, else its original name. */
const fileOf = (m: ExportMoment) => m.path ?? m.filename;

function csvCell(v: unknown): string {
  const s = v === undefined || v === null ? '' : String(v);
  // Quote when needed; a leading = + - @ is neutralised so a spreadsheet never runs it as a formula.
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function toCsv(moments: ExportMoment[]): string {
  const head = ['rank', 'video_id', 'filename', 'start', 'end', 'match_start', 'match_end', 'confidence', 'confidence_label', 'kinds', 'seen', 'said', 'written', 'similarity', 'description'];
  const rows = moments.map((m) => [
    (m.ranks ?? [m.rank]).join(' '),
    m.video_id,
    fileOf(m),
    m.start,
    m.end,
    m.match?.start ?? m.start,
    m.match?.end ?? m.end,
    m.confidence ?? '',
    m.confidence_label ?? '',
    (m.kinds ?? []).join('+'),
    m.evidence?.seen?.probability ?? '',
    m.evidence?.said?.probability ?? '',
    m.evidence?.written?.probability ?? '',
    m.similarity,
    m.description ?? '',
  ]);
  return [head, ...rows].map((r) => r.map(csvCell).join(',')).join('\r\n') + '\r\n';
}

export function toJson(query: string, moments: ExportMoment[]): string {
  const out = moments.map((m) => {
    const { rank, ranks, video_id, start, end, match, similarity, confidence, confidence_label, kinds, evidence, said, fps, description } = m;
    return { rank, ranks, video_id, filename: fileOf(m), start, end, match, confidence, confidence_label, kinds, evidence, said, similarity, fps, description };
  });
  return `${JSON.stringify({ query, moments: out }, null, 2)}\n`;
}

function srtTime(seconds: number): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  return `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')},${String(ms % 1000).padStart(3, '0')}`;
}

/** SRT: one cue per moment, timed as in its own file, naming the file and the match. */
export function toSrt(moments: ExportMoment[]): string {
  return moments
    .map((m, i) => `${i + 1}\n${srtTime(m.start)} --> ${srtTime(Math.max(m.end, m.start + 0.001))}\n#${(m.ranks ?? [m.rank]).join(', #')} ${fileOf(m)} (${(m.kinds ?? []).join('+') || 'seen'}, ${m.confidence_label} ${m.confidence.toFixed(2)})\n`)
    .join('\n');
}

/**
 * The integer timecode base of a frame rate: 23.976 → 24, 29.97 → 30 (counted non-drop, as the
 * EDL's FCM line says), 25 → 25. Unknown rates count at 25.
 */
export function timecodeBase(fps: number | undefined): number {
  return fps && Number.isFinite(fps) && fps > 0 ? Math.max(1, Math.round(fps)) : 25;
}

/** Frames → HH:MM:SS:FF at an integer base. */
export function framesToTimecode(frames: number, base: number): string {
  const f = Math.max(0, Math.round(frames));
  const ff = f % base;
  const totalSeconds = Math.floor(f / base);
  const ss = totalSeconds % 60;
  const mm = Math.floor(totalSeconds / 60) % 60;
  const hh = Math.floor(totalSeconds / 3600);
  return [hh, mm, ss, ff].map((n) => String(n).padStart(2, '0')).join(':');
}

/** HH:MM:SS:FF (or ;FF) → frames at an integer base. */
export function timecodeToFrames(tc: string, base: number): number {
  const m = /^(\d{2}):(\d{2}):(\d{2})[:;](\d{2})$/.exec(tc);
  if (!m) throw new Error(`not a timecode: ${tc}`);
  return ((Number(m[1]) * 60 + Number(m[2])) * 60 + Number(m[3])) * base + Number(m[4]);
}

/**
 * CMX 3600 EDL: one video cut event per moment, in rank order, laid end to end on a timeline
 * starting at 01:00:00:00. Source in/out are timecodes at the source file's own rate (frames
 * counted from the file's start); the record side counts at the timeline's rate (the rate most
 * moments share). The source file's name is the event's clip name (`* FROM CLIP NAME:`), the reel
 * is `AX` (a file, not a tape), as editors expect from file-based EDLs.
 */
export function toEdl(title: string, moments: ExportMoment[]): string {
  const bases = moments.map((m) => timecodeBase(m.fps));
  const counts = new Map<number, number>();
  for (const b of bases) counts.set(b, (counts.get(b) ?? 0) + 1);
  const recordBase = [...counts.entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0])[0]?.[0] ?? 25;
  const lines = [`TITLE: ${title.replace(/[\r\n]+/g, ' ').slice(0, 70)}`, 'FCM: NON-DROP FRAME', ''];
  let record = 3600 * recordBase; // 01:00:00:00
  moments.forEach((m, i) => {
    const base = bases[i];
    const srcIn = Math.round(m.start * base);
    const srcOut = Math.max(srcIn + 1, Math.round(m.end * base));
    const length = Math.max(1, Math.round(((srcOut - srcIn) / base) * recordBase));
    const event = String(i + 1).padStart(3, '0');
    lines.push(
      `${event}  AX       V     C        ${framesToTimecode(srcIn, base)} ${framesToTimecode(srcOut, base)} ${framesToTimecode(record, recordBase)} ${framesToTimecode(record + length, recordBase)}`,
      `* FROM CLIP NAME: ${m.filename.replace(/[\r\n]+/g, ' ')}`,
      ...(m.path ? [`* SOURCE FILE: ${m.path.replace(/[\r\n]+/g, ' ')}`] : []),
      `* COMMENT: rank ${(m.ranks ?? [m.rank]).join('+')}, ${m.video_id}, ${(m.kinds ?? []).join('+') || 'seen'}, confidence ${m.confidence_label} ${m.confidence.toFixed(2)}${base !== recordBase ? `, source at ${base} fps` : ''}`,
      '',
    );
    record += length;
  });
  return `${lines.join('\r\n')}`;
}

/** Handles and minimum event length of exports, seconds (CLI `--handles`, `--min-length`). */
export const SELECT_DEFAULTS = { handles: 1, minLength: 2 } as const;
export interface SelectOptions {
  handles?: number;
  minLength?: number;
}

const r3 = (x: number): number => Math.round(x * 1000) / 1000;

/**
 * Moments as selects an editor can cut: each widened by `handles` on both sides, at least
 * `minLength` long (grown about its middle), never before 0 or past its file's end; moments of the
 * same file that then touch or overlap merged into one event (the best rank first, every rank
 * kept in `ranks`). Events stay in rank order of their best moment.
 */
export function selects(moments: ExportMoment[], opts: SelectOptions = {}): ExportMoment[] {
  const handles = Math.max(0, opts.handles ?? SELECT_DEFAULTS.handles);
  const minLength = Math.max(0, opts.minLength ?? SELECT_DEFAULTS.minLength);
  const widened = moments.map((m) => {
    const limit = m.duration && m.duration > 0 ? m.duration : Infinity;
    let start = Math.max(0, m.start - handles);
    let end = Math.min(limit, m.end + handles);
    if (end - start < minLength) {
      const grow = (minLength - (end - start)) / 2;
      start = Math.max(0, start - grow);
      end = Math.min(limit, Math.max(end + grow, start + minLength));
      start = Math.max(0, Math.min(start, end - minLength));
    }
    return { ...m, start: r3(start), end: r3(end), match: m.match ?? { start: m.start, end: m.end }, ranks: m.ranks ?? [m.rank] };
  });
  const byFile = new Map<string, ExportMoment[]>();
  for (const m of widened) byFile.set(m.video_id, [...(byFile.get(m.video_id) ?? []), m]);
  const out: ExportMoment[] = [];
  for (const list of byFile.values()) {
    const sorted = [...list].sort((a, b) => a.start - b.start);
    let cur: ExportMoment | undefined;
    for (const m of sorted) {
      if (cur && m.start <= cur.end) {
        const best = m.rank < cur.rank ? m : cur;
        cur = { ...best, start: cur.start, end: Math.max(cur.end, m.end), ranks: [...cur.ranks!, ...m.ranks!].sort((a, b) => a - b) };
      } else {
        if (cur) out.push(cur);
        cur = m;
      }
    }
    if (cur) out.push(cur);
  }
  return out.sort((a, b) => a.rank - b.rank);
}

export function exportMoments(format: ExportFormat, query: string, moments: ExportMoment[], opts: SelectOptions = {}): string {
  const events = selects(moments, opts);
  switch (format) {
    case 'csv':
      return toCsv(events);
    case 'json':
      return toJson(query, events);
    case 'srt':
      return toSrt(events);
    case 'edl':
      return toEdl(`vidembed search: ${query}`, events);
  }
}

import { stat } from 'node:fs/promises';
import { MediaError } from '../api/errors.js';
import { cleanLine, runFfmpeg } from './ffmpeg.js';
import type { ProbeResult } from './types.js';

/** One stream line of `ffmpeg -i`, parsed. */
export interface StreamInfo {
  /** Absolute stream index (`Stream #0:N`), usable as `-map 0:N`. */
  index: number;
  kind: 'video' | 'audio' | 'subtitle' | 'data' | 'attachment';
  codec: string;
  pixFmt?: string;
  width?: number;
  height?: number;
  /** Sample aspect ratio (pixel width / pixel height), 1 when not stated. */
  sar: number;
  fps?: number;
  /** 'fps' when the stream states it, 'tbr' when guessed from the time base. */
  fpsSource?: 'fps' | 'tbr';
  rotation: number;
  attachedPic: boolean;
  sampleRate?: number;
  default: boolean;
}

export interface ProbeDetails extends ProbeResult {
  /** The video stream the media layer decodes (absolute index), undefined without video. */
  videoStream?: StreamInfo;
  audioStream?: StreamInfo;
  streams: StreamInfo[];
  /** Container start time in seconds (`start:` of the Duration line). */
  startTime: number;
  /** True when the duration came from counting packets rather than from the container. */
  durationCounted: boolean;
}

/** Containers whose video streams can only be cover art. */
const AUDIO_CONTAINERS = /^(mp3|flac|wav|aiff|ape|wv|tta|ogg|oga|opus|dsf|amr)$/;

/**
 * Probes a media file with `ffmpeg -i` (no ffprobe in the static build): duration, first video
 * stream geometry, frame rate, rotation, codecs. Throws MediaError when the file is missing, a
 * directory, empty, not media, or has no video stream.
 */
export async function probe(file: string, opts: { signal?: AbortSignal } = {}): Promise<ProbeResult> {
  const d = await probeDetails(file, opts);
  if (!d.hasVideo) {
    throw new MediaError(
      d.hasAudio
        ? `${file}: no video stream (audio only${d.audioCodec ? `, ${d.audioCodec}` : ''})`
        : `${file}: no video stream`,
    );
  }
  return toResult(d);
}

/**
 * The size a player shows: stored pixels stretched by the sample aspect ratio, then turned by the
 * rotation (a portrait phone clip stored as 1920x1080 with rotation 90 is 1080x1920).
 */
export function displaySize(r: { width: number; height: number; rotation?: number; sar?: number }): { width: number; height: number } {
  let w = Math.round(r.width * (r.sar && r.sar > 0 ? r.sar : 1));
  let h = r.height;
  if (r.rotation === 90 || r.rotation === 270) [w, h] = [h, w];
  return { width: w, height: h };
}

function toResult(d: ProbeDetails): ProbeResult {
  const r: ProbeResult = {
    durationSec: d.durationSec,
    width: d.width,
    height: d.height,
    fps: d.fps,
    hasVideo: d.hasVideo,
    hasAudio: d.hasAudio,
    rotation: d.rotation,
  };
  if (d.videoStream && d.videoStream.sar !== 1) r.sar = d.videoStream.sar;
  if (d.videoCodec !== undefined) r.videoCodec = d.videoCodec;
  if (d.audioCodec !== undefined) r.audioCodec = d.audioCodec;
  if (d.pixFmt !== undefined) r.pixFmt = d.pixFmt;
  if (d.container !== undefined) r.container = d.container;
  return r;
}

/** Like `probe` but does not require a video stream, and returns the parsed streams too. */
export async function probeDetails(file: string, opts: { signal?: AbortSignal } = {}): Promise<ProbeDetails> {
  await checkFile(file);
  const res = await runFfmpeg(['-i', file], { signal: opts.signal, stdout: false });
  const parsed = parseProbeOutput(res.stderr);
  if (!parsed) {
    throw new MediaError(`${file}: not a readable media file (${describeFailure(res.stderr, file)})`);
  }
  if (parsed.hasVideo && !(parsed.durationSec > 0) && parsed.videoStream) {
    const counted = await countDuration(file, parsed.videoStream, opts.signal);
    if (counted > 0) {
      parsed.durationSec = counted;
      parsed.durationCounted = true;
    }
  }
  return parsed;
}

async function checkFile(file: string): Promise<void> {
  let st;
  try {
    st = await stat(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new MediaError(`${file}: no such file`, { cause: err });
    if (code === 'EACCES') throw new MediaError(`${file}: permission denied`, { cause: err });
    throw new MediaError(`${file}: cannot read (${code ?? String(err)})`, { cause: err });
  }
  if (st.isDirectory()) throw new MediaError(`${file}: is a directory, not a video file`);
  if (!st.isFile() && !st.isFIFO() && !st.isCharacterDevice()) throw new MediaError(`${file}: not a regular file`);
  if (st.isFile() && st.size === 0) throw new MediaError(`${file}: empty file (0 bytes)`);
}

/** The last two distinct error lines (e.g. `moov atom not found; Invalid data found when processing input`). */
function describeFailure(stderr: string, file: string): string {
  const lines = stderr.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  const picked: string[] = [];
  for (let i = lines.length - 1; i >= 0 && picked.length < 2; i--) {
    let l = lines[i];
    if (/^At least one output file must be specified/.test(l)) continue;
    if (l.startsWith(file + ': ')) l = l.slice(file.length + 2);
    l = cleanLine(l).replace(/^[\w,]+: /, '');
    if (!picked.includes(l)) picked.unshift(l);
  }
  return picked.length ? picked.join('; ') : 'ffmpeg could not open it';
}

/**
 * Duration from demuxing every video packet (no decoding) when the container does not state it
 * (piped webm/mkv, raw .h264, some streams). 0 when nothing could be counted.
 */
async function countDuration(file: string, vs: StreamInfo, signal?: AbortSignal): Promise<number> {
  const res = await runFfmpeg(['-v', 'info', '-stats', '-i', file, '-map', `0:${vs.index}`, '-c', 'copy', '-f', 'null', '-'], {
    signal,
    stdout: false,
  });
  const progress = [...res.stderr.matchAll(/frame=\s*(\d+)[^\r\n]*?time=\s*(-?\d+):(\d+):(\d+(?:\.\d+)?)/g)];
  const last = progress[progress.length - 1];
  if (!last) return 0;
  const frames = Number(last[1]);
  const time = Number(last[2]) * 3600 + Number(last[3]) * 60 + Number(last[4]);
  if (vs.fps && vs.fps > 0 && vs.fps < 1000 && frames > 0) return Math.max(frames / vs.fps, time);
  return Math.max(time, 0);
}

/** Parses `ffmpeg -i FILE` stderr; null when ffmpeg found no input at all. */
export function parseProbeOutput(stderr: string): ProbeDetails | null {
  const lines = stderr.split(/\r?\n/);
  const inputIdx = lines.findIndex((l) => /^Input #0, /.test(l));
  if (inputIdx < 0) return null;
  const container = /^Input #0, (.+?), from '/.exec(lines[inputIdx])?.[1] ?? /^Input #0, ([^,]+)/.exec(lines[inputIdx])?.[1];

  let durationSec = 0;
  let startTime = 0;
  const streams: StreamInfo[] = [];
  let current: StreamInfo | undefined;
  let section: 'metadata' | 'side' | undefined;
  let streamIndent = -1;

  for (let i = inputIdx + 1; i < lines.length; i++) {
    const line = lines[i];
    if (/^(Input #[1-9]|Output #|Stream mapping|At least one output)/.test(line)) break;
    const dur = /^\s*Duration: (N\/A|(\d+):(\d+):(\d+(?:\.\d+)?))(?:, start: (-?\d+(?:\.\d+)?))?/.exec(line);
    if (dur) {
      if (dur[2] !== undefined) durationSec = Number(dur[2]) * 3600 + Number(dur[3]) * 60 + Number(dur[4]);
      if (dur[5] !== undefined) startTime = Number(dur[5]);
      current = undefined;
      continue;
    }
    const sm = /^(\s*)Stream #0:(\d+)(?:\[[^\]]*\])?(?:\([^)]*\))?: (Video|Audio|Subtitle|Data|Attachment): (.*)$/.exec(line);
    if (sm) {
      current = parseStream(Number(sm[2]), sm[3].toLowerCase() as StreamInfo['kind'], sm[4]);
      streams.push(current);
      streamIndent = sm[1].length;
      section = undefined;
      continue;
    }
    if (/^\s*Stream #0:/.test(line)) {
      current = undefined; // unknown stream type
      continue;
    }
    if (!current) continue;
    const indent = /^\s*/.exec(line)![0].length;
    if (indent < streamIndent) {
      current = undefined;
      continue;
    }
    if (/^\s*Metadata:\s*$/.test(line)) {
      section = 'metadata';
      continue;
    }
    if (/^\s*Side data:\s*$/.test(line)) {
      section = 'side';
      continue;
    }
    const rot = /^\s*rotate\s*:\s*(-?\d+(?:\.\d+)?)/.exec(line);
    if (rot && section === 'metadata') {
      current.rotation = normRotation(Number(rot[1]));
      continue;
    }
    const dm = /displaymatrix: rotation of (-?\d+(?:\.\d+)?) degrees/.exec(line);
    if (dm && current.rotation === 0) current.rotation = normRotation(-Number(dm[1]));
  }

  const audioOnlyContainer = container !== undefined && container.split(',').some((c) => AUDIO_CONTAINERS.test(c));
  const videos = streams.filter(
    (s) => s.kind === 'video' && !s.attachedPic && !(audioOnlyContainer && isStillCodec(s.codec)) && (s.width ?? 0) > 0,
  );
  const video = videos.find((s) => s.default) ?? videos[0];
  const audios = streams.filter((s) => s.kind === 'audio');
  const audio = audios.find((s) => s.default) ?? audios[0];

  const d: ProbeDetails = {
    durationSec,
    width: video?.width ?? 0,
    height: video?.height ?? 0,
    fps: video?.fps ?? 0,
    hasVideo: video !== undefined,
    hasAudio: audio !== undefined,
    rotation: video?.rotation ?? 0,
    streams,
    startTime,
    durationCounted: false,
  };
  if (video) d.videoStream = video;
  if (audio) d.audioStream = audio;
  if (video?.codec) d.videoCodec = video.codec;
  if (audio?.codec) d.audioCodec = audio.codec;
  if (video?.pixFmt) d.pixFmt = video.pixFmt;
  if (container) d.container = container;
  if (streams.length === 0 && durationSec === 0) return null;
  return d;
}

function isStillCodec(codec: string): boolean {
  return /^(mjpeg|png|bmp|gif|webp|tiff|jpeg2000|jpegls)$/.test(codec);
}

function normRotation(deg: number): number {
  const r = ((Math.round(deg / 90) * 90) % 360 + 360) % 360;
  return r;
}

/** Splits on commas that are not inside parentheses or brackets. */
function splitTop(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(' || ch === '[') depth++;
    else if ((ch === ')' || ch === ']') && depth > 0) depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

function parseRate(s: string): number {
  const m = /^(\d+(?:\.\d+)?)(k)?$/.exec(s);
  if (!m) return NaN;
  return Number(m[1]) * (m[2] ? 1000 : 1);
}

function parseStream(index: number, kind: StreamInfo['kind'], rest: string): StreamInfo {
  const attachedPic = /\(attached pic\)/.test(rest);
  const isDefault = /\(default\)/.test(rest);
  const fields = splitTop(rest.replace(/\s*\((default|forced|attached pic|dub|original|comment|lyrics|karaoke|hearing impaired|visual impaired|clean effects|timed thumbnails)\)/g, ''));
  const codec = (/^([A-Za-z0-9_\-.]+)/.exec(fields[0] ?? '')?.[1] ?? 'unknown').toLowerCase();
  const s: StreamInfo = { index, kind, codec, sar: 1, rotation: 0, attachedPic, default: isDefault };
  if (kind === 'video') {
    for (let i = 1; i < fields.length; i++) {
      const f = fields[i];
      const wh = /^(\d+)x(\d+)(?:\s*\[SAR (\d+):(\d+) DAR \d+:\d+\]|,? SAR (\d+):(\d+))?/.exec(f);
      if (wh && s.width === undefined) {
        s.width = Number(wh[1]);
        s.height = Number(wh[2]);
        const sn = Number(wh[3] ?? wh[5]);
        const sd = Number(wh[4] ?? wh[6]);
        if (sn > 0 && sd > 0) s.sar = sn / sd;
        continue;
      }
      const sar = /^SAR (\d+):(\d+)/.exec(f);
      if (sar && Number(sar[1]) > 0 && Number(sar[2]) > 0) {
        s.sar = Number(sar[1]) / Number(sar[2]);
        continue;
      }
      const fps = /^(\d+(?:\.\d+)?k?) fps$/.exec(f);
      if (fps) {
        const v = parseRate(fps[1]);
        if (v > 0) {
          s.fps = v;
          s.fpsSource = 'fps';
        }
        continue;
      }
      const tbr = /^(\d+(?:\.\d+)?k?) tbr$/.exec(f);
      if (tbr && s.fps === undefined) {
        const v = parseRate(tbr[1]);
        if (v > 0) {
          s.fps = v;
          s.fpsSource = 'tbr';
        }
        continue;
      }
      if (i === 1 && s.pixFmt === undefined) {
        const pf = /^([a-z0-9_]+)(\(|$)/.exec(f);
        if (pf && !/^\d/.test(pf[1])) s.pixFmt = pf[1];
      }
    }
  } else if (kind === 'audio') {
    for (const f of fields.slice(1)) {
      const hz = /^(\d+) Hz$/.exec(f);
      if (hz) s.sampleRate = Number(hz[1]);
    }
  }
  return s;
}

/**
 * Playback in a browser: whether a video's original file plays in one as it is (decided from the
 * probe: container and codecs), and the playback proxy made for those that do not — H.264 8-bit
 * 4:2:0, at most 1280x720 (720x1280 upright), MP4 with the index first (`+faststart`), AAC audio
 * when there is audio. docs/web.md says what plays and why.
 */
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MediaError } from '../api/errors.js';
import { lastMeaningfulLine, runFfmpeg } from './ffmpeg.js';
import { displaySize, probeDetails } from './probe.js';
import type { ProbeResult } from './types.js';
import { makeTempDir } from '../util/temp.js';

/** What the playback decision reads of a probe. */
export type PlaybackProbe = Pick<ProbeResult, 'container' | 'videoCodec' | 'audioCodec' | 'pixFmt' | 'hasAudio'>;

export interface PlaybackDecision {
  /** True when current browsers (Chromium, Firefox, Safari) play the original file as it is. */
  plays: boolean;
  /** Why not, in a few words (`theora video`, `avi container`…); '' when it plays. */
  why: string;
}

/**
 * The families browsers play, by ffmpeg's demuxer name. ffmpeg names MP4, MOV, 3GP and M4V one
 * demuxer (`mov,mp4,m4a,3gp,3g2,mj2`) and WebM and Matroska another (`matroska,webm`); browsers
 * open both kinds of files when the codecs inside are theirs. Ogg is left out: Chromium no longer
 * decodes Theora, the only video Ogg files carry in practice.
 */
const FAMILIES: { name: string; demuxer: RegExp; video: RegExp; audio: RegExp }[] = [
  { name: 'MP4/MOV', demuxer: /(^|,)(mov|mp4)(,|$)/, video: /^h264$/, audio: /^(aac|mp3)$/ },
  { name: 'WebM', demuxer: /(^|,)(webm|matroska)(,|$)/, video: /^(vp8|vp9|av1)$/, audio: /^(opus|vorbis)$/ },
];

/** 8-bit 4:2:0 (the `j` variants are full-range JPEG-style, which H.264 decoders take alike). */
const PLAYABLE_PIXELS = /^yuvj?420p$/;

/** Does the original file play in a browser as it is? From the probe only: no decoding. */
export function playsInBrowser(media: PlaybackProbe): PlaybackDecision {
  const container = media.container ?? '';
  const family = FAMILIES.find((f) => f.demuxer.test(container));
  if (!family) return { plays: false, why: `${container.split(',')[0] || 'unknown'} container` };
  const video = media.videoCodec ?? '';
  if (!family.video.test(video)) return { plays: false, why: `${video || 'unknown'} video in ${family.name}` };
  if (media.pixFmt && !PLAYABLE_PIXELS.test(media.pixFmt)) return { plays: false, why: `${video} ${media.pixFmt} pixels` };
  if (media.hasAudio && !family.audio.test(media.audioCodec ?? '')) return { plays: false, why: `${media.audioCodec || 'unknown'} audio in ${family.name}` };
  return { plays: true, why: '' };
}

/** Longest and shortest side of a proxy: 720p either way up. */
export const PROXY_BOX = { long: 1280, short: 720 } as const;

/**
 * The proxy's frame size for a video of this displayed size: no larger than the source, within
 * 1280x720 (or 720x1280 upright), aspect kept, both sides even (H.264 4:2:0 needs them so).
 */
export function proxySize(display: { width: number; height: number }): { width: number; height: number } {
  const { width: w, height: h } = display;
  const k = Math.min(1, PROXY_BOX.long / Math.max(w, h), PROXY_BOX.short / Math.min(w, h));
  const even = (x: number) => Math.max(2, 2 * Math.round(x / 2));
  return { width: even(w * k), height: even(h * k) };
}

/** Sample rates ffmpeg's AAC encoder takes; others are resampled to 48 kHz. */
const AAC_RATES = new Set([96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]);
/** Above this the proxy drops frames (a 187 fps lab clip plays as 60 fps). */
const MAX_PROXY_FPS = 60;

/** The ffmpeg arguments that turn `input` into the playback proxy `output` (exported for tests). */
export function proxyArgs(
  input: string,
  output: string,
  src: { width: number; height: number; fps: number; videoIndex: number; audioIndex?: number; sampleRate?: number },
): string[] {
  const size = proxySize(src);
  const fps = src.fps > 0 ? Math.min(src.fps, MAX_PROXY_FPS) : 25;
  const filters = [`scale=${size.width}:${size.height}`, 'setsar=1', ...(src.fps > MAX_PROXY_FPS ? [`fps=${MAX_PROXY_FPS}`] : [])];
  const args = ['-y', '-i', input, '-map', `0:${src.videoIndex}`];
  args.push('-vf', filters.join(','), '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p', '-profile:v', 'high');
  // A keyframe every 2 s: a browser seeks by decoding from the keyframe before the moment.
  args.push('-g', String(Math.max(1, Math.round(2 * fps))));
  if (src.audioIndex !== undefined) {
    args.push('-map', `0:${src.audioIndex}`, '-c:a', 'aac', '-b:a', '128k', '-ac', '2');
    if (!src.sampleRate || !AAC_RATES.has(src.sampleRate)) args.push('-ar', '48000');
  }
  args.push('-sn', '-dn', '-max_muxing_queue_size', '1024', '-movflags', '+faststart', '-f', 'mp4', output);
  return args;
}

/**
 * Encodes the playback proxy of `input` into a temporary MP4 and hands its path to `use` (which
 * stores it); the file is removed afterwards. Throws a MediaError naming `name` when ffmpeg fails.
 */
export async function withPlaybackProxy<T>(input: string, name: string, use: (proxy: string) => Promise<T>, opts: { signal?: AbortSignal } = {}): Promise<T> {
  const d = await probeDetails(input, opts);
  if (!d.videoStream) throw new MediaError(`${name}: no video stream to make a playback copy of`);
  const dir = await makeTempDir('proxy');
  try {
    const out = path.join(dir, 'playback.mp4');
    const src = {
      ...displaySize({ width: d.width, height: d.height, rotation: d.rotation, sar: d.videoStream.sar }),
      fps: d.fps,
      videoIndex: d.videoStream.index,
      audioIndex: d.audioStream?.index,
      sampleRate: d.audioStream?.sampleRate,
    };
    let res = await runFfmpeg(proxyArgs(input, out, src), { signal: opts.signal, stdout: false });
    // A soundtrack ffmpeg cannot decode must not cost the picture: once more without it.
    if (res.code !== 0 && src.audioIndex !== undefined) res = await runFfmpeg(proxyArgs(input, out, { ...src, audioIndex: undefined }), { signal: opts.signal, stdout: false });
    if (res.code !== 0) throw new MediaError(`${name}: the playback copy could not be made (${lastMeaningfulLine(res.stderr) ?? `ffmpeg exited ${res.code}`})`);
    return await use(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

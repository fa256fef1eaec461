/**
 * Only videos are videos (issue 22): a file is taken into a collection, tagged or embedded as a
 * video only when ffmpeg finds a video stream in it that is moving pictures — not text (ffmpeg's
 * `tty` demuxer renders any text file as a picture), not a still image, not audio only (its cover
 * art). Checked before anything is stored; the error names the file as the user knows it.
 */
import { MediaError, errorMessage } from '../api/errors.js';
import { probeDetails, type ProbeDetails } from './probe.js';

/** Containers that hold one picture (or text rendered as one), never a video; a GIF of one frame (0.1 s) is one too. */
const STILL_CONTAINERS = /^(image2|image2pipe|[a-z0-9]+_pipe|tty|bin|ico)$/;

/** Why a probed file is not a video, or undefined when it is one. Pure: unit-tested on parsed probes. */
export function notVideoReason(d: Pick<ProbeDetails, 'hasVideo' | 'hasAudio' | 'audioCodec' | 'container' | 'videoStream' | 'durationSec'>): string | undefined {
  const containers = (d.container ?? '').split(',').map((c) => c.trim());
  if (containers.includes('tty')) return 'a text file, not a video';
  const still = containers.some((c) => STILL_CONTAINERS.test(c)) || (containers.includes('gif') && d.durationSec <= 0.1);
  if (still) return `a still image (${d.videoStream?.codec ?? containers[0]}), not a video`;
  if (!d.hasVideo || !d.videoStream || d.videoStream.attachedPic) return d.hasAudio ? `audio only${d.audioCodec ? ` (${d.audioCodec})` : ''}: no video stream` : 'no video stream';
  return undefined;
}

/** Why a probed file is not a picture (a query image), or undefined when it is one. */
export function notImageReason(d: Pick<ProbeDetails, 'hasVideo' | 'hasAudio' | 'audioCodec' | 'container' | 'videoStream' | 'durationSec'>): string | undefined {
  const why = notVideoReason(d);
  if (why === undefined) return 'a video, not a picture (a moment of a video is `--like VIDEO@SECONDS`)';
  if (why.startsWith('a still image')) return undefined;
  return why.replace(', not a video', ', not a picture');
}

/** Throws MediaError (422, exit code 6) naming `name` unless `file` is a video. */
export function assertVideoFile(file: string, name: string): Promise<void> {
  return assertKind(file, name, 'video', notVideoReason);
}

/** Throws MediaError naming `name` unless `file` is a still picture (`--image`, `image_base64`, `image_url`). */
export function assertImageFile(file: string, name: string): Promise<void> {
  return assertKind(file, name, 'picture', notImageReason);
}

async function assertKind(file: string, name: string, kind: string, reason: (d: ProbeDetails) => string | undefined): Promise<void> {
  let d: ProbeDetails;
  try {
    d = await probeDetails(file);
  } catch (err) {
    // ffmpeg's words name the file it read (a temp file, maybe): say which file, in the caller's terms.
    const msg = errorMessage(err).split(file).join(name);
    throw new MediaError(msg.startsWith(name) ? msg.replace(/^[^:]*: /, `${name} is not a ${kind}: `) : `${name} is not a ${kind}: ${msg}`, { cause: err });
  }
  const why = reason(d);
  if (why) throw new MediaError(`${name} is not a ${kind}: ${why}`);
}

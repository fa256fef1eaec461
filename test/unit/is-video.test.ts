import { describe, expect, it } from 'vitest';
import { notVideoReason } from '../../src/media/is-video.js';
import { parseProbeOutput } from '../../src/media/probe.js';

/*
 * Only videos are videos (issue 22): which probed files are refused, on ffmpeg's own `-i` output
 * (recorded from the ffmpeg the package ships) — no process here; test/e2e/non-video.test.ts runs
 * ffmpeg on real files.
 */

const probed = (stderr: string) => {
  const d = parseProbeOutput(stderr);
  if (!d) throw new Error('unparsed');
  return d;
};

const TEXT = `Input #0, tty, from 'notes.txt':
  Duration: 00:00:00.04, bitrate: 2 kb/s
    Stream #0:0: Video: ansi, pal8, 640x400, 25 fps, 25 tbr, 25 tbn, 25 tbc
`;
const JPEG = `Input #0, image2, from 'photo.jpg':
  Duration: 00:00:00.04, start: 0.000000, bitrate: 12764 kb/s
    Stream #0:0: Video: mjpeg (Baseline), yuvj444p(pc, bt470bg/unknown/unknown), 500x376 [SAR 376:375 DAR 4:3], 25 tbr, 25 tbn, 25 tbc
`;
const PNG_PIPE = `Input #0, png_pipe, from 'photo.png':
  Duration: N/A, bitrate: N/A
    Stream #0:0: Video: png, rgb24(pc), 500x376, 25 tbr, 25 tbn, 25 tbc
`;
const AUDIO = `Input #0, mov,mp4,m4a,3gp,3g2,mj2, from 'sound.m4a':
  Duration: 00:00:01.02, start: 0.000000, bitrate: 77 kb/s
    Stream #0:0(und): Audio: aac (LC) (mp4a / 0x6134706D), 44100 Hz, mono, fltp, 69 kb/s (default)
`;
const MP4 = `Input #0, mov,mp4,m4a,3gp,3g2,mj2, from 'clip.mp4':
  Duration: 00:00:01.20, start: 0.000000, bitrate: 646 kb/s
    Stream #0:0(eng): Video: h264 (High) (avc1 / 0x31637661), yuv420p, 320x240, 545 kb/s, 30.02 fps, 30.02 tbr, 90k tbn, 180k tbc (default)
    Stream #0:1(eng): Audio: aac (LC) (mp4a / 0x6134706D), 48000 Hz, mono, fltp, 91 kb/s (default)
`;

describe('notVideoReason', () => {
  it('refuses text (ffmpeg draws it as a picture), still images and audio only, each with its reason', () => {
    expect(notVideoReason(probed(TEXT))).toBe('a text file, not a video');
    expect(notVideoReason(probed(JPEG))).toBe('a still image (mjpeg), not a video');
    expect(notVideoReason(probed(PNG_PIPE))).toBe('a still image (png), not a video');
    expect(notVideoReason(probed(AUDIO))).toBe('audio only (aac): no video stream');
  });

  it('takes a video, and a GIF only when it moves', () => {
    expect(notVideoReason(probed(MP4))).toBeUndefined();
    const gif = { container: 'gif', hasVideo: true, hasAudio: false, videoStream: { ...probed(MP4).videoStream!, codec: 'gif' } };
    expect(notVideoReason({ ...gif, durationSec: 0.1 })).toBe('a still image (gif), not a video');
    expect(notVideoReason({ ...gif, durationSec: 2.5 })).toBeUndefined();
  });
});

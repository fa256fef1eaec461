/**
 * The media port (port.ts) on ffmpeg: the one adapter that runs it. Every function here is one of
 * src/media's; this is where they meet the port.
 */
import { streamPcm } from './audio.js';
import { sampleFrames } from './frames.js';
import { assertVideoFile } from './is-video.js';
import { withPlaybackProxy } from './playback.js';
import type { MediaPort } from './port.js';
import { probe } from './probe.js';
import { encodeThumbnail, encodeThumbnails } from './thumbnail.js';

export const ffmpegMedia: MediaPort = {
  probe: (file, opts) => probe(file, opts),
  frames: (file, opts) => sampleFrames(file, opts),
  audio: (file, opts = {}) => streamPcm(file, { signal: opts.signal, nice: opts.nice }),
  // A batch per frame size in one ffmpeg; one at a time when a batch cannot be made.
  thumbnails: (frames, opts = {}) => encodeThumbnails(frames, opts).catch(() => Promise.all(frames.map((f) => encodeThumbnail(f, opts)))),
  playbackProxy: (file, name, use, opts) => withPlaybackProxy(file, name, use, opts),
  assertVideo: (file, name) => assertVideoFile(file, name),
  decodesOnThreads: true,
};

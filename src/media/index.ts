export type { Frame, ProbeResult, SampleOptions } from './types.js';
export { ffmpegPath } from './ffmpeg.js';
export { probe, probeDetails, displaySize, type ProbeDetails, type StreamInfo } from './probe.js';
export { sampleFrames, readAllFrames, decodeImage, outputSize, type DecodeTuning } from './frames.js';
export { extractAudio, type AudioOptions } from './audio.js';
export { encodeThumbnail, encodeThumbnails, type ThumbnailOptions } from './thumbnail.js';

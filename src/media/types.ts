export interface ProbeResult {
  /** Seconds; 0 when the container does not say and no frame could be counted. */
  durationSec: number;
  width: number;
  height: number;
  /** Average frame rate of the first video stream. */
  fps: number;
  hasVideo: boolean;
  hasAudio: boolean;
  videoCodec?: string;
  audioCodec?: string;
  pixFmt?: string;
  container?: string;
  /** Display rotation in degrees from the stream's side data (0, 90, 180, 270). */
  rotation: number;
  /** Sample aspect ratio of the video stream (pixel width / pixel height), when not 1. */
  sar?: number;
}

/** One decoded frame: packed RGB24, row-major, `width * height * 3` bytes. */
export interface Frame {
  /** Presentation time in seconds from the start of the video. */
  t: number;
  width: number;
  height: number;
  data: Uint8Array;
}

export interface SampleOptions {
  /** Frames per second to sample, in (0, 8]. */
  fps: number;
  /** Longest side of the output frames; aspect ratio kept, both sides even. */
  maxSide: number;
  /** Seconds; sampling window. */
  start?: number;
  end?: number;
  signal?: AbortSignal;
}
